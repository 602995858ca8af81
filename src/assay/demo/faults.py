"""Faults to plant in the bureau's files, each with what a correct gate must do with it.

Every fault returns the faulty file and an :class:`Expected`: the accounts whose rows must be
caught and by which rules of ``data/bureau_rules.csv``, plus the *traps* (rows a correct gate
passes but a plausible wrong one would flag). Tests, the demo and the benchmark use them.

>>> from assay.demo.bureau import Bureau
>>> faulty, expected = swap_limit_mapping(Bureau().month("BANK_A", 1))
>>> sorted(expected.rules)
['F01', 'T01', 'T02']
"""

from __future__ import annotations

import calendar
import csv
import io
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from importlib import resources
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from assay.demo.bureau import PRODUCTS, PROFILES, SCHEMA, Bureau
from assay.errors import ConfigError

Row = dict[str, Any]

PARSE_ERROR = "PARSE"
"""The pseudo rule id of a line that cannot be read at all (:func:`malformed_rows`)."""

# ---------------------------------------------------------------------------------------------------------
# Expectations


@cache
def rule_severities() -> Mapping[str, str]:
    """``rule_id -> severity`` of ``data/bureau_rules.csv``, plus :data:`PARSE_ERROR` (critical)."""
    text = (resources.files("assay.demo") / "data" / "bureau_rules.csv").read_text()
    severities = {row["rule_id"]: row["severity"] for row in csv.DictReader(io.StringIO(text))}
    return {**severities, PARSE_ERROR: "critical"}


@dataclass(frozen=True)
class Expected:
    """What a correct gate does with a faulty file.

    ``failures`` maps the account_id of every row the gate must catch to the rule ids it fails; an
    account absent from it passes every rule. ``traps`` maps rows a correct gate passes, but a
    plausible wrong gate would flag, to the rules it would wrongly fail (e.g. a stale baseline for a
    backfill). ``lines`` gives the 1-based line of each unreadable CSV line (header = line 1).
    """

    failures: Mapping[str, frozenset[str]] = field(default_factory=dict)
    traps: Mapping[str, frozenset[str]] = field(default_factory=dict)
    lines: Mapping[str, int] = field(default_factory=dict)

    @property
    def accounts(self) -> frozenset[str]:
        """Accounts whose rows fail at least one rule."""
        return frozenset(self.failures)

    @property
    def rules(self) -> frozenset[str]:
        """Every rule that catches at least one row."""
        return frozenset().union(*self.failures.values())

    @property
    def quarantined(self) -> frozenset[str]:
        """Accounts whose rows fail a critical rule: pulled out of the batch."""
        severity = rule_severities()
        return frozenset(
            a for a, rules in self.failures.items() if any(severity[r] == "critical" for r in rules)
        )

    @property
    def warned(self) -> frozenset[str]:
        """Accounts whose rows fail warnings only: committed, and reported."""
        return self.accounts - self.quarantined


def _expect(accounts: Iterable[str], *rules: str) -> dict[str, frozenset[str]]:
    return {account: frozenset(rules) for account in accounts}


