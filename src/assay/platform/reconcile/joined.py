"""Two relations of one engine compared by key in one join, as sqlglot trees.

Each side is read once: its rows with a non-NULL key, each with the number of rows holding its
key (a window). A full outer join on the key gives every key once; a key held by more than one
row on either side is ambiguous and left out (it is reported by :func:`anomalies`). Only the
rows that differ are kept (materialized: 0.1 % of the rows in the usual case), and the counts
and the sample keys are read from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from assay.engine import Engine
from assay.platform.reconcile.plan import Compared, Plan
from assay.platform.reconcile.result import KINDS, Anomalies, json_value

DIFF = "__reconcile_diff"
_N = "__n"
_STATUS = "__status"
_RN = "__rn"
_EXACT = exp.DataType.build("DECIMAL(38, 9)")


def _col(name: str, table: str | None = None) -> exp.Column:
    return exp.column(name, table=table, quoted=True)


def _key_null(key: Sequence[Compared], table: str | None = None) -> exp.Expr:
    return exp.or_(*(_col(k.name, table).is_(exp.null()) for k in key))


def _side(name: str, plan: Plan, repeated: bool) -> exp.Select:
    """A side's rows with a non-NULL key, with ``__n`` the rows holding each key: counted by a
    window when the side has ``repeated`` keys, else 1 (at 1 M rows the two windows took more
    time than the join itself, for sides that hold each key once)."""
    keys = [_col(k.name) for k in plan.key]
    count: exp.Expr = (
        exp.Window(this=exp.Count(this=exp.Star()), partition_by=keys) if repeated else exp.Literal.number(1)
    )
    return (
        exp.select(*keys, *(_col(c.name) for c in plan.columns), exp.alias_(count, _N, quoted=True))
        .from_(exp.to_identifier(name, quoted=True))
        .where(exp.not_(_key_null(plan.key)))
    )


def _differs(column: Compared) -> exp.Expr:
    """1 when the column differs between ``s`` and ``t``: NULL against NULL is equal, NULL
    against a value differs, numbers differ by more than their tolerance (compared as exact
    decimals: 1.01 - 1.00 in doubles is 0.010000000000000009)."""
    s, t = _col(column.name, "s"), _col(column.name, "t")
    if column.tolerance is None:
        apart: exp.Expr = exp.NEQ(this=s, expression=t)
    else:
        gap = exp.Abs(this=exp.Sub(this=exp.cast(s, _EXACT), expression=exp.cast(t, _EXACT)))
        apart = exp.GT(this=gap, expression=exp.Literal.number(str(column.tolerance)))
    return (
        exp.Case()
        .when(exp.and_(s.is_(exp.null()), t.is_(exp.null())), exp.Literal.number(0))
        .when(exp.or_(s.is_(exp.null()), t.is_(exp.null()), apart), exp.Literal.number(1))
        .else_(exp.Literal.number(0))
    )


def flag(column: Compared) -> str:
    return f"__d_{column.name}"


def diff_query(
    source: str, target: str, plan: Plan, repeated: tuple[bool, bool] = (True, True)
) -> exp.Select:
    """The rows that differ, one per key: the key, ``__status`` (a kind of :data:`KINDS`) and a
    0/1 flag per compared column. ``repeated``: whether each side may hold a key more than once
    (:func:`anomalies` knows)."""
    on = exp.and_(*(exp.EQ(this=_col(k.name, "s"), expression=_col(k.name, "t")) for k in plan.key))
    s_n, t_n = _col(_N, "s"), _col(_N, "t")
    status = (
        exp.Case()
        .when(t_n.is_(exp.null()), exp.Literal.string(KINDS[0]))
        .when(s_n.is_(exp.null()), exp.Literal.string(KINDS[1]))
        .else_(exp.Literal.string(KINDS[2]))
    )
    flags = [
        exp.alias_(
            exp.Case()
            .when(exp.or_(s_n.is_(exp.null()), t_n.is_(exp.null())), exp.Literal.number(0))
            .else_(_differs(c)),
            flag(c),
            quoted=True,
        )
        for c in plan.columns
    ]
    keys = [
        exp.alias_(exp.Coalesce(this=_col(k.name, "s"), expressions=[_col(k.name, "t")]), k.name, quoted=True)
        for k in plan.key
    ]
    joined = (
        exp.select(*keys, exp.alias_(status, _STATUS, quoted=True), *flags, s_n.copy(), t_n.copy())
        .from_(exp.Subquery(this=_side(source, plan, repeated[0]), alias=exp.to_identifier("s")))
        .join(
            exp.Subquery(this=_side(target, plan, repeated[1]), alias=exp.to_identifier("t")),
            on=on,
            join_type="FULL OUTER",
        )
    )
    one = exp.Literal.number(1)
    unambiguous = exp.and_(
        exp.EQ(this=exp.Coalesce(this=s_n.copy(), expressions=[one.copy()]), expression=one.copy()),
        exp.EQ(this=exp.Coalesce(this=t_n.copy(), expressions=[one.copy()]), expression=one.copy()),
    )
    # the status and flags are computed in the select list; the filter repeats them on the
    # join's columns rather than nesting a query
    differs = exp.or_(
        s_n.is_(exp.null()),
        t_n.is_(exp.null()),
        *(exp.EQ(this=_differs(c), expression=one.copy()) for c in plan.columns),
    )
    return joined.where(exp.and_(unambiguous, differs))


def counts(engine: Engine, plan: Plan) -> tuple[dict[str, int], dict[str, int]]:
    """The number of rows of each kind in :data:`DIFF`, and of changed rows per column."""
    sums = [exp.alias_(exp.Sum(this=_col(flag(c))), flag(c), quoted=True) for c in plan.columns]
    query = exp.select(_col(_STATUS), exp.alias_(exp.Count(this=exp.Star()), _N, quoted=True), *sums)
    rows = engine.rows(query.from_(DIFF).group_by(_col(_STATUS)), measuring=False)
    found = {kind: 0 for kind in KINDS}
    by_column = {c.name: 0 for c in plan.columns}
    for row in rows:
        found[row[_STATUS]] = int(row[_N])
        if row[_STATUS] == KINDS[2]:
            by_column = {c.name: int(row[flag(c)] or 0) for c in plan.columns}
    return found, by_column


def samples(engine: Engine, plan: Plan, limit: int) -> dict[str, list[dict[str, Any]]]:
    """Up to ``limit`` keys of each kind in :data:`DIFF`, in key order; a changed key with the
    columns that differ."""
    found: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    if limit == 0:
        return found
    keys = [_col(k.name) for k in plan.key]
    numbered = exp.select(
        exp.Star(),
        exp.alias_(
            exp.Window(this=exp.RowNumber(), partition_by=[_col(_STATUS)], order=exp.Order(expressions=keys)),
            _RN,
            quoted=True,
        ),
    ).from_(DIFF)
    query = (
        exp.select(exp.Star())
        .from_(exp.Subquery(this=numbered, alias=exp.to_identifier("n")))
        .where(exp.LTE(this=_col(_RN), expression=exp.Literal.number(limit)))
        .order_by(_col(_STATUS), *(k.copy() for k in keys))
    )
    for row in engine.rows(query, measuring=False):
        key = {k.name: json_value(row[k.name]) for k in plan.key}
        if row[_STATUS] == KINDS[2]:
            found[KINDS[2]].append({"key": key, "columns": [c.name for c in plan.columns if row[flag(c)]]})
        else:
            found[row[_STATUS]].append({"key": key})
    return found


def anomaly_query(name: str, plan: Plan, limit: int) -> exp.Select:
    """One side's keys that cannot be matched (a NULL in the key, or held by more than one row),
    grouped, numbered within each kind, with each kind's totals: at most ``2 * limit`` rows."""
    keys = [_col(k.name) for k in plan.key]
    null = exp.alias_(_key_null(plan.key), "__null", quoted=True)
    grouped = (
        exp.select(*keys, exp.alias_(exp.Count(this=exp.Star()), _N, quoted=True), null)
        .from_(exp.to_identifier(name, quoted=True))
        .group_by(*(k.copy() for k in keys))
        .having(
            exp.or_(
                exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(1)), _key_null(plan.key)
            )
        )
    )
    part = [_col("__null")]
    numbered = exp.select(
        *(k.copy() for k in keys),
        _col(_N),
        _col("__null"),
        exp.alias_(
            exp.Window(
                this=exp.RowNumber(), partition_by=part, order=exp.Order(expressions=[k.copy() for k in keys])
            ),
            _RN,
            quoted=True,
        ),
        exp.alias_(
            exp.Window(this=exp.Count(this=exp.Star()), partition_by=[p.copy() for p in part]),
            "__keys",
            quoted=True,
        ),
        exp.alias_(
            exp.Window(this=exp.Sum(this=_col(_N)), partition_by=[p.copy() for p in part]),
            "__rows",
            quoted=True,
        ),
    ).from_(exp.Subquery(this=grouped, alias=exp.to_identifier("g")))
    return (
        exp.select(exp.Star())
        .from_(exp.Subquery(this=numbered, alias=exp.to_identifier("n")))
        .where(exp.LTE(this=_col(_RN), expression=exp.Literal.number(max(limit, 1))))
    )


