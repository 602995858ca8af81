"""The limits every user's YAML is read within (assay.lang.yamlsafe): each limit holds at its
number and refuses one past it, where the text passes it; what YAML allows below them still
reads as ``yaml.safe_load`` reads it."""

from __future__ import annotations

import pytest
import yaml

from assay.lang import yamlsafe
from assay.lang.dqdl.ast import CondKind
from assay.lang.dqdl.errors import DQDLSyntaxError
from assay.lang.dqdl.parser import parse_condition


def refused(text: str) -> yamlsafe.YAMLProblem:
    with pytest.raises(yamlsafe.YAMLProblem) as caught:
        yamlsafe.load(text, filename="t.yaml")
    return caught.value


@pytest.mark.parametrize("flow", [True, False])
def test_nesting_reads_to_64_levels_and_refuses_the_65th(flow: bool) -> None:
    def nested(levels: int) -> str:
        if flow:
            return "[" * levels + "]" * levels
        # levels - 1 block sequences, each the only item of the one above, around a scalar
        return "".join(" " * i + "-\n" for i in range(levels - 2)) + " " * (levels - 2) + "- x\n"

    assert yamlsafe.load(nested(64), filename="t.yaml") == yaml.safe_load(nested(64))
    problem = refused(nested(65))
    assert problem.reason == "nested deeper than 64 levels"
    assert (problem.line, problem.column) == ((1, 65) if flow else (64, 66))


def test_aliases_repeat_up_to_the_budget_and_not_one_node_more() -> None:
    # an anchored list of 99 scalars is 100 nodes; 100 aliases of it repeat exactly 10,000
    anchored = "a: &a [" + ", ".join(["x"] * 99) + "]\n"
    within = anchored + "b: [" + ", ".join(["*a"] * 100) + "]\n"
    assert len(yamlsafe.load(within, filename="t.yaml")["b"]) == 100
    problem = refused(within.replace("b: [", "b: [*a, "))
    assert problem.reason.startswith("alias *a repeats 100 nodes: aliases may repeat at most 10,000")
    assert (problem.line, problem.column) == (2, 5 + 4 * 100)


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    problem = refused("a: &a [1, *a]\n")
    assert "inside its own anchor" in problem.reason and (problem.line, problem.column) == (1, 11)


def test_an_alias_counts_its_anchors_height_toward_the_depth() -> None:
    deep = "[" * 60 + "]" * 60
    assert yamlsafe.load(f"a: &a {deep}\nb: [[*a]]\n", filename="t.yaml")["b"]
    assert "nests deeper than 64" in refused(f"a: &a {deep}\nb: [[[[*a]]]]\n").reason


def test_merge_keys_may_be_overridden_and_keys_of_other_types_are_other_keys() -> None:
    text = "base: &b {severity: warning, owner: ops}\ncheck: {<<: *b, owner: me}\nmixed: {1: a, '1': b}\n"
    assert yamlsafe.load(text, filename="t.yaml") == yaml.safe_load(text)


def test_every_document_of_a_stream_is_composed_and_one_is_a_text_of_one() -> None:
    nodes = yamlsafe.compose_all("a: 1\n---\nb: 2\n", filename="t.yaml")
    assert [yamlsafe.construct(n, filename="t.yaml") for n in nodes] == [{"a": 1}, {"b": 2}]
    problem = refused("a: 1\n---\nb: 2\n")
    assert (problem.line, problem.reason) == (3, "a second YAML document ('---'): this file holds one")


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("a: [1, 2\n", 2, "not valid YAML: expected ',' or ']', but got '<stream end>'"),
        ("when: 2026-13-45\n", 1, "not valid YAML: month must be in 1..12"),
    ],
)
def test_what_is_not_yaml_is_a_config_error_with_its_position(text: str, line: int, reason: str) -> None:
    problem = refused(text)
    assert (problem.line, problem.reason) == (line, reason)
    assert str(problem).startswith(f"t.yaml:{line}:")


@pytest.mark.parametrize(
    ("condition", "kind"),
    [
        ("> last(1)", CondKind.NUMBER),
        ("> avg(last(10000))", CondKind.NUMBER),
        ("> last(2 * 5000)", CondKind.NUMBER),
        ("<= 36525 days", CondKind.DURATION),
        ("<= 876600 hours", CondKind.DURATION),
    ],
)
def test_windows_and_durations_at_their_bound_parse(condition: str, kind: CondKind) -> None:
    assert parse_condition(condition, kind).operands


@pytest.mark.parametrize(
    ("condition", "reason"),
    [
        ("> last(0)", "last(k) reads 1 to 10,000 earlier loads, not 0"),
        ("> avg(last(10001))", "last(k) reads 1 to 10,000 earlier loads, not 10001"),
        ("> last(2.5)", "last(k) reads 1 to 10,000 earlier loads, not 2.5"),
        ("> last(5001 * 2)", "last(k) reads 1 to 10,000 earlier loads, not 10002"),
        ("<= 36526 days", "a duration spans at most 100 years (36,525 days), not 36526"),
        ("5", "a condition such as '> 0', 'between 10 and 20' or 'in [1, 2]' starts with"),
    ],
)
def test_windows_past_their_bound_and_conditions_without_an_operator_are_refused(
    condition: str, reason: str
) -> None:
    kind = CondKind.DURATION if "days" in condition else CondKind.NUMBER
    with pytest.raises(DQDLSyntaxError) as caught:
        parse_condition(condition, kind)
    assert caught.value.reason.startswith(reason)
