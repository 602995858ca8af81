"""Scan sharing: all aggregate metrics of a ruleset come from ONE engine query (STYLE.md: Deequ
asserts its number of jobs is one; so do we)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.dqdl import evaluate, parse

RULESET = """
Rules = [
    RowCount > 0,
    RowCount > 1 where "amount > 10",
    ColumnCount = 5,
    Completeness "name" > 0.5,
    IsComplete "id",
    IsUnique "id",
    IsPrimaryKey "id",
    Uniqueness "code" "name" > 0.1,
    UniqueValueRatio "code" > 0.1,
    DistinctValuesCount "code" >= 2,
    Entropy "code" > 0.1,
    Mean "amount" > 0,
    Sum "amount" > 0,
    StandardDeviation "amount" > 0,
    Variance "amount" > 0,
    ColumnCorrelation "amount" "id" > -2,
    ColumnValues "code" in ["A", "B", "C"],
    ColumnValues "amount" between 0 and 1000 with threshold > 0.5,
    ColumnValues "day" > "2020-01-01",
    ColumnLength "name" <= 10,
    ColumnDataType "name" = "STRING",
    DataFreshness "day" <= 10000 days,
    CustomSql "select count(*) from primary where amount > 5" > 0,
    CustomSql "select * from primary where amount > 0",
    (IsComplete "code") or (Mean "amount" > 1000),
    RowCountMatch "ref" > 0,
    ReferentialIntegrity "code" "ref.code" > 0.5,
    AggregateMatch "sum(amount)" "sum(ref.amount)" > 0
]
"""


@pytest.fixture
def data(tmp_path: Path) -> Path:
    table = pa.table(
        {
            "id": list(range(200)),
            "name": [f"n{i % 50}" if i % 7 else None for i in range(200)],
            "code": [["A", "B", "C"][i % 3] for i in range(200)],
            "amount": [float(i % 90) for i in range(200)],
            "day": pa.array([f"2024-01-{1 + i % 28:02d}" for i in range(200)]).cast(pa.date32()),
        }
    )
    path = tmp_path / "data.parquet"
    pq.write_table(table, path)
    return path


@pytest.fixture
def ref() -> pa.Table:
    return pa.table({"code": ["A", "B"], "amount": [1.0, 2.0]})


def test_every_aggregate_of_a_ruleset_is_one_query(data: Path, ref: pa.Table) -> None:
    result = evaluate(parse(RULESET), data, references={"ref": ref}, now="2024-02-01T00:00:00")
    assert [r.outcome for r in result.rules if r.outcome == "Error"] == []
    assert len(result.rules) == 28
    assert result.queries == 1


def test_row_level_adds_its_own_pass(data: Path, ref: pa.Table) -> None:
    result = evaluate(
        parse(RULESET), data, references={"ref": ref}, now="2024-02-01T00:00:00", row_level=True
    )
    assert result.row_level is not None and result.row_level.num_rows == 200
    # one scan for the metrics, one to read the rows in order, one for the row outcomes
    assert result.queries == 3


def test_a_rule_that_fails_at_run_time_loses_only_its_own_result(data: Path) -> None:
    text = """Rules = [
        RowCount = 200,
        CustomSql "select amount from primary" > 0,
        Mean "amount" > 0
    ]"""
    result = evaluate(parse(text), data)
    outcomes = [r.outcome for r in result.rules]
    assert outcomes == ["Passed", "Error", "Passed"]
    assert "the query returns more than one row" in (result.rules[1].message or "")
    # the shared query failed, so each rule was measured on its own: 1 + 3
    assert result.queries == 4
