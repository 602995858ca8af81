"""Inputs for an evaluation: files (CSV, Parquet, JSON) or in-memory frames.

Every input becomes a table registered with the engine (:func:`register`). Files are read by the
engine itself, lazily, so a 10-million-row Parquet file is scanned once by the measuring query
rather than loaded into Python first. A CSV is read as text, its types detected and converted
once into a table the engine holds: :mod:`assay.lake.typed_csv` says how. What a file is (its
format, compression, reading options) is :mod:`assay.lake.files`; the names are importable from
here too.
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

from assay.engine import Column, Engine, EngineError
from assay.engine.cells import DATE_TIME_SHAPES, NULL_TOKENS, tokens_pattern
from assay.engine.spark_session import is_spark_dataframe
from assay.errors import ConfigError
from assay.lake.files import FORMATS, PLACEHOLDER, ReadOptions, compression, file_format, local_path
from assay.lake.typed_csv import register_csv, sql_type

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "DATE_TIME_SHAPES",
    "FORMATS",
    "NULL_TOKENS",
    "PLACEHOLDER",
    "SPARK_TABLE",
    "ReadOptions",
    "Registered",
    "compression",
    "file_format",
    "is_spark_dataframe",
    "local_path",
    "register",
    "renamed",
    "sql_type",
    "to_arrow",
    "tokens_pattern",
]


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


SPARK_TABLE = "spark:"  # an input named ``spark:db.table`` is a table of the Spark session


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
        path = local_path(data)
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
                columns = register_csv(engine, name, path, read)
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
