"""The table's schema: declared in a file, read from the table, or inferred from a first batch.

A schema file is YAML (or JSON) listing the columns in order::

    columns:
      - {name: contributor_id, type: string}
      - {name: statement_date, type: date}
      - {name: credit_limit, type: decimal(18,2)}

Types: ``string``, ``bigint``, ``int``, ``double``, ``decimal(p,s)``, ``date``, ``timestamp``,
``timestamptz``, ``boolean``. A ``timestamp`` cell written with a UTC offset
(``2024-01-01T10:00:00+02:00``) is converted to UTC (08:00); a ``timestamptz`` column keeps the
instant with its time zone, UTC.

A text column may say whether a blank (empty or whitespace-only) cell means missing::

      - {name: middle_name, type: string, blank_is_null: false}

The default is ``true``: in a contributor's file a blank cell means "absent", and a NULL is
what completeness rules count. With ``false`` the cell is kept as written (an empty string),
as ``assay dqdl run`` and ``assay profile`` read blank text cells (Glue's reading).
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
from sqlglot import exp

from assay.errors import ConfigError
from assay.lang import yamlsafe

_DECIMAL = re.compile(r"decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_NAMES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "bigint": pa.int64(),
    "int": pa.int32(),
    "double": pa.float64(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "boolean": pa.bool_(),
}
BLANK_IS_NULL = b"blank_is_null"  # field metadata: b"false" when a blank text cell is a value


def arrow_type(name: str) -> pa.DataType:
    """An Arrow type from a schema-file type name.

    >>> arrow_type("decimal(18,2)"), arrow_type("date")
    (Decimal128Type(decimal128(18, 2)), DataType(date32[day]))
    """
    lowered = name.strip().lower()
    match = _DECIMAL.fullmatch(lowered)
    if match:
        precision, scale = int(match.group(1)), int(match.group(2))
        if not 1 <= precision <= 38 or scale > precision:
            raise ConfigError(f"decimal({precision},{scale}) is not a valid decimal type")
        return pa.decimal128(precision, scale)
    if lowered not in _NAMES:
        raise ConfigError(f"unknown column type '{name}': use {', '.join(_NAMES)} or decimal(p,s)")
    return _NAMES[lowered]


def type_name(dtype: pa.DataType) -> str:
    """The schema-file name of an Arrow type."""
    if pa.types.is_decimal(dtype):
        return f"decimal({dtype.precision},{dtype.scale})"
    for name, candidate in _NAMES.items():
        if dtype == candidate:
            return name
    if pa.types.is_timestamp(dtype):
        return "timestamptz" if dtype.tz else "timestamp"
    if pa.types.is_large_string(dtype):
        return "string"
    if pa.types.is_integer(dtype):
        return "bigint"
    if pa.types.is_floating(dtype):
        return "double"
    raise ConfigError(f"column type {dtype} is not supported by the gate")


def sql_type(dtype: pa.DataType) -> exp.DataType:
    """The SQL type a text cell is cast to."""
    name = type_name(dtype)
    build = {"string": "VARCHAR", "bigint": "BIGINT", "int": "INT", "double": "DOUBLE", "date": "DATE"}
    # a time without zone is TIMESTAMP_NTZ where the engine has both (Spark's TIMESTAMP has a zone)
    build |= {"timestamp": "TIMESTAMPNTZ", "timestamptz": "TIMESTAMPTZ", "boolean": "BOOLEAN"}
    return exp.DataType.build(build.get(name, name.upper()))


def load_schema(path: Path) -> pa.Schema:
    """Read a schema file (YAML or JSON)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such schema file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the schema: {' '.join(str(error).split())}") from None
    document = yamlsafe.load(text, filename=str(path))
    columns = document.get("columns") if isinstance(document, dict) else None
    if not isinstance(columns, list) or not columns:
        raise ConfigError(f"{path}: a schema file lists its columns under 'columns:'")
    fields = []
    for i, column in enumerate(columns, start=1):
        if not isinstance(column, dict) or not isinstance(column.get("name"), str) or "type" not in column:
            raise ConfigError(f"{path}: column {i} needs a 'name' and a 'type'")
        try:
            field = pa.field(column["name"], arrow_type(str(column["type"])))
        except ConfigError as error:
            raise ConfigError(f"{path}: column '{column['name']}': {error}") from None
        unknown = sorted(set(column) - {"name", "type", "blank_is_null"})
        if unknown:
            raise ConfigError(
                f"{path}: column '{column['name']}': unknown key(s) {', '.join(unknown)} "
                "(a column has name, type and blank_is_null)"
            )
        if "blank_is_null" in column:
            flag = column["blank_is_null"]
            if not isinstance(flag, bool):
                raise ConfigError(f"{path}: column '{column['name']}': blank_is_null is true or false")
            if flag is False and type_name(field.type) != "string":
                raise ConfigError(
                    f"{path}: column '{column['name']}': blank_is_null: false is for text columns; "
                    f"a blank {type_name(field.type)} cell is always missing"
                )
            field = field.with_metadata({BLANK_IS_NULL: b"true" if flag else b"false"})
        fields.append(field)
    names = [f.name for f in fields]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"{path}: column(s) listed twice: {', '.join(duplicates)}")
    return pa.schema(fields)


def schema_text(schema: pa.Schema) -> str:
    """A schema as schema-file YAML."""
    lines = ["columns:"]
    for f in schema:
        flag = (f.metadata or {}).get(BLANK_IS_NULL)
        extra = f", blank_is_null: {flag.decode()}" if flag is not None else ""
        lines.append(f"  - {{name: {f.name}, type: {type_name(f.type)}{extra}}}")
    return "\n".join(lines) + "\n"
