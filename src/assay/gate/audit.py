"""The balance of a gate run: every record of its batch in exactly one of its outputs.

The gate numbers each record of a batch (:data:`assay.gate.batch.ROW`, its position in the file)
and routes by that number, but none of its outputs keeps it: the table holds typed rows, the
quarantine file the cells as they were sent (and the line of a record that did not split into
columns), the held file typed rows. So :func:`balance` attributes each output row to a record by
its content, as that output keeps it: a quarantined row by its cells as sent (the batch's text
table, blanks NULL, as the quarantine file was written), a ragged line by its line number, a
committed or held row by its typed values (the batch's typed table). Records identical in every
cell cannot be told apart by anyone; their copies are attributed in file order, so such records
still balance only when each is in exactly one output.

Quarantined rows are attributed first, then committed rows among the records left, then held
rows among those left: a record whose text differs but whose typed values equal another's (two
copies of a key, one with a space before a number) is quarantined as a duplicate by the gate,
and its twin's typed copy must not be taken for it. An output row attributed to no record is a
*duplicate* when its content is some record's (that record is then in two outputs, or twice in
one: the record's line names it) and *unknown* when it is no record's at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from assay.engine import Engine
from assay.errors import PlatformError
from assay.gate import batch as batches
from assay.gate.batch import ROW
from assay.gate.schema import sql_type

COMMITTED, QUARANTINED, HELD, RELEASED = "committed", "quarantined", "held", "released"
OUT = "__out"  # an output row's position in its output, 0-based
LINE = "dq_line"  # the quarantine file's line of a record that did not split into columns
_RANK = "__copy"  # which copy of identical rows a row is, in file (or output) order


@dataclass(frozen=True)
class Outputs:
    """What a gate run left, each as read back: the rows its snapshot committed (typed), its
    quarantine file's rows (every column text) and its held rows (typed); ``sources`` says
    where each was read, for messages."""

    committed: pa.Table
    quarantined: pa.Table
    held: pa.Table
    sources: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Since:
    """What became of a run's held rows after it, for the records found in no output: ``order``
    is the statement-date column; ``replaced`` says of each record's date whether a later run
    sent that month again (withdrawing the rows held for it); ``released`` gives, for dates, the
    rows decisions released: those accepted as the table held them (typed) and those rejected
    as their quarantine files hold them (text of typed values)."""

    order: str
    replaced: Callable[[list[Any]], list[bool]]
    released: Callable[[list[Any]], tuple[pa.Table, pa.Table]]


@dataclass(frozen=True)
class Stray:
    """An output row attributed to no record: the output, its position there (1-based) and the
    line of the record it copies (None: it copies none, a row from outside the batch)."""

    output: str
    position: int
    line: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"output": self.output, "position": self.position, "line": self.line}


@dataclass(frozen=True)
class Balance:
    """Where a batch's records went. ``input_rows`` is None for a run that had none to account
    for (it failed before its commit, or refused a file already gated): it must have left no
    output. ``missing`` are the lines of records in no output; ``withdrawn`` those of records
    held by the run and withdrawn since, when a later run replaced their month (docs/gate.md,
    "Resends and repeats"), and ``released`` those a decision committed or quarantined since:
    accounted for, by that later run or decision.

    >>> Balance(3, 2, 1, 0).balanced, Balance(3, 2, 0, 0, missing=[4]).balanced
    (True, False)
    >>> Balance(None, 0, 0, 0).balanced, Balance(None, 0, 1, 0).balanced
    (True, False)
    """

    input_rows: int | None
    committed: int
    quarantined: int
    held: int
    missing: list[int] = field(default_factory=list)
    withdrawn: list[int] = field(default_factory=list)
    released: list[int] = field(default_factory=list)
    duplicated: list[Stray] = field(default_factory=list)
    unknown: list[Stray] = field(default_factory=list)

    @property
    def balanced(self) -> bool:
        outputs = self.committed + self.quarantined + self.held + len(self.withdrawn) + len(self.released)
        expected = 0 if self.input_rows is None else self.input_rows
        return expected == outputs and not (self.missing or self.duplicated or self.unknown)

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_rows": self.input_rows,
            "committed": self.committed,
            "quarantined": self.quarantined,
            "held": self.held,
            "balanced": self.balanced,
            "missing": self.missing,
            "withdrawn": self.withdrawn,
            "released": self.released,
            "duplicated": [s.to_dict() for s in self.duplicated],
            "unknown": [s.to_dict() for s in self.unknown],
        }


def balance(
    engine: Engine,
    batch: batches.Batch,
    outputs: Outputs,
    lines: Callable[[list[int]], list[int]],
    since: Since | None = None,
) -> Balance:
    """Attribute every output row of a run to a record of its ``batch`` (read into ``engine``);
    ``lines`` turns records' ROWs into the file lines a person looks at. A record in no output
    may have been held and have left since (``since``): withdrawn, or released by a decision."""
    header, names = batch.header, batch.schema.names
    quarantined = outputs.quarantined
    absent = [name for name in [*header, LINE] if name not in quarantined.column_names]
    if absent and quarantined.num_rows:
        where = outputs.sources.get(QUARANTINED, "the quarantine file")
        raise PlatformError(f"{where}: has no column(s) {', '.join(absent)}: not a quarantine file")
    owner: dict[int, str] = {}  # ROW -> the output it is in
    strays: list[tuple[str, int, int | None]] = []  # (output, position, the ROW it copies)
    ragged_strays: list[Stray] = []  # a ragged line quarantined twice, or a line that is no ragged one

    # a line that did not split into columns is quarantined with its line number
    ragged = {e.line for e in batch.errors if e.row is None and e.line is not None}
    placed: set[int] = set()
    given = quarantined.column(LINE).to_pylist() if quarantined.num_rows else []
    quarantine_lines = [None if v is None else int(v) for v in given]
    records = [i for i, line in enumerate(quarantine_lines) if line is None]
    for position, line in enumerate(quarantine_lines):
        if line is None:
            continue
        if line in ragged and line not in placed:
            placed.add(line)
        else:
            ragged_strays.append(Stray(QUARANTINED, position + 1, line if line in ragged else None))

    text = exp.select(exp.column(ROW, quoted=True), *_columns(header)).from_(
        exp.to_identifier(batch.text, quoted=True)
    )
    if records:
        picked = pa.array(records, pa.int64())
        quarantine_rows = quarantined.select(header).take(picked)
        _place(engine, QUARANTINED, text, quarantine_rows, header, owner, strays, positions=picked)
    typed = exp.select(exp.column(ROW, quoted=True), *_columns(names)).from_(
        exp.to_identifier(batch.typed, quoted=True)
    )
    for output, rows in ((COMMITTED, outputs.committed), (HELD, outputs.held)):
        if not rows.num_rows:
            continue
        absent = [name for name in names if name not in rows.column_names]
        if absent:
            where = outputs.sources.get(output, output)
            raise PlatformError(f"{where}: has no column(s) {', '.join(absent)} of the batch")
        _place(engine, output, typed, rows.select(names), names, owner, strays)

    unplaced = exp.select(exp.column(ROW, quoted=True)).from_(exp.to_identifier(batch.text, quoted=True))
    if owner:
        unplaced = unplaced.where(exp.not_(batches.in_rows(engine, sorted(owner), "__audit_placed")))
    missing_rows = engine.query(unplaced.order_by(exp.column(ROW, quoted=True))).column(ROW).to_pylist()
    copied = sorted({row for _, _, row in strays if row is not None})
    at = dict(zip([*missing_rows, *copied], lines([*missing_rows, *copied]), strict=True))
    withdrawn_rows: set[int] = set()
    if missing_rows and since is not None:
        dated = batches.fetch(engine, batch.typed, missing_rows)  # a parse error has no date: stays missing
        days = dated.column(since.order).to_pylist()
        gone, dated_rows = since.replaced(days), dated.column(ROW).to_pylist()
        withdrawn_rows = {row for row, out in zip(dated_rows, gone, strict=True) if out}
        still = [(row, day) for row, day, out in zip(dated_rows, days, gone, strict=True) if not out]
        if still:
            _released(engine, batch, typed, since, still, owner)
    released = sorted(at[row] for row in missing_rows if owner.get(row) == RELEASED)
    missing = sorted(
        [at[row] for row in missing_rows if row not in withdrawn_rows and row not in owner]
        + sorted(ragged - placed)
    )
    withdrawn = sorted(at[row] for row in withdrawn_rows)

    def stray(output: str, position: int, row: int | None) -> Stray:
        return Stray(output, position + 1, None if row is None else at[row])

    found = sorted([*ragged_strays, *(stray(*item) for item in strays)], key=lambda s: (s.output, s.position))
    return Balance(
        batch.total,
        outputs.committed.num_rows,
        quarantined.num_rows,
        outputs.held.num_rows,
        missing=missing,
        withdrawn=withdrawn,
        released=released,
        duplicated=[s for s in found if s.line is not None],
        unknown=[s for s in found if s.line is None],
    )


def _released(
    engine: Engine,
    batch: batches.Batch,
    typed: exp.Select,
    since: Since,
    still: list[tuple[int, Any]],
    owner: dict[int, str],
) -> None:
    """Attribute records still in no output (``still``: ROW and date) to the rows decisions
    released for their dates; the other rows of those snapshots are not this run's and are
    not strays."""
    names = batch.schema.names
    accepted, rejected = since.released(sorted({day for _, day in still if day is not None}))
    mine = typed.where(batches.in_rows(engine, [row for row, _ in still], "__audit_still"))
    if accepted.num_rows:
        _place(engine, RELEASED, mine, accepted.select(names), names, owner, None)
    if rejected.num_rows:
        engine.register_arrow("__audit_rejected", rejected.select(names))
        cast = exp.select(
            *(
                exp.alias_(
                    exp.TryCast(this=exp.column(f.name, quoted=True), to=sql_type(f.type)),
                    f.name,
                    quoted=True,
                )
                for f in batch.schema
            )
        ).from_(exp.to_identifier("__audit_rejected", quoted=True))
        _place(engine, RELEASED, mine, engine.query(cast), names, owner, None, name="__audit_released_q")


def _columns(names: Sequence[str]) -> list[exp.Expr]:
    return [exp.column(name, quoted=True) for name in names]


def _place(
    engine: Engine,
    output: str,
    records: exp.Select,
    rows: pa.Table,
    names: list[str],
    owner: dict[int, str],
    strays: list[tuple[str, int, int | None]] | None,
    *,
    positions: pa.Array | None = None,
    name: str | None = None,
) -> None:
    """Attribute the ``rows`` of ``output`` to the ``records`` (ROW and ``names``) not yet in an
    output (``owner``), the k-th copy of a content to the k-th record holding it; what is left
    joins ``strays`` (unless None), with the first record it copies, if any."""
    if not rows.num_rows:
        return
    at = positions if positions is not None else pa.array(range(rows.num_rows), pa.int64())
    name = name or f"__audit_{output}"
    engine.register_arrow(name, rows.append_column(OUT, at))
    free = records.copy()
    if owner:
        free = free.where(exp.not_(batches.in_rows(engine, sorted(owner), "__audit_taken")))

    def ranked(source: exp.Expr, order: str) -> exp.Select:
        rank = exp.Window(
            this=exp.RowNumber(),
            partition_by=_columns(names),
            order=exp.Order(expressions=[exp.Ordered(this=exp.column(order, quoted=True))]),
        )
        return exp.select(exp.Star(), exp.alias_(rank, _RANK, quoted=True)).from_(source)

    mine = exp.alias_(exp.Subquery(this=ranked(exp.to_identifier(name, quoted=True), OUT)), "__o", table=True)
    theirs = exp.alias_(
        exp.Subquery(this=ranked(exp.alias_(exp.Subquery(this=free), "__f", table=True), ROW)),
        "__i",
        table=True,
    )
    same = [
        exp.NullSafeEQ(
            this=exp.column(n, table="__o", quoted=True), expression=exp.column(n, table="__i", quoted=True)
        )
        for n in names
    ]
    rank_same = exp.EQ(
        this=exp.column(_RANK, table="__o", quoted=True),
        expression=exp.column(_RANK, table="__i", quoted=True),
    )
    placed = engine.query(
        exp.select(exp.column(OUT, table="__o", quoted=True), exp.column(ROW, table="__i", quoted=True))
        .from_(mine)
        .join(theirs, on=exp.and_(rank_same, *same), join_type="left")
    )
    left: list[int] = []
    for position, row in zip(placed.column(OUT).to_pylist(), placed.column(ROW).to_pylist(), strict=True):
        if row is None:
            left.append(position)
        else:
            owner[row] = output
    if not left or strays is None:
        return
    # what a row left over copies: any record with its content, placed or not
    engine.register_arrow("__audit_left", pa.table({OUT: pa.array(left, pa.int64())}))
    wanted = exp.select(exp.column(OUT, quoted=True)).from_(exp.to_identifier("__audit_left", quoted=True))
    every = exp.alias_(exp.Subquery(this=records.copy()), "__i", table=True)
    copies = engine.query(
        exp.select(
            exp.column(OUT, table="__o", quoted=True),
            exp.alias_(exp.Min(this=exp.column(ROW, table="__i", quoted=True)), ROW, quoted=True),
        )
        .from_(exp.alias_(exp.to_table(name, quoted=True), "__o", table=True))
        .join(every, on=exp.and_(*(s.copy() for s in same)))
        .where(exp.In(this=exp.column(OUT, table="__o", quoted=True), query=exp.Subquery(this=wanted)))
        .group_by(exp.column(OUT, table="__o", quoted=True))
    )
    copy_of = dict(
        zip(copies.column(OUT).to_pylist(), pc.cast(copies.column(ROW), pa.int64()).to_pylist(), strict=True)
    )
    strays.extend((output, position, copy_of.get(position)) for position in left)
