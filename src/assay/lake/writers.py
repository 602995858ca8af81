"""Writing result tables: Parquet keeps nested columns (lists, structs, maps) as they are; CSV holds
each nested value as JSON text (a list as an array, a struct or a map as an object)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from assay.errors import ConfigError


def write_text(path: Path, text: str, *, before_rename: Callable[[], None] | None = None) -> None:
    """Write ``text`` to ``path`` (UTF-8) whole or not at all, through a ``.partial`` file renamed
    into place: a half-written ruleset, document or JSON report must never be read. A symbolic
    link is followed; a device or a pipe is written as it is. A failure is a ConfigError naming
    the path. ``before_rename`` runs between the two (the crash tests' point).

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "sub" / "a.txt"
    >>> write_text(out, "x"); out.read_text()
    'x'
    """
    if path.is_dir():
        raise ConfigError(f"{path}: cannot write: it is a folder; name a file")
    if path.is_symlink():
        path = path.resolve()  # the link stays; what it names is written
    if path.exists() and not path.is_file():
        # a device or a pipe (``--json /dev/stdout``, ``--junit /dev/null``): a rename would
        # replace it with a file, so it is written as it is (there is nothing to read half of)
        try:
            with path.open("w", encoding="utf-8") as stream:
                stream.write(text)
        except OSError as error:
            raise ConfigError(f"{path}: cannot write: {error.strerror}") from None
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(text, encoding="utf-8")
        if before_rename is not None:
            before_rename()
        partial.replace(path)
    except OSError as error:
        raise ConfigError(f"{path}: cannot write: {error.strerror}") from None


def write_json(path: Path, payload: Any) -> None:
    """Write ``payload`` as the JSON every ``--json OUT`` and ``--summary`` file holds (indented,
    no NaN), whole or not at all (:func:`write_text`)."""
    write_text(path, json.dumps(payload, indent=2, allow_nan=False) + "\n")


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
            pacsv.write_csv(_nested_as_json(table), partial)
        partial.replace(path)
    except OSError as error:
        raise ConfigError(f"{path}: cannot write: {error.strerror}") from None


def _nested_as_json(table: pa.Table) -> pa.Table:
    """Nested columns as JSON text, the rest as they are (CSV has no nested values)."""
    columns = []
    for field, column in zip(table.schema, table.columns, strict=True):
        if pa.types.is_nested(field.type):
            column = pa.array(
                [None if v is None else _json(field.type, v) for v in column.to_pylist()], pa.string()
            )
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)


def _json(dtype: pa.DataType, value: object) -> str:
    return json.dumps(_plain(dtype, value), default=str, ensure_ascii=False)


def _plain(dtype: pa.DataType, value: object) -> object:
    """A nested value as JSON data: maps (pairs in Arrow) become objects, at any depth."""
    if value is None:
        return None
    if pa.types.is_map(dtype) and isinstance(value, list):
        return {str(k): _plain(dtype.item_type, v) for k, v in value}
    if pa.types.is_struct(dtype) and isinstance(value, dict):
        return {f.name: _plain(f.type, value.get(f.name)) for f in dtype}
    if (
        pa.types.is_list(dtype) or pa.types.is_large_list(dtype) or pa.types.is_fixed_size_list(dtype)
    ) and isinstance(value, list):
        return [_plain(dtype.value_type, v) for v in value]
    return value
