"""Rows with a never-seen value in a domain column wait for a decision (seed 002 in the gate)."""

from __future__ import annotations

import csv
from pathlib import Path

import pyarrow.parquet as pq

from assay.gate.holds import release
from assay.lake.iceberg import Warehouse
from assay.workspace import Workspace
from gate.conftest import Bench

LIMITS = {"A1": 1000, "A2": 2000, "A3": 3000, "A4": 4000, "A5": 5000}


def declare_domain(bench: Bench) -> None:
    checks = bench.workspace / "checks"
    checks.mkdir(parents=True, exist_ok=True)
    (checks / "silver.accounts.yaml").write_text("domain_columns: [account_status]\n")


def rows_in_table(bench: Bench) -> int:
    return int(Warehouse.open(bench.workspace).read("silver.accounts", {}).num_rows)


def test_a_new_value_is_held_until_accepted(bench: Bench) -> None:
    declare_domain(bench)
    bench.gate(bench.month("B1", "2025-01-31", LIMITS, status={"A2": "ADMIN_CHANGE"}))
    result = bench.gate(bench.month("B1", "2025-02-28", LIMITS, status={"A3": "FROZEN", "A4": "FROZEN"}))
    s = result.summary
    assert (s.total, s.passed, s.quarantined, s.held) == (5, 3, 0, 2)
    assert s.total == s.passed + s.quarantined + s.held
    assert rows_in_table(bench) == 8
    (decision,) = bench.store.decisions("silver.accounts")
    assert (decision.column, decision.value, decision.rows, decision.status) == (
        "account_status",
        "FROZEN",
        2,
        "pending",
    )
    held = pq.read_table(result.summary.held_file)
    assert sorted(held.column("account_id").to_pylist()) == ["A3", "A4"] and "__waits" in held.column_names
    # a second batch with the same undecided value is held too, on the same decision
    again = bench.gate(bench.month("B2", "2025-02-28", {"Z1": 1}, status={"Z1": "FROZEN"}), contributor="B2")
    assert again.summary.held == 1 and again.summary.decisions == [decision.id]
    accepted = bench.store.decide(decision.id, "accepted", by="ana")
    lines = release(Workspace(bench.workspace), bench.store, accepted)
    assert len(lines) == 2 and rows_in_table(bench) == 11
    assert not list((bench.workspace / "held").rglob("*.parquet"))
    # from now on the value is known
    march = bench.gate(bench.month("B1", "2025-03-31", LIMITS, status={"A3": "FROZEN"}))
    assert march.summary.held == 0 and march.summary.passed == 5


def test_a_rejected_value_is_quarantined(bench: Bench) -> None:
    declare_domain(bench)
    bench.gate(bench.month("B1", "2025-01-31", LIMITS))
    bench.gate(bench.month("B1", "2025-02-28", LIMITS, status={"A1": "LOCKD"}))
    (decision,) = bench.store.decisions("silver.accounts")
    rejected = bench.store.decide(decision.id, "rejected", by="ana", note="typo of LOCKED")
    (line,) = release(Workspace(bench.workspace), bench.store, rejected)
    target = Path(line.rsplit(": ", 1)[1])
    with target.open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert (
        row["account_id"] == "A1" and row["dq_failed_rules"] == "domain" and "rejected" in row["dq_reasons"]
    )
    # the value comes back next month: quarantined at once, nothing held
    march = bench.gate(bench.month("B1", "2025-03-31", LIMITS, status={"A1": "LOCKD"}))
    assert (march.summary.held, march.summary.quarantined) == (0, 1)


def test_a_column_without_history_learns_its_domain(bench: Bench) -> None:
    declare_domain(bench)
    result = bench.gate(bench.month("B1", "2025-01-31", LIMITS, status={"A1": "ANYTHING"}))
    assert result.summary.held == 0 and not bench.store.decisions()
