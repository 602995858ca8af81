"""The engine interface: register tables, describe queries, run queries built as sqlglot trees.

An engine owns its dialect. Everything above it builds :mod:`sqlglot` expressions and hands
them over; the engine renders them for its dialect at the last moment. Results cross the
boundary as Arrow. A subclass for another backend (Spark) implements the same few methods.
"""

from __future__ import annotations

import abc
import bisect
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from assay.names import match_name

if TYPE_CHECKING:
    import pyarrow as pa

    from assay.lake.readers import ReadOptions


class DataKind(StrEnum):
    """The families of column types that rules care about."""

    INTEGER = "integer"
    FLOAT = "float"
    DECIMAL = "decimal"
    STRING = "string"
    BOOLEAN = "boolean"
    DATE = "date"
    TIMESTAMP = "timestamp"
    OTHER = "other"

    @property
    def numeric(self) -> bool:
        return self in (DataKind.INTEGER, DataKind.FLOAT, DataKind.DECIMAL)

    @property
    def temporal(self) -> bool:
        return self in (DataKind.DATE, DataKind.TIMESTAMP)


@dataclass(frozen=True)
class Column:
    """A column of a registered table: its exact name, the engine's type name and its family.
    ``source`` is the name the input gave it when the engine could not keep that name: two
    names equal but for case (``a`` and ``A``) are one name to DuckDB and Spark, so the later
    column is held as ``A_1``; a reference to ``A`` is then ambiguous (see
    :func:`assay.rules.plan.resolve_column`)."""

    name: str
    type: str
    kind: DataKind
    source: str | None = None


def find_column(name: str, columns: Sequence[Column]) -> tuple[Column | None, list[Column]]:
    """The column ``name`` refers to, as :func:`assay.names.match_name` finds it, with the
    columns it matches when it is ambiguous: a column the engine renamed (``Column.source``)
    answers to its held name only."""
    for column in columns:  # the usual case, without building anything
        if column.name == name:
            return column, []
    by_name = {c.name: c for c in columns}
    sources = {c.name: c.source for c in columns if c.source is not None}
    found, matches = match_name(name, list(by_name), sources)
    return (None if found is None else by_name[found]), [by_name[m] for m in matches]


def engine_names(wanted: Sequence[str]) -> list[tuple[str, str | None]]:
    """The names an engine can hold for columns the input names ``wanted``, each with the input's
    name when it had to change it: a name equal but for case to an earlier one gets ``_1``
    (``_2``, ...), as DuckDB names it, avoiding every other name.

    >>> engine_names(["a", "A", " a ", "b", "A_1", "B"])
    [('a', None), ('A_2', 'A'), (' a ', None), ('b', None), ('A_1', None), ('B_1', 'B')]
    """
    taken = {name.casefold() for name in wanted}
    seen: set[str] = set()
    names: list[tuple[str, str | None]] = []
    for name in wanted:
        if name.casefold() not in seen:
            seen.add(name.casefold())
            names.append((name, None))
            continue
        k = 1
        while f"{name}_{k}".casefold() in taken | seen:
            k += 1
        seen.add(f"{name}_{k}".casefold())
        names.append((f"{name}_{k}", name))
    return names


# The text types that string functions take as they are, on every engine: another type of the
# text kind (a UUID) is text once cast to VARCHAR.
_PLAIN_TEXT = re.compile(r"^\s*(VARCHAR|TEXT|STRING|CHAR|CHARACTER|BPCHAR|NVARCHAR|NCHAR)\b", re.IGNORECASE)


def as_text(column: Column) -> exp.Expr:
    """A column as text for string functions (a regular expression, a length, a trim): itself
    when its type is a text type, else cast to VARCHAR (a number, a date, a UUID: DuckDB has no
    ``regexp_matches`` or ``length`` of a UUID).

    >>> as_text(Column("id", "UUID", DataKind.STRING)).sql("duckdb")
    'CAST("id" AS TEXT)'
    >>> as_text(Column("name", "VARCHAR", DataKind.STRING)).sql("duckdb")
    '"name"'
    """
    quoted = exp.column(column.name, quoted=True)
    if column.kind is DataKind.STRING and _PLAIN_TEXT.match(column.type):
        return quoted
    return exp.cast(quoted, exp.DataType.build("VARCHAR"))


@dataclass(frozen=True)
class Reject:
    """A CSV line the reader could not split into the header's columns."""

    line: int
    text: str
    reason: str


