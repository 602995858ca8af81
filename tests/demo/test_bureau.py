"""The simulated bureau: reproducible, clean under every rule of bureau_rules.csv, and each fault breaks
exactly the rows and rules it announces.

The gate does not exist yet, so the rules are checked here by a small reference: each rule of
bureau_rules.csv as a DuckDB predicate, on the batch unioned with history and the previous month lagged
onto every row (the seed's hybrid baseline).
"""

from __future__ import annotations

import csv
import io
from datetime import date
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from assay.demo.bureau import (
    DEFAULT_CONTRIBUTORS,
    SCHEMA,
    Bureau,
    Contributor,
    csv_text,
    month_end,
    write_csv,
)
from assay.demo.faults import (
    PARSE_ERROR,
    ROW_FAULTS,
    backfill,
    double_limits,
    first_file,
    malformed_rows,
    plant,
    rule_severities,
    swap_limit_mapping,
    truncate,
)
from assay.errors import ConfigError

MONTHS = 24
BANK, LENDER = "BANK_A", "PAYLATER"

# Each row rule of bureau_rules.csv as a predicate that holds on a passing row; a trend rule passes when
# there is no previous month (it is skipped). Rule id -> (contributor types, predicate).
ROW_RULES = {
    "C01": ("bank instalment", "account_id IS NOT NULL"),
    "C02": ("bank instalment", "statement_date IS NOT NULL"),
    "C03": ("bank instalment", "credit_limit IS NOT NULL"),
    "K01": (
        "bank instalment",
        "(SELECT count(*) FROM t AS u WHERE u.account_id = t.account_id "
        "AND u.statement_date = t.statement_date) = 1",
    ),
    "I01": ("bank instalment", "new_ic IS NOT NULL OR old_ic IS NOT NULL OR passport_no IS NOT NULL"),
    "I02": ("bank instalment", "new_ic IS NULL OR regexp_full_match(new_ic, '[0-9]{12}')"),
    "D01": ("bank instalment", "operation_code IN ('N', 'U', 'C', 'D')"),
    "D02": (
        "bank instalment",
        "account_status IN ('ACTIVE', 'CLOSED', 'ADMIN_CHANGE', 'DEFAULT', 'WRITTEN_OFF')",
    ),
    "D03": ("bank", "product_type IN ('CARD', 'PERSONAL', 'MORTGAGE', 'AUTO')"),
    "D04": ("instalment", "product_type IN ('BNPL', 'INSTALMENT')"),
    "F01": ("bank instalment", "credit_limit = product_limit + temporary_limit"),
    "F02": ("bank instalment", "credit_limit >= 0 AND outstanding_balance >= 0 AND amount_in_arrears >= 0"),
    "F03": ("instalment", "instalment_amount > 0 AND instalment_amount <= credit_limit"),
    "T01": (
        "bank",
        "prev_credit_limit IS NULL OR credit_limit = prev_credit_limit OR account_status = 'ADMIN_CHANGE'",
    ),
    "T02": (
        "bank",
        "prev_product_limit IS NULL OR product_limit = prev_product_limit OR account_status = 'ADMIN_CHANGE'",
    ),
    "T03": (
        "instalment",
        "prev_instalment_amount IS NULL OR instalment_amount = prev_instalment_amount "
        "OR account_status = 'ADMIN_CHANGE'",
    ),
    "T04": (
        "bank instalment",
        "prev_month_in_arrears IS NULL OR abs(month_in_arrears - prev_month_in_arrears) <= 2",
    ),
    "T05": ("bank instalment", "NOT (amount_in_arrears > 0 AND month_in_arrears = 0)"),
}
# Aggregate rules per contributor-month, against the month before: rule id -> predicate on (this, last).
GROUP_RULES = {
    "C04": "(completeness >= 0.99)",
    "A01": "(last_arrears IS NULL OR arrears >= 0.5 * last_arrears)",
    "A02": "(last_rows IS NULL OR rows >= 0.8 * last_rows)",
}


