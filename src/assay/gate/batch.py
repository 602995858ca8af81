"""Reading a batch: every line of the file ends as a typed row or a parse error, never lost.

The file is read as text first (so a bad cell cannot make the reader guess another type), then
each cell is converted to its column's type. A line that does not split into the header's
columns, or a cell that does not convert (text in a number, an impossible date), makes that row
a parse error, with its raw text kept for the quarantine file; the rest of the batch proceeds.
An empty (or whitespace-only) cell is NULL, whatever the column's type: in a contributor file it
means "absent"; a text column whose schema entry says ``blank_is_null: false`` keeps it as written.
In a number, date or boolean column the null tokens of ``dqdl run`` (``NA``, ``N/A``, ``NULL``,
``null``: :data:`assay.lake.readers.NULL_TOKENS`) are NULL too; in a text column they are values
unless given as ``--null-value``. A cell is quoted as it was sent (a decimal comma included).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from sqlglot import exp

from assay.engine import Engine, EngineError
from assay.engine.base import StagedText, positions
from assay.errors import ConfigError
from assay.gate.schema import BLANK_IS_NULL, sql_type, type_name
from assay.lake import checksum as checksums
from assay.lake.readers import ReadOptions, compression, file_format, local_path, tokens_pattern

ROW = "__row"  # the record's position in the file, 0-based; it orders everything downstream
BAD = "__bad"

# Inference tries these in order; the first that (nearly) every non-empty cell converts to wins.
INFERENCE = ("bigint", "decimal", "double", "date", "timestamp", "boolean")
INFERENCE_SHARE = 0.99
_SHAPES = {
    "DATE": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    "TIMESTAMP": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}",
    "BOOLEAN": r"(?i)^(true|false)$",
}


@dataclass(frozen=True)
class ParseError:
    """A record that could not be read: its position (or the raw line of a ragged record)."""

    row: int | None  # position in the text table; None for a line that did not split
    line: int | None
    message: str
    raw_line: str | None = None


class _Lines:
    """The line of the file where each record starts, as ``cat -n`` numbers it.

    The engines number a record as if it were one line (:meth:`StagedText.lines`, the rejects),
    but a quoted cell may hold line breaks, each of which moves every later record one line
    down. The records holding one are looked for only when a line is wanted (a batch with parse
    errors), in one query; a Parquet batch has no lines to move."""

    def __init__(
        self, engine: Engine, staged: StagedText, header: Sequence[str], *, physical: bool, headed: bool
    ) -> None:
        self.engine, self.staged, self.header = engine, staged, list(header)
        self.physical = physical
        self.header_breaks = sum(name.count("\n") for name in header) if physical and headed else 0

    def of_rows(self, rows: Sequence[int]) -> list[int]:
        """The lines of the staged records ``rows`` (their ROW ids)."""
        return [self._moved(line) for line in self.staged.lines(rows)]

    def of_rejects(self) -> list[int]:
        """The lines of the records that did not split into the header's columns."""
        return [self._moved(r.line) for r in self.staged.rejects]

    def _moved(self, line: int) -> int:
        if not self.physical:
            return line
        counted, breaks = self._breaks
        return line + self.header_breaks + breaks[bisect.bisect_left(counted, line)]

    @cached_property
    def _breaks(self) -> tuple[list[int], list[int]]:
        """The counted lines of the records that hold line breaks, in order, and for each, the
        breaks in the records before it (and, last, in all of them)."""
        # a rejected record's text starts with the empty lines before it, which the engine counts
        found = [(r.line, r.text.lstrip("\r\n").count("\n")) for r in self.staged.rejects]
        if self.header:
            newline = exp.func("chr", exp.Literal.number(10))
            counts = [
                exp.Coalesce(
                    this=exp.Sub(
                        this=exp.Length(this=exp.column(name, quoted=True)),
                        expression=exp.Length(
                            this=exp.Replace(
                                this=exp.column(name, quoted=True),
                                expression=newline.copy(),
                                replacement=exp.Literal.string(""),
                            )
                        ),
                    ),
                    expressions=[exp.Literal.number(0)],
                )
                for name in self.header
            ]
            total: exp.Expr = counts[0]
            for count in counts[1:]:
                total = exp.Add(this=total, expression=count)
            inner = exp.select(
                exp.column(ROW, quoted=True), exp.alias_(total, "__breaks", quoted=True)
            ).from_(exp.to_identifier(self.staged.name, quoted=True))
            breaks = exp.column("__breaks", quoted=True)
            query = (
                exp.select(exp.column(ROW, quoted=True), breaks.copy())
                .from_(exp.alias_(exp.Subquery(this=inner), "__records", table=True, quoted=True))
                .where(exp.GT(this=breaks.copy(), expression=exp.Literal.number(0)))
            )
            held = self.engine.inspect(query)
            rows = held.column(ROW).to_pylist()
            found += zip(
                self.staged.lines(rows), (int(n) for n in held.column("__breaks").to_pylist()), strict=True
            )
        found.sort()
        counted, before, total_breaks = [], [], 0
        for line, n in found:
            if n:
                counted.append(line)
                before.append(total_breaks)
                total_breaks += n
        return counted, [*before, total_breaks]


