"""Rules over whole columns: completeness, uniqueness, distinct values, statistics, correlation.

Each function compiles one DQDL rule type (DQDL.md §6) into a :class:`LeafPlan`. A rule whose
metric is a per-column kind (a null count, a mean, a distinct count ...) asks the scan for that
kind's aggregate (:data:`assay.measure.kinds.KINDS`), so that it and a check document's metric
of the same column are one measurement, written once and measured once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from sqlglot import exp

from assay.engine import Column
from assay.lang.dqdl import ast
from assay.measure import Aggregate, Frequencies, FrequencyAggregate, Measurements
from assay.measure.kinds import KINDS, within
from assay.measure.requests import count_star, filtered, n_column
from assay.rules.plan import (
    ROW_SOURCE,
    AllOne,
    Context,
    LeafPlan,
    MetricSpec,
    RowCheck,
    RuleError,
    col,
    judged,
    number_of,
    qualified,
    ratio_of,
)
from assay.store import MetricKey


def _column_key(columns: list[Column], name: str) -> MetricKey:
    if len(columns) == 1:
        return MetricKey.column(columns[0].name, name)
    return MetricKey.multicolumn([c.name for c in columns], name)


def _columns(rule: ast.Rule, ctx: Context) -> list[Column]:
    return [ctx.column(p.text) for p in rule.params]


def completeness_metric(ctx: Context, rule: ast.Rule, column: Column, where: exp.Expr | None) -> MetricSpec:
    """Non-null rows / rows: 1 - the null count's share (Glue's reading: a blank text is a value,
    which a note on the outcome points out, platform/runs/blanks.py). 0/0 is NaN."""
    rows = ctx.request(Aggregate(count_star(where)))
    nulls = ctx.request(KINDS["null_count"].request(column, where))
    key = MetricKey.column(column.name, "Completeness")

    def complete(m: Measurements) -> float | None:
        counted, missing = m.number(rows) or 0.0, m.number(nulls) or 0.0
        return (counted - missing) / counted if counted else float("nan")

    return MetricSpec(key.key, qualified(key, rule), complete, (rows, nulls))


def completeness(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``Completeness "c" > 0.9``: non-null rows / rows."""
    (column,) = _columns(rule, ctx)
    where = ctx.where(rule)
    metric = completeness_metric(ctx, rule, column, where)
    row = RowCheck(
        exp.Not(this=exp.Is(this=col(column), expression=exp.Null())), where, in_row_composites=False
    )
    return LeafPlan(rule, [metric], judged(rule, metric), row)