# Contributor-months of the batch with last month's row count and arrears total (from history or batch).
GROUPS = """
CREATE TABLE g AS
SELECT * FROM (
    SELECT *, lag(rows) OVER w AS last_rows, lag(arrears) OVER w AS last_arrears
    FROM (
        SELECT contributor_id, statement_date, count(*) AS rows, sum(amount_in_arrears) AS arrears,
               count(outstanding_balance) / count(*) AS completeness, false AS in_batch
        FROM history GROUP BY ALL
        UNION ALL
        SELECT contributor_id, statement_date, count(*), sum(amount_in_arrears),
               count(outstanding_balance) / count(*), true
        FROM batch GROUP BY ALL
    )
    WINDOW w AS (PARTITION BY contributor_id ORDER BY statement_date)
)
WHERE in_batch
"""


def test_the_reference_covers_every_rule_of_the_control_file() -> None:
    assert set(ROW_RULES) | set(GROUP_RULES) | {PARSE_ERROR} == set(rule_severities())


def _baselined(con: duckdb.DuckDBPyConnection, batch: pa.Table, history: list[pa.Table], stale: bool) -> None:
    """Table ``t``: the batch's rows with their previous month's values as prev_ columns.

    The hybrid baseline lags over history and batch together; a ``stale`` baseline takes every prev_
    from the last month of history, as a gate that looks up "the last committed record" would.
    """
    con.register("batch", batch)
    con.register("history", pa.concat_tables(history) if history else SCHEMA.empty_table())
    if stale:
        con.execute(
            "CREATE TABLE t AS SELECT b.*, h.credit_limit AS prev_credit_limit, h.product_limit AS "
            "prev_product_limit, h.instalment_amount AS prev_instalment_amount, h.month_in_arrears AS "
            "prev_month_in_arrears FROM batch b LEFT JOIN (SELECT * FROM history WHERE statement_date = "
            "(SELECT max(statement_date) FROM history)) h USING (account_id)"
        )
        return
    lags = ", ".join(
        f"lag({c}) OVER (PARTITION BY account_id ORDER BY statement_date) AS prev_{c}"
        for c in ("credit_limit", "product_limit", "instalment_amount", "month_in_arrears")
    )
    con.execute(
        f"CREATE TABLE t AS SELECT * EXCLUDE (in_batch) FROM (SELECT *, {lags} FROM "
        "(SELECT *, false AS in_batch FROM history UNION ALL SELECT *, true FROM batch)) WHERE in_batch"
    )


def failures(
    batch: pa.Table, history: list[pa.Table] | None = None, *, stale: bool = False, null_fails: bool = False
) -> dict[str, set[str]]:
    """Account id -> the rules its rows fail, per the reference above.

    ``null_fails`` evaluates trend rules as a gate that counts a NULL comparison as a failure would.
    """
    kind = (
        "bank"
        if batch.column("product_type")[0].as_py() in ("CARD", "PERSONAL", "MORTGAGE", "AUTO")
        else "instalment"
    )
    found: dict[str, set[str]] = {}
    with duckdb.connect() as con:
        _baselined(con, batch, history or [], stale)
        for rule, (kinds, predicate) in ROW_RULES.items():
            if kind not in kinds.split():
                continue
            if null_fails:
                predicate = (
                    predicate.split(" IS NULL OR ", 1)[1] if predicate.startswith("prev_") else predicate
                )
            sql = f"SELECT account_id FROM t WHERE NOT coalesce(({predicate}), false)"
            for (account,) in con.execute(sql).fetchall():
                found.setdefault(account, set()).add(rule)
        con.execute(GROUPS)
        for rule, predicate in GROUP_RULES.items():
            sql = (
                "SELECT account_id FROM t JOIN g USING (contributor_id, statement_date) WHERE NOT "
                + predicate
            )
            for (account,) in con.execute(sql).fetchall():
                found.setdefault(account, set()).add(rule)
    return found


def as_sets(mapping: object) -> dict[str, set[str]]:
    assert isinstance(mapping, dict)
    return {account: set(rules) for account, rules in mapping.items()}


@pytest.fixture(scope="module")
def bureau() -> Bureau:
    return Bureau()


