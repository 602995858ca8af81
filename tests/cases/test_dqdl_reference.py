"""Runs tests/cases/dqdl_reference.yaml: the worked cases of the project's DQDL reference."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import yaml

from assay.dqdl import DQDLSyntaxError, evaluate, parse
from assay.store import MetricStore
from sparksession import assert_same_results

SPEC = yaml.safe_load((Path(__file__).parent / "dqdl_reference.yaml").read_text())
TYPES = {"int": pa.int64(), "string": pa.string(), "double": pa.float64(), "timestamp": pa.timestamp("us")}
NOW = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)


def dataset(name: str) -> pa.Table:
    spec = SPEC["datasets"][name]
    columns = list(spec["columns"].items())
    rows = spec["rows"]
    arrays = []
    for i, (_, kind) in enumerate(columns):
        values = [row[i] for row in rows]
        if kind == "timestamp":
            values = [datetime.fromisoformat(v) if v else None for v in values]
        arrays.append(pa.array(values, TYPES[kind]))
    return pa.Table.from_arrays(arrays, names=[c for c, _ in columns])


@pytest.mark.parametrize("case", SPEC["cases"], ids=lambda c: c["id"])
def test_reference_case(case: dict[str, Any], tmp_path: Path, engine: Any) -> None:
    text = (
        case.get("defaults", "") + "\nRules = [ " + ", ".join(r["rule"] for r in case["rules"]) + " ]"
    ).strip()
    ruleset = parse(text)
    options: dict[str, Any] = {"now": NOW, **case.get("options", {})}
    references = {alias: dataset(name) for alias, name in case.get("references", {}).items()}
    with MetricStore.open(workspace=tmp_path) as store:
        for age, rows in enumerate(reversed(case.get("history", [])), start=1):
            history = pa.table({"n": list(range(rows))})
            evaluate(
                "Rules = [ RowCount > 0 ]", history, dataset="t", store=store, now=NOW - timedelta(days=age)
            )
        result = evaluate(
            ruleset,
            dataset(case["data"]),
            references=references or None,
            dataset="t" if "history" in case else None,
            store=store,
            row_level="rows" in case,
            engine=engine,
            **options,
        )
    for expected, outcome in zip(case["rules"], result.rules, strict=True):
        assert outcome.outcome == expected["outcome"], (expected["rule"], outcome.message)
        for key, value in expected.get("metrics", {}).items():
            assert outcome.metrics[key] == pytest.approx(value)
        if "message" in expected:
            assert outcome.message == expected["message"]
        if "labels" in expected:
            assert outcome.labels == expected["labels"]
    if "rows" in case:
        assert result.row_level is not None
        assert result.row_level.column("DataQualityEvaluationResult").to_pylist() == case["rows"]
    if engine != "duckdb" and "history" not in case:
        # beyond what the case asserts: every metric and row outcome is DuckDB's
        assert_same_results(
            result,
            evaluate(
                ruleset,
                dataset(case["data"]),
                references=references or None,
                row_level="rows" in case,
                **options,
            ),
        )


@pytest.mark.parametrize("text", SPEC["parse_errors"])
def test_reference_parse_error(text: str) -> None:
    with pytest.raises(DQDLSyntaxError):
        parse(text)
