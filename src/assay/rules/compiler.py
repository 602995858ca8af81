"""Compile a ruleset: every simple rule into a :class:`LeafPlan`, all sharing one scan plan.

Composite rules keep their tree; in ROW mode (DQDL.md §5) a composite also gets a plan that
counts the rows failing the combined per-row check, measured in the same shared query.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from assay.engine import Column, DataKind
from assay.errors import AssayError
from assay.lang.dqdl import ast
from assay.measure import Measurements, Scalar
from assay.rules.plan import Compliance, Context, Fixed, LeafPlan, MetricSpec, RuleError, number_of
from assay.rules.registry import compile_leaf
from assay.rules.rows import FAIL, PASS, RowLayout, tree_state
from assay.store import MetricKey

_UNKNOWN = DataKind.OTHER


@dataclass
class CompiledRule:
    """A top-level rule, compiled: the plans of its leaves (by ``id`` of the leaf node) and, for
    a composite in ROW mode, the plan judging the combined rows."""

    node: ast.RuleNode
    leaves: dict[int, LeafPlan] = field(default_factory=dict)
    row_mode: LeafPlan | None = None


def compile_leaf_safely(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """Compile one rule; a rule that cannot be evaluated becomes a plan carrying its error."""
    try:
        return compile_leaf(rule, ctx)
    except RuleError as error:
        return LeafPlan(rule, verdict=Fixed(False, error.message), error=error.message)
    except AssayError as error:
        return LeafPlan(rule, verdict=Fixed(False, error.message), error=error.message)


def compile_rule(node: ast.RuleNode, ctx: Context, position: int, *, row_mode: bool = False) -> CompiledRule:
    compiled = CompiledRule(node)
    for index, leaf in enumerate(ast.leaves(node)):
        ctx.group = f"rule{position}.{index}"
        compiled.leaves[id(leaf)] = compile_leaf_safely(leaf, ctx)
    if row_mode and isinstance(node, ast.Composite):
        ctx.group = f"rule{position}.row"
        compiled.row_mode = _row_mode_plan(node, compiled.leaves, ctx)
    return compiled


def _row_mode_plan(node: ast.Composite, leaves: dict[int, LeafPlan], ctx: Context) -> LeafPlan:
    """The composite passes when every row passes the combination of its children's row checks."""
    dummy = ast.Rule("Composite")
    errors = [plan.error for plan in leaves.values() if plan.error is not None]
    if errors:
        return LeafPlan(dummy, verdict=Fixed(False, errors[0]), error=errors[0])
    layout = RowLayout(PASS)
    tree = layout.add(node, leaves, row_mode=True)
    if tree is None:
        unusable = [
            plan.rule.type for plan in leaves.values() if plan.row is None or not plan.row.in_row_composites
        ]
        message = (
            f"this composite cannot be evaluated in ROW mode: {', '.join(dict.fromkeys(unusable))} "
            "has no per-row result; evaluate it with --composite-mode column"
        )
        return LeafPlan(dummy, verdict=Fixed(False, message), error=message)
    rows_query = layout.select(exp.Table(this=exp.to_identifier(ctx.primary.name, quoted=True)))
    state = tree_state(tree)
    failing = (
        exp.select(exp.Count(this=exp.Star()))
        .from_(exp.alias_(exp.Subquery(this=rows_query), "__rows", table=True, quoted=True))
        .where(exp.EQ(this=state, expression=exp.Literal.string(FAIL)))
    )
    total = exp.select(exp.Count(this=exp.Star())).from_(
        exp.Table(this=exp.to_identifier(ctx.primary.name, quoted=True))
    )
    failed_slot = ctx.request(Scalar(failing))
    rows_slot = ctx.request(Scalar(total))
    key = MetricKey.dataset("CompositeRowFailures")
    plan = LeafPlan(dummy, verdict=Compliance("passing", "rows", None, key))
    plan.hidden["rows"] = MetricSpec("", MetricKey.dataset("RowCount"), number_of(rows_slot), (rows_slot,))

    def passing(m: Measurements) -> float | None:
        failed, rows = m.number(failed_slot) or 0.0, m.number(rows_slot) or 0.0
        return (rows - failed) / rows if rows else float("nan")

    plan.hidden["passing"] = MetricSpec("", key, passing, (failed_slot, rows_slot))
    return plan


def analyzer_rules(analyzer: ast.Analyzer, columns: list[Column]) -> list[ast.Rule]:
    """The simple rules an analyzer measures. ``AllStatistics "c"`` (or ``AllColumns``) expands
    to RowCount, ColumnCount and, per column, Completeness, Uniqueness and Entropy, plus
    minimum, maximum, mean, sum and standard deviation for numbers and lengths for text.
    ``Distribution AllColumns`` is one Distribution per column."""
    if analyzer.type == "Distribution":
        target = analyzer.params[0]
        names = (
            [c.name for c in columns] if not target.quoted and target.text == "AllColumns" else [target.text]
        )
        return [ast.Rule("Distribution", (ast.Param(name, True),), tags=analyzer.tags) for name in names]
    if analyzer.type != "AllStatistics":
        return [ast.Rule(analyzer.type, analyzer.params, span=analyzer.span)]
    target = analyzer.params[0]
    every = not target.quoted and target.text == "AllColumns"
    chosen = (
        columns
        if every
        else [c for c in columns if c.name == target.text] or [Column(target.text, "", _UNKNOWN)]
    )
    rules = [ast.Rule("RowCount"), ast.Rule("ColumnCount")]
    for column in chosen:
        param = (ast.Param(column.name, True),)
        rules += [ast.Rule(t, param) for t in ("Completeness", "Uniqueness", "Entropy", "ColumnValues")]
        if column.kind.numeric:
            rules += [ast.Rule(t, param) for t in ("Mean", "Sum", "StandardDeviation")]
    return rules


def details(plans: list[LeafPlan], measured: Measurements) -> list[dict[str, Any]]:
    """The structured results of an analyzer's plans (Distribution's histograms), in column
    order, for :attr:`assay.judge.result.AnalyzerOutcome.distributions`."""
    return [plan.detail(measured) for plan in plans if plan.detail is not None and plan.error is None]


def compile_analyzer(analyzer: ast.Analyzer, ctx: Context, position: int) -> list[LeafPlan]:
    plans = []
    for index, rule in enumerate(analyzer_rules(analyzer, list(ctx.primary.columns))):
        ctx.group = f"analyzer{position}.{index}"
        plans.append(compile_leaf_safely(rule, ctx))
    return plans