@pytest.fixture(scope="module")
def history(bureau: Bureau) -> dict[str, list[pa.Table]]:
    return {c.id: bureau.months(c.id, MONTHS) for c in DEFAULT_CONTRIBUTORS}


# Determinism and shape


def test_the_same_seed_gives_the_same_tables_in_any_order(bureau: Bureau) -> None:
    late_first = Bureau(seed=7).month(BANK, 9)
    assert bureau.months(BANK, 10)[9].equals(late_first)
    assert Bureau(seed=7).month(LENDER, 3).equals(bureau.month(LENDER, 3))
    assert not Bureau(seed=8).month(BANK, 3).equals(bureau.month(BANK, 3))


def test_adding_a_contributor_changes_no_other(bureau: Bureau) -> None:
    more = Bureau([Contributor("OTHER", "bank", 10), *reversed(DEFAULT_CONTRIBUTORS)])
    assert more.month(LENDER, 4).equals(bureau.month(LENDER, 4))


def test_files_follow_the_contract(bureau: Bureau, history: dict[str, list[pa.Table]]) -> None:
    for contributor in DEFAULT_CONTRIBUTORS:
        files = history[contributor.id]
        assert all(f.schema == SCHEMA for f in files)
        assert [f.column("statement_date")[0].as_py() for f in files[:3]] == [
            date(2025, 1, 31),
            date(2025, 2, 28),
            date(2025, 3, 31),
        ]
        for f in files:
            assert set(f.column("contributor_id").to_pylist()) == {contributor.id}
            assert len(set(f.column("statement_date").to_pylist())) == 1
            assert len(set(f.column("account_id").to_pylist())) == f.num_rows
    assert month_end(date(2024, 1, 31), 1) == date(2024, 2, 29)


# Clean data satisfies every rule


@pytest.mark.parametrize("contributor", [c.id for c in DEFAULT_CONTRIBUTORS])
def test_clean_months_fail_no_rule(history: dict[str, list[pa.Table]], contributor: str) -> None:
    assert failures(pa.concat_tables(history[contributor])) == {}


@pytest.mark.parametrize("contributor", [c.id for c in DEFAULT_CONTRIBUTORS])
def test_accounts_open_once_and_close_once(history: dict[str, list[pa.Table]], contributor: str) -> None:
    with duckdb.connect() as con:
        con.register("t", pa.concat_tables(history[contributor]))
        lives = con.execute(
            "SELECT account_id, count(*) AS n, list(operation_code ORDER BY statement_date) AS codes, "
            "datediff('month', min(statement_date), max(statement_date)) + 1 AS span FROM t GROUP BY ALL"
        ).fetchall()
        first_month = con.execute("SELECT DISTINCT operation_code FROM t WHERE statement_date = '2025-01-31'")
        assert first_month.fetchall() == [("N",)]
    for account, n, codes, span in lives:
        assert n == span, f"{account} skips a month"
        assert codes[0] == "N" and "N" not in codes[1:], account
        assert "C" not in codes[:-1], f"{account} reappears after closing"


def test_the_portfolios_look_real(history: dict[str, list[pa.Table]]) -> None:
    banks = pa.concat_tables([t for c in ("BANK_A", "BANK_B", "BANK_C") for t in history[c]])
    lenders = pa.concat_tables([t for c in ("PAYLATER", "EASYPAY") for t in history[c]])
    with duckdb.connect() as con:
        for name, table in (("banks", banks), ("lenders", lenders)):
            con.register(name, table)
        statuses = {s for (s,) in con.execute("SELECT DISTINCT account_status FROM banks").fetchall()}
        assert statuses == {"ACTIVE", "CLOSED", "ADMIN_CHANGE", "DEFAULT", "WRITTEN_OFF"}
        assert con.execute("SELECT count(DISTINCT product_type) FROM banks").fetchone() == (4,)
        only = con.execute(
            "SELECT count_if(new_ic IS NULL AND old_ic IS NOT NULL), count_if(passport_no IS NOT NULL), "
            "count_if(temporary_limit > 0), count_if(operation_code = 'C'), count_if(month_in_arrears > 0) "
            "FROM banks"
        ).fetchone()
        assert only is not None and all(n > 0 for n in only)
        # A review changes the limits on most ADMIN_CHANGE rows (the rest only redraw a temporary limit).
        moved = con.execute(
            "SELECT count_if(credit_limit <> prev), count(*) FROM (SELECT *, lag(credit_limit) OVER "
            "(PARTITION BY account_id ORDER BY statement_date) AS prev FROM banks) WHERE account_status = "
            "'ADMIN_CHANGE'"
        ).fetchone()
        assert moved is not None and moved[0] > 0.8 * moved[1]
        limits = con.execute(
            "SELECT (SELECT median(credit_limit) FROM banks), (SELECT median(credit_limit) FROM lenders)"
        ).fetchone()
        assert limits is not None and limits[0] > 10 * limits[1]
        arrears = con.execute(
            "SELECT avg(CAST(month_in_arrears > 0 AS INT)) FROM banks UNION ALL "
            "SELECT avg(CAST(month_in_arrears > 0 AS INT)) FROM lenders"
        ).fetchall()
        assert all(0.02 < share < 0.2 for (share,) in arrears)


