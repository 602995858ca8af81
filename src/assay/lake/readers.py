"""Inputs for an evaluation: files (CSV, Parquet, JSON lines) or in-memory frames.

Every input becomes a table registered with the engine. Files are read by the engine itself,
lazily, so a 10-million-row Parquet file is scanned once by the measuring query rather than
loaded into Python first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from assay.engine import Column, Engine, EngineError
from assay.errors import ConfigError

PLACEHOLDER = "__assay_no_columns"

FORMATS: dict[str, str] = {
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
}


@dataclass(frozen=True)
class Registered:
    """A table the engine can query: its name, its columns, and the file it came from if any."""

    name: str
    columns: tuple[Column, ...]
    path: Path | None = None

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]


def file_format(path: Path) -> str:
    """The format of a data file, from its suffix.

    >>> file_format(Path("accounts.csv")), file_format(Path("x.parquet"))
    ('csv', 'parquet')
    """
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        known = ", ".join(sorted(FORMATS))
        raise ConfigError(f"{path}: unknown data file type '{path.suffix}'; use one of {known}")
    return fmt


def to_arrow(data: Any) -> pa.Table | pa.RecordBatchReader:
    """An in-memory frame as Arrow: a pyarrow Table or reader, a pandas or polars DataFrame,
    or anything that speaks the Arrow PyCapsule stream protocol."""
    if isinstance(data, pa.Table | pa.RecordBatchReader):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    module = type(data).__module__
    if module.startswith("pandas"):
        return pa.Table.from_pandas(data, preserve_index=False)
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


def register(engine: Engine, name: str, data: Any) -> Registered:
    """Register ``data`` (a path or an in-memory frame) with ``engine`` as table ``name``.

    Unreadable input raises :class:`ConfigError` naming the file and the reason.
    """
    if isinstance(data, str | os.PathLike):
        path = Path(data)
        if not path.exists():
            raise ConfigError(f"{path}: no such data file")
        if path.is_dir():
            raise ConfigError(f"{path}: is a folder, not a data file")
        if not os.access(path, os.R_OK):
            raise ConfigError(f"{path}: permission denied")
        try:
            engine.register_file(name, str(path), file_format(path))
            columns = engine.columns(name)
        except EngineError as error:
            raise ConfigError(
                f"{path}: cannot read the file as {file_format(path)}: {error.message}"
            ) from None
        return Registered(name, tuple(columns), path)
    arrow = to_arrow(data)
    if isinstance(arrow, pa.Table) and arrow.num_columns == 0:
        # The engine cannot hold a table without columns; keep its row count in a placeholder
        # column that no rule can see (ColumnCount = 0, RowCount = the rows).
        engine.register_arrow(name, pa.table({PLACEHOLDER: pa.nulls(arrow.num_rows, pa.int8())}))
        return Registered(name, ())
    engine.register_arrow(name, arrow)
    return Registered(name, tuple(engine.columns(name)))
