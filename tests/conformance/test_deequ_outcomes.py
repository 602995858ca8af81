"""Deequ's DQDL evaluator tests, as data (tests/conformance/deequ_outcomes.json): every asserted
outcome, metric, failure reason and row-level value, except the documented decisions listed in
deviations.json, which are asserted in their own form instead."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance import deequ_harness as harness
from sparksession import assert_same_results

DEVIATIONS = json.loads((Path(__file__).parent / "deviations.json").read_text())


@pytest.mark.parametrize("case", harness.cases(), ids=lambda c: c["name"])
def test_deequ_case(case: dict[str, Any], engine: Any) -> None:
    deviation = DEVIATIONS["cases"].get(case["name"])
    result = harness.run(case, engine)
    problems: list[str] = []
    for expected in case["expected"]:
        outcome = result.rules[expected["index"]]
        if deviation and deviation["decision"] == "error-not-failed":
            assert outcome.outcome == "Error", outcome
            for fragment in deviation["message_contains"]:
                assert fragment in (outcome.message or "")
            continue
        if expected["outcome"] is not None and outcome.outcome != expected["outcome"]:
            problems.append(f"outcome {outcome.outcome} ({outcome.message}), expected {expected['outcome']}")
        for check in expected.get("metric_checks", []):
            if deviation and deviation["decision"] == "compliance-counts-primary-rows":
                check = deviation["metric"]
            problem = harness.check_metric(check, outcome.metrics)
            if problem:
                problems.append(problem)
        if "failure_reason" in expected:
            problem = harness.check_reason(expected["failure_reason"], outcome.message)
            if problem:
                problems.append(problem)
    if "row_level" in case:
        if deviation and deviation["decision"] == "error-not-failed":
            rows = result.row_level.to_pylist()
            assert all(row["DataQualityRulesFail"] == [] for row in rows)
            assert all(len(row["DataQualityRulesSkip"]) == len(result.rules) for row in rows)
        else:
            problems += harness.check_rows(case["row_level"], result.row_level)
    if "raises" in case:
        # Deequ throws; assay reports the rule as an Error naming the same problem.
        (outcome,) = result.rules
        assert outcome.outcome == "Error"
        for fragment in case["raises"]["message_contains"]:
            assert fragment in (outcome.message or "")
    assert not problems, problems
    if engine != "duckdb":
        # beyond what the vector asserts: every metric and row outcome is DuckDB's
        assert_same_results(result, harness.run(case, "duckdb"))


def test_every_deviation_names_a_real_case() -> None:
    names = {case["name"] for case in harness.cases()}
    assert set(DEVIATIONS["cases"]) <= names
    assert {d["decision"] for d in DEVIATIONS["cases"].values()} <= set(DEVIATIONS["decisions"])
