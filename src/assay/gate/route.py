"""Routing: every row of a batch ends committed, quarantined or held, and the counts add up.

:func:`route` turns the judged batch into a :class:`RoutePlan`: the quarantined rows with their
reasons (a parse error, another contributor's row, a row without an identity, a failed critical
rule, a row of a month that failed a critical month rule, a rejected value), the rows held for a
decision, the rows to commit per statement date (kept in the engine as :data:`COMMITTED`), and
the decisions the held rows wait on. A plan whose counts do not add up is never made: the plan
raises :class:`RouteCountError` (DESIGN.md: "a row silently dropped" is what a user must never see).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

import pyarrow as pa
from sqlglot import exp

from assay.errors import PlatformError
from assay.gate import batch as batches
from assay.gate import holds
from assay.gate.gate import (
    COMMITTED,
    DUPLICATE,
    EXCLUDED,
    IDENTITY,
    PARSE_ERROR,
    ROW,
    WRONG_CONTRIBUTOR,
    Scope,
)
from assay.gate.identity import Identified
from assay.gate.states import RowRules, RowStates, rows_of_month
from assay.gate.summary import Group, RuleStats
from assay.lake.quarantine import QuarantineFile
from assay.rules import control
from assay.rules.rows import FAIL, PASS, SKIP
from assay.store import OutcomeRecord
from assay.vocabulary import Outcome


class RouteCountError(PlatformError):
    """A route whose committed, quarantined and held rows do not add up to the batch's rows: a
    bug of the gate, never of the data (exit 3, nothing committed)."""


@dataclass(frozen=True)
class RoutePlan:
    """Where every row of a batch goes. ``quarantine`` holds the quarantined rows with their
    reasons; ``held_rows`` the held rows (with ROW), ``waits`` what each waits on;
    ``committed_by_date`` the rows to commit per statement date; ``decisions`` the
    ``[column, value, rows, first date]`` the held rows need; ``rules`` each rule's counts and
    ``row_outcomes`` each row rule's outcome over the batch.

    >>> RoutePlan.counted(total=3, committed=1, quarantined=1, held=0)
    Traceback (most recent call last):
    ...
    assay.gate.route.RouteCountError: row accounting broken: 3 rows, but 1 committed + 1 quarantined + 0 held
    """

    total: int
    committed: int
    quarantined: int
    held: int
    warned: int
    parse_errors: int
    quarantine: QuarantineFile
    held_rows: pa.Table
    waits: list[list[tuple[str, str]]]
    committed_by_date: dict[Any, int]
    decisions: list[list[Any]]
    rules: dict[str, RuleStats]
    quarantined_by: dict[str, dict[str, Any]]
    row_outcomes: list[OutcomeRecord]

    def __post_init__(self) -> None:
        if self.total != self.committed + self.quarantined + self.held:
            raise RouteCountError(
                f"row accounting broken: {self.total} rows, but {self.committed} committed + "
                f"{self.quarantined} quarantined + {self.held} held"
            )

    @classmethod
    def counted(cls, *, total: int, committed: int, quarantined: int, held: int) -> RoutePlan:
        """A plan of counts only (no rows): what the count check sees."""
        return cls(
            total,
            committed,
            quarantined,
            held,
            0,
            0,
            QuarantineFile([], ""),
            pa.table({}),
            [],
            {},
            [],
            {},
            {},
            [],
        )


def route(
    scope: Scope,
    batch: batches.Batch,
    identified: Identified,
    found: holds.Holds,
    states: RowStates,
    row_rules: RowRules,
    group_rules: list[control.ControlRule],
    groups: dict[date, Group],
    written: dict[str, str],
) -> RoutePlan:
    """Route every row of ``batch`` (``written``: each rule's text as the control file wrote it,
    for the incidents' ``quarantined_by``)."""
    opts = scope.options
    quarantine = QuarantineFile(batch.header, scope.run_id)
    reasons: dict[int, tuple[list[str], list[str]]] = {}

    def fail(row: int, rule_id: str, reason: str) -> None:
        ids, messages = reasons.setdefault(row, ([], []))
        if rule_id not in ids:
            ids.append(rule_id)
            messages.append(reason)

    for error in batch.errors:
        if error.row is None:
            quarantine.add({}, [PARSE_ERROR], [error.message], line=error.line, raw_line=error.raw_line)
        else:
            fail(error.row, PARSE_ERROR, error.message)
    for row, value in zip(
        identified.wrong.column(ROW).to_pylist(),
        identified.wrong.column(opts.contributor_column).to_pylist(),
        strict=True,
    ):
        sent = "blank" if value is None else f"'{value}'"
        fail(
            row,
            WRONG_CONTRIBUTOR,
            f"{opts.contributor_column} is {sent}, not {scope.contributor}, the contributor gated",
        )

    for found_row in identified.unidentified.to_pylist():
        row, day = found_row[ROW], found_row["d"]
        blanks = [
            name for name, blank in ((opts.key, found_row["blank_key"]), (opts.order, day is None)) if blank
        ]
        if blanks:
            verb = "is" if len(blanks) == 1 else "are"
            fail(
                row,
                IDENTITY,
                f"{' and '.join(blanks)} {verb} blank: a record needs its key and its {opts.order}",
            )
        else:
            copies = f"{opts.key} {found_row['k']} appears {found_row['n']} times"
            fail(row, DUPLICATE, f"{copies} for {opts.order} {day} in this load")

    warned = set()
    rules: dict[str, RuleStats] = {}
    row_outcomes: list[OutcomeRecord] = []
    for rule, _ in row_rules:
        stats = rules.setdefault(rule.rule_id, RuleStats(rule.severity, rule.category, dqdl=rule.text))
        counts = states.counts.get(rule.rule_id, {PASS: 0, FAIL: 0, SKIP: 0})
        stats.passed, stats.failed, stats.skipped = counts[PASS], counts[FAIL], counts[SKIP]
        row_outcomes.append(_row_outcome(rule, stats))
        if not stats.failed:
            continue
        failing = states.failing[rule.rule_id]
        if rule.severity == "critical":
            reason = f"{rule.rule_id}: {rule.description or rule.text}"
            for row in failing:
                fail(row, rule.rule_id, reason)
        else:
            warned.update(failing)

    for rule in group_rules:
        stats = rules.setdefault(rule.rule_id, RuleStats(rule.severity, rule.category, dqdl=rule.text))
        for day, group in groups.items():
            outcome = next((r for r in group.dataset_rules if r.rule_id == rule.rule_id), None)
            if outcome is None:
                continue
            if outcome.outcome == Outcome.PASSED:
                stats.passed += group.rows
            else:
                stats.failed += group.rows
                if rule.severity == "critical":
                    reason = f"{rule.rule_id}: {outcome.message or rule.description}"
                    for row in rows_of_month(scope, day):
                        fail(row, rule.rule_id, reason)

    for row, why in found.rejected.items():
        if row in reasons:  # a rule's failure is the row's reason enough
            continue
        for message in why:
            fail(row, "domain", message)

    quarantined_rows = sorted(reasons)
    quarantined_by = _fired(written, reasons, [e for e in batch.errors if e.row is None])
    if quarantined_rows:
        raw = batches.fetch_text(scope.engine, batch, quarantined_rows).to_pylist()
        for row, values in zip(quarantined_rows, raw, strict=True):
            ids, messages = reasons[row]
            quarantine.add({k: v for k, v in values.items() if k != ROW}, ids, messages)

    held_rows = sorted(set(found.waits) - set(quarantined_rows))
    scope.engine.register_query(COMMITTED, _without(scope, batch.typed, quarantined_rows + held_rows))
    held = batches.fetch(scope.engine, batch.typed, held_rows, schema=batch.schema)
    committed = _per_date(scope, COMMITTED)  # the rows to commit per statement date
    waiting = [found.waits[row] for row in held.column(ROW).to_pylist()]
    first: dict[tuple[str, str], str] = {}  # the earliest statement date a value came with
    for pairs, held_day in zip(waiting, held.column(opts.order).to_pylist(), strict=True):
        for pair in pairs:
            if held_day is not None:
                first[pair] = min(first.get(pair, str(held_day)), str(held_day))
    return RoutePlan(
        total=batch.total,
        committed=sum(committed.values()),
        quarantined=len(quarantine),
        held=held.num_rows,
        warned=len(warned - set(quarantined_rows) - set(held_rows)),
        parse_errors=len(batch.errors),
        quarantine=quarantine,
        held_rows=held,
        waits=waiting,
        committed_by_date=committed,
        decisions=[
            [column, value, rows, first.get((column, value))]
            for (column, value), rows in sorted(holds.counts(waiting).items())
        ],
        rules=rules,
        quarantined_by=quarantined_by,
        row_outcomes=row_outcomes,
    )


def _fired(
    written: dict[str, str], reasons: dict[int, tuple[list[str], list[str]]], unread: list[Any]
) -> dict[str, dict[str, Any]]:
    """The rows each rule (or reason of the gate's own) quarantined, with its DQDL text and
    one of its reasons: what an incident about it tells the contributor's owners."""
    fired: dict[str, dict[str, Any]] = {}
    for ids, messages in [*reasons.values(), *(([PARSE_ERROR], [e.message]) for e in unread)]:
        for rule_id, message in zip(ids, messages, strict=True):
            entry = fired.setdefault(
                rule_id,
                {
                    "rows": 0,
                    "rule": written.get(rule_id),
                    "reason": message.removeprefix(f"{rule_id}: "),
                },
            )
            entry["rows"] += 1
    return fired


def _without(scope: Scope, table: str, rows: list[int]) -> exp.Select:
    """The rows of the batch's ``table`` whose ROW is not in ``rows``, as a query."""
    query = exp.select(exp.Star()).from_(exp.to_identifier(table, quoted=True))
    if not rows:
        return query
    return query.where(exp.not_(batches.in_rows(scope.engine, rows, EXCLUDED)))


def _per_date(scope: Scope, table: str) -> dict[Any, int]:
    """The rows of ``table`` per statement date (one query; dates with no row are absent)."""
    order = exp.column(scope.options.order, quoted=True)
    found = scope.engine.query(
        exp.select(
            exp.alias_(order.copy(), "d", quoted=True),
            exp.alias_(exp.Count(this=exp.Star()), "n", quoted=True),
        )
        .from_(exp.to_identifier(table, quoted=True))
        .group_by(order.copy())
    ).to_pylist()
    return {r["d"]: int(r["n"]) for r in found}


def _row_outcome(rule: control.ControlRule, stats: RuleStats) -> OutcomeRecord:
    """A row rule's outcome over the batch, as a score reads it: failed when a row failed it,
    passed when rows passed it and none failed, skipped when it judged no row (a trend rule on
    a first month); its observed value is the share of the judged rows that passed."""
    judged = stats.passed + stats.failed
    if stats.failed:
        outcome, message = Outcome.FAILED, f"{stats.failed} of {judged} row(s) failed"
    elif stats.passed:
        outcome, message = Outcome.PASSED, f"{judged} row(s) passed"
    else:
        outcome, message = Outcome.SKIPPED, f"no row judged ({stats.skipped} skipped)"
    observed = stats.passed / judged if judged else None
    labels = {"severity": rule.severity, "dqdl": rule.text, "rows": "row rule"}
    return OutcomeRecord(rule.rule_id, outcome.value, message, {"observed": observed}, labels)