def anomalies(rows: Sequence[dict[str, Any]], plan: Plan, limit: int) -> Anomalies:
    """:func:`anomaly_query`'s rows as one side's :class:`Anomalies`."""
    null_rows = duplicate_keys = duplicate_rows = 0
    null_samples: list[dict[str, Any]] = []
    duplicate_samples: list[dict[str, Any]] = []
    for row in sorted(rows, key=lambda r: int(r[_RN])):
        key = {k.name: json_value(row[k.name]) for k in plan.key}
        if row["__null"]:
            null_rows = int(row["__rows"])
            if len(null_samples) < limit:
                null_samples.append({"key": key, "rows": int(row[_N])})
        else:
            duplicate_keys, duplicate_rows = int(row["__keys"]), int(row["__rows"])
            if len(duplicate_samples) < limit:
                duplicate_samples.append({"key": key, "rows": int(row[_N])})
    return Anomalies(null_rows, duplicate_keys, duplicate_rows, tuple(null_samples), tuple(duplicate_samples))


def row_count(engine: Engine, name: str) -> int:
    query = exp.select(exp.alias_(exp.Count(this=exp.Star()), _N, quoted=True)).from_(
        exp.to_identifier(name, quoted=True)
    )
    return int(engine.rows(query, measuring=False)[0][_N])