@dataclass
class Batch:
    """A batch read into the engine. ``text`` and ``typed`` name the engine's tables of it;
    nothing of its rows is in Python but its parse errors."""

    path: Path
    sha256: str
    schema: pa.Schema
    header: list[str]  # the file's columns, in order
    text: str  # every record that split into columns, as text as sent (blank cells NULL), with ROW
    typed: str  # the records that converted cleanly, typed, with ROW
    records: int  # the rows of ``text``
    staged: StagedText  # the records' lines
    cells: dict[str, exp.Expr]  # each column of ``text`` as an expression over the staged records
    errors: list[ParseError] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Every data record of the file: read ones and ragged lines alike."""
        return self.records + sum(1 for e in self.errors if e.row is None)


TEXT_RAW, TEXT, CONVERTED, TYPED = "__batch_raw", "__batch_text", "__batch_converted", "__batch_typed"
INFERRED = "__batch_inferred"  # the records as inference reads them: missing cells NULL, decimal points


def read(engine: Engine, path: Path, schema: pa.Schema | None, options: ReadOptions | None = None) -> Batch:
    """Read a CSV or Parquet batch against ``schema`` (None: infer it from this batch), the CSV
    as ``options`` say (null strings, delimiter, quote, header, encoding, gzip, decimal comma),
    into ``engine``: the records stay there (tables :data:`TEXT` and :data:`TYPED`), and what
    comes back is their count, the schema and the records that did not read."""
    options = options or ReadOptions()
    path = local_path(path, what="batch file")
    if not path.exists():
        raise ConfigError(f"{path}: no such batch file")
    if path.is_dir():
        raise ConfigError(f"{path}: is a folder, not a batch file")
    try:
        fmt = file_format(path)
    except ConfigError:
        fmt = ""
    if fmt not in ("parquet", "csv"):
        raise ConfigError(f"{path}: a batch is a .csv (or .csv.gz) or .parquet file")
    if fmt == "csv" and path.stat().st_size == 0:
        raise ConfigError(f"{path}: the file is empty; a batch needs at least its header line")
    # The checksum is read beside the engine's read (or was begun by the command: lake.checksum).
    checksum = checksums.later(path)
    if checksum is None:
        raise ConfigError(f"{path}: is not a regular file")
    try:
        if fmt == "parquet":
            text = _parquet_text(path)
            text = text.append_column(ROW, positions(text.num_rows))
            engine.register_arrow(TEXT_RAW, text)
            staged = StagedText(TEXT_RAW, text.num_rows, [])
        else:
            try:
                staged = engine.stage_csv_text(TEXT_RAW, str(path), options, compression(path), row=ROW)
            except EngineError as error:
                raise ConfigError(f"{path}: cannot read the CSV: {error.message}") from None
        header = [c.name for c in engine.columns(TEXT_RAW) if c.name != ROW]
        _check_header(path, header, schema)
        # a Parquet batch's cells are values, not text: an empty string stays one, and so does NA
        csv = fmt == "csv"
        missing = _missing_pattern(blanks=csv, tokens=options.null_tokens if csv else ())
        lines = _Lines(engine, staged, header, physical=csv, headed=options.header)
        rejects = [
            ParseError(None, line, f"line {line}: {r.reason}", r.text)
            for r, line in zip(staged.rejects, lines.of_rejects(), strict=True)
        ]
        cells, values = _text_cells(
            engine, header, schema, missing, blanks=csv, decimal_comma=options.decimal_comma and csv
        )
        if schema is None:
            schema = infer(engine, INFERRED, header)
        errors = _convert(engine, schema, lines, cells, values, missing, options.null_tokens if csv else ())
        sha256 = checksum.result()
    finally:
        checksum.cancel()  # done already, or no longer needed
    return Batch(path, sha256, schema, header, TEXT, TYPED, staged.rows, staged, cells, rejects + errors)


def record_lines(engine: Engine, batch: Batch, rows: Sequence[int], options: ReadOptions) -> list[int]:
    """The file lines where the records ``rows`` (their ROWs) start, as a parse error names them
    (the batch read with ``options``)."""
    if not rows:
        return []
    physical = file_format(batch.path) == "csv"
    return _Lines(engine, batch.staged, batch.header, physical=physical, headed=options.header).of_rows(rows)


def fetch(
    engine: Engine, table: str, rows: list[int] | None = None, *, schema: pa.Schema | None = None
) -> pa.Table:
    """The rows of a batch's ``table`` (all, or those whose ROW is in ``rows``), in file order.
    With ``schema`` (the table's, without ROW), no rows wanted asks the engine nothing."""
    if rows == [] and schema is not None:
        return pa.schema([pa.field(ROW, pa.int64()), *schema]).empty_table()
    query = _picked(engine, exp.select(exp.Star()).from_(exp.to_identifier(table, quoted=True)), rows)
    return engine.query(query.order_by(exp.column(ROW, quoted=True)))


def fetch_text(engine: Engine, batch: Batch, rows: list[int]) -> pa.Table:
    """The text of the batch's records ``rows`` (as table ``text`` holds it), in file order: the
    records are picked from the staged ones first, so only theirs are worked on."""
    return _text_rows(engine, batch.cells, rows)


def _text_rows(engine: Engine, cells: dict[str, exp.Expr], rows: list[int]) -> pa.Table:
    picked = _picked(engine, exp.select(exp.Star()).from_(exp.to_identifier(TEXT_RAW, quoted=True)), rows)
    query = exp.select(
        *(exp.alias_(cell.copy(), name, quoted=True) for name, cell in cells.items()),
        exp.column(ROW, quoted=True),
    ).from_(exp.alias_(exp.Subquery(this=picked), "__picked", table=True, quoted=True))
    return engine.query(query.order_by(exp.column(ROW, quoted=True)))


def _picked(engine: Engine, query: exp.Select, rows: list[int] | None) -> exp.Select:
    if rows is None:
        return query
    if not rows:
        return query.where(exp.false())
    return query.where(in_rows(engine, rows, "__batch_wanted"))


def in_rows(engine: Engine, rows: list[int], name: str) -> exp.Expr:
    """``ROW IN (the rows)``: the rows registered with the engine as table ``name`` (a list of a
    million positions stays one Arrow array, not a million literals in the SQL)."""
    engine.register_arrow(name, pa.table({ROW: pa.array(rows, pa.int64())}))
    listed = exp.select(exp.column(ROW, quoted=True)).from_(exp.to_identifier(name, quoted=True))
    return exp.In(this=exp.column(ROW, quoted=True), query=exp.Subquery(this=listed))


def blank_is_null(field: pa.Field) -> bool:
    """Whether a blank cell of ``field`` is missing (NULL): always for a typed column; for a text
    column unless its schema entry says ``blank_is_null: false`` (in a contributor file a blank
    cell means "absent", so that is the default)."""
    if type_name(field.type) != "string":
        return True
    metadata: dict[bytes, bytes] = field.metadata or {}
    return metadata.get(BLANK_IS_NULL, b"true") != b"false"


_BLANK = r"^\s*$"


def _missing_pattern(*, blanks: bool, tokens: Sequence[str]) -> str | None:
    """What a missing cell of a typed column looks like: blank (when ``blanks``) or one of the
    null ``tokens``, whitespace around it allowed (None: nothing is missing but NULL)."""
    if tokens:
        return f"^\\s*{tokens_pattern(tokens)}{'?' if blanks else ''}\\s*$"
    return _BLANK if blanks else None


def _absent(cell: exp.Expr, missing: str | None) -> exp.Expr:
    """``cell`` with its missing values (:func:`_missing_pattern`) as NULL."""
    if missing is None:
        return cell
    return exp.Case(ifs=[exp.If(this=_matches(cell.copy(), missing), true=exp.Null())], default=cell)


_COMMA_NUMBER = r"^\s*[+-]?[0-9]*,[0-9]+\s*$"
_COMMA_OR_NUMBER = r"^\s*[+-]?[0-9]+(,[0-9]+)?\s*$"


def _matches(cell: exp.Expr, pattern: str) -> exp.Expr:
    return exp.RegexpLike(this=cell, expression=exp.Literal.string(pattern))


def _text_cells(
    engine: Engine,
    header: list[str],
    schema: pa.Schema | None,
    missing: str | None,
    *,
    blanks: bool,
    decimal_comma: bool,
) -> tuple[dict[str, exp.Expr], dict[str, exp.Expr]]:
    """Each column of the staged records as an expression, twice: as the view :data:`TEXT`
    shows it (registered here), and as the text a typed column converts.

    :data:`TEXT` holds each cell as it was sent, for the quarantine and for the reasons that
    quote it, but for blank (empty or whitespace-only) cells, which are NULL, except in text
    columns declared ``blank_is_null: false``. The text a typed column converts has, with
    ``decimal_comma``, a decimal point in numbers written ``3,14`` (in the columns the schema
    types as numbers; without a schema, in the columns whose every present cell is such a
    number, so a text column keeps its commas), and keeps its ``missing`` cells (blank, null
    tokens): :func:`_convert` reads them as NULL without testing every cell for them first.
    Without a schema, the view :data:`INFERRED` holds what inference reads: that text with its
    missing cells NULL."""
    fields = {f.name: f for f in schema} if schema is not None else {}
    values: dict[str, exp.Expr] = {name: exp.column(name, quoted=True) for name in header}
    cells: dict[str, exp.Expr] = {}
    for name in header:
        field_ = fields.get(name)
        cell = values[name].copy()
        if blanks and (field_ is None or blank_is_null(field_)):
            cell = _blank_null(cell)
        cells[name] = cell
    if decimal_comma:
        if schema is None:
            numeric = _all_comma_numbers(engine, {n: _absent(v.copy(), missing) for n, v in values.items()})
        else:
            numeric = [
                n
                for n in header
                if type_name(fields[n].type) in ("bigint", "int", "double")
                or pa.types.is_decimal(fields[n].type)
            ]
        for name in numeric:
            values[name] = _point(values[name])
    source = exp.to_identifier(TEXT_RAW, quoted=True)
    row = exp.column(ROW, quoted=True)
    shown = [exp.alias_(cell.copy(), name, quoted=True) for name, cell in cells.items()]
    engine.register_query(TEXT, exp.select(*shown, row.copy()).from_(source.copy()))
    if schema is None:
        read = [exp.alias_(_absent(v.copy(), missing), name, quoted=True) for name, v in values.items()]
        engine.register_query(INFERRED, exp.select(*read, row).from_(source))
    return cells, values


def _blank_null(cell: exp.Expr) -> exp.Expr:
    return exp.Case(ifs=[exp.If(this=_matches(cell.copy(), _BLANK), true=exp.Null())], default=cell)


def _point(cell: exp.Expr) -> exp.Expr:
    """A number written with a decimal comma, with a decimal point."""
    return exp.Case(
        ifs=[
            exp.If(
                this=_matches(cell.copy(), _COMMA_NUMBER),
                true=exp.Replace(
                    this=cell.copy(), expression=exp.Literal.string(","), replacement=exp.Literal.string(".")
                ),
            )
        ],
        default=cell.copy(),
    )


def _all_comma_numbers(engine: Engine, cells: dict[str, exp.Expr]) -> list[str]:
    """The columns whose every non-NULL cell is a number with or without a decimal comma, and
    at least one with it (one probe query over the records)."""
    probes: list[exp.Expr] = []
    for cell in cells.values():
        other = exp.and_(
            exp.not_(cell.copy().is_(exp.null())), exp.not_(_matches(cell.copy(), _COMMA_OR_NUMBER))
        )
        probes.append(exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=other)))
        comma = _matches(cell.copy(), _COMMA_NUMBER)
        probes.append(exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=comma)))
    found = engine.inspect(exp.select(*probes).from_(exp.to_identifier(TEXT_RAW, quoted=True)))
    values = list(found.to_pylist()[0].values())
    return [
        name
        for i, name in enumerate(cells)
        if int(values[2 * i] or 0) == 0 and int(values[2 * i + 1] or 0) > 0
    ]


