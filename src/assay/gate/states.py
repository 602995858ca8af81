"""Row states and month judgements: what the gate's rules say of a batch's rows and months.

Row rules (those with a per-row form and no threshold) give each row a state, P, F or S, in one
query kept in the engine; a rule reading ``prev_`` columns skips rows without a previous record.
Dataset-level rules are judged per statement date, oldest first, their metrics persisted before
the month is judged (:class:`Judge`), so that ``last(k)`` reads the months before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pyarrow.compute as pc
from sqlglot import exp

from assay.errors import ConfigError
from assay.gate.baseline import HAS_PREV
from assay.gate.gate import BATCH, DAY, LAGGED_ROWS, ROW, STATES, Scope, day_literal, instant
from assay.gate.summary import Group, GroupRule
from assay.lake.readers import Registered
from assay.lang.dqdl import ast
from assay.measure import ScanPlan
from assay.rules import control
from assay.rules.compiler import CompiledRule, compile_rule
from assay.rules.plan import AllOne, Compliance, Context
from assay.rules.rows import FAIL, PASS, SKIP, RowLayout, tree_state
from assay.store import MetricKey
from assay.vocabulary import Outcome

RowRules = list[tuple[control.ControlRule, CompiledRule]]


@dataclass
class RowStates:
    """What the routing needs of the row states: per row rule, its P/F/S counts and the batch
    positions of the rows that failed it; and the same per statement date (``by_day``)."""

    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    failing: dict[str, list[int]] = field(default_factory=dict)
    by_day: dict[Any, RowStates] = field(default_factory=dict)

    def merge(self, other: RowStates) -> None:
        """Add ``other``'s counts and failing rows (another month's) to these."""
        for rid, letters in other.counts.items():
            mine = self.counts.setdefault(rid, {PASS: 0, FAIL: 0, SKIP: 0})
            for letter, n in letters.items():
                mine[letter] = mine.get(letter, 0) + n
        for rid, rows in other.failing.items():
            self.failing.setdefault(rid, []).extend(rows)


def _context(scope: Scope, enriched: Registered) -> Context:
    return Context(scope.engine, enriched, {}, datetime.now(UTC), ScanPlan(enriched.name))


def classify(
    scope: Scope, chosen: list[control.ControlRule], enriched: Registered
) -> tuple[list[tuple[control.ControlRule, CompiledRule]], list[control.ControlRule]]:
    """Row rules are judged row by row; the rest (ratios, aggregates, thresholds) per month."""
    ctx = _context(scope, enriched)
    row_rules, group_rules = [], []
    for position, rule in enumerate(chosen):
        compiled = compile_rule(rule.node, ctx, position, row_mode=True)
        for plan in compiled.leaves.values():
            if plan.error is not None:
                raise ConfigError(
                    f"{scope.options.rules}:{rule.line}: rule {rule.rule_id} cannot run: {plan.error}"
                )
        per_row = all(
            plan.row is not None
            and plan.row.in_row_composites
            and isinstance(plan.verdict, AllOne | Compliance)
            and (not isinstance(plan.verdict, Compliance) or plan.verdict.threshold is None)
            for plan in compiled.leaves.values()
        )
        (row_rules.append((rule, compiled)) if per_row else group_rules.append(rule))
    return row_rules, group_rules


def row_states(
    scope: Scope, row_rules: list[tuple[control.ControlRule, CompiledRule]], enriched: Registered
) -> RowStates:
    """Each row's state (P, F, S) for every row rule, computed in one query and kept in the
    engine; what comes back is each rule's counts and the rows that failed it (one query
    each, over the kept states), not a million-row table of states."""
    layout = RowLayout(PASS)
    columns: list[exp.Expr] = [
        exp.column(ROW, quoted=True),
        exp.alias_(exp.column(scope.options.order, quoted=True), DAY, quoted=True),
    ]
    for rule, compiled in row_rules:
        tree = layout.add(compiled.node, compiled.leaves, row_mode=True)
        assert tree is not None
        state = tree_state(tree)
        if rule.prev_columns:
            state = (
                exp.Case()
                .when(exp.Not(this=exp.column(HAS_PREV, quoted=True)), exp.Literal.string(SKIP))
                .else_(state)
            )
        columns.append(exp.alias_(state, rule.rule_id, quoted=True))
    out = RowStates()
    if not row_rules:
        return out
    states = exp.select(*columns).from_(
        exp.alias_(exp.Subquery(this=layout.select(exp.to_table(enriched.name))), "__states", table=True)
    )
    scope.engine.register_query(STATES, states, materialize=True)
    ids = [rule.rule_id for rule, _ in row_rules]
    slots = [(rid, letter) for rid in ids for letter in (PASS, FAIL, SKIP)]
    day = exp.column(DAY, quoted=True)
    counts = exp.select(
        day.copy(),
        *(
            exp.alias_(
                exp.Sum(
                    this=exp.Case()
                    .when(
                        exp.EQ(this=exp.column(rid, quoted=True), expression=exp.Literal.string(letter)),
                        exp.Literal.number(1),
                    )
                    .else_(exp.Literal.number(0))
                ),
                f"n{i}",
                quoted=True,
            )
            for i, (rid, letter) in enumerate(slots)
        ),
    ).from_(exp.to_table(STATES))
    for row in scope.engine.query(counts.group_by(day.copy())).to_pylist():
        month = out.by_day.setdefault(row[DAY], RowStates())
        for i, (rid, letter) in enumerate(slots):
            month.counts.setdefault(rid, {})[letter] = int(row[f"n{i}"] or 0)
        out.merge(month)
    failed = [rid for rid in ids if out.counts.get(rid, {}).get(FAIL)]
    if failed:
        any_failed = exp.or_(
            *(
                exp.EQ(this=exp.column(rid, quoted=True), expression=exp.Literal.string(FAIL))
                for rid in failed
            )
        )
        picked = exp.select(
            exp.column(ROW, quoted=True), day.copy(), *(exp.column(rid, quoted=True) for rid in failed)
        )
        rows = scope.engine.query(picked.from_(exp.to_table(STATES)).where(any_failed))
        for rid in failed:
            mine = rows.filter(pc.equal(rows.column(rid), FAIL))
            for position, when in zip(
                mine.column(ROW).to_pylist(), mine.column(DAY).to_pylist(), strict=True
            ):
                out.by_day[when].failing.setdefault(rid, []).append(position)
            out.failing[rid] = mine.column(ROW).to_pylist()
    return out


def rows_of_month(scope: Scope, day: date) -> list[int]:
    """The batch positions of the rows dated ``day`` (when a month fails a critical rule)."""
    found = scope.engine.query(
        exp.select(exp.column(ROW, quoted=True))
        .from_(exp.to_identifier(BATCH, quoted=True))
        .where(exp.column(scope.options.order, quoted=True).eq(day_literal(day)))
        .order_by(exp.column(ROW, quoted=True))
    )
    rows: list[int] = found.column(ROW).to_pylist()
    return rows


class Judge:
    """The judging stage of one gate run: the row states and the month rules' outcomes. It
    keeps the loads its evaluations measured (``loads``, with their statement dates) and which
    of them is the committed month before the batch (``baseline_loads``), for the run's commit;
    ``phase`` is told what it is doing."""

    def __init__(self, scope: Scope, phase: Callable[[str], None]) -> None:
        self.scope = scope
        self.phase = phase
        self.loads: dict[int, date] = {}
        self.baseline_loads: set[int] = set()

    @staticmethod
    def _dataset_ruleset(rules: list[control.ControlRule]) -> ast.Ruleset:
        return ast.Ruleset(rules=tuple(rule.node for rule in rules))

    def judge(
        self,
        row_rules: list[tuple[control.ControlRule, CompiledRule]],
        group_rules: list[control.ControlRule],
        enriched: Registered,
        relag: Callable[[list[int]], Registered] | None,
        never: list[int],
        month_rows: dict[Any, int],
        baseline: str | None,
        baseline_date: date | None,
        dates: list[date],
    ) -> tuple[RowStates, dict[date, Group]]:
        """The row states and the month rules' outcomes, month by month, oldest first.

        A row's baseline is its key's latest committed record: in the table, or earlier in the
        batch and committed by this run. In a backfill whose rules read ``prev_`` columns
        (``relag`` given), a month's rows that will not be committed (failing a critical rule,
        in a refused month, held: ``never``) are nobody's baseline, so when a month leaves such
        rows, the batch is lagged and its row states computed again before the next month is
        judged. A month's states are final once the months before it are judged, so the batch
        is judged at most once per month, and once when every row of its earlier months is
        committed (the usual backfill, and every one-month batch)."""
        self.phase("judging the rows")
        states = row_states(self.scope, row_rules, enriched)
        source = self._month_source(group_rules, enriched)
        ruleset = self._dataset_ruleset(group_rules)
        if (
            group_rules
            and baseline is not None
            and baseline_date is not None
            and not self._stored(baseline_date)
        ):
            whole_baseline = exp.select(exp.Star()).from_(exp.to_identifier(baseline, quoted=True))
            measured = self._evaluate(ruleset, whole_baseline, baseline_date)
            if measured.load_id is not None:
                self.baseline_loads.add(measured.load_id)
        judged = RowStates()
        groups: dict[date, Group] = {}
        not_base, lagged_with = set(never), len(never)
        for day in dates:
            if relag is not None and len(not_base) != lagged_with:
                self.phase(f"judging the rows again from {day}")
                lagged_with = len(not_base)
                enriched = relag(sorted(not_base))
                states = row_states(self.scope, row_rules, enriched)
                source = self._month_source(group_rules, enriched)
            month = states.by_day.get(day, RowStates())
            judged.merge(month)
            self.phase(f"judging the month {day}")
            groups[day] = self._judge_month(
                group_rules, ruleset, source, day, month_rows, whole=len(dates) == 1
            )
            if groups[day].rejected and len(dates) > 1:
                # a refused month is no later month's history (its load would be, pending in
                # this run): rejected now, as the run's commit would settle it anyway
                refused = {
                    i: "rejected" for i, d in self.loads.items() if d == day and i not in self.baseline_loads
                }
                if refused:
                    self.scope.store.settle_loads(refused)
            if relag is not None:
                for rule, _ in row_rules:
                    if rule.severity == "critical":
                        not_base.update(month.failing.get(rule.rule_id, []))
                if groups[day].rejected:
                    not_base.update(rows_of_month(self.scope, day))
        return judged, groups

    def _month_source(self, rules: list[control.ControlRule], enriched: Registered) -> str:
        """What the month rules read: the typed batch, or the lagged one when a rule reads a
        ``prev_`` column. The lagged batch is the view "primary", the name each month's view
        takes too, so it is kept as a table of its own first."""
        if rules and any(rule.prev_columns for rule in rules):
            self.scope.engine.register_query(
                LAGGED_ROWS, exp.select(exp.Star()).from_(exp.to_table(enriched.name)), materialize=True
            )
            return LAGGED_ROWS
        return BATCH

    def _judge_month(
        self,
        rules: list[control.ControlRule],
        ruleset: ast.Ruleset,
        source: str,
        day: date,
        month_rows: dict[Any, int],
        *,
        whole: bool,
    ) -> Group:
        """The dataset-level rules of the month ``day``, its metrics persisted before it is
        judged so that the next month's ``last()`` reads it. A batch of one month (the usual
        case) is that month whole (``whole``): no filter."""
        group = Group(day.isoformat(), month_rows.get(day, 0))
        if not rules:
            return group
        rows = exp.select(exp.Star()).from_(exp.to_table(source))
        if not whole:
            rows = rows.where(exp.column(self.scope.options.order, quoted=True).eq(day_literal(day)))
        result = self._evaluate(ruleset, rows, day)
        for rule, outcome in zip(rules, result.rules, strict=True):
            if outcome.outcome == "Error":
                where = f"{self.scope.options.rules}:{rule.line}"
                raise ConfigError(f"{where}: rule {rule.rule_id} cannot run: {outcome.message}")
            observed = next(iter(outcome.metrics.values()), None)
            group.dataset_rules.append(
                GroupRule(
                    rule.rule_id,
                    rule.severity,
                    Outcome.from_glue(outcome.outcome).value,
                    observed,
                    outcome.message,
                )
            )
            if outcome.outcome == "Failed" and rule.severity == "critical":
                group.rejected = True
        return group

    def _stored(self, day: date) -> bool:
        """Whether the store already holds this contributor's metrics for ``day``."""
        points = self.scope.store.history(
            self.scope.options.table,
            MetricKey.dataset("RowCount"),
            partition=self.scope.contributor,
            before=instant(day + timedelta(days=1)),
            limit=1,
            run=self.scope.run_id,
        )
        return bool(points) and points[0].logical_date == day

    def _evaluate(self, ruleset: ast.Ruleset, rows: exp.Query, day: date) -> Any:
        """Evaluate the month rules on ``rows`` (a view of the batch in the run's engine)."""
        queries = self.scope.engine.queries
        result = self.scope.evaluation(
            ruleset,
            rows,
            dataset=self.scope.options.table,
            partition=self.scope.contributor,
            store=self.scope.store,
            now=instant(day),
            logical_date=day,
            run_id=self.scope.run_id,
            engine=self.scope.engine,
        )
        result.queries = self.scope.engine.queries - queries
        if result.load_id is not None:
            self.loads[result.load_id] = day
        return result

    # --- routing and committing --------------------------------------------------------------
