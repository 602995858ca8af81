"""A CSV file as a typed table the engine holds (:func:`register_csv`), read in three steps, none
of which depends on the rules that will query it:

1. the engine detects the dialect and each column's type once, from a sample of rows, with
   blank cells and the null tokens counting as NULL; when a later row does not fit, the
   conversion (step 3) fails and detection runs again over every row;
2. one check query confirms what detection cannot promise (a date or time column is ISO-8601
   throughout; declared columns convert), only when there are such columns;
3. the file is converted once into a table the engine holds, so every query sees the same typed
   table whatever columns it reads. (As a view over DuckDB's reader, its ``force_not_null`` list
   shifted onto other columns when a query read only some of them: one blank number cell made
   ``ColumnCorrelation`` an ``Error`` alone and a pass beside ``AllStatistics``; and each CTE of
   a profile parsed the file again.)

Detection is conservative, so a column keeps its type from one load to the next: integers
without leading zeros, then numbers, ISO-8601 dates and timestamps (with a UTC offset: converted
to UTC); anything else is text, ``Yes``/``No``, ``true``/``false`` and ``1/2/21`` included (a
boolean only when declared). In a number or date column the cells ``NA``, ``N/A``, ``NULL`` and
``null`` are NULL like blank cells, so a column that is sometimes ``NA`` stays a number column.
A blank text cell is the empty string, as Glue reads it (DQDL.md §10.3), unless the null
strings include it. A cell means the same on every engine: :mod:`assay.engine.cells`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from sqlglot import exp

from assay.engine import Column, Engine, EngineError, cells, dialect
from assay.errors import ConfigError
from assay.lake.files import PLACEHOLDER, ReadOptions, compression

if TYPE_CHECKING:
    import pyarrow as pa

_T = exp.DataType.Type
_INTEGER = r"-?(0|[1-9][0-9]*)"  # a detected integer column's values (not 1.5, 1e3 or 007)
# A detected date or time column's values, widest first: the rank of each value's shape, the
# column's type that of its widest value. A date is its midnight, and a value without an offset
# in a column with one is UTC: so a date beside a date-time is never text because of the order of
# the rows (the engine's detection typed a column TIMESTAMP when a date-time came first, and text
# when a date did) nor because the date-time came after the detection's sample.
_TEXT_RANK, _ZONED_RANK, _TIMED_RANK, _DATE_RANK = 3, 2, 1, 0
_RANKED = {_DATE_RANK: "DATE", _TIMED_RANK: "TIMESTAMP", _ZONED_RANK: "TIMESTAMPTZ"}
_DATE_TIMES = (_T.DATE, _T.TIMESTAMP, _T.TIMESTAMPNTZ, _T.TIMESTAMPTZ)
_FIRST_ROWS = 20_480  # as many rows as the engine's detection reads

# Arrow's type tests (pyarrow.types) by name, and the SQL type of the types that pass them.
_SQL_TYPES: tuple[tuple[str, str], ...] = (
    ("is_boolean", "BOOLEAN"),
    ("is_int8", "TINYINT"),
    ("is_int16", "SMALLINT"),
    ("is_int32", "INTEGER"),
    ("is_integer", "BIGINT"),
    ("is_floating", "DOUBLE"),
    ("is_date", "DATE"),
    ("is_string", "VARCHAR"),
    ("is_large_string", "VARCHAR"),
)


def sql_type(dtype: pa.DataType) -> exp.DataType:
    """The SQL type of a declared (Arrow) column type.

    >>> import pyarrow as pa
    >>> sql_type(pa.decimal128(18, 2)).sql("duckdb"), sql_type(pa.timestamp("us", tz="UTC")).sql()
    ('DECIMAL(18, 2)', 'TIMESTAMPTZ')
    """
    import pyarrow as pa

    if pa.types.is_decimal(dtype):
        return exp.DataType.build(f"DECIMAL({dtype.precision}, {dtype.scale})")
    if pa.types.is_timestamp(dtype):
        return exp.DataType.build("TIMESTAMPTZ" if dtype.tz else "TIMESTAMP")
    for test, name in _SQL_TYPES:
        if getattr(pa.types, test)(dtype):
            return exp.DataType.build(name)
    raise ConfigError(f"column type {dtype} cannot be declared for a CSV")


def register_csv(engine: Engine, name: str, path: Path, read: ReadOptions) -> list[Column]:
    """Types detected from a sample of rows first (a whole-file detection costs a full parse,
    2.3 s of a 1-million-row file); if a later row does not fit them, the conversion fails
    and the file is detected again from every row, so that no row is ever typed by a guess.
    A line with more or fewer fields than the header is refused, naming it: the engine's
    detection either failed on it or, finding no delimiter that splits every line alike, read
    each line whole as one text column."""
    try:
        try:
            columns = _register_csv_as(engine, name, path, read, whole_file=False)
        except EngineError:
            columns = _register_csv_as(engine, name, path, read, whole_file=True)
    except EngineError:
        # the engine's detection failed (a line cut short as the file's last, say): the line
        # is named with the delimiter found in the file's start, not the engine's sniffer text
        found = dialect.detect(
            str(path),
            compression(path),
            read.encoding,
            delimiter=read.delimiter,
            quote=read.quote,
            header=True,
        )
        _refuse_ragged(path, read, found.delimiter if found is not None else read.delimiter)
        raise
    if len(columns) == 1 and read.delimiter is None:
        header = columns[0].source or columns[0].name
        for delimiter in (",", ";", "\t", "|"):
            if delimiter in header:
                _refuse_ragged(path, read, delimiter)
    return columns


def _refuse_ragged(path: Path, read: ReadOptions, delimiter: str | None) -> None:
    """A ConfigError naming the first line whose fields do not match the header's (split by
    ``delimiter``, quotes as ``read`` says), if there is one."""
    import csv
    import gzip

    packed = compression(path)
    if delimiter is None or len(delimiter) != 1 or packed == "zstd":
        return
    opener = gzip.open if packed == "gzip" else open
    try:
        with opener(path, "rt", encoding=read.encoding, newline="", errors="replace") as handle:
            lines = csv.reader(handle, delimiter=delimiter, quotechar=read.quote or '"')
            header = next(lines, None)
            if header is None or len(header) < 2:
                return
            for row in lines:
                if row and len(row) != len(header):
                    shown = "tab" if delimiter == "\t" else repr(delimiter)
                    raise ConfigError(
                        f"{path}: line {lines.line_num} has {len(row)} field{'s' if len(row) != 1 else ''} "
                        f"where the header has "
                        f"{len(header)} (split by {shown}): fix the line, or give the file's "
                        "delimiter with --delimiter"
                    )
    except (OSError, csv.Error, LookupError):
        return


def _register_csv_as(
    engine: Engine, name: str, path: Path, read: ReadOptions, *, whole_file: bool
) -> list[Column]:
    text = f"__text_{name}"
    sniffed = engine.register_csv_text(text, str(path), read, compression(path), whole_file=whole_file)
    names = [c.name for c in sniffed]
    declared = {f.name: f.type for f in read.types} if read.types is not None else {}
    unknown = [n for n in declared if n not in names]
    if unknown:
        raise ConfigError(
            f"{path}: the declared types name column(s) the file does not have: {', '.join(unknown)} "
            f"(its columns: {', '.join(names)})"
        )
    types = [
        sql_type(declared[c.name]) if c.name in declared else exp.DataType.build(c.type, dialect="duckdb")
        for c in sniffed
    ]
    check = _check_query(text, names, types, declared, read)
    if check is not None:
        row = engine.inspect(check).to_pylist()[0]
        for i, column in enumerate(names):
            bad = int(row.get(f"bad{i}") or 0)
            if bad and column in declared:
                raise ConfigError(
                    f"{path}: column '{column}' is declared {_type_word(declared[column])}, but "
                    f"{bad} value(s) do not convert, e.g. '{row[f'example{i}']}'{_exactly(declared[column])}"
                )
            rank = row.get(f"rank{i}")
            if rank is not None:  # a date or time column with a value (see _RANKED)
                types[i] = exp.DataType.build(_RANKED.get(int(rank), "VARCHAR"), dialect="duckdb")
    blank_text = {f.name for f in read.types or () if (f.metadata or {}).get(b"blank_is_null") == b"true"}
    # Held as a table: the file is parsed and converted once. A CSV has no columnar layout to
    # scan lazily; as a view, every CTE of the one measuring query (a profile has one a column)
    # parsed and converted the file again, and had the engine plan every column's conversion.
    # Types detected from a sample are checked as the view converts: the engine's cast of text
    # to an integer rounds 1.5 to 2 and reads 1e3 and 007 as numbers, so a detected integer
    # column's value of another shape beyond the sample fails the conversion, and the file is
    # detected again from every row (see register_csv).
    integers = set() if whole_file else {n for n, t in zip(names, types, strict=True) if n not in declared}
    view = typed_view(text, names, types, read, blank_text, integers)
    engine.register_query(name, view, materialize=True, unrepeated=True)
    if engine.types_from_sample:
        dated = _shaped_texts(engine, name, names, types, read, set(declared))
        if dated:
            for i, kind in dated.items():
                types[i] = exp.DataType.build(kind, dialect="duckdb")
            view = typed_view(text, names, types, read, blank_text, integers)
            engine.register_query(name, view, materialize=True, unrepeated=True)
    return [replace(c, source=s.source) for c, s in zip(engine.columns(name), sniffed, strict=True)]


def _shaped_texts(
    engine: Engine,
    table: str,
    names: Sequence[str],
    types: Sequence[exp.DataType],
    read: ReadOptions,
    declared: set[str],
) -> dict[int, str]:
    """The detected text columns of ``table`` (registered, held) whose every value is an ISO
    date or date-time, by position, with the type of their widest value (_RANKED); and those
    whose every value is a number, BIGINT or DOUBLE. The engine's detection types a column of
    dates and date-times by the order of its rows (TIMESTAMP when a date-time comes first, text
    when a date does), and a number with a space after it as text. Only columns whose first rows
    have one of these shapes are looked at value by value, in a second scan of the held table."""
    texts = [
        i for i, (n, k) in enumerate(zip(names, types, strict=True)) if _is_text(k) and n not in declared
    ]
    if not texts:
        return {}
    import pyarrow as pa
    import pyarrow.compute as pc

    # Each column's first rows, on their Arrow data: a column with a value there that is neither
    # an ISO date or date-time nor blank nor a null token is text whatever follows; one with a
    # date or date-time and nothing else is ranked over every row below. As one query, the engine
    # took 0.25 s to bind the expressions of a file of 200 text columns; and no Python value is
    # made Arrow here (pyarrow imports pandas to convert one: 0.2 s).
    first = exp.select(*(exp.column(names[i], quoted=True) for i in texts))
    held = engine.inspect(first.from_(exp.to_identifier(table, quoted=True)).limit(_FIRST_ROWS))
    dated = f"^ *{cells.DATE_TIME[1:-1]} *$"
    real = _number_shape(read)
    number = f"^ *{real[1:-1]} *$"
    blank = f"^ *{cells.tokens_pattern(cells.blanks(read))} *$"
    shaped: list[int] = []
    numeric: list[int] = []
    for i, column in zip(texts, held.columns, strict=True):
        strings = column.cast(pa.string())
        blanks = pc.match_substring_regex(strings, blank)
        for pattern, found in ((dated, shaped), (number, numeric)):
            fits = pc.match_substring_regex(strings, pattern)
            if pc.any(fits).as_py() and pc.all(pc.or_(fits, blanks)).as_py():
                found.append(i)
                break
    if not shaped and not numeric:
        return {}
    table_ = exp.to_identifier(table, quoted=True)
    ranks = [
        exp.alias_(exp.Max(this=_rank(names[i], cells.value(names[i], read))), f"rank{i}", quoted=True)
        for i in shaped
    ]
    # A number with a space after it, "3.5 ": the engine's detection makes its column text (and
    # " 3.5" a number); the view trims every cell, so its values are numbers when every one has
    # a number's shape: integers (no leading zero: 007 is a code) or else decimals.
    for i in numeric:
        value = cells.value(names[i], read)
        for name, shape in (("whole", r"^-?(0|[1-9][0-9]{0,17})$"), ("real", real)):
            unlike = exp.Not(this=exp.RegexpLike(this=value.copy(), expression=exp.Literal.string(shape)))
            ranks.append(exp.alias_(_count(unlike), f"{name}{i}", quoted=True))
    ranked = engine.inspect(exp.select(*ranks).from_(table_)).to_pylist()[0]
    kinds = {i: _RANKED[int(ranked[f"rank{i}"])] for i in shaped if int(ranked[f"rank{i}"]) in _RANKED}
    for i in numeric:
        if not ranked[f"whole{i}"]:
            kinds[i] = "BIGINT"
        elif not ranked[f"real{i}"]:
            kinds[i] = "DOUBLE"
    return kinds


def _number_shape(read: ReadOptions) -> str:
    """A decimal number's text, as a detected DOUBLE column's values are written (with a comma
    under ``--decimal-comma``): no leading zero but one before the point (``0.5``, not ``007``)."""
    point = "," if read.decimal_comma else "[.]"
    return f"^[+-]?(0|[1-9][0-9]*)({point}[0-9]+)?([eE][+-]?[0-9]+)?$"


def _is_text(kind: exp.DataType) -> bool:
    return kind.is_type(exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT)


def _type_word(dtype: pa.DataType) -> str:
    return sql_type(dtype).sql("duckdb").lower()


def _number_text(column: str, read: ReadOptions) -> exp.Expr:
    return cells.as_number(cells.value(column, read), read)


def _count(condition: exp.Expr) -> exp.Expr:
    return exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=condition))


def _check_query(
    table: str,
    names: Sequence[str],
    types: Sequence[exp.DataType],
    declared: dict[str, pa.DataType],
    read: ReadOptions,
) -> exp.Select | None:
    """One scan of the text table checking what the engine's detection cannot promise: the rank
    of each detected date or time column's widest value (:func:`_rank`: text unless ISO-8601
    throughout, as the engine reads 1/2/21 as a timestamp; a date beside a date-time is one), and
    whether each declared column's values convert (one of those that do not is shown). None when
    there is nothing to check."""
    projections: list[exp.Expr] = []
    for i, (column, kind) in enumerate(zip(names, types, strict=True)):
        value = cells.value(column, read)
        present = exp.Not(this=exp.Is(this=value, expression=exp.Null()))
        if column in declared:
            if _is_text(kind):
                continue
            converted = _number_text(column, read) if kind.is_type(*exp.DataType.NUMERIC_TYPES) else value
            failed: exp.Expr = exp.Is(
                this=exp.TryCast(this=converted.copy(), to=kind.copy()), expression=exp.Null()
            )
            shape = _exact_shape(declared[column])
            if shape is not None:
                inexact = exp.Not(this=exp.RegexpLike(this=converted, expression=exp.Literal.string(shape)))
                failed = exp.or_(failed, inexact)
            bad = exp.and_(present, failed)
            projections.append(exp.alias_(_count(bad), f"bad{i}", quoted=True))
            example = exp.Filter(
                this=exp.Min(this=exp.column(column, quoted=True)), expression=exp.Where(this=bad.copy())
            )
            projections.append(exp.alias_(example, f"example{i}", quoted=True))
            continue
        if kind.is_type(*_DATE_TIMES):
            projections.append(exp.alias_(exp.Max(this=_rank(column, value)), f"rank{i}", quoted=True))
    if not projections:
        return None
    return exp.select(*projections).from_(exp.to_identifier(table, quoted=True))


def _exact_shape(dtype: pa.DataType) -> str | None:
    """How a declared integer or decimal is written to convert exactly (None: any value the cast
    takes). The engines' casts round: '7.25' into a BIGINT is 7 and '1.005' into DECIMAL(10,2) is
    1.01 (DuckDB; Spark's cast to an integer truncates), so a value with a fraction or with more
    decimal places than the scale is refused, as the gate refuses it (docs/reading.md).

    >>> import pyarrow as pa
    >>> _exact_shape(pa.int64()), _exact_shape(pa.decimal128(10, 2)), _exact_shape(pa.float64())
    ('^[+-]?[0-9]+$', '^[+-]?[0-9]*([.][0-9]{0,2})?$', None)
    """
    import pyarrow as pa

    if pa.types.is_integer(dtype):
        return "^[+-]?[0-9]+$"
    if pa.types.is_decimal(dtype):
        return f"^[+-]?[0-9]*([.][0-9]{{0,{dtype.scale}}})?$"
    return None


def _exactly(dtype: pa.DataType) -> str:
    """What a refusal adds for a declared integer or decimal: that nothing is rounded."""
    import pyarrow as pa

    if pa.types.is_integer(dtype):
        return " (an integer column takes whole numbers only: a value is never rounded)"
    if pa.types.is_decimal(dtype):
        return f" (at most {dtype.scale} decimal places: a value is never rounded)"
    return ""


def _rank(column: str, value: exp.Expr) -> exp.Expr:
    """The rank of a cell's shape (_RANKED; NULL for a blank or null-token cell): text unless an
    ISO date or date-time, zoned with an offset, timed when longer than a date."""
    cell = cells.cell(column)

    def matches(pattern: str) -> exp.Expr:
        return exp.RegexpLike(this=cell.copy(), expression=exp.Literal.string(pattern))

    def rank(n: int) -> exp.Expr:
        return exp.Literal.number(n)

    return exp.Case(
        ifs=[
            exp.If(this=exp.Is(this=value, expression=exp.Null()), true=exp.Null()),
            exp.If(this=exp.Not(this=matches(cells.DATE_TIME)), true=rank(_TEXT_RANK)),
            exp.If(this=matches(cells.ZONED), true=rank(_ZONED_RANK)),
            exp.If(
                this=exp.GT(this=exp.Length(this=cell.copy()), expression=rank(10)), true=rank(_TIMED_RANK)
            ),
        ],
        default=rank(_DATE_RANK),
    )


def typed_view(
    table: str,
    names: Sequence[str],
    types: Sequence[exp.DataType],
    read: ReadOptions,
    blank_text: set[str] | frozenset[str] = frozenset(),
    integers: set[str] | frozenset[str] = frozenset(),
) -> exp.Select:
    """Each column converted to its type: a blank or null-token cell of a typed column is NULL;
    a text column keeps its blank cells as empty strings (Glue's reading) unless declared
    ``blank_is_null: true`` or the null strings say otherwise. Every expression is kept small:
    the engine binds the whole view again for each query (and each CTE) that reads it."""
    # Three levels, so that no expression repeats another: each typed cell is trimmed once (an
    # inner query), then its blank and null-token values made NULL (a middle one), then converted.
    # Inline, the trim was repeated for each null token, and the engine's elimination of common
    # subexpressions, which merged them, took a time that grows with the square of the width:
    # 5.5 s of the 1,500-column file's 8 s.
    checked = {c for c, k in zip(names, types, strict=True) if c in integers and k.is_type(_T.BIGINT)}
    typed = {c for c, k in zip(names, types, strict=True) if not _is_text(k)}
    numbers = {c for c, k in zip(names, types, strict=True) if k.is_type(*exp.DataType.NUMERIC_TYPES)}

    def level(expressions: list[exp.Expr], source: exp.Expr, alias: str) -> exp.Expr:
        return exp.Subquery(
            this=exp.Select(expressions=expressions, from_=exp.From(this=source)),
            alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True)),
        )

    def cleaned(column: str) -> exp.Expr:
        value = cells.nulled(exp.column(column, quoted=True), read)
        return cells.as_number(value, read) if column in numbers else value

    source: exp.Expr = exp.Table(this=exp.to_identifier(table, quoted=True))
    if typed:
        trimmed = [
            exp.alias_(cells.cell(c), c, quoted=True) if c in typed else exp.column(c, quoted=True)
            for c in names
        ]
        source = level(trimmed, source, "__trimmed")
        values = [
            exp.alias_(cleaned(c), c, quoted=True) if c in typed else exp.column(c, quoted=True)
            for c in names
        ]
        source = level(values, source, "__cells")
    projections: list[exp.Expr] = []
    for column, kind in zip(names, types, strict=True):
        raw = exp.column(column, quoted=True)
        value: exp.Expr
        if _is_text(kind):
            value = raw  # a blank cell is "" as Glue reads it; a null string is NULL
            if column in blank_text:
                blank = exp.EQ(this=cells.cell(column), expression=exp.Literal.string(""))
                value = exp.Case(ifs=[exp.If(this=blank, true=exp.Null())], default=raw.copy())
        elif column in checked:
            shaped = exp.or_(
                exp.Is(this=raw.copy(), expression=exp.Null()),
                exp.RegexpFullMatch(this=raw.copy(), expression=exp.Literal.string(_INTEGER)),
            )
            # a cast that cannot succeed, on every engine: the value with a word after it
            refused = exp.Cast(
                this=exp.func("concat", raw.copy(), exp.Literal.string(" is no integer")), to=kind.copy()
            )
            cast = exp.Cast(this=raw, to=kind.copy())
            value = exp.Case(ifs=[exp.If(this=shaped, true=cast)], default=refused)
        else:
            value = exp.Cast(this=raw, to=kind.copy())
        projections.append(exp.alias_(value, column, quoted=True))
    if not projections:
        projections.append(exp.alias_(exp.Null(), PLACEHOLDER, quoted=True))
    return exp.Select(expressions=projections, from_=exp.From(this=source))