def _parquet_text(path: Path) -> pa.Table:
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        raise ConfigError(f"{path}: cannot read the Parquet file: {error}") from None
    return pa.table({name: pc.cast(table.column(name), pa.string()) for name in table.column_names})


def _check_header(path: Path, header: list[str], schema: pa.Schema | None) -> None:
    duplicates = sorted({h for h in header if header.count(h) > 1})
    if duplicates:
        raise ConfigError(f"{path}: column(s) appear twice in the header: {', '.join(duplicates)}")
    if schema is None:
        return
    missing = [f.name for f in schema if f.name not in header]
    extra = [h for h in header if h not in schema.names]
    if missing:
        raise ConfigError(
            f"{path}: missing column(s) {', '.join(missing)} (the table has {', '.join(schema.names)})"
        )
    if extra:
        raise ConfigError(f"{path}: unexpected column(s) {', '.join(extra)}: the table has no such column")


def _cast(text: exp.Expr, dtype: pa.DataType) -> exp.Expr:
    """The cell converted to its type, or NULL. Integers and decimals must be written exactly:
    the engine would round '7.25' into a BIGINT 7 or '1.005' into DECIMAL(18,2) 1.01, and a
    gate must not change a number it was given."""
    if type_name(dtype) == "string":
        return text
    trimmed = exp.Trim(this=text.copy())
    converted = exp.TryCast(this=trimmed.copy(), to=sql_type(dtype))
    if pa.types.is_timestamp(dtype) and not dtype.tz:
        # A cell with a UTC offset is that instant in UTC (the engine's session is UTC); a plain
        # cast to TIMESTAMP would drop the offset and keep the wall-clock time.
        instant = exp.TryCast(this=trimmed.copy(), to=exp.DataType.build("TIMESTAMPTZ"))
        return exp.Cast(this=instant, to=exp.DataType.build("TIMESTAMPNTZ"))
    if pa.types.is_integer(dtype):
        # Both engines' casts to an integer skip the whitespace around the digits themselves
        # (Spark's since 3.0): the cell is not trimmed first (a tenth of a second per seven
        # columns of a million rows).
        spaced = exp.RegexpLike(this=text.copy(), expression=exp.Literal.string(r"^\s*[+-]?[0-9]+\s*$"))
        return exp.If(this=spaced, true=exp.TryCast(this=text.copy(), to=sql_type(dtype)), false=exp.Null())
    if not pa.types.is_decimal(dtype):
        return converted
    shape = r"^[+-]?[0-9]*(\.[0-9]{0,SCALE})?$".replace("SCALE", str(dtype.scale))
    exact = exp.RegexpLike(this=trimmed, expression=exp.Literal.string(shape))
    return exp.If(this=exact, true=converted, false=exp.Null())