def test_a_million_accounts_in_one_month() -> None:
    big = Bureau(contributors=(Contributor("BIG", "bank", 1_000_000),)).month("BIG", 0)
    assert big.num_rows == 1_000_000
    with duckdb.connect() as con:
        con.register("big", big)
        assert con.execute(
            "SELECT count(*) FROM big WHERE credit_limit <> product_limit + temporary_limit"
        ).fetchone() == (0,)


# Faults: each breaks exactly what it announces


@pytest.mark.parametrize("contributor", [BANK, LENDER])
def test_a_swapped_limit_mapping(history: dict[str, list[pa.Table]], contributor: str) -> None:
    previous, current = history[contributor][10:12]
    faulty, expected = swap_limit_mapping(current)
    assert as_sets(expected.failures) == failures(faulty, [previous])
    assert expected.accounts  # accounts with a temporary limit
    rules = {"F01", "T01", "T02"} if contributor == BANK else {"F01"}
    assert expected.rules - {"F03"} == rules


@pytest.mark.parametrize("contributor", [BANK, LENDER])
def test_a_truncated_extract(history: dict[str, list[pa.Table]], contributor: str) -> None:
    previous, current = history[contributor][10:12]
    faulty, expected = truncate(current, previous=previous)
    assert faulty.num_rows == round(current.num_rows / 2)
    assert as_sets(expected.failures) == failures(faulty, [previous])
    assert "A02" in expected.rules and expected.accounts == set(faulty.column("account_id").to_pylist())
    _, mild = truncate(current, keep=0.95, previous=previous)
    assert mild.failures == {}


def test_doubled_limits_at_a_bank(history: dict[str, list[pa.Table]]) -> None:
    previous, current = history[BANK][10:12]
    faulty, expected = double_limits(current)
    assert as_sets(expected.failures) == failures(faulty, [previous])
    assert expected.rules == {"T01", "T02"}
    assert len(expected.accounts) > 0.03 * current.num_rows


def test_doubled_limits_at_an_instalment_lender_go_unnoticed(history: dict[str, list[pa.Table]]) -> None:
    previous, current = history[LENDER][10:12]
    faulty, expected = double_limits(current)
    assert not faulty.equals(current)
    assert expected.failures == {} == failures(faulty, [previous])


@pytest.mark.parametrize("contributor", [BANK, LENDER])
def test_a_backfill_is_baselined_month_by_month(history: dict[str, list[pa.Table]], contributor: str) -> None:
    table, expected = backfill(Bureau(), contributor, 12)
    committed = history[contributor][:12]
    assert table.num_rows == sum(t.num_rows for t in history[contributor][12:15])
    assert expected.failures == {} == failures(table, committed)
    assert expected.traps and as_sets(expected.traps) == failures(table, committed, stale=True)
    limits = {"T01", "T02"} if contributor == BANK else {"T03"}
    assert any(rules & limits for rules in expected.traps.values())


