"""The engine interface: register tables, describe queries, run queries built as sqlglot trees.

An engine owns its dialect. Everything above it builds :mod:`sqlglot` expressions and hands
them over; the engine renders them for its dialect at the last moment. Results cross the
boundary as Arrow. A subclass for another backend (Spark) implements the same few methods.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar

import pyarrow as pa
from sqlglot import exp

if TYPE_CHECKING:
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
    """A column of a registered table: its exact name, the engine's type name and its family."""

    name: str
    type: str
    kind: DataKind


@dataclass(frozen=True)
class Reject:
    """A CSV line the reader could not split into the header's columns."""

    line: int
    text: str
    reason: str


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
    def register_query(self, name: str, query: exp.Query, *, materialize: bool = False) -> None:
        """Make ``query`` queryable as table ``name``: a view (it runs when it is read), or with
        ``materialize`` a table of its rows, held by the engine (spilled to disk when large)."""

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

    def canonical(self, type_name: str) -> str:
        """The canonical (Iceberg) name of this engine's type ``type_name``, the one the store
        keeps (:mod:`assay.engine.types`)."""
        from assay.engine.types import canonical

        return canonical(self.dialect, type_name)

    def query(self, query: exp.Query) -> pa.Table:
        """Run a query tree and return its rows as an Arrow table. Raises EngineError."""
        self.queries += 1
        return self._run(self.render(query))

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the engine's resources."""