@dataclass
class StagedText:
    """A CSV file staged in the engine as text by :meth:`Engine.stage_csv_text`: the registered
    table, how many records it holds, the lines that did not split, and how to turn the row ids
    it gave its records into the file's line numbers."""

    name: str
    rows: int
    rejects: list[Reject]
    first_line: int = 2  # the line of the first record (after the header)
    # Spark's ids: (partition -> records before it) and the bits of an id within its partition
    offsets: dict[int, int] | None = None

    def lines(self, ids: Sequence[int]) -> list[int]:
        """The file line of each row id, assuming one line per record.

        Ids are either positions among the good records (the lines of the rejects are skipped
        over) or, with ``offsets``, Spark's ``monotonically_increasing_id`` (partition in the
        upper bits), counted among all records, rejects included."""
        if self.offsets is not None:
            low = (1 << 33) - 1
            return [self.offsets[i >> 33] + (i & low) + self.first_line for i in ids]
        skipped = sorted(r.line for r in self.rejects)
        return [_line_of(int(i), skipped, self.first_line) for i in ids]


def positions(count: int) -> pa.Array:
    """0, 1, ..., count - 1 as an Arrow int64 array, built by Arrow (``pa.array(range(n))``
    makes a Python integer of each: a third of a second per million).

    >>> positions(3).to_pylist()
    [0, 1, 2]
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    ones = pa.nulls(count, pa.int64()).fill_null(1)
    return pc.subtract(pc.cumulative_sum(ones), 1)


def _line_of(position: int, skipped: list[int], first: int) -> int:
    """The line of the good record at ``position`` when the lines ``skipped`` held rejects: the
    least fixed point of L = position + first + (rejects on lines up to L)."""
    line = position + first
    while True:
        moved = position + first + bisect.bisect_right(skipped, line)
        if moved == line:
            return line
        line = moved


@dataclass(frozen=True)
class Limits:
    """What one machine lets a run's engine use (``engine:`` of ``assay.yaml``): at most
    ``memory_limit`` of memory (a size such as ``2GB``) and ``threads`` threads, spilling what does
    not fit into ``temp_directory`` (the workspace's), at most ``max_temp_directory_size`` of it.
    None leaves the engine's own default."""

    memory_limit: str | None = None
    threads: int | None = None
    temp_directory: Path | None = None
    max_temp_directory_size: str | None = None


class EngineError(Exception):
    """The engine refused or failed a query; ``message`` is the engine's own one-line reason."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Engine(abc.ABC):
    """Base class of the SQL engines.

    ``queries`` counts the queries that scanned data, so that tests can assert that a ruleset
    was measured in one pass; ``describe`` binds a query without running it and is not counted.
    """

    dialect: ClassVar[str]
    # Whether register_csv_text types a CSV's columns from a sample of its rows, in the order
    # they come (the reader then checks what such a detection cannot promise).
    types_from_sample: ClassVar[bool] = False

    def __init__(self) -> None:
        self.queries = 0

    @abc.abstractmethod
    def register_arrow(self, name: str, data: pa.Table | pa.RecordBatchReader) -> None:
        """Make Arrow data queryable as table ``name``."""

    @abc.abstractmethod
    def register_file(self, name: str, path: str | list[str], fmt: str, compression: str = "none") -> None:
        """Make a Parquet, JSON (an array of objects, or one object a line: ``json``) or
        JSON-lines (``jsonl``) file queryable as table ``name`` without loading it; a list of
        paths makes one table of several files of one format and schema. (A CSV is registered by
        :func:`assay.lake.readers.register`, through :meth:`register_csv_text`.)"""

    @abc.abstractmethod
    def register_csv_text(
        self, name: str, path: str, read: ReadOptions, compression: str = "none", *, whole_file: bool = False
    ) -> list[Column]:
        """Make a CSV file queryable as table ``name`` with every cell as text, read as ``read``
        says (delimiter, quote, header, encoding); a cell equal to one of ``read.nulls`` is NULL,
        and a blank cell is the empty string. Returns the columns with the types the engine
        detects from a sample of rows (``whole_file``: from every row), blank cells and
        ``read.null_tokens`` counting as NULL, for integers, floats, ISO dates and timestamps
        (with or without a UTC offset), else text."""

    @abc.abstractmethod
    def register_query(
        self, name: str, query: exp.Query, *, materialize: bool = False, unrepeated: bool = False
    ) -> None:
        """Make ``query`` queryable as table ``name``: a view (it runs when it is read), or with
        ``materialize`` a table of its rows, held by the engine (spilled to disk when large).
        ``unrepeated`` says that no expression of ``query`` repeats another, so that the engine
        need not look for common ones (a look that DuckDB takes in a time growing with the square
        of the number of expressions)."""

    @abc.abstractmethod
    def inspect(self, query: exp.Query) -> pa.Table:
        """Run a query that reads an input to register it (type inference), not a measuring
        query: it is not counted in ``queries``. Raises EngineError."""

    @abc.abstractmethod
    def read_csv_text(
        self, path: str, read: ReadOptions | None = None, compression: str = "none"
    ) -> tuple[pa.Table, list[Reject]]:
        """Every record of a CSV file as text (as :meth:`register_csv_text` reads it), in file
        order, and the lines that could not be split into the header's columns."""

    def stage_csv_text(
        self, name: str, path: str, read: ReadOptions | None, compression: str, *, row: str
    ) -> StagedText:
        """Stage every record of a CSV file as text (as :meth:`read_csv_text` reads it) as the
        engine's table ``name``, with column ``row``: an id per record, increasing in file
        order, that :meth:`StagedText.lines` turns into its line. The records stay in the
        engine; only the rejected lines come back. This default goes through Arrow (DuckDB's
        reader is fastest that way: its own table of text costs more than the Arrow copy)."""
        text, rejects = self.read_csv_text(path, read, compression)
        text = text.append_column(row, positions(text.num_rows))
        self.register_arrow(name, text)
        return StagedText(name, text.num_rows, rejects)

    def write_parquet(self, query: exp.Query, folder: Path) -> list[Path]:
        """Write the rows of ``query`` as Parquet files into the new folder ``folder``; return
        the files. Types as the engine holds them (the caller casts in ``query``). This
        default fetches the rows as Arrow; an engine that writes Parquet itself overrides it."""
        import pyarrow.parquet as pq

        folder.mkdir(parents=True, exist_ok=False)
        target = folder / f"{uuid.uuid4()}.parquet"
        pq.write_table(self.query(query), target)
        return [target]

    @abc.abstractmethod
    def columns(self, name: str) -> list[Column]:
        """The columns of registered table ``name``, in order."""

    @abc.abstractmethod
    def describe(self, query: exp.Query) -> list[Column]:
        """The output columns of ``query``, binding it without running it. Raises EngineError."""

    @abc.abstractmethod
    def _run(self, sql: str) -> pa.Table:
        """Run rendered SQL and return all rows."""

    def render(self, query: exp.Expr) -> str:
        return query.sql(dialect=self.dialect)

    def hex_number(self, digits: exp.Expr) -> exp.Expr:
        """Eight lower-case hex digits (text, as md5 writes them) as the BIGINT they spell, below
        2**32. This default uses only functions every engine has (there is no common
        hex-to-integer function): each digit's position in ``0123456789abcdef``, 16 substrings a
        value, which costs PostgreSQL 2.5 s a million rows; an engine with a cast of its own
        overrides it (reconcile's checksums read two such numbers a row, docs/reconcile.md)."""
        total: exp.Expr | None = None
        for i in range(8):
            digit = exp.Substring(
                this=digits.copy(), start=exp.Literal.number(i + 1), length=exp.Literal.number(1)
            )
            position = exp.cast(
                exp.StrPosition(this=exp.Literal.string("0123456789abcdef"), substr=digit),
                exp.DataType.build("BIGINT"),
            )
            term = exp.Mul(
                this=exp.paren(exp.Sub(this=position, expression=exp.Literal.number(1))),
                expression=exp.Literal.number(16 ** (7 - i)),
            )
            total = term if total is None else exp.Add(this=total, expression=term)
        assert total is not None
        return total

    def canonical(self, type_name: str) -> str:
        """The canonical (Iceberg) name of this engine's type ``type_name``, the one the store
        keeps (:mod:`assay.engine.types`)."""
        from assay.engine.types import canonical

        return canonical(self.dialect, type_name)

    def query(self, query: exp.Query) -> pa.Table:
        """Run a query tree and return its rows as an Arrow table. Raises EngineError."""
        self.queries += 1
        return self._run(self.render(query))

    def rows(self, query: exp.Query, *, measuring: bool = True) -> list[dict[str, Any]]:
        """Run a query tree and return its rows as dictionaries, as ``query(...).to_pylist()``
        does; an engine may fetch them without Arrow. A query that is not ``measuring`` (as
        :meth:`inspect`'s) is not counted in ``queries``. Raises EngineError."""
        table = self.query(query) if measuring else self.inspect(query)
        found: list[dict[str, Any]] = table.to_pylist()
        return found

    def bound(self, limits: Limits) -> dict[str, str]:
        """Keep this engine within ``limits``; returns the settings in force as the engine reports
        them (what a run's summary records). An engine whose memory its own cluster or server
        configures (Spark, PostgreSQL) takes none and returns ``{}``."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the engine's resources."""
