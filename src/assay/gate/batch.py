"""Reading a batch: every line of the file ends as a typed row or a parse error, never lost.

The file is read as text first (so a bad cell cannot make the reader guess another type), then
each cell is converted to its column's type. A line that does not split into the header's
columns, or a cell that does not convert (text in a number, an impossible date), makes that row
a parse error, with its raw text kept for the quarantine file; the rest of the batch proceeds.
An empty (or whitespace-only) cell is NULL, whatever the column's type: in a contributor file it
means "absent"; a text column whose schema entry says ``blank_is_null: false`` keeps it as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from sqlglot import exp

from assay.engine import Engine, EngineError
from assay.errors import ConfigError
from assay.gate.schema import BLANK_IS_NULL, sql_type, type_name
from assay.lake.checksum import digest
from assay.lake.readers import ReadOptions, check_local, compression, file_format

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


@dataclass
class Batch:
    path: Path
    sha256: str
    schema: pa.Schema
    text: pa.Table  # every record that split into columns, as text, with ROW
    typed: pa.Table  # the records that converted cleanly, typed, with ROW
    errors: list[ParseError] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Every data record of the file: read ones and ragged lines alike."""
        return int(self.text.num_rows) + sum(1 for e in self.errors if e.row is None)


def read(engine: Engine, path: Path, schema: pa.Schema | None, options: ReadOptions | None = None) -> Batch:
    """Read a CSV or Parquet batch against ``schema`` (None: infer it from this batch), the CSV
    as ``options`` say (null strings, delimiter, quote, header, encoding, gzip, decimal comma)."""
    options = options or ReadOptions()
    path = check_local(path)
    if not path.exists():
        raise ConfigError(f"{path}: no such batch file")
    if path.is_dir():
        raise ConfigError(f"{path}: is a folder, not a batch file")
    try:
        fmt = file_format(path)
    except ConfigError:
        fmt = ""
    if fmt == "parquet":
        text, rejects = _parquet_text(path), []
    elif fmt == "csv":
        if path.stat().st_size == 0:
            raise ConfigError(f"{path}: the file is empty; a batch needs at least its header line")
        try:
            text, rejects_found = engine.read_csv_text(str(path), options, compression(path))
        except EngineError as error:
            raise ConfigError(f"{path}: cannot read the CSV: {error.message}") from None
        rejects = [ParseError(None, r.line, f"line {r.line}: {r.reason}", r.text) for r in rejects_found]
        text = _blanks_as_null(text, schema)
    else:
        raise ConfigError(f"{path}: a batch is a .csv (or .csv.gz) or .parquet file")
    _check_header(path, text.column_names, schema)
    if options.decimal_comma:
        text = _decimal_points(text, schema)
    if schema is None:
        schema = infer(engine, text)
    text = text.append_column(ROW, pa.array(range(text.num_rows), pa.int64()))
    typed, errors = _convert(engine, text, schema, _lines(text.num_rows, rejects))
    return Batch(path, digest(path), schema, text, typed, rejects + errors)


def blank_is_null(field: pa.Field) -> bool:
    """Whether a blank cell of ``field`` is missing (NULL): always for a typed column; for a text
    column unless its schema entry says ``blank_is_null: false`` (in a contributor file a blank
    cell means "absent", so that is the default)."""
    if type_name(field.type) != "string":
        return True
    metadata: dict[bytes, bytes] = field.metadata or {}
    return metadata.get(BLANK_IS_NULL, b"true") != b"false"


def _blanks_as_null(text: pa.Table, schema: pa.Schema | None) -> pa.Table:
    """Blank (empty or whitespace-only) cells as NULL, except in text columns declared
    ``blank_is_null: false``, which keep them as they were written."""
    fields = {f.name: f for f in schema} if schema is not None else {}
    columns = []
    for name, column in zip(text.column_names, text.columns, strict=True):
        field = fields.get(name)
        if field is None or blank_is_null(field):
            # A column without blanks is kept as it is (no if_else copy of every string).
            blank = pc.equal(pc.utf8_trim_whitespace(column), "")
            if pc.any(blank).as_py():
                column = pc.if_else(blank, pa.scalar(None, pa.string()), column)
        columns.append(column)
    return pa.Table.from_arrays(columns, names=text.column_names)


def _decimal_points(text: pa.Table, schema: pa.Schema | None) -> pa.Table:
    """Numbers written with a decimal comma (``3,14``) with a decimal point: in the columns the
    schema types as numbers; without a schema, in the columns whose every cell is such a number
    (a text column keeps its commas)."""
    fields = {f.name: f for f in schema} if schema is not None else {}
    columns = []
    for name, column in zip(text.column_names, text.columns, strict=True):
        comma = pc.match_substring_regex(column, r"^\s*[+-]?[0-9]*,[0-9]+\s*$")
        field = fields.get(name)
        if field is None:
            number = pc.match_substring_regex(column, r"^\s*[+-]?[0-9]+(,[0-9]+)?\s*$")
            numeric = pc.all(number).as_py() is not False and pc.any(comma).as_py() is True
        else:
            numeric = type_name(field.type) in ("bigint", "int", "double") or pa.types.is_decimal(field.type)
        if numeric:
            column = pc.if_else(comma, pc.replace_substring(column, ",", "."), column)
        columns.append(column)
    return pa.Table.from_arrays(columns, names=text.column_names)


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


