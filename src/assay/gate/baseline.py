"""The hybrid baseline (seed 000): every batch row gets its account's previous record.

The batch is unioned with the latest month already committed for the contributor before the
batch's first statement date, and ``LAG()`` over the statement date, partitioned by the key,
adds ``prev_<column>``. An account missing from that month (quarantined or held last month, or
silent for a month) is baselined on its own latest committed record within the lookback, passed
as a second relation (``older``). A backfill of several months baselines each month on the one
before it; rows of an earlier month that the run will not commit are marked ``no_base`` and are
nobody's baseline (the gate judges such a backfill month by month, :mod:`assay.gate.states`).
``__has_prev`` tells a row with a previous record from one without (a new account, a new
contributor): rules that read ``prev_`` columns skip the latter.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import pyarrow as pa
from sqlglot import exp

from assay.engine import EngineError
from assay.gate import batch as batches
from assay.gate import gate as g
from assay.gate.batch import ROW
from assay.gate.gate import Scope
from assay.lake.iceberg import Warehouse
from assay.lake.readers import Registered

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


# --- registering the baseline with the run's engine ---------------------------------------


def baseline_date(scope: Scope, warehouse: Warehouse, exists: bool, dates: list[date]) -> date | None:
    """The contributor's latest committed month before the batch's first date (None: none)."""
    if not exists or not dates:
        return None
    committed = warehouse.partitions(
        scope.options.table, {scope.options.contributor_column: scope.contributor}
    )
    earlier = [p.values[scope.options.order] for p in committed if p.values[scope.options.order] < dates[0]]
    return max(earlier) if earlier else None


def register_baseline(scope: Scope, warehouse: Warehouse, day: date, schema: pa.Schema) -> str:
    """Register the contributor's committed month ``day`` with the engine; return its name.

    DuckDB scans the month's Parquet files in place, inside the LAG query, when PyIceberg's
    plan says they hold exactly that month (:meth:`Warehouse.parquet_files`) and their
    columns have the batch's types: the union then sees the rows and types a read through
    PyIceberg would give, without a copy of the month in Arrow (half a second and a few
    hundred MB per million rows). Otherwise (delete files, an evolved table, unreadable
    files) the month is read through PyIceberg. The paths come from Iceberg's metadata and
    reach DuckDB's Parquet reader as values, never as SQL text.
    """
    where = {scope.options.contributor_column: scope.contributor, scope.options.order: day}
    files = warehouse.parquet_files(scope.options.table, where)
    if files:
        try:
            scope.engine.register_file(g.BASELINE_FILES, [str(path) for path in files], "parquet")
            if _types(scope, g.BASELINE_FILES, schema) == _types(scope, g.BATCH, schema):
                return g.BASELINE_FILES
        except EngineError:
            pass  # the read through PyIceberg below says what is wrong with the files
    rows = warehouse.read(scope.options.table, where)
    scope.engine.register_arrow(g.BASELINE_ROWS, rows.select(schema.names).cast(schema))
    return g.BASELINE_ROWS


def register_older(
    scope: Scope, warehouse: Warehouse, baseline: str, baseline_date: date, schema: pa.Schema
) -> str | None:
    """The latest committed record of each batch account that the baseline month lacks (an
    account quarantined or held last month is still judged against its own past), looked up
    only when there are such accounts, within :data:`g.LOOKBACK_MONTHS`.

    The older months' Parquet files are scanned in place by DuckDB with a semi-join on the
    missing keys, as the baseline month is, so memory does not grow with the table's history;
    where Iceberg's plan does not allow it, they are read through PyIceberg filtered on the
    keys."""
    opts = scope.options
    keys = scope.engine.query(missing(g.BATCH, baseline, opts.key))
    if not keys.num_rows:
        return None
    earliest = date(baseline_date.year - 1, baseline_date.month, 1)
    months = [
        p.values[opts.order]
        for p in warehouse.partitions(opts.table, {opts.contributor_column: scope.contributor})
        if earliest <= p.values[opts.order] < baseline_date
    ]
    if not months:
        return None
    scope.engine.register_arrow(g.MISSING_KEYS, keys)
    # one scan plan for all the months (one per month cost a manifest read each: 4.5 of the
    # demo's 73 profiled seconds)
    files = warehouse.parquet_files(
        opts.table, {opts.contributor_column: scope.contributor, opts.order: months}
    )
    candidates = None
    if files:
        try:
            scope.engine.register_file(g.OLDER_CANDIDATES, [str(path) for path in files], "parquet")
            if _types(scope, g.OLDER_CANDIDATES, schema) == _types(scope, g.BATCH, schema):
                candidates = g.OLDER_CANDIDATES
        except EngineError:
            pass  # read through PyIceberg below
    if candidates is None:
        where = {
            opts.contributor_column: scope.contributor,
            opts.order: months,
            opts.key: keys.column(0).to_pylist(),
        }
        rows = warehouse.read(opts.table, where)
        scope.engine.register_arrow(g.OLDER_ROWS + "_read", rows.select(schema.names).cast(schema))
        candidates = g.OLDER_ROWS + "_read"
    older = scope.engine.query(latest(candidates, opts.key, opts.order, schema.names, among=g.MISSING_KEYS))
    if not older.num_rows:
        return None
    scope.engine.register_arrow(g.OLDER_ROWS, older.select(schema.names).cast(schema))
    return g.OLDER_ROWS


def _types(scope: Scope, table: str, schema: pa.Schema) -> list[str | None]:
    """The engine's type of each column of ``schema`` in registered ``table`` (None: absent)."""
    found = {column.name: column.type for column in scope.engine.columns(table)}
    return [found.get(name) for name in schema.names]


def register_lagged(
    scope: Scope,
    baseline: str | None,
    schema: pa.Schema,
    prev: list[str],
    older: str | None,
    no_base: list[int] | None = None,
) -> Registered:
    """The batch with its ``prev_`` columns, kept inside the engine as the view ``primary``
    (the name DQDL rules read): the row states are computed from it in the engine, and it
    never crosses into Python as a million-row Arrow table (materialising it there cost as
    much as the Arrow round trip it replaces; as a view, the window runs inside the states'
    one query). The batch rows ``no_base`` (a backfill's rows that will not be committed)
    are nobody's baseline."""
    condition = None
    if no_base is not None:
        condition = batches.in_rows(scope.engine, no_base, g.NOT_BASE) if no_base else exp.false()
    query = lagged(
        g.BATCH,
        baseline,
        schema,
        key=scope.options.key,
        order=scope.options.order,
        prev=prev,
        older=older,
        no_base=condition,
    )
    scope.engine.register_query(g.LAGGED, query)
    return Registered(g.LAGGED, tuple(scope.engine.columns(g.LAGGED)))


# --- judging -----------------------------------------------------------------------------
