"""Rules about the dataset as a whole: RowCount, ColumnCount, ColumnExists, ColumnNamesMatchPattern."""

from __future__ import annotations

from assay.lang import patterns
from assay.lang.dqdl import ast
from assay.measure import Aggregate
from assay.measure.requests import count_star
from assay.rules.plan import (
    Context,
    Fixed,
    LeafPlan,
    MetricSpec,
    RuleError,
    constant,
    judged,
    number_of,
    qualified,
    resolve_column,
)
from assay.store import MetricKey


def row_count(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``RowCount > 100``: rows (that satisfy the where clause)."""
    slot = ctx.request(Aggregate(count_star(ctx.where(rule))))
    key = MetricKey.dataset("RowCount")
    metric = MetricSpec(key.key, qualified(key, rule), number_of(slot), (slot,))
    return LeafPlan(rule, [metric], judged(rule, metric))


def column_count(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``ColumnCount = 12``: read from the schema, no scan."""
    key = MetricKey.dataset("ColumnCount")
    metric = MetricSpec(key.key, key, constant(float(len(ctx.primary.columns))))
    return LeafPlan(rule, [metric], judged(rule, metric))


def column_exists(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``ColumnExists "email"``: the metric is 1.0 or 0.0 (``Dataset.<column>.ColumnExists``)."""
    name = rule.params[0].text
    try:
        resolve_column(name, list(ctx.primary.columns), "primary dataset")
        exists = True
    except RuleError:
        exists = False
    key = MetricKey.dataset("ColumnExists", instance=name)
    metric = MetricSpec(key.key, key, constant(1.0 if exists else 0.0))
    message = None if exists else f"Column '{name}' does not exist in the dataset"
    return LeafPlan(rule, [metric], Fixed(exists, message))


def column_names_match_pattern(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``ColumnNamesMatchPattern "aws_.*"``: every column name matches the whole pattern.

    With no columns the ratio is NaN (0/0) and the rule passes: no name fails (as Deequ)."""
    pattern = rule.params[0].text
    try:
        regex = patterns.to_python(pattern)
    except patterns.PatternRefused as error:
        raise RuleError(error.message) from None
    names = ctx.primary.column_names()
    misses = [name for name in names if not regex.fullmatch(name)]
    value = (len(names) - len(misses)) / len(names) if names else float("nan")
    key = MetricKey.dataset("ColumnNamesPatternMatchRatio")
    metric = MetricSpec(key.key, key, constant(value))
    message = f"Columns that do not match '{pattern}': {', '.join(misses)}" if misses else None
    return LeafPlan(rule, [metric], Fixed(not misses, message))
