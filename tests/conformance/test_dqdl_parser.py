"""The public DQDL parser vectors (awslabs/dqdl test suites): valid rulesets parse, print back
to the reference's rule strings and round-trip; invalid ones are rejected with a position."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.lang.dqdl import DQDLSyntaxError, parse_text, rule_text, ruleset_text

CASES = json.loads((Path(__file__).parent / "dqdl_parser_cases.json").read_text())

# Where our message deliberately differs from the reference parser's, and why.
MESSAGE_DEVIATIONS = {
    # ANTLR recovers from the unquoted label and then finds no rules; we report the real mistake.
    'Rules = [ IsPrimaryKey "colZ" labels=[key=value] ]': 'labels are written "key"="value"',
}


def _id(case: dict[str, str]) -> str:
    return case["source"].rsplit("/", 1)[-1]


@pytest.mark.parametrize("case", CASES["valid"], ids=_id)
def test_valid_ruleset_parses_and_round_trips(case: dict[str, object]) -> None:
    ruleset = parse_text(str(case["ruleset"])).ruleset
    if "rules_to_string" in case:
        assert [rule_text(rule) for rule in ruleset.rules or ()] == case["rules_to_string"]
    if "rule_count" in case:
        assert len(ruleset.rules or ()) == case["rule_count"]
    assert parse_text(ruleset_text(ruleset)).ruleset == ruleset


@pytest.mark.parametrize("case", CASES["invalid"], ids=_id)
def test_invalid_ruleset_is_rejected_with_a_position(case: dict[str, str]) -> None:
    with pytest.raises(DQDLSyntaxError) as raised:
        parse_text(case["ruleset"])
    error = raised.value
    assert error.line >= 1 and error.column >= 1
    expected = MESSAGE_DEVIATIONS.get(case["ruleset"], case.get("error_contains"))
    if expected:
        assert expected in error.reason


def test_counts_match_the_readme() -> None:
    assert (len(CASES["valid"]), len(CASES["invalid"])) == (296, 140)