def _lines(rows: int, rejects: list[ParseError]) -> list[int]:
    """The file line of each read record, assuming one line per record (the header is line 1)."""
    skipped = sorted(r.line for r in rejects if r.line is not None)
    if not skipped:  # the usual case: record i is on line i + 2, with no loop over a million rows
        return list(range(2, rows + 2))
    lines, line, k = [], 2, 0
    for _ in range(rows):
        while k < len(skipped) and skipped[k] == line:
            line, k = line + 1, k + 1
        lines.append(line)
        line += 1
    return lines


def _cast(name: str, dtype: pa.DataType) -> exp.Expr:
    """The cell converted to its type, or NULL. Integers and decimals must be written exactly:
    the engine would round '7.25' into a BIGINT 7 or '1.005' into DECIMAL(18,2) 1.01, and a
    gate must not change a number it was given."""
    text = exp.column(name, quoted=True)
    if type_name(dtype) == "string":
        return text
    trimmed = exp.Trim(this=text)
    converted = exp.TryCast(this=trimmed.copy(), to=sql_type(dtype))
    if pa.types.is_timestamp(dtype) and not dtype.tz:
        # A cell with a UTC offset is that instant in UTC (the engine's session is UTC); a plain
        # cast to TIMESTAMP would drop the offset and keep the wall-clock time.
        instant = exp.TryCast(this=trimmed.copy(), to=exp.DataType.build("TIMESTAMPTZ"))
        return exp.Cast(this=instant, to=exp.DataType.build("TIMESTAMP"))
    if pa.types.is_integer(dtype):
        shape = r"^[+-]?[0-9]+$"
    elif pa.types.is_decimal(dtype):
        shape = r"^[+-]?[0-9]*(\.[0-9]{0,SCALE})?$".replace("SCALE", str(dtype.scale))
    else:
        return converted
    exact = exp.RegexpLike(this=trimmed, expression=exp.Literal.string(shape))
    return exp.If(this=exact, true=converted, false=exp.Null())


def _convert(
    engine: Engine, text: pa.Table, schema: pa.Schema, lines: list[int]
) -> tuple[pa.Table, list[ParseError]]:
    """The rows typed against ``schema``, and a parse error for each row with a cell that did
    not convert.

    Each cell is converted once, in an inner projection (the regex check and cast of a number
    are most of the cost), and the outer one flags a row with one boolean. Which cells failed
    is worked out afterwards for the flagged rows only, from their text and their NULL values.
    Inner columns are named by position, so no header can collide with them.
    """
    engine.register_arrow("__batch_text", text)
    converted = [i for i, f in enumerate(schema) if type_name(f.type) != "string"]
    texts = [f"__text{i}" for i in range(len(schema))]
    values = [f"__value{i}" if i in converted else texts[i] for i in range(len(schema))]
    inner = exp.select(
        exp.column(ROW, quoted=True),
        *(
            exp.alias_(exp.column(f.name, quoted=True), t, quoted=True)
            for f, t in zip(schema, texts, strict=True)
        ),
        *(exp.alias_(_cast(schema[i].name, schema[i].type), values[i], quoted=True) for i in converted),
    ).from_(exp.to_identifier("__batch_text", quoted=True))
    # A cell converted unless it had text and its value is NULL.
    kept = [
        exp.or_(
            exp.column(texts[i], quoted=True).is_(exp.null()),
            exp.not_(exp.column(values[i], quoted=True).is_(exp.null())),
        )
        for i in converted
    ]
    outer = exp.select(
        exp.column(ROW, quoted=True),
        *(
            exp.alias_(exp.column(v, quoted=True), f.name, quoted=True)
            for f, v in zip(schema, values, strict=True)
        ),
        exp.alias_(exp.not_(exp.and_(*kept)) if kept else exp.false(), BAD, quoted=True),
    ).from_(exp.alias_(exp.Subquery(this=inner), "__converted", table=True, quoted=True))
    result = engine.query(outer)
    failed_mask = result.column(BAD)
    failed = result.filter(failed_mask)
    errors = []
    if failed.num_rows:
        rows = failed.column(ROW).to_pylist()
        raw = text.take(pa.array(rows, pa.int64()))
        cells = [
            (field, raw.column(field.name).to_pylist(), failed.column(field.name).to_pylist())
            for field in (schema[i] for i in converted)
        ]
        for position, row in enumerate(rows):
            parts = [
                f"{field.name}: '{given[position]}' is not a valid {type_name(field.type)}"
                for field, given, value in cells
                if given[position] is not None and value[position] is None
            ]
            errors.append(ParseError(row, lines[row], f"line {lines[row]}: " + "; ".join(parts)))
    # Every row converted (the usual case): no filtered copy of a million rows.
    kept_rows = result.filter(pc.invert(failed_mask)) if failed.num_rows else result
    typed = kept_rows.drop_columns([BAD])
    typed = typed.cast(pa.schema([typed.schema.field(ROW), *schema]))
    return typed, errors


def infer(engine: Engine, text: pa.Table) -> pa.Schema:
    """A schema for a first batch without a schema file: per column, the first of bigint,
    decimal(18,s), double, date, timestamp, boolean that all but 1% (or one) of the non-empty
    cells convert to (so a malformed cell becomes a parse error, not a text column), else string.
    Digits with a leading zero (an IC number, a postcode) stay text."""
    engine.register_arrow("__infer_text", text)
    probes: list[exp.Expr] = []
    for name in text.column_names:
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
    row = engine.query(exp.select(*probes).from_(exp.to_identifier("__infer_text", quoted=True))).to_pylist()[
        0
    ]
    values = list(row.values())
    fields = []
    for i, name in enumerate(text.column_names):
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
