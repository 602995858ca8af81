"""Two sides on different engines compared by checksums of key ranges, so that only the rows of
the ranges that differ cross from an engine to assay.

Every row gets two md5 hashes of a canonical text, computed by each engine on its own rows: one
of its key (which range it is in) and one of its key and compared values (what it holds). A
range is the rows whose key hash starts with the same hex digits; its checksum is its row count
and the sums of two 32-bit numbers read from the row hash, which do not depend on row order.
The first ranges keep about :data:`PER_RANGE` rows each (:func:`first_length`); a range that
differs and holds more than :data:`LEAF` rows on a side is split by one more digit (16 ranges),
on both sides, until it is small enough or 8 digits long; then the rows of the differing ranges
are fetched from both sides and compared in one DuckDB join exactly as one engine compares them
(:mod:`.joined`), with the tolerances. A canonical text that differs between engines for equal
values only costs rows fetched, never a wrong answer: the join decides.

The canonical text of a value (the same on DuckDB, PostgreSQL and Spark; tests/reconcile checks
it): ``n`` for NULL, else ``v`` and the value: an integer as its digits, any other number as a
DECIMAL(38, 6), a boolean as ``true``/``false``, a date or a time as the engine's ISO text,
anything else as text; values are separated by the unit separator (U+001F).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlglot import exp

from assay.engine import DataKind, Engine
from assay.platform.reconcile import joined
from assay.platform.reconcile.plan import Compared, Plan
from assay.platform.reconcile.result import Moved, Result
from assay.platform.reconcile.sides import Side
from assay.platform.reconcile.spec import Spec

LEAF = 64
"""A differing range of at most this many rows on each side is fetched rather than split."""

FIRST, LAST = 2, 8
"""The first ranges have at least 2 hex digits of the key hash (256); the last 8 (their rows are
fetched whatever their size: 4 billion ranges hold one key each but for hash collisions)."""

PER_RANGE = 16
"""The first ranges are as many as keep about this many rows each: every round of checksums
scans both tables again (at 1 M rows, starting at 2 digits took three rounds and 26 s against
PostgreSQL; 16 rows a range is 4 digits, one round), and a range this small is fetched."""


def first_length(rows: int) -> int:
    """The hex digits of the first ranges for a table of ``rows`` rows.

    >>> first_length(1_000), first_length(1_000_000), first_length(10_000_000)
    (2, 4, 5)
    """
    length = FIRST
    while length < LAST and rows > PER_RANGE * 16**length:
        length += 1
    return length


_KH, _RH = "__kh", "__rh"
_DECIMAL = exp.DataType.build("DECIMAL(38, 6)")
_TEXT = exp.DataType.build("VARCHAR")


def canonical(column: Compared) -> exp.Expr:
    """The canonical text of ``column``'s value (see the module's docstring)."""
    value = exp.column(column.name, quoted=True)
    if column.kind is DataKind.INTEGER:
        text: exp.Expr = exp.cast(exp.cast(value, exp.DataType.build("BIGINT")), _TEXT)
    elif column.kind.numeric:
        text = exp.cast(exp.cast(value, _DECIMAL), _TEXT)
    elif column.kind is DataKind.BOOLEAN:
        text = exp.Case().when(value, exp.Literal.string("true")).else_(exp.Literal.string("false"))
    else:
        text = exp.cast(value, _TEXT)
    return (
        exp.Case()
        .when(value.copy().is_(exp.null()), exp.Literal.string("n"))
        .else_(exp.DPipe(this=exp.Literal.string("v"), expression=text))
    )


def _joined(columns: Sequence[Compared]) -> exp.Expr:
    parts = [canonical(c) for c in columns]
    text = parts[0]
    for part in parts[1:]:
        text = exp.DPipe(this=exp.DPipe(this=text, expression=exp.Literal.string("\x1f")), expression=part)
    return text


def _hashed(name: str, found: Plan) -> exp.Select:
    """The side's key and compared columns with their key hash and row hash."""
    keys = [exp.column(k.name, quoted=True) for k in found.key]
    return exp.select(
        *keys,
        *(exp.column(c.name, quoted=True) for c in found.columns),
        exp.alias_(exp.MD5(this=_joined(found.key)), _KH, quoted=True),
        exp.alias_(exp.MD5(this=_joined((*found.key, *found.columns))), _RH, quoted=True),
    ).from_(exp.to_identifier(name, quoted=True))


def _prefix(length: int) -> exp.Expr:
    return exp.Substring(
        this=exp.column(_KH, quoted=True), start=exp.Literal.number(1), length=exp.Literal.number(length)
    )


def _number(engine: Engine, start: int) -> exp.Expr:
    """Eight hex digits of the row hash from ``start`` (1-based) as a number below 2**32, by the
    engine's own hex-to-integer (:meth:`Engine.hex_number`)."""
    digits = exp.Substring(
        this=exp.column(_RH, quoted=True), start=exp.Literal.number(start), length=exp.Literal.number(8)
    )
    return engine.hex_number(digits)


