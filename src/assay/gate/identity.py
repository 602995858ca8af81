"""Row identity: which of a batch's rows are the gated contributor's records, one per key and
statement date (docs/gate.md, "Row identity"). Rows of another contributor, rows with a blank key
or statement date and every copy of a key sent twice for one date are set aside before any rule
sees the batch; the rest is registered with the engine as the batch the rules judge."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

import pyarrow as pa
from sqlglot import exp

from assay.gate import batch as batches
from assay.gate import gate
from assay.gate.gate import BATCH, ROW, UNIDENTIFIED, Scope


@dataclass(frozen=True)
class Identified:
    """The batch split by identity: its rows of another contributor (``wrong``: ROW and the
    contributor column), its rows without an identity of their own (:func:`unidentified`), and
    the rows left per statement date (``month_rows``; ``dates``, those dates in order)."""

    wrong: pa.Table
    unidentified: pa.Table
    month_rows: dict[Any, int]
    dates: list[date]


def identify(scope: Scope, batch: batches.Batch) -> Identified:
    """Split ``batch`` by identity and register the rows left as :data:`BATCH` in the engine."""
    opts = scope.options
    schema = batch.schema
    # The batch stays in the engine: what comes back is its rows of another contributor
    # (usually none), its statement dates and its rows per date.
    ours = gate.ours(scope, schema)
    order = exp.column(opts.order, quoted=True)
    mine = exp.Coalesce(this=ours.copy(), expressions=[exp.false()])
    one = exp.Literal.number(1)
    theirs = exp.Sum(
        this=exp.Case(ifs=[exp.If(this=exp.not_(mine.copy()), true=one)], default=exp.Literal.number(0))
    )
    per_date = scope.engine.query(
        exp.select(
            exp.alias_(order.copy(), "d", quoted=True),
            exp.alias_(exp.Count(this=exp.Star()), "n", quoted=True),
            exp.alias_(theirs, "theirs", quoted=True),
        )
        .from_(exp.to_identifier(batch.typed, quoted=True))
        .group_by(order.copy())
    ).to_pylist()
    wrong = pa.table({ROW: pa.array([], pa.int64()), opts.contributor_column: pa.array([], pa.string())})
    rows = exp.select(exp.Star()).from_(exp.to_identifier(batch.typed, quoted=True))
    if any(r["theirs"] for r in per_date):  # usually none: then no second look at the batch
        wrong = scope.engine.query(
            exp.select(exp.column(ROW, quoted=True), exp.column(opts.contributor_column, quoted=True))
            .from_(exp.to_identifier(batch.typed, quoted=True))
            .where(exp.not_(mine.copy()))
            .order_by(exp.column(ROW, quoted=True))
        )
        rows = rows.where(ours)
    unknown = unidentified(scope, rows, schema)
    if unknown.num_rows:  # usually none: then the batch is judged as it is
        positions = unknown.column(ROW).to_pylist()
        rows = rows.where(exp.not_(batches.in_rows(scope.engine, positions, UNIDENTIFIED)))
    scope.engine.register_query(BATCH, rows)
    month_rows = {r["d"]: int(r["n"]) - int(r["theirs"] or 0) for r in per_date}
    for day in unknown.column("d").to_pylist():
        month_rows[day] -= 1
    month_rows = {d: n for d, n in month_rows.items() if n}
    dates = sorted(d for d in month_rows if d is not None)
    return Identified(wrong, unknown, month_rows, dates)


def unidentified(scope: Scope, rows: exp.Select, schema: pa.Schema) -> pa.Table:
    """The rows of ``rows`` that cannot be told apart as records (ROW, key ``k``, statement
    date ``d``, copies ``n``, ``blank_key``): a blank key or statement date, or a key sent
    more than once for one statement date. None of them is judged, committed or anyone's
    baseline: the table never holds two records of one key for one date, and which copy
    is the record only the contributor can say (docs/gate.md, "Row identity").

    Two cheap queries find them, a filter and a grouping that is empty for a clean file; only
    keys that are sent twice are looked up row by row (a window over every row of a million-
    row batch cost a tenth of the gate's time)."""
    opts = scope.options
    key = exp.column(opts.key, quoted=True)
    order = exp.column(opts.order, quoted=True)
    source = exp.alias_(exp.Subquery(this=rows.copy()), "__identity", table=True, quoted=True)
    blank_key: exp.Expr = key.copy().is_(exp.null())
    if pa.types.is_string(schema.field(opts.key).type):  # blank_is_null: false keeps "" as text
        blank = exp.EQ(this=exp.Trim(this=key.copy()), expression=exp.Literal.string(""))
        blank_key = exp.or_(blank_key, blank)

    def columns(copies: exp.Expr, blank: exp.Expr) -> list[exp.Expr]:
        return [
            exp.column(ROW, quoted=True),
            exp.alias_(key.copy(), "k", quoted=True),
            exp.alias_(order.copy(), "d", quoted=True),
            exp.alias_(copies, "n", quoted=True),
            exp.alias_(blank, "blank_key", quoted=True),
        ]

    blanks = scope.engine.query(
        exp.select(*columns(exp.Literal.number(1), blank_key.copy()))
        .from_(source.copy())
        .where(exp.or_(blank_key.copy(), order.copy().is_(exp.null())))
    )
    # the keys sent twice, under names of their own: the batch's columns stay unambiguous
    twice_key, twice_order, copies = "__twice_key", "__twice_order", "__copies"
    sent = (
        exp.select(
            exp.alias_(key.copy(), twice_key, quoted=True),
            exp.alias_(order.copy(), twice_order, quoted=True),
            exp.alias_(exp.Count(this=exp.Star()), copies, quoted=True),
        )
        .from_(source.copy())
        .where(exp.and_(exp.not_(blank_key.copy()), exp.not_(order.copy().is_(exp.null()))))
        .group_by(key.copy(), order.copy())
        .having(exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(1)))
    )
    if not scope.engine.query(sent.copy().limit(1)).num_rows:
        return blanks.sort_by(ROW)
    same = exp.and_(
        exp.EQ(this=key.copy(), expression=exp.column(twice_key, quoted=True)),
        exp.EQ(this=order.copy(), expression=exp.column(twice_order, quoted=True)),
    )
    twice = scope.engine.query(
        exp.select(*columns(exp.column(copies, quoted=True), exp.false()))
        .from_(source.copy())
        .join(exp.alias_(exp.Subquery(this=sent), "__twice", table=True, quoted=True), on=same)
    )
    return pa.concat_tables([blanks, twice.cast(blanks.schema)]).sort_by(ROW)
