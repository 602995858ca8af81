"""Run the Deequ DQDL outcome vectors (tests/conformance/deequ_outcomes.json) through assay.

The vectors are data; this module turns each case into an evaluation and a list of mismatches.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa

from assay.dqdl import evaluate, parse

HERE = Path(__file__).parent
NOW = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)

_TYPES = {
    "string": pa.string(),
    "int": pa.int32(),
    "double": pa.float64(),
    "boolean": pa.bool_(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
}


def cases() -> list[dict[str, Any]]:
    return json.loads((HERE / "deequ_outcomes.json").read_text())["cases"]


def _placeholder(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    match = re.fullmatch(r"\{\{(today|now)-(\d+)d\}\}", value)
    if not match:
        return value
    days = int(match.group(2))
    if match.group(1) == "today":
        return (NOW.date() - timedelta(days=days)).isoformat()
    # LocalDateTime.toString: nine fraction digits when the clock has nanoseconds.
    return (NOW.replace(tzinfo=None) - timedelta(days=days)).isoformat(timespec="microseconds") + "000"


def table(spec: dict[str, Any]) -> pa.Table:
    columns = spec["columns"]
    rows = [[_placeholder(v) for v in row] for row in spec["rows"]]
    arrays = []
    for i, column in enumerate(columns):
        values = [row[i] for row in rows]
        if column["type"] == "date":
            values = [date.fromisoformat(v) if v else None for v in values]
        elif column["type"] == "timestamp":
            values = [datetime.fromisoformat(v) if v else None for v in values]
        arrays.append(pa.array(values, _TYPES[column["type"]]))
    schema = pa.schema([(c["name"], _TYPES[c["type"]]) for c in columns])
    return pa.Table.from_arrays(arrays, schema=schema)


def run(case: dict[str, Any], engine: Any = None) -> Any:
    refs = {
        alias: table(spec)
        for alias, spec in {**case.get("references", {}), **case.get("sql_views", {})}.items()
    }
    return evaluate(
        parse(case["ruleset"]),
        table(case["data"]),
        references=refs or None,
        now=NOW,
        row_level=case["api"] == "processRows",
        engine=engine,
    )


def check_metric(check: dict[str, Any], metrics: dict[str, float | None]) -> str | None:
    if "count" in check:
        return None if len(metrics) == check["count"] else f"{len(metrics)} metrics, wanted {check['count']}"
    if "any_value_equals" in check:
        return (
            None
            if check["any_value_equals"] in metrics.values()
            else f"no metric equals {check['any_value_equals']}"
        )
    if "first_value_equals" in check:
        first = next(iter(metrics.values()), None)
        return (
            None
            if first == check["first_value_equals"]
            else f"first metric {first} != {check['first_value_equals']}"
        )
    key = check["key"]
    if key not in metrics:
        return f"metric {key} missing (have {sorted(metrics)})"
    value = metrics[key]
    if check.get("present"):
        return None
    if "equals" in check:
        return None if value == check["equals"] else f"{key}={value}, wanted {check['equals']}"
    if "approx" in check:
        ok = value is not None and abs(value - check["approx"]) <= check["tol"]
        return None if ok else f"{key}={value}, wanted {check['approx']}±{check['tol']}"
    if "trunc" in check:
        return (
            None
            if value is not None and int(value) == check["trunc"]
            else f"{key}={value}, trunc {check['trunc']}"
        )
    if "trunc_times_100" in check:
        ok = value is not None and int(value * 100) == check["trunc_times_100"]
        return None if ok else f"{key}={value}, trunc*100 {check['trunc_times_100']}"
    if "is_nan" in check:
        return None if value is not None and math.isnan(value) else f"{key}={value}, wanted NaN"
    if "greater_than" in check:
        return (
            None
            if value is not None and value > check["greater_than"]
            else f"{key}={value} <= {check['greater_than']}"
        )
    raise AssertionError(f"unknown metric check {check}")


def check_reason(check: dict[str, Any], message: str | None) -> str | None:
    if "equals" in check:
        return None if message == check["equals"] else f"message {message!r} != {check['equals']!r}"
    if "contains" in check:
        missing = [s for s in check["contains"] if s not in (message or "")]
        return None if not missing else f"message {message!r} lacks {missing}"
    if check.get("is_null"):
        return None if message is None else f"message {message!r}, wanted none"
    if check.get("not_null") or check.get("not_empty"):
        return None if message else "no message"
    raise AssertionError(f"unknown reason check {check}")


def _row_holds(key: str, value: Any, row: dict[str, Any]) -> bool:
    passed, failed, skipped = (
        row[c] for c in ("DataQualityRulesPass", "DataQualityRulesFail", "DataQualityRulesSkip")
    )
    lists = {"pass": passed, "fail": failed, "skip": skipped}
    if key == "outcome":
        return bool(row["DataQualityEvaluationResult"] == value)
    kind, _, test = key.partition("_")
    items = lists[kind]
    if test == "contains":
        return all(x in items for x in value)
    if test == "empty":
        return (not items) == value
    if test == "not_empty":
        return bool(items) == value
    if test == "count":
        return len(items) == value
    raise AssertionError(f"unknown row check {key}")


def check_rows(spec: dict[str, Any], rows: pa.Table | None) -> list[str]:
    if rows is None:
        return ["no row-level result"]
    problems = []
    if "count" in spec and rows.num_rows != spec["count"]:
        problems.append(f"{rows.num_rows} rows, wanted {spec['count']}")
    problems += [
        f"row-level column {c} missing" for c in spec.get("columns_include", []) if c not in rows.column_names
    ]
    data = rows.to_pylist()
    for j, want in enumerate(spec.get("rows", [])):
        for key, value in want.items():
            if not _row_holds(key, value, data[j]):
                problems.append(f"row {j}: {key}={value!r}, but the row is {data[j]}")
    return problems
