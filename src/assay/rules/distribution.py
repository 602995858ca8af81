"""The Distribution analyzer: a column's frequency distribution, measured in the shared scan.

Glue's documentation (dqdl-rule-types-Distribution): a numeric column gets an equal-width
histogram of ``bins`` bins (default and maximum 20) over its range; any other column the counts
of its 20 most frequent values, most frequent first. The result has Glue's ``DistributionData``
shape: ``bin_edges`` (text), ``counts`` and ``data_type``. NULL is counted in no bin.

``rebin`` is accepted and validated but changes nothing yet: Glue keeps a histogram's edges
from earlier runs and rebins when values overflow them on consecutive runs; assay learns the
edges from each evaluation's own minimum and maximum, so no value ever overflows.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from assay.engine import Column
from assay.lang.dqdl import ast
from assay.lang.dqdl.catalog import MAX_BINS
from assay.measure import Frequencies, FrequencyAggregate, Measurements, Scalar
from assay.measure.kinds import KINDS
from assay.measure.requests import n_column
from assay.rules.plan import Context, Detail, Fixed, LeafPlan, col

TOP_VALUES = 20  # "The analyzer returns only the top 20 most frequent values."


def distribution(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``Distribution "c" with bins = 10``: the column's histogram or value counts."""
    column = ctx.column(rule.params[0].text)
    bins = int(rule.tag("bins") or MAX_BINS)
    plan = LeafPlan(rule, [], Fixed(True))
    plan.detail = _histogram(ctx, column, bins) if column.kind.numeric else _top_values(ctx, column)
    return plan


def _histogram(ctx: Context, column: Column, bins: int) -> Detail:
    x = exp.cast(col(column), exp.DataType.build("DOUBLE"))
    low = ctx.request(KINDS["min"].request(column))
    high = ctx.request(KINDS["max"].request(column))
    table = exp.to_identifier(ctx.primary.name, quoted=True)
    bounds = exp.select(
        exp.alias_(exp.Min(this=x.copy()), "lo", quoted=True),
        exp.alias_(exp.Max(this=x.copy()), "hi", quoted=True),
    ).from_(table.copy())
    lo, hi = exp.column("lo", table="__b", quoted=True), exp.column("hi", table="__b", quoted=True)
    width = exp.func("nullif", exp.Sub(this=hi, expression=lo.copy()), exp.Literal.number(0))
    scaled = exp.Mul(
        this=exp.Div(this=exp.Paren(this=exp.Sub(this=x.copy(), expression=lo.copy())), expression=width),
        expression=exp.Literal.number(bins),
    )
    # The maximum falls on the last bin's upper edge; a constant column puts every value in bin 0.
    index = exp.func(
        "least",
        exp.func(
            "coalesce", exp.cast(exp.Floor(this=scaled), exp.DataType.build("BIGINT")), exp.Literal.number(0)
        ),
        exp.Literal.number(bins - 1),
    )
    binned = (
        exp.select(exp.alias_(index, "bin", quoted=True))
        .from_(table.copy())
        .join(exp.alias_(exp.Subquery(this=bounds), "__b", table=True, quoted=True), join_type="cross")
        .where(exp.Not(this=exp.Is(this=x.copy(), expression=exp.Null())))
    )
    counts = exp.Array(
        expressions=[
            exp.Filter(
                this=exp.Count(this=exp.Star()),
                expression=exp.Where(
                    this=exp.EQ(this=exp.column("bin", quoted=True), expression=exp.Literal.number(i))
                ),
            )
            for i in range(bins)
        ]
    )
    histogram = ctx.request(
        Scalar(
            exp.select(counts).from_(exp.alias_(exp.Subquery(this=binned), "__bins", table=True, quoted=True))
        )
    )

    def detail(m: Measurements) -> dict[str, Any]:
        first, last = m.number(low), m.number(high)
        if first is None or last is None:
            return _data(column, [], [])
        edges = [first + (last - first) * i / bins for i in range(bins + 1)]
        return _data(column, [repr(edge) for edge in edges], [int(n) for n in m.values.get(histogram) or []])

    return detail


def _top_values(ctx: Context, column: Column) -> Detail:
    freq = Frequencies((column.name,))
    text = exp.cast(col(column), exp.DataType.build("VARCHAR"))
    order = [exp.Ordered(this=n_column(), desc=True), exp.Ordered(this=text.copy())]
    first = exp.Literal.number(1)
    last = exp.Literal.number(TOP_VALUES)
    values = ctx.request(
        FrequencyAggregate(
            freq,
            exp.func(
                "list_slice", exp.ArrayAgg(this=exp.Order(this=text.copy(), expressions=order)), first, last
            ),
        )
    )
    order_copy = [o.copy() for o in order]
    counts = ctx.request(
        FrequencyAggregate(
            freq,
            exp.func(
                "list_slice",
                exp.ArrayAgg(this=exp.Order(this=n_column(), expressions=order_copy)),
                first.copy(),
                last.copy(),
            ),
        )
    )

    def detail(m: Measurements) -> dict[str, Any]:
        return _data(
            column, [str(v) for v in m.values.get(values) or []], [int(n) for n in m.values.get(counts) or []]
        )

    return detail


def _data(column: Column, edges: list[str], counts: list[int]) -> dict[str, Any]:
    return {"column": column.name, "data_type": column.type, "bin_edges": edges, "counts": counts}