def is_complete(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``IsComplete "c"``: no NULLs."""
    plan = completeness(rule, ctx)
    return LeafPlan(
        rule, plan.metrics, AllOne((plan.metrics[0].display,)), _with(plan.row, in_row_composites=True)
    )


def _with(row: RowCheck | None, *, in_row_composites: bool) -> RowCheck | None:
    if row is None:
        return None
    return RowCheck(row.predicate, row.filter, row.helpers, in_row_composites)


def uniqueness_metric(
    ctx: Context, rule: ast.Rule, columns: list[Column], where: exp.Expr | None
) -> MetricSpec:
    """Rows whose key occurs exactly once / rows, leaving out rows whose keys are all NULL."""
    freq = Frequencies(tuple(c.name for c in columns), where)
    once = ctx.request(
        FrequencyAggregate(
            freq,
            filtered(exp.Sum(this=n_column()), exp.EQ(this=n_column(), expression=exp.Literal.number(1))),
        )
    )
    total = ctx.request(FrequencyAggregate(freq, exp.Sum(this=n_column())))
    key = _column_key(columns, "Uniqueness")
    return MetricSpec(key.key, qualified(key, rule), ratio_of(once, total), (once, total))


def unique_row(columns: list[Column], where: exp.Expr | None, helper: str) -> RowCheck:
    """A row passes when no other row (within the where clause) has its key. Rows whose key
    columns are all NULL are left out of Uniqueness, so they pass here too.

    ``helper`` marks the rows whose key is among the keys counted more than once: a hash
    GROUP BY of the keys and a semi-join back, about three times cheaper than partitioning
    every row by its key in a window. Keys are matched with IS NOT DISTINCT FROM, so that NULL
    parts of a key group together as they do in Uniqueness.

    >>> from assay.engine import DataKind
    >>> check = unique_row([Column("id", "BIGINT", DataKind.INTEGER)], None, "__u1")
    >>> check.helpers[0][1].sql("duckdb")  # doctest: +NORMALIZE_WHITESPACE
    'EXISTS(SELECT 1 FROM (SELECT "id" FROM __assay_row_source AS "primary" GROUP BY "id"
    HAVING COUNT(*) > 1) AS "__keys" WHERE "__keys"."id" IS NOT DISTINCT FROM "primary"."id")'
    """
    repeated = (
        exp.select(*(col(c) for c in columns))
        .from_(exp.alias_(exp.to_table(ROW_SOURCE), "primary", table=True, quoted=True))
        .group_by(*(col(c) for c in columns))
        .having(exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(1)))
    )
    if where is not None:
        repeated = repeated.where(where.copy())
    same_key = exp.and_(
        *(
            exp.NullSafeEQ(
                this=exp.column(c.name, table="__keys", quoted=True),
                expression=exp.column(c.name, table="primary", quoted=True),
            )
            for c in columns
        )
    )
    duplicated = exp.Exists(
        this=exp.select(exp.Literal.number(1))
        .from_(exp.alias_(exp.Subquery(this=repeated), "__keys", table=True, quoted=True))
        .where(same_key)
    )
    all_null = exp.and_(*(exp.Is(this=col(c), expression=exp.Null()) for c in columns))
    single = exp.not_(exp.column(helper, quoted=True))
    return RowCheck(exp.or_(single, all_null), where, ((helper, duplicated),))


def uniqueness(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``Uniqueness "a" "b" > 0.9``."""
    columns = _columns(rule, ctx)
    where = ctx.where(rule)
    metric = uniqueness_metric(ctx, rule, columns, where)
    row = unique_row(columns, where, ctx.fresh("__u"))
    return LeafPlan(rule, [metric], judged(rule, metric), _with(row, in_row_composites=False))


