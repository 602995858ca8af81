"""The hybrid baseline (seed 000): every batch row gets its account's previous record.

The batch is unioned with the latest month already committed for the contributor before the
batch's first statement date, and ``LAG()`` over the statement date, partitioned by the key,
adds ``prev_<column>``. An account missing from that month (quarantined or held last month, or
silent for a month) is baselined on its own latest committed record within the lookback, passed
as a second relation (``older``). A backfill of several months baselines each month on the one
before it; rows of an earlier month that the run will not commit are marked ``no_base`` and are
nobody's baseline (the gate judges such a backfill month by month, :mod:`assay.gate.gate`).
``__has_prev`` tells a row with a previous record from one without (a new account, a new
contributor): rules that read ``prev_`` columns skip the latter.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from sqlglot import exp

from assay.gate.batch import ROW

BASE = "__base"
HAS_PREV = "__has_prev"
LAGGED = "__lagged"
NO_BASE = "__no_base"  # a batch row that is nobody's baseline (it will not be committed)


def missing(batch: str, baseline: str, key: str) -> exp.Select:
    """The batch's keys that the baseline month does not hold.

    >>> "NOT EXISTS" in missing("b", "base", "id").sql("duckdb").upper()
    True
    """
    inner = (
        exp.select(exp.Literal.number(1))
        .from_(_table(baseline, "__m"))
        .where(
            exp.EQ(this=exp.column(key, "__m", quoted=True), expression=exp.column(key, "__b", quoted=True))
        )
    )
    return (
        exp.select(exp.column(key, "__b", quoted=True))
        .distinct()
        .from_(_table(batch, "__b"))
        .where(
            exp.and_(
                exp.column(key, "__b", quoted=True).is_(exp.Null()).not_(), exp.Exists(this=inner).not_()
            )
        )
    )


def latest(
    relation: str, key: str, order: str, columns: list[str], *, among: str | None = None
) -> exp.Select:
    """Each key's latest record in ``relation`` (only the keys of relation ``among``, if given),
    its ``columns`` named one by one (``* EXCEPT`` is not Spark 3.5's).

    >>> "ROW_NUMBER" in latest("r", "id", "d", ["id", "d"], among="k").sql("duckdb").upper()
    True
    """
    number = exp.Window(
        this=exp.RowNumber(),
        partition_by=[_q(key)],
        order=exp.Order(expressions=[exp.Ordered(this=_q(order), desc=True)]),
    )
    ranked = exp.select(exp.Star(), exp.alias_(number, "__n", quoted=True)).from_(_table(relation, "__r"))
    if among is not None:
        wanted = exp.select(exp.column(key, "__k", quoted=True)).from_(_table(among, "__k"))
        ranked = ranked.where(
            exp.In(this=exp.column(key, "__r", quoted=True), query=exp.Subquery(this=wanted))
        )
    return (
        exp.select(*(_q(name) for name in columns))
        .from_(exp.alias_(exp.Subquery(this=ranked), "__ranked", table=True))
        .where(exp.EQ(this=_q("__n"), expression=exp.Literal.number(1)))
    )


def _table(name: str, alias: str) -> exp.Table:
    return exp.Table(
        this=exp.to_identifier(name, quoted=True), alias=exp.TableAlias(this=exp.to_identifier(alias))
    )


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
    older: str | None = None,
    no_base: exp.Expr | None = None,
) -> exp.Select:
    """The batch rows with ``prev_<c>`` for each column ``c`` in ``prev`` and ``__has_prev``.

    ``no_base`` (a condition on a batch row) marks the rows that are nobody's baseline: rows of
    a backfill's earlier months that this run will not commit. They stay in the result (a
    window rule such as IsUnique still sees the whole batch), but ``LAG()`` runs in a partition
    of their own, so every other row's previous record is its key's latest record that is
    committed, in the table or by this run.

    >>> q = lagged("b", "base", pa.schema([("id", pa.string()), ("d", pa.date32()), ("x", pa.int64())]),
    ...            key="id", order="d", prev=["x"])
    >>> "LAG(" in q.sql("duckdb") and "PARTITION BY" in q.sql("spark")
    True
    """
    columns = [_q(f.name) for f in schema]
    flags = [exp.alias_(exp.Literal.number(0), BASE, quoted=True)]
    if no_base is not None:
        flags.append(exp.alias_(no_base, NO_BASE, quoted=True))
    rows = exp.select(*columns, _q(ROW), *flags).from_(exp.to_identifier(batch, quoted=True))
    union: exp.Query = rows
    for relation in (baseline, older):
        if relation is None:
            continue
        committed_flags = [exp.alias_(exp.Literal.number(1), BASE, quoted=True)]
        if no_base is not None:
            committed_flags.append(exp.alias_(exp.false(), NO_BASE, quoted=True))
        committed = exp.select(
            *(c.copy() for c in columns),
            exp.alias_(exp.cast(exp.Null(), exp.DataType.build("BIGINT")), ROW, quoted=True),
            *committed_flags,
        ).from_(exp.to_identifier(relation, quoted=True))
        union = exp.union(union, committed, distinct=False)
    partition = [_q(key)] if no_base is None else [_q(key), _q(NO_BASE)]

    def window(expression: exp.Expr) -> exp.Window:
        return exp.Window(
            this=expression,
            partition_by=[p.copy() for p in partition],
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
