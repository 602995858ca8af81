"""A row's identity in the gate: its key and its statement date.

The table never holds two records of one key for one statement date, a row without a key or a
date is never committed, and a row's baseline is its key's latest *committed* record, whether
its months arrive as monthly files or as one backfill file."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from assay.lake.iceberg import Warehouse
from assay.store import MetricStore
from gate.conftest import Bench

# No rule checks the key or the date: the gate itself must refuse a row without them.
RULES = """rule_id,contributor_type,category,severity,rule,description
T01,bank,trend,critical,credit_limit = prev_credit_limit OR account_status = 'ADMIN_CHANGE',Limit stability
A02,all,aggregate,critical,"RowCount >= 0.8 * last()",The extract is not truncated
"""
LIMITS = {"A1": 1000, "A2": 2000, "A3": 3000, "A4": 4000, "A5": 5000}


def rules(bench: Bench) -> Path:
    path = bench.root / "identity-rules.csv"
    path.write_text(RULES)
    return path


def line(account: str, day: str, limit: int, status: str = "ACTIVE") -> str:
    return f"B1,{account},{day},{status},{limit},{limit},0"


def month(day: str, limits: dict[str, int]) -> list[str]:
    return [line(a, day, n) for a, n in limits.items()]


def quarantine_rows(result: Any) -> list[dict[str, str]]:
    if result.quarantine_file is None:
        return []
    with Path(result.quarantine_file).open() as handle:
        return list(csv.DictReader(handle))


def table(bench: Bench) -> list[tuple[str, str, object]]:
    rows = Warehouse.open(bench.workspace).read("silver.accounts", {}).to_pylist()
    return sorted((str(r["statement_date"]), r["account_id"], r["credit_limit"]) for r in rows)


def adds_up(result: Any) -> None:
    s = result.summary
    assert s.total == s.passed + s.quarantined + s.held


# --- a key sent twice for one statement date -----------------------------------------------


def test_every_copy_of_a_key_sent_twice_for_one_month_is_quarantined(bench: Bench) -> None:
    bench.gate(bench.csv(*month("2025-01-31", LIMITS)), rules=rules(bench))
    feb = bench.csv(
        line("A1", "2025-02-28", 1500),
        line("A1", "2025-02-28", 1500),
        *month("2025-02-28", {a: n for a, n in LIMITS.items() if a != "A1"}),
    )
    result = bench.gate(feb, rules=rules(bench))
    s = result.summary
    adds_up(result)
    assert (s.total, s.passed, s.quarantined) == (6, 4, 2)
    copies = quarantine_rows(result)
    assert [r["account_id"] for r in copies] == ["A1", "A1"]
    assert {r["dq_failed_rules"] for r in copies} == {"duplicate"}
    assert {r["dq_reasons"] for r in copies} == {
        "account_id A1 appears 2 times for statement_date 2025-02-28 in this load"
    }
    # the other rows are judged against the committed January, and only they
    assert (s.rules["T01"].passed, s.rules["T01"].failed, s.rules["T01"].skipped) == (4, 0, 0)
    assert [(d, a) for d, a, _ in table(bench) if d == "2025-02-28"] == [
        ("2025-02-28", "A2"),
        ("2025-02-28", "A3"),
        ("2025-02-28", "A4"),
        ("2025-02-28", "A5"),
    ]


def test_identical_copies_in_a_first_load_are_not_both_committed(bench: Bench) -> None:
    result = bench.gate(
        bench.csv(*(line(a, "2025-01-31", n) for a, n in (("A1", 1000), ("A2", 2000), ("A1", 1000)))),
        rules=rules(bench),
    )
    adds_up(result)
    assert (result.summary.passed, result.summary.quarantined) == (1, 2)
    assert table(bench) == [("2025-01-31", "A2", 2000)]
    assert [g.rows for g in result.summary.groups] == [1]


def test_no_copy_of_a_duplicated_key_is_a_baseline_in_a_backfill(bench: Bench) -> None:
    bench.gate(bench.csv(*month("2025-03-31", LIMITS)), rules=rules(bench))
    backfill = bench.csv(
        line("A1", "2025-04-30", 9999),
        line("A1", "2025-04-30", 9999),
        *month("2025-04-30", {a: n for a, n in LIMITS.items() if a != "A1"}),
        *month("2025-05-31", LIMITS),  # May's A1 is March's limit: stable
    )
    result = bench.gate(backfill, rules=rules(bench))
    adds_up(result)
    copies = quarantine_rows(result)
    assert [(r["account_id"], r["statement_date"], r["dq_failed_rules"]) for r in copies] == [
        ("A1", "2025-04-30", "duplicate"),
        ("A1", "2025-04-30", "duplicate"),
    ]
    assert ("2025-05-31", "A1", 1000) in table(bench)


# --- a row's baseline is its key's latest committed record ------------------------------------


def _gate_all(
    root: Path, engine: Any, files: list[list[str]], domain: str | None = None
) -> tuple[dict[tuple[str, str], str], list[Any]]:
    """Gate ``files`` in turn in a workspace of its own: each row's route (``committed`` or the
    quarantine's rule ids) by (account, statement date), and the table's rows at the end."""
    root.mkdir()
    with MetricStore.open(workspace=root / "ws") as store:
        bench = Bench(root, store, engine)
        if domain is not None:
            (bench.workspace / "checks").mkdir(parents=True)
            (bench.workspace / "checks" / "silver.accounts.yaml").write_text(f"domain_columns: [{domain}]\n")
        routes: dict[tuple[str, str], str] = {}
        for lines in files:
            result = bench.gate(bench.csv(*lines), rules=rules(bench))
            adds_up(result)
            for row in quarantine_rows(result):
                routes[(row["account_id"], row["statement_date"])] = row["dq_failed_rules"]
            if result.summary.held_file:
                for row in pq.read_table(result.summary.held_file).to_pylist():
                    routes[(row["account_id"], str(row["statement_date"]))] = "held"
        committed = table(bench)
        for day, account, _ in committed:
            routes.setdefault((account, day), "committed")
        return routes, committed


def _same_as_monthly_files(
    tmp_path: Path, engine: Any, first: list[str], months: list[list[str]], domain: str | None = None
) -> dict[Any, str]:
    monthly = _gate_all(tmp_path / "monthly", engine, [first, *months], domain)
    backfill = _gate_all(tmp_path / "backfill", engine, [first, [r for rows in months for r in rows]], domain)
    assert backfill == monthly
    return backfill[0]


def test_a_row_quarantined_earlier_in_a_backfill_is_no_baseline(bench: Bench, tmp_path: Path) -> None:
    march = month("2025-03-31", LIMITS)
    april = month("2025-04-30", {**LIMITS, "A1": 9999})
    may = month("2025-05-31", {**LIMITS, "A1": 9999})
    routes = _same_as_monthly_files(tmp_path, bench.engine, march, [april, may])
    assert routes[("A1", "2025-04-30")] == "T01" and routes[("A1", "2025-05-31")] == "T01"
    assert routes[("A2", "2025-05-31")] == "committed"


def test_a_row_that_passes_against_the_committed_record_is_committed_after_a_quarantined_one(
    bench: Bench, tmp_path: Path
) -> None:
    march = month("2025-03-31", LIMITS)
    april = month("2025-04-30", {**LIMITS, "A1": 9999})  # a wrong limit, quarantined
    may = month("2025-05-31", LIMITS)  # back to March's limit: stable against what is committed
    june = month("2025-06-30", LIMITS)
    routes = _same_as_monthly_files(tmp_path, bench.engine, march, [april, may, june])
    assert routes[("A1", "2025-04-30")] == "T01"
    assert routes[("A1", "2025-05-31")] == "committed" and routes[("A1", "2025-06-30")] == "committed"


def test_a_month_refused_whole_in_a_backfill_is_no_baseline(bench: Bench, tmp_path: Path) -> None:
    march = month("2025-03-31", LIMITS)
    # April is truncated (refused by A02), its A1 a legitimate change that never reached the table
    april = [line("A1", "2025-04-30", 1500, "ADMIN_CHANGE"), line("A2", "2025-04-30", 2000)]
    may = month("2025-05-31", LIMITS)  # May's A1 keeps March's limit: stable
    routes = _same_as_monthly_files(tmp_path, bench.engine, march, [april, may])
    assert routes[("A1", "2025-04-30")] == "A02" and routes[("A2", "2025-04-30")] == "A02"
    assert all(routes[(a, "2025-05-31")] == "committed" for a in LIMITS)


def test_a_month_refused_in_a_backfill_is_no_history_of_the_next_month(bench: Bench, tmp_path: Path) -> None:
    """The issue's truncated extracts, as one backfill file: April (2 of 5 accounts) is refused
    by A02 (RowCount >= 0.8 * last()); May (3 of 5) must be judged against March's 5, as it is
    sent alone, not against the refused April's 2, which it would pass."""
    march = month("2025-03-31", LIMITS)
    april = month("2025-04-30", {a: LIMITS[a] for a in ("A1", "A2")})
    may = month("2025-05-31", {a: LIMITS[a] for a in ("A1", "A2", "A3")})
    routes = _same_as_monthly_files(tmp_path, bench.engine, march, [april, may])
    assert {routes[(a, "2025-05-31")] for a in ("A1", "A2", "A3")} == {"A02"}