def _convert(
    engine: Engine,
    schema: pa.Schema,
    lines: _Lines,
    cells: dict[str, exp.Expr],
    texts_of: dict[str, exp.Expr],
    missing: str | None,
    tokens: Sequence[str],
) -> list[ParseError]:
    """Type the staged records against ``schema`` into the engine's table :data:`TYPED`;
    return a parse error for each record with a cell that did not convert.

    A text column is its cell as :data:`TEXT` shows it (``cells``); a typed column converts its
    text (``texts_of``). Each cell is converted once, in an inner projection (the regex check
    and cast of a number are most of the cost), and the outer one flags a row with one boolean;
    the result is kept by the engine. A cell converted unless it had text and its value is NULL;
    a ``missing`` cell's value is NULL (blank, or one of the null ``tokens``: no cast reads
    ``NA``, ``N/A``, ``NULL`` or ``null`` as a value), and whether a cell is missing is asked only
    of the cells whose value is NULL. Which cells failed is worked out afterwards for the flagged
    rows only, from their text and their NULL values. Inner columns are named by position, so no
    header can collide with them.
    """
    converted = [i for i, f in enumerate(schema) if type_name(f.type) != "string"]
    texts = [f"__text{i}" for i in range(len(schema))]
    values = [f"__value{i}" if i in converted else texts[i] for i in range(len(schema))]
    inner = exp.select(
        exp.column(ROW, quoted=True),
        *(
            exp.alias_((texts_of if i in converted else cells)[f.name].copy(), texts[i], quoted=True)
            for i, f in enumerate(schema)
        ),
        *(
            exp.alias_(_cast(texts_of[schema[i].name], schema[i].type), values[i], quoted=True)
            for i in converted
        ),
    ).from_(exp.to_identifier(TEXT_RAW, quoted=True))
    kept: list[exp.Expr] = []
    for i in converted:
        text, value = exp.column(texts[i], quoted=True), exp.column(values[i], quoted=True)
        ok: list[exp.Expr] = [text.is_(exp.null()), exp.not_(value.is_(exp.null()))]
        if missing is not None:
            ok.append(_matches(text.copy(), missing))
        kept.append(exp.or_(*ok))
    outer = exp.select(
        exp.column(ROW, quoted=True),
        *(
            exp.alias_(exp.column(v, quoted=True), f.name, quoted=True)
            for f, v in zip(schema, values, strict=True)
        ),
        exp.alias_(exp.not_(exp.and_(*kept)) if kept else exp.false(), BAD, quoted=True),
    ).from_(exp.alias_(exp.Subquery(this=inner), "__converted", table=True, quoted=True))
    engine.register_query(CONVERTED, outer, materialize=True)
    columns = [exp.column(ROW, quoted=True), *(exp.column(f.name, quoted=True) for f in schema)]
    bad = exp.column(BAD, quoted=True)
    source = exp.to_identifier(CONVERTED, quoted=True)
    failed = engine.query(
        exp.select(*columns).from_(source).where(bad).order_by(exp.column(ROW, quoted=True))
    )
    # Every row converted (the usual case): the typed table is the converted one, unfiltered.
    typed = exp.select(*columns).from_(source)
    engine.register_query(TYPED, typed.where(exp.not_(bad)) if failed.num_rows else typed)
    if not failed.num_rows:
        return []
    rows = failed.column(ROW).to_pylist()
    raw = _text_rows(engine, cells, rows)
    at = lines.of_rows(rows)
    checked = [
        (field_, raw.column(field_.name).to_pylist(), failed.column(field_.name).to_pylist())
        for field_ in (schema[i] for i in converted)
    ]
    errors = []
    for position, row in enumerate(rows):
        parts = [
            f"{field_.name}: '{given[position]}' is not a valid {type_name(field_.type)}"
            for field_, given, value in checked
            if given[position] is not None
            and value[position] is None
            and given[position].strip() not in tokens
        ]
        errors.append(ParseError(row, at[position], f"line {at[position]}: " + "; ".join(parts)))
    return errors