def is_unique(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``IsUnique "a"``: Uniqueness is 1.0."""
    plan = uniqueness(rule, ctx)
    return LeafPlan(
        rule, plan.metrics, AllOne((plan.metrics[0].display,)), _with(plan.row, in_row_composites=True)
    )


def is_primary_key(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``IsPrimaryKey "a" "b"``: unique and complete (DQDL.md §6)."""
    columns = _columns(rule, ctx)
    where = ctx.where(rule)
    metrics = [uniqueness_metric(ctx, rule, columns, where)]
    metrics += [completeness_metric(ctx, rule, c, where) for c in columns]
    unique = unique_row(columns, where, ctx.fresh("__u"))
    complete = [exp.Not(this=exp.Is(this=col(c), expression=exp.Null())) for c in columns]
    row = RowCheck(exp.and_(*complete, unique.predicate), where, unique.helpers)
    return LeafPlan(rule, metrics, AllOne(tuple(m.display for m in metrics)), row)


def unique_value_ratio(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``UniqueValueRatio "c" > 0.5``: values seen once / distinct values, NULL left out."""
    (column,) = _columns(rule, ctx)
    freq = Frequencies((column.name,), ctx.where(rule))
    distinct = ctx.request(FrequencyAggregate(freq, exp.Count(this=exp.Star())))
    once = ctx.request(
        FrequencyAggregate(
            freq,
            filtered(exp.Count(this=exp.Star()), exp.EQ(this=n_column(), expression=exp.Literal.number(1))),
        )
    )
    key = MetricKey.column(column.name, "UniqueValueRatio")
    metric = MetricSpec(key.key, qualified(key, rule), ratio_of(once, distinct), (once, distinct))
    return LeafPlan(rule, [metric], judged(rule, metric))


def distinct_values_count(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``DistinctValuesCount "c" > 3``: distinct non-NULL values."""
    (column,) = _columns(rule, ctx)
    # the kind's form over the value counts, shared with Uniqueness and Entropy
    slot = ctx.request(KINDS["distinct_count"].request(column, ctx.where(rule)))
    key = MetricKey.column(column.name, "DistinctValuesCount")
    metric = MetricSpec(key.key, qualified(key, rule), number_of(slot), (slot,))
    return LeafPlan(rule, [metric], judged(rule, metric))


def entropy(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``Entropy "c" > 1``: -Σ p ln p over value frequencies (natural log, as Deequ; DQDL.md §6)."""
    (column,) = _columns(rule, ctx)
    freq = Frequencies((column.name,), ctx.where(rule))
    total = ctx.request(FrequencyAggregate(freq, exp.Sum(this=n_column())))
    weighted = ctx.request(
        FrequencyAggregate(freq, exp.Sum(this=exp.Mul(this=n_column(), expression=exp.Ln(this=n_column()))))
    )

    def compute(m: Measurements) -> float | None:
        n, s = m.number(total), m.number(weighted)
        if not n or s is None:
            return float("nan")
        # H = ln N - (1/N) Σ n ln n, the same sum without a second pass for N.
        return max(math.log(n) - s / n, 0.0)

    key = MetricKey.column(column.name, "Entropy")
    metric = MetricSpec(key.key, qualified(key, rule), compute, (total, weighted))
    return LeafPlan(rule, [metric], judged(rule, metric))


def _numeric(column: Column, rule_type: str) -> None:
    if not column.kind.numeric:
        raise RuleError(f"Column '{column.name}' is {column.type}; {rule_type} needs a numeric column")


def _statistic(name: str, measured: str) -> Callable[[ast.Rule, Context], LeafPlan]:
    def kind(rule: ast.Rule, ctx: Context) -> LeafPlan:
        (column,) = _columns(rule, ctx)
        _numeric(column, rule.type)
        slot = ctx.request(KINDS[measured].request(column, ctx.where(rule)))
        key = MetricKey.column(column.name, name)
        metric = MetricSpec(key.key, qualified(key, rule), number_of(slot), (slot,))
        return LeafPlan(rule, [metric], judged(rule, metric))

    kind.__doc__ = f'``{name} "c" ...``: NULLs ignored; population statistics (DQDL.md §6).'
    return kind


mean = _statistic("Mean", "mean")
total = _statistic("Sum", "sum")
standard_deviation = _statistic("StandardDeviation", "stddev")
variance = _statistic("Variance", "variance")


def column_correlation(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``ColumnCorrelation "a" "b" > 0.8``: Pearson's r over rows where both are non-NULL."""
    first, second = _columns(rule, ctx)
    _numeric(first, rule.type)
    _numeric(second, rule.type)
    slot = ctx.request(
        Aggregate(filtered(exp.Corr(this=col(first), expression=col(second)), ctx.where(rule)))
    )
    key = MetricKey.multicolumn([first.name, second.name], "ColumnCorrelation")
    metric = MetricSpec(key.key, qualified(key, rule), number_of(slot), (slot,))
    return LeafPlan(rule, [metric], judged(rule, metric))


# --- the rule types Deequ's DQDL evaluator added beyond Glue's published list ----------------
# Semantics follow Deequ's analyzers of the same names (docs/dqdl.md, "Rule types beyond
# Glue's documentation"); each reads the shared scan like the statistics above.


def _column_metric(
    rule: ast.Rule,
    ctx: Context,
    name: str,
    slots: Mapping[str, exp.Expr],
    compute: Callable[..., float | None],
) -> LeafPlan:
    """A numeric column's metric ``name`` computed by ``compute`` from aggregates over it."""
    (column,) = _columns(rule, ctx)
    _numeric(column, rule.type)
    where = ctx.where(rule)
    named = {key: ctx.request(Aggregate(within(build, where))) for key, build in slots.items()}
    key = MetricKey.column(column.name, name)

    def value(m: Measurements) -> float | None:
        return compute(**{k: m.number(slot) for k, slot in named.items()})

    metric = MetricSpec(key.key, qualified(key, rule), value, tuple(named.values()))
    return LeafPlan(rule, [metric], judged(rule, metric))


def _of(rule: ast.Rule, ctx: Context) -> exp.Expr:
    return col(_columns(rule, ctx)[0])


def zeros_count(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``ZerosCount "c" < 10``: rows whose value is 0 (NULL is not 0); 0 on zero rows."""
    zero = exp.EQ(this=_of(rule, ctx), expression=exp.Literal.number(0))
    count = exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=zero))
    return _column_metric(rule, ctx, "ZerosCount", {"zeros": count}, lambda zeros: zeros or 0.0)


def value_range(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``Range "c" <= 100``: maximum - minimum of the non-NULL values."""
    (column,) = _columns(rule, ctx)
    aggregates = {"low": KINDS["min"].aggregate(column), "high": KINDS["max"].aggregate(column)}

    def spread(low: float | None, high: float | None) -> float | None:
        return None if low is None or high is None else high - low

    return _column_metric(rule, ctx, "Range", aggregates, spread)


def interquartile_range(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``InterquartileRange "c" < 5``: Q3 - Q1, exact quantiles with linear interpolation
    (Spark's ``percentile``, DuckDB's ``quantile_cont``)."""
    x = exp.cast(_of(rule, ctx), exp.DataType.build("DOUBLE"))
    aggregates = {
        name: exp.PercentileCont(this=x.copy(), expression=exp.Literal.number(q))
        for name, q in (("q1", 0.25), ("q3", 0.75))
    }

    def spread(q1: float | None, q3: float | None) -> float | None:
        return None if q1 is None or q3 is None else q3 - q1

    return _column_metric(rule, ctx, "InterquartileRange", aggregates, spread)


def _moments(rule: ast.Rule, ctx: Context, extra: exp.Expr) -> dict[str, exp.Expr]:
    (column,) = _columns(rule, ctx)
    return {
        "rows": count_star(),
        "nulls": KINDS["null_count"].aggregate(column),
        "var": KINDS["variance"].aggregate(column),
        "engine": extra,
    }


def _values(rows: float | None, nulls: float | None) -> float:
    """How many values the moments are over: the rows that are not NULL."""
    return (rows or 0.0) - (nulls or 0.0)


def skewness(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``Skewness "c" between -1 and 1``: population skewness √n·m3 / m2^1.5 (Deequ's; 0 when
    every value is equal, NaN on zero rows). DuckDB's ``skewness`` is the sample statistic G1 =
    g1·√(n(n-1))/(n-2), converted back here; it is undefined below 3 values, where g1 is 0."""
    x = exp.cast(_of(rule, ctx), exp.DataType.build("DOUBLE"))

    def population(
        rows: float | None, nulls: float | None, var: float | None, engine: float | None
    ) -> float | None:
        n = _values(rows, nulls)
        if not n:
            return float("nan")
        if not var or n < 3 or engine is None:
            return 0.0
        return engine * (n - 2) / math.sqrt(n * (n - 1))

    return _column_metric(rule, ctx, "Skewness", _moments(rule, ctx, exp.Skewness(this=x)), population)


def kurtosis(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``Kurtosis "c" < 3``: population excess kurtosis n·m4 / m2² - 3 (Deequ's; 0 when every
    value is equal, NaN on zero rows), DuckDB's ``kurtosis_pop``."""
    x = exp.cast(_of(rule, ctx), exp.DataType.build("DOUBLE"))

    def excess(
        rows: float | None, nulls: float | None, var: float | None, engine: float | None
    ) -> float | None:
        if not _values(rows, nulls):
            return float("nan")
        return 0.0 if not var or engine is None else engine

    extra = exp.Anonymous(this="kurtosis_pop", expressions=[x])
    return _column_metric(rule, ctx, "Kurtosis", _moments(rule, ctx, extra), excess)


def duplicate_row_count(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``DuplicateRowCount "a" "b" = 0``: rows whose key (the listed columns, or every column)
    occurs more than once; rows whose key columns are all NULL are left out, as in Uniqueness."""
    columns = _columns(rule, ctx) if rule.params else list(ctx.primary.columns)
    freq = Frequencies(tuple(c.name for c in columns), ctx.where(rule))
    repeated = exp.GT(this=n_column(), expression=exp.Literal.number(1))
    slot = ctx.request(FrequencyAggregate(freq, filtered(exp.Sum(this=n_column()), repeated)))
    # One column is Column.<c>, as for Uniqueness (Deequ says Multicolumn.<c>, a one-name list).
    key = _column_key(columns, "DuplicateRowCount") if rule.params else MetricKey.dataset("DuplicateRowCount")
    metric = MetricSpec(key.key, qualified(key, rule), lambda m: m.number(slot) or 0.0, (slot,))
    return LeafPlan(rule, [metric], judged(rule, metric))
