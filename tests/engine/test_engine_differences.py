"""Where DuckDB and Spark differ, one row each, run on both engines (docs/engines.md has the table).

The expected value is Glue's, which runs DQDL on Spark: Java regex, Java date patterns, Spark's
casts. An engine that still gives another answer carries a strict xfail naming the engine and
why, so the day it agrees the test says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pytest

from assay.dqdl import evaluate
from sparksession import engine_name


@dataclass(frozen=True)
class Difference:
    id: str
    rule: str
    data: pa.Table
    metric: str
    expected: float
    gaps: dict[str, str] = field(default_factory=dict)  # engine -> why it gives another answer


DIFFERENCES = [
    # Regex dialect: DQDL patterns are Java's. DuckDB runs RE2 (assay translates: (?<name>...) is
    # (?P<name>...) there); Spark gets the pattern as written.
    Difference(
        "regex-named-group",
        'ColumnValues "code" matches "(?<year>[0-9]{4})-[0-9]{2}"',
        pa.table({"code": ["2021-01", "x", "1999-12", "2021-1"]}),
        "Column.code.ColumnValues.Compliance",
        0.5,
    ),
    Difference(
        "regex-posix-class",
        'ColumnValues "code" matches "\\p{Alpha}+"',
        pa.table({"code": ["abc", "x1", "Zz", ""]}),
        "Column.code.ColumnValues.Compliance",
        0.5,
    ),
    Difference(
        "regex-in-custom-sql",
        "CustomSql \"select count(*) from primary where code rlike '^(?<w>[a-z]+)$'\" = 2",
        pa.table({"code": ["abc", "x1", "zz"]}),
        "Dataset.*.CustomSQL",
        2.0,
    ),
    # Date patterns: Java's `dd` is exactly two digits; DuckDB's strptime %d takes one or two.
    Difference(
        "date-format-two-digit-day",
        'ColumnDataType "d" = "DATE" with format = "dd/MM/yyyy"',
        pa.table({"d": ["01/02/2021", "1/2/2021", "2021-01-02", "31/12/2021"]}),
        "Column.d.ColumnDataType.Compliance",
        0.5,
        gaps={"duckdb": "DuckDB's strptime reads '1/2/2021' with %d/%m/%Y; Java's dd/MM needs two digits"},
    ),
    Difference(
        "date-format-in-custom-sql",
        "CustomSql \"select count(*) from primary where to_date(d, 'dd/MM/yyyy') is not null\" = 1",
        pa.table({"d": ["01/02/2021", "1/2/2021"]}),
        "Dataset.*.CustomSQL",
        1.0,
        gaps={"duckdb": "DuckDB's strptime reads '1/2/2021' with %d/%m/%Y; Java's dd/MM needs two digits"},
    ),
    # CAST of a fraction to INT: Spark truncates toward zero, DuckDB rounds.
    Difference(
        "cast-to-int-truncates",
        'CustomSql "select count(*) from primary where cast(x as int) = 1" = 1',
        pa.table({"x": [1.9, 2.5, -0.5]}),
        "Dataset.*.CustomSQL",
        1.0,
        gaps={"duckdb": "DuckDB rounds CAST(1.9 AS INT) to 2; Spark truncates to 1"},
    ),
    Difference(
        "cast-to-int-in-where",
        'RowCount = 1 where "cast(x as int) = 1"',
        pa.table({"x": [1.9, 2.5, -0.5]}),
        "Dataset.*.RowCount",
        1.0,
        gaps={"duckdb": "DuckDB rounds CAST(1.9 AS INT) to 2; Spark truncates to 1"},
    ),
    # Division by zero (ANSI mode off on Spark, as assay sets it): NULL on both, never an error.
    Difference(
        "division-by-zero-is-null",
        'CustomSql "select count(*) from primary where x / 0 is null" = 3',
        pa.table({"x": [1.9, 2.5, -0.5]}),
        "Dataset.*.CustomSQL",
        3.0,
    ),
]


@pytest.mark.parametrize("difference", DIFFERENCES, ids=lambda d: d.id)
def test_engines_give_glues_answer(
    difference: Difference, engine: Any, request: pytest.FixtureRequest
) -> None:
    gap = difference.gaps.get(engine_name(engine))
    if gap:
        request.applymarker(
            pytest.mark.xfail(reason=f"{engine_name(engine)}: {gap}", raises=AssertionError, strict=True)
        )
    (outcome,) = evaluate(f"Rules = [ {difference.rule} ]", difference.data, engine=engine).rules
    assert outcome.metrics.get(difference.metric) == pytest.approx(difference.expected), outcome
    assert outcome.outcome in ("Passed", "Failed"), outcome


def test_every_gap_names_a_known_engine() -> None:
    assert {e for d in DIFFERENCES for e in d.gaps} <= {"duckdb", "spark"}


def test_a_pattern_re2_cannot_run_is_refused_on_both_engines(engine: Any) -> None:
    # Spark could run a lookahead; assay refuses it on every engine, so that a ruleset means the
    # same wherever it runs (the refusal names the construct).
    (outcome,) = evaluate(
        'Rules = [ ColumnValues "code" matches "(?=a)b" ]', pa.table({"code": ["ab"]}), engine=engine
    ).rules
    assert outcome.outcome == "Error"
    assert "lookahead" in (outcome.message or "")
