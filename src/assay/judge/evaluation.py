"""Judging a DQDL ruleset's measured values: pure functions, no I/O.

The evaluation that reads the data, measures it in one query and keeps the metrics is a flow
on the run driver (:mod:`assay.platform.runs.dqdl`); here are the parts it shares with the
gate and check runs: the evaluation clock, a plan's values, the metrics as the store keys them,
and a rule's judgement from values and a history lookup.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from assay.errors import ConfigError
from assay.judge import verdicts
from assay.lang.dqdl import ast
from assay.measure import Measurements
from assay.rules.compiler import CompiledRule
from assay.rules.plan import LeafPlan
from assay.store import MetricKey

if TYPE_CHECKING:
    pass


def parse_now(now: datetime | str | None) -> datetime:
    """The evaluation clock: the given instant (naive means UTC), or now, at full precision: it is
    also the evaluation's point in history, and two evaluations a second apart must see each
    other in ``last(k)``."""
    if now is None:
        return datetime.now(UTC)
    if isinstance(now, str):
        try:
            now = datetime.fromisoformat(now)
        except ValueError:
            raise ConfigError(
                f"--now: '{now}' is not an ISO-8601 date-time such as 2024-06-10T12:00:00Z"
            ) from None
    return now if now.tzinfo else now.replace(tzinfo=UTC)


Values = dict[int, dict[str, float | None] | str]
"""Each leaf plan's metric values (by ``id`` of the plan), or the engine's error for it."""


def stored_metrics(plans: list[LeafPlan], values: Values) -> dict[MetricKey, float | None]:
    """The plans' metrics as the store keeps them (NaN and infinities as no value); a plan
    that could not be measured stores nothing."""
    metrics: dict[MetricKey, float | None] = {}
    for plan in plans:
        measured = values[id(plan)]
        if isinstance(measured, str) or plan.error:
            continue
        for spec in plan.metrics:
            value = measured.get(spec.display)
            metrics[spec.stored] = value if value is None or math.isfinite(value) else None
    return metrics


def judge_rule(compiled: CompiledRule, values: Values, history: verdicts.HistoryLookup) -> verdicts.Judgement:
    """A compiled top-level rule judged on its plans' values: each leaf by its verdict (an
    unmeasurable leaf is ``Error``), composites combined, a ROW-mode composite by its own plan."""

    def leaf(plan: LeafPlan) -> verdicts.Judgement:
        if plan.error is not None:
            return verdicts.Judgement(verdicts.ERROR, plan.error)
        measured = values[id(plan)]
        if isinstance(measured, str):
            return verdicts.Judgement(verdicts.ERROR, f"The rule could not be measured: {_reason(measured)}")
        return verdicts.judge(plan.verdict, measured, history)

    def node(item: ast.RuleNode) -> verdicts.Judgement:
        if isinstance(item, ast.Rule):
            return leaf(compiled.leaves[id(item)])
        return verdicts.combine(item.op, [node(child) for child in item.children])

    if compiled.row_mode is not None:
        return leaf(compiled.row_mode)
    return node(compiled.node)


def _reason(message: str) -> str:
    """The engine's reason, in the rule's terms where the engine speaks of its own plan: a
    CustomSql query with a condition runs as a scalar subquery, and one that returns several
    rows is refused by DuckDB and Spark alike as "more than one row returned by a subquery".

    >>> _reason("Invalid Input Error: More than one row returned by a subquery used as an expression")[:60]
    'the query returns more than one row; a CustomSql rule with a'
    """
    if "more than one row returned by a subquery" in message.lower():
        return (
            "the query returns more than one row; a CustomSql rule with a condition needs one value "
            "(without a condition, a query of primary rows is judged row by row: add "
            "'with threshold > 0.9' for a share)"
        )
    return message


def rule_metrics(compiled: CompiledRule, values: Values) -> dict[str, float | None]:
    """The metric values a rule's outcome reports, by display name."""
    metrics: dict[str, float | None] = {}
    for plan in compiled.leaves.values():
        measured = values[id(plan)]
        if isinstance(measured, dict):
            metrics.update({m.display: measured[m.display] for m in plan.metrics})
    return metrics


def plan_values(plan: LeafPlan, measured: Measurements) -> dict[str, float | None] | str:
    """The plan's metric values, or the engine's error when a slot could not be measured."""
    for slot in plan.slots:
        if slot not in measured.values and slot in measured.errors:
            return measured.errors[slot]
    out: dict[str, float | None] = {}
    for name, spec in [*((m.display, m) for m in plan.metrics), *plan.hidden.items()]:
        out[name] = spec.compute(measured)
    return out
