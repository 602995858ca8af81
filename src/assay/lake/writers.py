"""Writing result tables: Parquet keeps list columns as lists; CSV holds them as JSON arrays."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from assay.errors import ConfigError


def write_table(table: pa.Table, path: Path) -> None:
    """Write ``table`` as Parquet (``.parquet``) or CSV (``.csv``), atomically.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "rows.csv"
    >>> write_table(pa.table({"a": [1], "rules": [["x", "y"]]}), out)
    >>> out.read_text().splitlines()[1]
    '1,"[""x"", ""y""]"'
    """
    suffix = path.suffix.lower()
    if suffix not in (".parquet", ".csv"):
        raise ConfigError(f"{path}: write row-level results to a .parquet or .csv file")
    partial = path.with_name(path.name + ".partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if suffix == ".parquet":
            pq.write_table(table, partial)
        else:
            pacsv.write_csv(_lists_as_json(table), partial)
        partial.replace(path)
    except OSError as error:
        raise ConfigError(f"{path}: cannot write: {error.strerror}") from None


def _lists_as_json(table: pa.Table) -> pa.Table:
    columns = []
    for field, column in zip(table.schema, table.columns, strict=True):
        if pa.types.is_list(field.type) or pa.types.is_large_list(field.type):
            column = pa.array([None if v is None else json.dumps(v) for v in column.to_pylist()], pa.string())
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)
