"""Inputs for an evaluation: files (CSV, Parquet, JSON) or in-memory frames.

Every input becomes a table registered with the engine. Files are read by the engine itself,
lazily, so a 10-million-row Parquet file is scanned once by the measuring query rather than
loaded into Python first.

A CSV is read in three steps, none of which depends on the rules that will query it:

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
strings include it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from assay.engine import Column, Engine, EngineError, dialect
from assay.errors import ConfigError

if TYPE_CHECKING:
    import pyarrow as pa

PLACEHOLDER = "__assay_no_columns"

FORMATS: dict[str, str] = {
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
}

# Tokens that are NULL in a column inferred as a number, date or boolean (never in a text column,
# where they may be values: the ISO code of Namibia is NA).
NULL_TOKENS = ("NA", "N/A", "NULL", "null")
# A scheme of two letters or more (C:/ is a drive), then "//" (or "/": pathlib folds the two).
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):/")
_GZIP = b"\x1f\x8b"
_ZSTD = b"\x28\xb5\x2f\xfd"


@dataclass(frozen=True)
class ReadOptions:
    """How input files are read; every field's default is the file's own (or Glue's) reading.

    - ``nulls``: cell values read as NULL in every column (``("NA", "NULL")``); by default only a
      blank cell of a number, date or boolean column is NULL.
    - ``delimiter``, ``quote``: one character each; None lets the reader detect them.
    - ``header``: False when the first line is data; columns are then named column0, column1, ...
    - ``encoding``: of a CSV file (``utf-8``, ``latin-1``, ``utf-16``).
    - ``decimal_comma``: numbers are written ``3,14`` (a CSV delimited by ``;``, or quoted).
    - ``types``: declared column types (a schema in the gate's format, see ``--schema``); a column
      it names is converted to that type, and a cell that does not convert is refused with its
      column and value; the other columns are inferred.
    - ``null_tokens``: cells read as NULL in number, date and time columns only (``NA``, ``N/A``,
      ``NULL``, ``null``), so that a column that is sometimes ``NA`` keeps its type.

    Compression (gzip, zstd) is detected from the file's first bytes, whatever its name.

    >>> ReadOptions(nulls=("NA",), delimiter=";").delimiter
    ';'
    """

    nulls: tuple[str, ...] = ()
    delimiter: str | None = None
    quote: str | None = None
    header: bool = True
    encoding: str = "utf-8"
    decimal_comma: bool = False
    types: pa.Schema | None = None
    null_tokens: tuple[str, ...] = NULL_TOKENS  # NULL in number, date and time columns only

    def __post_init__(self) -> None:
        for name in ("delimiter", "quote"):
            value = getattr(self, name)
            if value is not None and len(value) != 1:
                raise ConfigError(f"--{name}: give one character, not {value!r}")


@dataclass(frozen=True)
class Registered:
    """A table the engine can query: its name, its columns, and the file it came from if any."""

    name: str
    columns: tuple[Column, ...]
    path: Path | None = None

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @cached_property
    def _by_name(self) -> dict[str, Column]:
        return {c.name: c for c in self.columns}

    def held(self, name: str) -> Column | None:
        """The column held under exactly ``name`` (a dictionary's lookup: a ruleset of 9,000
        analyzers on 1,500 columns resolved each name through every column)."""
        return self._by_name.get(name)

    def sources(self) -> dict[str, str]:
        """Each column the engine renamed (``A_1``) with the input's name for it (``A``)."""
        return {c.name: c.source for c in self.columns if c.source is not None}


def file_format(path: Path) -> str:
    """The format of a data file, from its suffix (a ``.gz`` or ``.zst`` suffix is looked through).

    >>> file_format(Path("accounts.csv")), file_format(Path("x.parquet")), file_format(Path("a.csv.gz"))
    ('csv', 'parquet', 'csv')
    """
    suffixes = [s.lower() for s in path.suffixes]
    while suffixes and suffixes[-1] in (".gz", ".gzip", ".zst"):
        suffixes.pop()
    fmt = FORMATS.get(suffixes[-1]) if suffixes else None
    if fmt is None:
        known = ", ".join(sorted(FORMATS))
        raise ConfigError(
            f"{path}: unknown data file type '{path.suffix}'; use one of {known} (or .gz of one)"
        )
    return fmt


def compression(path: Path) -> str:
    """The file's compression from its first bytes: ``gzip``, ``zstd`` or ``none``."""
    with path.open("rb") as handle:
        magic = handle.read(4)
    if magic.startswith(_GZIP):
        return "gzip"
    if magic.startswith(_ZSTD):
        return "zstd"
    return "none"


def check_local(data: str | os.PathLike[str]) -> Path:
    """``data`` as a local path; a URL (``s3://``, ``https://``) is refused: not supported yet.

    >>> check_local("s3://bucket/x.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: s3://bucket/x.csv: remote paths (s3://) are not supported yet; ...
    """
    text = os.fspath(data)
    match = _URL.match(text)
    if match:
        raise ConfigError(
            f"{text}: remote paths ({match.group(1)}://) are not supported yet; "
            "copy the file to a local folder first"
        )
    return Path(text)


SPARK_TABLE = "spark:"  # an input named ``spark:db.table`` is a table of the Spark session


def is_spark_dataframe(data: Any) -> bool:
    """Whether ``data`` is a PySpark DataFrame (classic or Spark Connect), without importing
    PySpark."""
    kind = type(data)
    return kind.__name__ == "DataFrame" and kind.__module__.startswith("pyspark.sql")


def to_arrow(data: Any) -> pa.Table | pa.RecordBatchReader:
    """An in-memory frame as Arrow: a pyarrow Table or reader, a pandas or polars DataFrame,
    or anything that speaks the Arrow PyCapsule stream protocol."""
    import pyarrow as pa

    if isinstance(data, pa.Table | pa.RecordBatchReader):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    module = type(data).__module__
    if module.startswith("pandas"):
        try:
            return pa.Table.from_pandas(data, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
            # a column of mixed values (1, "a", None): the user's data, not a platform failure
            reasons = "; ".join(" ".join(str(a).split()) for a in reversed(error.args)) or str(error)
            raise ConfigError(
                f"the DataFrame cannot be read: {reasons}; give each column values of one type "
                "(for text, df[column].astype(str))"
            ) from None
    if module.startswith("polars") and hasattr(data, "to_arrow"):
        table = data.to_arrow()
        assert isinstance(table, pa.Table)
        return table
    if hasattr(data, "__arrow_c_stream__"):
        return pa.table(data)
    raise ConfigError(
        f"cannot read data of type {type(data).__name__}: pass a file path, a pyarrow Table, "
        "or a pandas or polars DataFrame"
    )


def register(engine: Engine, name: str, data: Any, read: ReadOptions | None = None) -> Registered:
    """Register ``data`` (a path, an in-memory frame, or a query over the engine's tables) with
    ``engine`` as table ``name``; a file is read as ``read`` says (by default, as the file says).

    Unreadable input raises :class:`ConfigError` naming the file and the reason.

    >>> import tempfile
    >>> from assay.engine import DuckDBEngine
    >>> path = Path(tempfile.mkdtemp()) / "d.csv"
    >>> _ = path.write_text("id;amount;answer\\n1;2,5;Yes\\n2;NA;No\\n")
    >>> table = register(DuckDBEngine(), "t", path, ReadOptions(decimal_comma=True))
    >>> [(c.name, c.type) for c in table.columns]
    [('id', 'BIGINT'), ('amount', 'DOUBLE'), ('answer', 'VARCHAR')]
    """
    read = read or ReadOptions()
    if isinstance(data, exp.Query):  # a relation already inside the engine: a view over it
        engine.register_query(name, data)
        return Registered(name, tuple(engine.columns(name)))
    if isinstance(data, str) and data.startswith(SPARK_TABLE):  # spark:db.table
        register_table = getattr(engine, "register_table", None)
        if register_table is None:
            raise ConfigError(f"{data}: a Spark table is read by the spark engine: add --engine spark")
        register_table(name, data[len(SPARK_TABLE) :])
        return Registered(name, tuple(engine.columns(name)))
    if is_spark_dataframe(data):
        register_dataframe = getattr(engine, "register_dataframe", None)
        if register_dataframe is None:
            raise ConfigError("a Spark DataFrame is read by the spark engine: pass engine=<its SparkSession>")
        register_dataframe(name, data)
        return Registered(name, tuple(engine.columns(name)))
    if isinstance(data, str | os.PathLike):
        path = check_local(data)
        if not path.exists():
            raise ConfigError(f"{path}: no such data file")
        if path.is_dir():
            raise ConfigError(f"{path}: is a folder, not a data file")
        if not os.access(path, os.R_OK):
            raise ConfigError(f"{path}: permission denied")
        fmt = file_format(path)
        if path.stat().st_size == 0:
            needs = "at least its header line" if fmt == "csv" else f"a {fmt} document"
            raise ConfigError(f"{path}: the file is empty (0 bytes); a {fmt} file needs {needs}")
        try:
            if fmt == "csv":
                columns = _register_csv(engine, name, path, read)
            else:
                engine.register_file(name, str(path), fmt, compression(path))
                columns = renamed(engine.columns(name))
        except EngineError as error:
            raise ConfigError(
                f"{path}: cannot read the file as {fmt}: {_reason(error.message, read)}"
            ) from None
        return Registered(name, tuple(columns), path)
    import pyarrow as pa  # an in-memory frame: Arrow is already loaded

    arrow = to_arrow(data)
    if isinstance(arrow, pa.Table) and arrow.num_columns == 0:
        # The engine cannot hold a table without columns; keep its row count in a placeholder
        # column that no rule can see (ColumnCount = 0, RowCount = the rows).
        engine.register_arrow(name, pa.table({PLACEHOLDER: pa.nulls(arrow.num_rows, pa.int8())}))
        return Registered(name, ())
    engine.register_arrow(name, arrow)
    columns = engine.columns(name)
    if isinstance(arrow, pa.Table | pa.RecordBatchReader) and len(arrow.schema.names) == len(columns):
        # the engine renames a name equal but for case to an earlier one (A_1 after a)
        given = arrow.schema.names
        columns = [
            replace(c, source=None if c.name == was else was) for c, was in zip(columns, given, strict=True)
        ]
    return Registered(name, tuple(columns))


_SUFFIX = re.compile(r"(.+)_(\d+)")
# What the engine's reader adds to its reason: its own options to try, and its reading settings.
_ENGINE_ADVICE = re.compile(r"\s*(Possible Solution:|file = |\bLINE \d).*$", re.DOTALL)


def _reason(message: str, read: ReadOptions) -> str:
    """The engine's reason a file could not be read, without the engine's own remedies (its
    option names are not assay's); a file in another encoding says which option to give.

    >>> _reason("Invalid Input Error: CSV Error on Line: 2 Original Line: a,b Invalid unicode (byte "
    ...         "sequence mismatch) detected. Possible Solution: Set the correct encoding", ReadOptions())
    'the file is not utf-8 text: give its encoding with --encoding (latin-1, utf-16, ...)'
    """
    if "Invalid unicode" in message or "not utf-8 encoded" in message:
        return (
            f"the file is not {read.encoding} text: give its encoding with --encoding (latin-1, utf-16, ...)"
        )
    return _ENGINE_ADVICE.sub("", message) or message


def renamed(columns: Sequence[Column]) -> list[Column]:
    """``columns`` of a file whose own names the engine does not report (Parquet, JSON), each
    column named as the engine renames the second of two names equal but for case (``A_1`` after
    ``a``) marked as such: a reference to ``A`` is then ambiguous, never silently ``a``.

    >>> from assay.engine import DataKind
    >>> [c.source for c in renamed([Column(n, "INTEGER", DataKind.INTEGER) for n in ("a", "A_1", "b_1")])]
    [None, 'A', None]
    """
    seen: set[str] = set()
    out = []
    for column in columns:
        match = _SUFFIX.fullmatch(column.name)
        was = match.group(1) if match and match.group(1).casefold() in seen else None
        seen.add(column.name.casefold())
        out.append(replace(column, source=was))
    return out


# --- CSV: text first, the engine's detection over the whole file, then a typed view -------------

_T = exp.DataType.Type
_INTEGER = r"-?(0|[1-9][0-9]*)"  # a detected integer column's values (not 1.5, 1e3 or 007)
_ISO_DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}"
_CLOCK = r"[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]{1,9})?)?"
_OFFSET = r" ?(Z|[+-]([01][0-9]|2[0-3])(:?[0-5][0-9])?)"  # an offset under a day
# The shapes of an ISO date, date-time and date-time with a UTC offset, on both engines (the
# Spark engine's detection is assay's own). An offset needs a time: a date with a zone
# (XML Schema's xs:date, "2024-01-01+02:00") is a day somewhere, no instant, and stays text.
DATE_TIME_SHAPES = {
    "DATE": f"{_ISO_DATE}$",
    "TIMESTAMP": f"{_ISO_DATE}{_CLOCK}$",
    "TIMESTAMPTZ": f"{_ISO_DATE}{_CLOCK}{_OFFSET}$",
}
_DATE_TIME = f"{_ISO_DATE}({_CLOCK}({_OFFSET})?)?$"  # any of them
_ZONED = DATE_TIME_SHAPES["TIMESTAMPTZ"]
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


def _register_csv(engine: Engine, name: str, path: Path, read: ReadOptions) -> list[Column]:
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
    # detected again from every row (see _register_csv).
    integers = set() if whole_file else {n for n, t in zip(names, types, strict=True) if n not in declared}
    view = _typed_view(text, names, types, read, blank_text, integers)
    engine.register_query(name, view, materialize=True, unrepeated=True)
    if engine.types_from_sample:
        dated = _shaped_texts(engine, name, names, types, read, set(declared))
        if dated:
            for i, kind in dated.items():
                types[i] = exp.DataType.build(kind, dialect="duckdb")
            view = _typed_view(text, names, types, read, blank_text, integers)
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
    dated = f"^ *{_DATE_TIME[1:-1]} *$"
    real = _number_shape(read)
    number = f"^ *{real[1:-1]} *$"
    blank = f"^ *{tokens_pattern(_blanks(read))} *$"
    shaped: list[int] = []
    numeric: list[int] = []
    for i, column in zip(texts, held.columns, strict=True):
        cells = column.cast(pa.string())
        blanks = pc.match_substring_regex(cells, blank)
        for pattern, found in ((dated, shaped), (number, numeric)):
            fits = pc.match_substring_regex(cells, pattern)
            if pc.any(fits).as_py() and pc.all(pc.or_(fits, blanks)).as_py():
                found.append(i)
                break
    if not shaped and not numeric:
        return {}
    table_ = exp.to_identifier(table, quoted=True)
    ranks = [
        exp.alias_(exp.Max(this=_rank(names[i], _value(names[i], read))), f"rank{i}", quoted=True)
        for i in shaped
    ]
    # A number with a space after it, "3.5 ": the engine's detection makes its column text (and
    # " 3.5" a number); the view trims every cell, so its values are numbers when every one has
    # a number's shape: integers (no leading zero: 007 is a code) or else decimals.
    for i in numeric:
        value = _value(names[i], read)
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


def _cell(column: str) -> exp.Expr:
    return exp.Trim(this=exp.column(column, quoted=True))


def _blanks(read: ReadOptions) -> tuple[str, ...]:
    """The trimmed cells that are NULL in a number, date or time column: blank, or a null token."""
    return ("", *read.null_tokens)


def _nulled(cell: exp.Expr, read: ReadOptions) -> exp.Expr:
    """``cell`` (trimmed text) with blank and null-token values as NULL: ``CASE WHEN t = '' OR
    t = 'NA' ... THEN NULL ELSE t END``. Not ``IN (...)``: DuckDB plans an IN list as a join. Nor
    nested NULLIFs: the engine expands each into a CASE that repeats its argument twice, so five
    of them repeated the trimmed cell 32 times, and binding a 400-column file's view took seconds."""
    matches = [exp.EQ(this=cell.copy(), expression=exp.Literal.string(t)) for t in _blanks(read)]
    return exp.Case(ifs=[exp.If(this=exp.or_(*matches), true=exp.Null())], default=cell.copy())


def _as_number(value: exp.Expr, read: ReadOptions) -> exp.Expr:
    """A number's text as the engines read it: a decimal comma made a point (``--decimal-comma``)."""
    if read.decimal_comma:
        return exp.func("replace", value, exp.Literal.string(","), exp.Literal.string("."))
    return value


def _value(column: str, read: ReadOptions) -> exp.Expr:
    """The cell, trimmed, with blank and null-token cells as NULL (:func:`_nulled`)."""
    return _nulled(_cell(column), read)


def _number_text(column: str, read: ReadOptions) -> exp.Expr:
    return _as_number(_value(column, read), read)


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
        value = _value(column, read)
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


def tokens_pattern(tokens: Sequence[str]) -> str:
    """A regular expression matching any of ``tokens`` literally (and nothing else around it
    unless the caller adds it), for RE2 (the engines' and Arrow's) and Java's (Spark's).

    >>> print(tokens_pattern(NULL_TOKENS))
    (?:NA|N\\x{2f}A|NULL|null)
    """
    return "(?:" + "|".join(_re2_literal(t) for t in tokens) + ")"


def _re2_literal(text: str) -> str:
    """``text`` as a regular expression matching it literally, for RE2 (the engines' and Arrow's):
    each character not a letter or digit written as its code point.

    >>> print(_re2_literal("N/A"))
    N\\x{2f}A
    """
    return "".join(c if c.isalnum() and c.isascii() else f"\\x{{{ord(c):x}}}" for c in text)


def _rank(column: str, value: exp.Expr) -> exp.Expr:
    """The rank of a cell's shape (_RANKED; NULL for a blank or null-token cell): text unless an
    ISO date or date-time, zoned with an offset, timed when longer than a date."""
    cell = _cell(column)

    def matches(pattern: str) -> exp.Expr:
        return exp.RegexpLike(this=cell.copy(), expression=exp.Literal.string(pattern))

    def rank(n: int) -> exp.Expr:
        return exp.Literal.number(n)

    return exp.Case(
        ifs=[
            exp.If(this=exp.Is(this=value, expression=exp.Null()), true=exp.Null()),
            exp.If(this=exp.Not(this=matches(_DATE_TIME)), true=rank(_TEXT_RANK)),
            exp.If(this=matches(_ZONED), true=rank(_ZONED_RANK)),
            exp.If(
                this=exp.GT(this=exp.Length(this=cell.copy()), expression=rank(10)), true=rank(_TIMED_RANK)
            ),
        ],
        default=rank(_DATE_RANK),
    )


def _typed_view(
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
        value = _nulled(exp.column(column, quoted=True), read)
        return _as_number(value, read) if column in numbers else value

    source: exp.Expr = exp.Table(this=exp.to_identifier(table, quoted=True))
    if typed:
        trimmed = [
            exp.alias_(_cell(c), c, quoted=True) if c in typed else exp.column(c, quoted=True) for c in names
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
                blank = exp.EQ(this=_cell(column), expression=exp.Literal.string(""))
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
