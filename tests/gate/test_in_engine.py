"""The gate's batch stays in its engine (issue 10): only what must leave reaches Python, and the
committed rows are written as Parquet by the engine, then committed by PyIceberg."""

from __future__ import annotations

import datetime
from typing import Any

import pyarrow as pa
import pytest

from assay.engine.duckdb import DuckDBEngine
from assay.engine.spark import SparkEngine
from assay.lake.iceberg import Warehouse
from gate.conftest import Bench

ACCOUNTS = 400


@pytest.fixture
def largest_result(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The row counts of every result an engine hands to Python during the test."""
    seen: list[int] = []
    for kind in (DuckDBEngine, SparkEngine):
        original = kind._run

        def run(self: Any, sql: str, original: Any = original) -> pa.Table:
            table: pa.Table = original(self, sql)
            seen.append(table.num_rows)
            return table

        monkeypatch.setattr(kind, "_run", run)
    return seen


def test_no_query_brings_the_batch_into_python(bench: Bench, largest_result: list[int]) -> None:
    limits = {f"A{i:04d}": 1000 + i for i in range(ACCOUNTS)}
    first = bench.gate(bench.month("B1", "2024-01-31", limits))
    assert first.summary.passed == ACCOUNTS
    moved = dict(limits, A0007=5, A0100=6, A0200=7)  # three limits changed: T01 quarantines them
    largest_result.clear()
    second = bench.gate(bench.month("B1", "2024-02-29", moved))
    assert (second.summary.passed, second.summary.quarantined) == (ACCOUNTS - 3, 3)
    assert largest_result, "the gate ran no query"
    # what came back: counts, the failing rows' positions, the quarantined rows' text
    assert max(largest_result) <= 3


def test_the_committed_rows_are_written_by_the_engine(bench: Bench) -> None:
    limits = {f"A{i:04d}": 1000 + i for i in range(50)}
    result = bench.gate(bench.month("B1", "2024-01-31", limits))
    with Warehouse.open(bench.workspace) as warehouse:
        where = {"contributor_id": "B1", "statement_date": datetime.date(2024, 1, 31)}
        files = warehouse.parquet_files("silver.accounts", where)
        assert files, "the month is in the table"
        # the run's own folder in the table's data location, named after the run
        assert all(f.parent.parent.name.startswith(f"assay-{result.summary.run_id}-") for f in files)
        rows = warehouse.read("silver.accounts", where)
    assert sorted(rows.column("account_id").to_pylist()) == sorted(limits)
    assert (
        dict(zip(rows.column("account_id").to_pylist(), rows.column("credit_limit").to_pylist(), strict=True))
        == limits
    )


def test_a_failed_commit_leaves_no_file_behind(bench: Bench, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files the engine wrote for a commit that does not land (the catalog refuses every
    attempt) are removed with their folder; the run fails and the table is as it was."""
    from pyiceberg.exceptions import CommitFailedException
    from pyiceberg.table import Transaction

    from assay.errors import PlatformError

    bench.gate(bench.month("B1", "2024-01-31", {"A1": 10}))

    def conflict(self: Any) -> Any:
        raise CommitFailedException("another writer moved the table")

    monkeypatch.setattr(Transaction, "commit_transaction", conflict)
    monkeypatch.setattr("assay.lake.iceberg._pause", lambda attempt: None)
    with pytest.raises(PlatformError, match="nothing was committed"):
        bench.gate(bench.month("B1", "2024-02-29", {"A1": 10}))
    data = bench.workspace / "warehouse" / "silver" / "accounts" / "data"
    assert len(list(data.glob("assay-*"))) == 1  # the first run's folder only
    monkeypatch.undo()
    with Warehouse.open(bench.workspace) as warehouse:
        assert warehouse.read("silver.accounts", {"contributor_id": "B1"}).num_rows == 1