def test_a_new_contributor_has_nothing_to_compare_with() -> None:
    bureau = Bureau([*DEFAULT_CONTRIBUTORS, Contributor("NEWPAY", "instalment", 200, since=12)])
    table, expected = first_file(bureau, "NEWPAY")
    assert table.column("statement_date")[0].as_py() == date(2026, 1, 31)
    assert (
        expected.failures == {} == failures(table, [bureau.month(c.id, 11) for c in DEFAULT_CONTRIBUTORS[3:]])
    )
    assert as_sets(expected.traps) == failures(table, null_fails=True)
    with pytest.raises(ConfigError, match="first file in month 12"):
        bureau.month("NEWPAY", 11)


@pytest.mark.parametrize("fault", sorted(ROW_FAULTS))
@pytest.mark.parametrize("contributor", [BANK, LENDER])
def test_a_row_fault_trips_its_rule_only(
    history: dict[str, list[pa.Table]], contributor: str, fault: str
) -> None:
    previous, current = history[contributor][6:8]
    faulty, expected = plant(current, fault, previous=previous)
    assert len(expected.accounts) == 3
    assert expected.rules == {ROW_FAULTS[fault].rule_id}
    assert as_sets(expected.failures) == failures(faulty, [previous])


def test_warnings_are_committed_and_critical_failures_quarantined(history: dict[str, list[pa.Table]]) -> None:
    current = history[BANK][5]
    _, warned = plant(current, "unknown_status")
    assert warned.warned == warned.accounts and warned.quarantined == set()
    _, critical = plant(current, "negative_balance")
    assert critical.quarantined == critical.accounts and critical.warned == set()


def test_row_faults_name_their_requirements(history: dict[str, list[pa.Table]]) -> None:
    with pytest.raises(ConfigError, match="needs the previous month"):
        plant(history[BANK][3], "arrears_jump")
    with pytest.raises(ConfigError, match="unknown row fault"):
        plant(history[BANK][3], "gremlins")


def test_malformed_lines_are_rejected_and_the_rest_read(
    history: dict[str, list[pa.Table]], tmp_path: Path
) -> None:
    current = history[LENDER][4]
    text, expected = malformed_rows(csv_text(current))
    assert expected.rules == {PARSE_ERROR} and len(expected.accounts) == 3
    assert len(text.splitlines()) == current.num_rows + 1
    path = tmp_path / "broken.csv"
    path.write_text(text)
    types = {
        f.name: {"string": "VARCHAR", "date32[day]": "DATE", "int64": "BIGINT"}[str(f.type)] for f in SCHEMA
    }
    with duckdb.connect() as con:
        read = con.sql(
            "SELECT * FROM read_csv($path, header = true, columns = $types, store_rejects = true)",
            params={"path": str(path), "types": types},
        ).to_arrow_table()
        lines = {line for (line,) in con.execute("SELECT DISTINCT line FROM reject_errors").fetchall()}
    assert lines == set(expected.lines.values())
    assert read.num_rows == current.num_rows - 3
    assert (
        set(read.column("account_id").to_pylist())
        == set(current.column("account_id").to_pylist()) - expected.accounts
    )
    rows = list(csv.reader(io.StringIO(text)))
    assert sorted(len(r) for r in rows)[:2] == [len(SCHEMA) - 1, len(SCHEMA)]


def test_a_csv_reads_back_as_the_table(bureau: Bureau, tmp_path: Path) -> None:
    table = bureau.month(BANK, 2)
    path = write_csv(table, tmp_path / "BANK_A.csv")
    header = path.read_text().splitlines()[0]
    assert header == ",".join(SCHEMA.names)
    convert = pacsv.ConvertOptions(column_types=SCHEMA, strings_can_be_null=True)
    assert pacsv.read_csv(path, convert_options=convert).equals(table)


def test_bad_configurations_are_named() -> None:
    with pytest.raises(ConfigError, match="not a month-end"):
        Bureau(start=date(2025, 1, 30))
    with pytest.raises(ConfigError, match="unknown type"):
        Bureau([Contributor("X", "pawnshop", 10)])
    with pytest.raises(ConfigError, match="unknown contributor"):
        Bureau().month("NOBODY", 0)