def test_a_row_held_earlier_in_a_backfill_is_no_baseline(bench: Bench, tmp_path: Path) -> None:
    march = month("2025-03-31", LIMITS)
    # April's A1 changes its limit legitimately, but with a never-seen temporary limit: held
    april = [
        *month("2025-04-30", {a: n for a, n in LIMITS.items() if a != "A1"}),
        "B1,A1,2025-04-30,ADMIN_CHANGE,1500,1500,7",
    ]
    may = month("2025-05-31", LIMITS)  # May's A1 keeps March's limit, the one committed
    routes = _same_as_monthly_files(tmp_path, bench.engine, march, [april, may], domain="temporary_limit")
    assert routes[("A1", "2025-04-30")] == "held" and routes[("A1", "2025-05-31")] == "committed"


# --- a row without a key or a statement date -----------------------------------------------


def test_a_row_without_a_key_or_a_date_is_quarantined_naming_the_column(bench: Bench) -> None:
    result = bench.gate(
        bench.csv(
            line("A1", "2025-01-31", 1000),
            line("", "2025-01-31", 5000),
            line("A6", "", 6000),
            line("A7", "2025-01-31", 7000),
        ),
        rules=rules(bench),
    )
    s = result.summary
    adds_up(result)
    assert (s.total, s.passed, s.quarantined) == (4, 2, 2)
    reasons = {r["credit_limit"]: (r["dq_failed_rules"], r["dq_reasons"]) for r in quarantine_rows(result)}
    assert reasons["5000"][0] == "identity" and "account_id is blank" in reasons["5000"][1]
    assert reasons["6000"][0] == "identity" and "statement_date is blank" in reasons["6000"][1]
    assert [(g.statement_date, g.rows) for g in s.groups] == [("2025-01-31", 2)]
    assert table(bench) == [("2025-01-31", "A1", 1000), ("2025-01-31", "A7", 7000)]


def test_a_row_without_a_contributor_says_it_is_blank(bench: Bench) -> None:
    """Not "contributor_id is 'None'": the file had nothing there."""
    result = bench.gate(
        bench.csv(line("A1", "2025-01-31", 1000), ",A2,2025-01-31,ACTIVE,2000,2000,0"), rules=rules(bench)
    )
    adds_up(result)
    [row] = quarantine_rows(result)
    assert row["dq_failed_rules"] == "contributor"
    assert row["dq_reasons"] == "contributor_id is blank, not B1, the contributor gated"