def infer(engine: Engine, table: str, names: list[str]) -> pa.Schema:
    """A schema for a first batch without a schema file: per column, the first of bigint,
    decimal(18,s), double, date, timestamp, boolean that all but 1% (or one) of the non-empty
    cells convert to (so a malformed cell becomes a parse error, not a text column), else string.
    Digits with a leading zero (an IC number, a postcode) stay text."""
    probes: list[exp.Expr] = []
    for name in names:
        cell = exp.Trim(this=exp.column(name, quoted=True))
        probes.append(exp.Count(this=exp.column(name, quoted=True)))
        integer = exp.RegexpLike(this=cell.copy(), expression=exp.Literal.string(r"^[+-]?[0-9]{1,18}$"))
        probes.append(exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=integer)))
        for kind in ("DOUBLE", "DATE", "TIMESTAMP", "BOOLEAN"):
            converted: exp.Expr = exp.Not(
                this=exp.Is(
                    this=exp.TryCast(this=cell.copy(), to=exp.DataType.build(kind)), expression=exp.Null()
                )
            )
            if kind in _SHAPES:
                # The engine casts '1/2/21' to the year 1 and 'yes' to true: only ISO dates and
                # times, and true/false, are typed; the rest stays text (issue 8).
                shape = exp.RegexpLike(this=cell.copy(), expression=exp.Literal.string(_SHAPES[kind]))
                converted = exp.and_(shape, converted)
            probes.append(exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=converted)))
        decimal = exp.RegexpLike(
            this=cell.copy(), expression=exp.Literal.string(r"^-?[0-9]+(\.[0-9]{1,6})?$")
        )
        probes.append(exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=decimal)))
        scale = exp.Length(
            this=exp.RegexpExtract(
                this=cell.copy(), expression=exp.Literal.string(r"\.([0-9]+)$"), group=exp.Literal.number(1)
            )
        )
        probes.append(exp.Max(this=scale))
        leading = exp.RegexpLike(this=cell.copy(), expression=exp.Literal.string(r"^0[0-9]"))
        probes.append(exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=leading)))
    if not probes:
        raise ConfigError("the batch has no columns")
    row = engine.query(exp.select(*probes).from_(exp.to_identifier(table, quoted=True))).to_pylist()[0]
    values = list(row.values())
    fields = []
    for i, name in enumerate(names):
        count, bigint, double, date_, stamp, boolean, decimal, scale, leading = values[i * 9 : i * 9 + 9]
        fields.append(
            pa.field(
                name, _choose(count, bigint, double, date_, stamp, boolean, decimal, scale or 0, leading)
            )
        )
    return pa.schema(fields)


def _choose(
    count: int,
    bigint: int,
    double: int,
    date_: int,
    stamp: int,
    boolean: int,
    decimal: int,
    scale: int,
    leading: int,
) -> pa.DataType:
    if not count:
        return pa.string()

    def enough(n: int) -> bool:
        # all but 1% of the cells, and always allowing one bad cell in a small first batch
        return n > 0 and n >= count - max(1, int((1 - INFERENCE_SHARE) * count))

    if leading and enough(bigint):
        return pa.string()
    if enough(bigint):
        return pa.int64()
    if enough(decimal) and 0 < scale <= 6:
        return pa.decimal128(18, int(scale))
    if enough(double):
        return pa.float64()
    if enough(date_):
        return pa.date32()
    if enough(stamp):
        return pa.timestamp("us")
    if enough(boolean):
        return pa.bool_()
    return pa.string()


_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def safe_name(value: str, what: str) -> str:
    """A contributor or dataset name that may become a folder name (DESIGN: validated first)."""
    if not _SAFE.fullmatch(value) or value in (".", "..") or ".." in value:
        raise ConfigError(
            f"{what} '{value}' must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit"
        )
    return value
