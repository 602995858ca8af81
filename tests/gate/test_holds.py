"""Rows with a never-seen value in a domain column wait for a decision (seed 002 in the gate)."""

from __future__ import annotations

import csv
from datetime import date
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
    assert decision.first_date == date(2025, 2, 28)  # the month the value came with (was None)
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


def test_a_month_sent_again_withdraws_the_rows_held_for_it(bench: Bench) -> None:
    declare_domain(bench)
    bench.gate(bench.month("B1", "2025-01-31", LIMITS))
    first = bench.gate(bench.month("B1", "2025-02-28", LIMITS, status={"A3": "FROZEN", "A4": "FROZEN"}))
    assert first.summary.held == 2
    resend = bench.gate(bench.month("B1", "2025-02-28", LIMITS, status={"A3": "FROZEN"}))
    assert resend.summary.held == 1 and resend.summary.replaced_dates == ["2025-02-28"]
    (decision,) = bench.store.decisions("silver.accounts")
    assert decision.rows == 1  # the first run's two held rows were withdrawn with its month
    held = [
        pq.read_table(p).column("account_id").to_pylist()
        for p in (bench.workspace / "held").rglob("*.parquet")
    ]
    assert held == [["A3"]]
    accepted = bench.store.decide(decision.id, "accepted", by="ana")
    release(Workspace(bench.workspace), bench.store, accepted)
    february = Warehouse.open(bench.workspace).read(
        "silver.accounts", {"statement_date": resend.summary.groups[0].statement_date}
    )
    accounts = sorted(february.column("account_id").to_pylist())
    assert accounts == sorted(LIMITS)  # each key once


def test_releasing_never_commits_a_second_record_of_a_key(bench: Bench) -> None:
    declare_domain(bench)
    bench.gate(bench.month("B1", "2025-01-31", LIMITS))
    result = bench.gate(bench.month("B1", "2025-02-28", LIMITS, status={"A3": "FROZEN"}))
    held_file = Path(str(result.summary.held_file))
    before = held_file.read_bytes()
    (decision,) = bench.store.decisions("silver.accounts")
    accepted = bench.store.decide(decision.id, "accepted", by="ana")
    release(Workspace(bench.workspace), bench.store, accepted)
    # a release stopped after its commit and before it rewrote the held file leaves the file as
    # it was: releasing again must not commit A3's February record a second time
    held_file.write_bytes(before)
    lines = release(Workspace(bench.workspace), bench.store, accepted)
    assert len(lines) == 1 and lines[0].startswith("quarantined 1 held row(s)")
    february = Warehouse.open(bench.workspace).read(
        "silver.accounts", {"statement_date": result.summary.groups[0].statement_date}
    )
    assert sorted(february.column("account_id").to_pylist()) == sorted(LIMITS)


def test_held_rows_follow_a_document_saved_under_another_file_name(bench: Bench) -> None:
    """The dataset's document is found by the workspace's one rule: a check document that names
    ``silver.accounts`` is its document whatever its file is called, so its domain columns hold
    rows (they were read from ``checks/silver.accounts.yaml`` only, and nothing was held)."""
    checks = bench.workspace / "checks"
    checks.mkdir(parents=True, exist_ok=True)
    (checks / "accounts.yaml").write_text(
        "apiVersion: assay/v1\nkind: DatasetChecks\n"
        'dataset:\n  name: silver.accounts\n  source: {path: "../data/*.csv"}\n'
        "monitor:\n  domain_columns: [account_status]\n"
    )
    assert Workspace(bench.workspace).document_for("silver.accounts") == checks / "accounts.yaml"
    bench.gate(bench.month("B1", "2025-01-31", LIMITS))
    result = bench.gate(bench.month("B1", "2025-02-28", LIMITS, status={"A3": "FROZEN"}))
    assert (result.summary.passed, result.summary.held) == (4, 1)
    (decision,) = bench.store.decisions("silver.accounts")
    assert (decision.column, decision.value, decision.rows) == ("account_status", "FROZEN", 1)