def _merge(*parts: Mapping[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    merged: dict[str, frozenset[str]] = {}
    for part in parts:
        for account, rules in part.items():
            merged[account] = merged.get(account, frozenset()) | rules
    return merged


def _kind(table: pa.Table) -> str:
    """The contributor type of a file, from its products."""
    products = set(table.column("product_type").unique().to_pylist())
    for kind in PROFILES:
        if products <= {p.name for p in PRODUCTS if p.kind == kind}:
            return kind
    raise ConfigError(f"products {sorted(map(str, products))} belong to no single contributor type")


def _accounts(table: pa.Table, mask: pa.ChunkedArray | pa.Array) -> list[str]:
    ids: list[str] = table.column("account_id").filter(mask).to_pylist()
    return ids


def _with_previous(table: pa.Table) -> pa.ChunkedArray:
    """Rows that have a previous month: every account but the ones opened this month (``N``).

    The expectations of trend faults assume that the contributor's previous month is committed.
    """
    return pc.not_equal(table.column("operation_code"), "N")


def _limit_trend_failures(table: pa.Table, changed: pa.ChunkedArray | pa.Array) -> dict[str, frozenset[str]]:
    """T01/T02 on rows whose limits changed: bank rows with a previous month and no ADMIN_CHANGE."""
    if _kind(table) != "bank":
        return {}
    caught = pc.and_(
        pc.and_(changed, _with_previous(table)),
        pc.not_equal(table.column("account_status"), "ADMIN_CHANGE"),
    )
    return _expect(_accounts(table, caught), "T01", "T02")


# ---------------------------------------------------------------------------------------------------------
# Whole-file faults: the seed's well-formed corruption that only history exposes


def swap_limit_mapping(table: pa.Table) -> tuple[pa.Table, Expected]:
    """An export swaps the column mapping: credit_limit carries the product limit and vice versa.

    Every value stays plausible; only accounts with a temporary limit actually change. Those fail
    F01 (credit_limit is no longer product_limit + temporary_limit) and, at a bank, T01 and T02 when
    they had a previous month and no ADMIN_CHANGE; at an instalment lender, F03 (warning) where the
    instalment no longer fits in the smaller credit limit.

    >>> faulty, expected = swap_limit_mapping(Bureau().month("BANK_B", 3))
    >>> expected.quarantined == expected.accounts
    True
    """
    credit, product = table.column("credit_limit"), table.column("product_limit")
    faulty = table.set_column(SCHEMA.get_field_index("credit_limit"), "credit_limit", product)
    faulty = faulty.set_column(SCHEMA.get_field_index("product_limit"), "product_limit", credit)
    changed = pc.not_equal(table.column("temporary_limit"), 0)
    failures = _merge(_expect(_accounts(table, changed), "F01"), _limit_trend_failures(table, changed))
    if _kind(table) == "instalment":
        too_big = pc.greater(table.column("instalment_amount"), product)
        failures = _merge(failures, _expect(_accounts(table, too_big), "F03"))
    return faulty, Expected(failures)


def truncate(
    table: pa.Table, keep: float = 0.5, *, previous: pa.Table | None = None
) -> tuple[pa.Table, Expected]:
    """A truncated extract: only the first ``keep`` share of the file's rows arrive.

    No row is wrong, so the aggregate rules catch it for the whole contributor-month group: A02
    (RowCount >= 0.8 * last month's) and, when the arrears total falls below half of last month's, A01.
    Every kept row is expected to fail those rules. ``previous`` is last month's file; without it
    the untruncated file stands in for it.

    >>> bureau = Bureau()
    >>> faulty, expected = truncate(bureau.month("EASYPAY", 5), previous=bureau.month("EASYPAY", 4))
    >>> "A02" in expected.rules
    True
    """
    kept = table.slice(0, round(table.num_rows * keep))
    last = table if previous is None else previous
    rules = []
    arrears = pc.sum(kept.column("amount_in_arrears")).as_py() or 0
    if arrears < 0.5 * (pc.sum(last.column("amount_in_arrears")).as_py() or 0):
        rules.append("A01")
    if kept.num_rows < 0.8 * last.num_rows:
        rules.append("A02")
    failures = _expect(kept.column("account_id").to_pylist(), *rules) if rules else {}
    return kept, Expected(failures)


def double_limits(table: pa.Table, share: float = 0.05, *, seed: int = 0) -> tuple[pa.Table, Expected]:
    """A bad upstream join doubles credit_limit, product_limit and temporary_limit on ``share`` of rows.

    The rows stay consistent (F01 holds), so only history catches them: T01 and T02 at a bank, on
    rows with a previous month that are not ADMIN_CHANGE. Nothing catches it at an instalment lender:
    its ruleset watches the instalment (T03), not the limits.
    """
    picked = set(random.Random(seed).sample(range(table.num_rows), round(table.num_rows * share)))
    changed = pa.array([i in picked for i in range(table.num_rows)])
    faulty = table
    for name in ("credit_limit", "product_limit", "temporary_limit"):
        column = table.column(name)
        doubled = pc.if_else(changed, pc.multiply(column, 2), column)
        faulty = faulty.set_column(SCHEMA.get_field_index(name), name, doubled)
    return faulty, Expected(_limit_trend_failures(table, changed))


def _trend_rules(kind: str) -> tuple[str, ...]:
    return ("T01", "T02", "T04") if kind == "bank" else ("T03", "T04")


def backfill(
    bureau: Bureau, contributor_id: str, first_index: int, months: int = 3
) -> tuple[pa.Table, Expected]:
    """Several consecutive clean months in one file: each must be baselined on the month before it.

    Nothing fails. ``traps`` lists the accounts that a gate baselining every month of the file on the
    last committed month (``first_index - 1``) would wrongly flag: limits that legitimately moved
    with an ADMIN_CHANGE inside the backfill, arrears that moved by more than two over several months.

    >>> table, expected = backfill(Bureau(), "BANK_A", 12)
    >>> expected.failures, len(expected.traps) > 0
    ({}, True)
    """
    contributor = bureau.contributor(contributor_id)
    files = [bureau.month(contributor_id, i) for i in range(first_index, first_index + months)]
    traps: dict[str, frozenset[str]] = {}
    if first_index > contributor.since:
        stale = {r["account_id"]: r for r in bureau.month(contributor_id, first_index - 1).to_pylist()}
        rules = _trend_rules(contributor.type)
        for row in (r for f in files[1:] for r in f.to_pylist()):
            old = stale.get(row["account_id"])
            if old is not None:
                wrong = frozenset(r for r in rules if not _TREND_PASSES[r](row, old))
                traps = _merge(traps, {row["account_id"]: wrong} if wrong else {})
    return pa.concat_tables(files), Expected(traps=traps)


_TREND_PASSES: Mapping[str, Callable[[Row, Row], bool]] = {
    "T01": lambda r, p: r["credit_limit"] == p["credit_limit"] or r["account_status"] == "ADMIN_CHANGE",
    "T02": lambda r, p: r["product_limit"] == p["product_limit"] or r["account_status"] == "ADMIN_CHANGE",
    "T03": lambda r, p: (
        r["instalment_amount"] == p["instalment_amount"] or r["account_status"] == "ADMIN_CHANGE"
    ),
    "T04": lambda r, p: abs(r["month_in_arrears"] - p["month_in_arrears"]) <= 2,
}
"""The trend rules of bureau_rules.csv on a row and its previous month's row (for :func:`backfill`)."""


def first_file(bureau: Bureau, contributor_id: str) -> tuple[pa.Table, Expected]:
    """A contributor's first file ever: no history, so every trend rule is skipped and nothing fails.

    ``traps`` lists, for every row, the trend rules that a gate treating a missing previous month as a
    failure (a NULL comparison) would wrongly fail: all of them but T01-T03 on ADMIN_CHANGE rows.

    >>> from assay.demo.bureau import DEFAULT_CONTRIBUTORS, Contributor
    >>> bureau = Bureau([*DEFAULT_CONTRIBUTORS, Contributor("NEWPAY", "instalment", 250, since=12)])
    >>> table, expected = first_file(bureau, "NEWPAY")
    >>> expected.failures, len(expected.traps) == table.num_rows
    ({}, True)
    """
    contributor = bureau.contributor(contributor_id)
    table = bureau.month(contributor_id, contributor.since)
    traps = {
        row["account_id"]: frozenset(
            r for r in _trend_rules(contributor.type) if r == "T04" or row["account_status"] != "ADMIN_CHANGE"
        )
        for row in table.select(["account_id", "account_status"]).to_pylist()
    }
    return table, Expected(traps=traps)


# ---------------------------------------------------------------------------------------------------------
# Row faults: a few rows broken in one way each, caught by exactly one rule


@dataclass(frozen=True)
class RowFault:
    """A fault planted on a few rows: which rows can carry it, how it rewrites one, the rule that catches it.

    ``eligible`` keeps the planted fault from tripping any other rule; ``rewrite`` returns the changed
    cells of a row, given the row and, for a trend fault, the account's row of the previous month
    (``needs_previous``: only accounts present in that month can carry it; otherwise it gets ``{}``).
    """

    rule_id: str
    eligible: Callable[[Row], bool]
    rewrite: Callable[[Row, Row], Row]
    needs_previous: bool = False


def _jump_arrears(row: Row, previous: Row) -> Row:
    months = previous["month_in_arrears"] + 3
    return {"month_in_arrears": months, "amount_in_arrears": months * row["instalment_amount"]}


ROW_FAULTS: Mapping[str, RowFault] = {
    # I01: no form of ID at all.
    "no_id": RowFault(
        "I01", lambda r: True, lambda r, p: {"new_ic": None, "old_ic": None, "passport_no": None}
    ),
    # I02: a new IC with eleven digits (the last one dropped).
    "short_new_ic": RowFault(
        "I02", lambda r: r["new_ic"] is not None, lambda r, p: {"new_ic": r["new_ic"][:-1]}
    ),
    # D01: an operation code outside N/U/C/D.
    "unknown_operation_code": RowFault("D01", lambda r: True, lambda r, p: {"operation_code": "R"}),
    # D02 (warning): an unknown status, on ACTIVE rows so that no limit change loses its ADMIN_CHANGE.
    "unknown_status": RowFault(
        "D02", lambda r: r["account_status"] == "ACTIVE", lambda r, p: {"account_status": "FROZEN"}
    ),
    # F02: a negative balance.
    "negative_balance": RowFault(
        "F02",
        lambda r: r["outstanding_balance"] > 0,
        lambda r, p: {"outstanding_balance": -r["outstanding_balance"]},
    ),
    # T04: months in arrears three more than last month's (the amount follows, so T05 holds).
    "arrears_jump": RowFault("T04", lambda r: r["operation_code"] == "U", _jump_arrears, needs_previous=True),
    # T05: an amount in arrears on an account that is not behind.
    "arrears_without_months": RowFault(
        "T05",
        lambda r: r["month_in_arrears"] == 0 and r["operation_code"] != "C",
        lambda r, p: {"amount_in_arrears": r["instalment_amount"]},
    ),
}
"""The row faults by name, each caught by exactly one rule (see :func:`plant`)."""


def plant(
    table: pa.Table, fault: str, count: int = 3, *, seed: int = 0, previous: pa.Table | None = None
) -> tuple[pa.Table, Expected]:
    """Plant a row fault of :data:`ROW_FAULTS` on ``count`` distinct accounts of a one-month file.

    ``previous`` is the contributor's previous month, which the trend fault ``arrears_jump`` needs.

    >>> faulty, expected = plant(Bureau().month("BANK_C", 2), "short_new_ic")
    >>> len(expected.accounts), expected.rules
    (3, frozenset({'I02'}))
    """
    if fault not in ROW_FAULTS:
        raise ConfigError(f"unknown row fault '{fault}': use one of {', '.join(ROW_FAULTS)}")
    planted = ROW_FAULTS[fault]
    before: dict[str, Row] = {}
    if planted.needs_previous:
        if previous is None:
            raise ConfigError(f"the row fault '{fault}' needs the previous month")
        before = {r["account_id"]: r for r in previous.to_pylist()}
    candidates = [
        i
        for i, row in enumerate(table.to_pylist())
        if planted.eligible(row) and (not planted.needs_previous or row["account_id"] in before)
    ]
    if len(candidates) < count:
        raise ConfigError(f"only {len(candidates)} rows can carry the fault '{fault}', not {count}")
    picked = sorted(random.Random(seed).sample(candidates, count))
    rows = table.take(picked).to_pylist()
    changes = {
        i: planted.rewrite(row, before.get(row["account_id"], {}))
        for i, row in zip(picked, rows, strict=True)
    }
    faulty = table
    for name in sorted({name for cells in changes.values() for name in cells}):
        values = table.column(name).to_pylist()
        for i, cells in changes.items():
            values[i] = cells.get(name, values[i])
        faulty = faulty.set_column(
            SCHEMA.get_field_index(name), name, pa.array(values, SCHEMA.field(name).type)
        )
    return faulty, Expected(_expect((r["account_id"] for r in rows), planted.rule_id))


# ---------------------------------------------------------------------------------------------------------
# Unreadable lines


def malformed_rows(text: str, *, seed: int = 0) -> tuple[str, Expected]:
    """Break three lines of a CSV file so that they cannot be read; every other line stays intact.

    One line gets text in a number cell (credit_limit ``12,5O0``-style: a thousands separator and the
    letter O), one an impossible statement date (the day after the month's last), one a missing
    field (passport_no). Each is on a distinct account; all three are :data:`PARSE_ERROR` failures,
    and ``lines`` gives their line numbers.

    >>> from assay.demo.bureau import csv_text
    >>> text, expected = malformed_rows(csv_text(Bureau().month("BANK_A", 0)))
    >>> len(expected.lines)
    3
    """
    lines = text.splitlines()
    if len(lines) < 4:
        raise ConfigError(f"a file needs three data lines to break, not {max(len(lines) - 1, 0)}")
    header = next(csv.reader([lines[0]]))
    position = {
        name: header.index(name) for name in ("account_id", "statement_date", "credit_limit", "passport_no")
    }
    picked = random.Random(seed).sample(range(1, len(lines)), 3)
    found: dict[str, int] = {}
    for number, breaker in zip(picked, (_bad_number, _impossible_date, _missing_field), strict=True):
        cells = next(csv.reader([lines[number]]))
        found[cells[position["account_id"]]] = number + 1
        out = io.StringIO()
        csv.writer(out, lineterminator="").writerow(breaker(cells, position))
        lines[number] = out.getvalue()
    ending = "\n" if text.endswith("\n") else ""
    return "\n".join(lines) + ending, Expected(_expect(found, PARSE_ERROR), lines=found)


def _bad_number(cells: list[str], position: Mapping[str, int]) -> list[str]:
    at = position["credit_limit"]
    digits = f"{int(cells[at]):,}"
    zero = digits.rfind("0") if "0" in digits else len(digits) - 1
    return [*cells[:at], f"{digits[:zero]}O{digits[zero + 1 :]}", *cells[at + 1 :]]


def _impossible_date(cells: list[str], position: Mapping[str, int]) -> list[str]:
    at = position["statement_date"]
    day = date.fromisoformat(cells[at])
    after_last = calendar.monthrange(day.year, day.month)[1] + 1
    return [*cells[:at], f"{day.year:04d}-{day.month:02d}-{after_last:02d}", *cells[at + 1 :]]


def _missing_field(cells: list[str], position: Mapping[str, int]) -> list[str]:
    at = position["passport_no"]
    return [*cells[:at], *cells[at + 1 :]]
