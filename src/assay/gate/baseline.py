"""The hybrid baseline (seed 000): every batch row gets its account's previous record.

The batch is unioned with the latest month already committed for the contributor before the
batch's first statement date, and ``LAG()`` over the statement date, partitioned by the key,
adds ``prev_<column>``. A backfill of several months baselines each month on the one before it
in the same pass. ``__has_prev`` tells a row with a previous record from one without (a new
account, a new contributor): rules that read ``prev_`` columns skip the latter.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from sqlglot import exp

from assay.gate.batch import ROW

BASE = "__base"
HAS_PREV = "__has_prev"
LAGGED = "__lagged"


def _q(name: str) -> exp.Column:
    return exp.column(name, quoted=True)


def lagged(
    batch: str,
    baseline: str | None,
    schema: pa.Schema,
    *,
    key: str,
    order: str,
    prev: Sequence[str],
) -> exp.Select:
    """The batch rows with ``prev_<c>`` for each column ``c`` in ``prev`` and ``__has_prev``.

    >>> q = lagged("b", "base", pa.schema([("id", pa.string()), ("d", pa.date32()), ("x", pa.int64())]),
    ...            key="id", order="d", prev=["x"])
    >>> "LAG(" in q.sql("duckdb") and "PARTITION BY" in q.sql("spark")
    True
    """
    columns = [_q(f.name) for f in schema]
    rows = exp.select(*columns, _q(ROW), exp.alias_(exp.Literal.number(0), BASE, quoted=True)).from_(
        exp.to_identifier(batch, quoted=True)
    )
    union: exp.Query = rows
    if baseline is not None:
        committed = exp.select(
            *(c.copy() for c in columns),
            exp.alias_(exp.cast(exp.Null(), exp.DataType.build("BIGINT")), ROW, quoted=True),
            exp.alias_(exp.Literal.number(1), BASE, quoted=True),
        ).from_(exp.to_identifier(baseline, quoted=True))
        union = exp.union(rows, committed, distinct=False)

    def window(expression: exp.Expr) -> exp.Window:
        return exp.Window(
            this=expression,
            partition_by=[_q(key)],
            order=exp.Order(expressions=[exp.Ordered(this=_q(order)), exp.Ordered(this=_q(ROW))]),
        )

    prev_columns = [exp.alias_(window(exp.Lag(this=_q(name))), f"prev_{name}", quoted=True) for name in prev]
    has_prev = exp.Not(this=exp.Is(this=window(exp.Lag(this=exp.Literal.number(1))), expression=exp.Null()))
    inner = exp.select(exp.Star(), *prev_columns, exp.alias_(has_prev, HAS_PREV, quoted=True)).from_(
        exp.alias_(exp.Subquery(this=union), "__union", table=True, quoted=True)
    )
    return (
        exp.select(exp.Star())
        .from_(exp.alias_(exp.Subquery(this=inner), LAGGED, table=True, quoted=True))
        .where(exp.EQ(this=_q(BASE), expression=exp.Literal.number(0)))
    )