def _in(length: int, prefixes: Sequence[str]) -> exp.Expr:
    return exp.In(this=_prefix(length), expressions=[exp.Literal.string(p) for p in prefixes])


def _sums(
    engine: Engine, view: str, length: int, within: Sequence[str] | None
) -> tuple[dict[str, tuple[int, int, int]], int]:
    """Each range's (rows, sum of the first 32 bits, sum of the next 32 bits), ranges of
    ``length`` digits inside the ranges ``within`` (one digit shorter; None: every range)."""
    query = exp.select(
        exp.alias_(_prefix(length), "__range", quoted=True),
        exp.alias_(exp.Count(this=exp.Star()), "__rows", quoted=True),
        exp.alias_(exp.Sum(this=_number(engine, 1)), "__a", quoted=True),
        exp.alias_(exp.Sum(this=_number(engine, 9)), "__b", quoted=True),
    ).from_(exp.to_identifier(view, quoted=True))
    if within is not None:
        query = query.where(_in(length - 1, within))
    table = engine.query(query.group_by(_prefix(length)))
    ranges = {
        str(row["__range"]): (int(row["__rows"]), int(row["__a"]), int(row["__b"]))
        for row in table.to_pylist()
    }
    return ranges, table.nbytes


def compare(left: Side, right: Side, found: Plan, spec: Spec, say: Callable[[str], None]) -> Result:
    """Compare two sides on different engines (see the module's docstring)."""
    import pyarrow as pa

    from assay.engine.registry import make_engine

    views = {}
    for side in (left, right):
        views[side.name] = f"{side.name}_hashed"
        side.engine.register_query(views[side.name], _hashed(side.name, found))
    moved = {"source": Moved(), "target": Moved()}
    roles = {left.name: "source", right.name: "target"}
    leaves: dict[int, list[str]] = {}
    within: list[str] | None = None
    totals = {}
    for side in (left, right):
        totals[roles[side.name]] = joined.row_count(side.engine, side.name)
    for length in range(first_length(max(totals.values())), LAST + 1):
        say(f"checksums of ranges of {length} hex digits")
        sums = {}
        for side in (left, right):
            role = roles[side.name]
            found_sums, size = _sums(side.engine, views[side.name], length, within)
            sums[role] = found_sums
            moved[role] = moved[role].plus(checksum_rows=len(found_sums), size=size)
        differing = sorted(
            r
            for r in set(sums["source"]) | set(sums["target"])
            if sums["source"].get(r) != sums["target"].get(r)
        )
        small = [
            r
            for r in differing
            if max(sums["source"].get(r, (0,))[0], sums["target"].get(r, (0,))[0]) <= LEAF
        ]
        large = [r for r in differing if r not in set(small)]
        if small:
            leaves[length] = small
        if not large:
            break
        if length == LAST:
            leaves.setdefault(length, []).extend(large)
            break
        within = large
    fetched = {}
    for side in (left, right):
        role = roles[side.name]
        parts = []
        for length, ranges in leaves.items():
            query = exp.select(
                *(exp.column(c.name, quoted=True) for c in (*found.key, *found.columns))
            ).from_(exp.to_identifier(views[side.name], quoted=True))
            parts.append(side.engine.query(query.where(_in(length, ranges))))
        if parts:
            table = pa.concat_tables(parts, promote_options="permissive")
        else:
            table = side.engine.query(
                exp.select(*(exp.column(c.name, quoted=True) for c in (*found.key, *found.columns)))
                .from_(exp.to_identifier(views[side.name], quoted=True))
                .where(exp.false())
            )
        fetched[role] = table
        moved[role] = moved[role].plus(rows=table.num_rows, size=table.nbytes)
    say(f"comparing {fetched['source'].num_rows + fetched['target'].num_rows} fetched rows")
    anomalies = {}
    for side in (left, right):
        table = side.engine.query(joined.anomaly_query(side.name, found, spec.samples))
        moved[roles[side.name]] = moved[roles[side.name]].plus(size=table.nbytes)
        anomalies[roles[side.name]] = joined.anomalies(table.to_pylist(), found, spec.samples)
    local = make_engine("duckdb")
    try:
        local.register_arrow("__source", fetched["source"])
        local.register_arrow("__target", fetched["target"])
        local.register_query(joined.DIFF, joined.diff_query("__source", "__target", found), materialize=True)
        counts, by_column = joined.counts(local, found)
        samples = joined.samples(local, found, spec.samples)
    finally:
        local.close()
    return Result(
        source=left.description,
        target=right.description,
        mode="checksums",
        key=spec.key,
        columns=tuple(c.name for c in found.columns),
        tolerance=dict(spec.tolerances),
        rows=totals,
        counts=counts,
        changed_by_column=by_column,
        samples=samples,
        anomalies=anomalies,
        moved=moved,
    )
