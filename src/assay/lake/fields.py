"""The fields of a lake table: the Arrow type each keeps, the Iceberg type it is stored as, filters.

A table keeps the Arrow schema of the batch that created it (DESIGN.md: the gate's table has
exactly the input's schema). Iceberg has fewer types than Arrow, so each column is *stored* as
the nearest Iceberg type that keeps every value (``int8`` as ``int``, ``timestamp[ns]`` as
``timestamp[us]``, ``large_string`` as ``string``) and cast back to its own type when read.
Rows committed later may arrive with narrower types (a CSV read as ``int32`` into an ``int64``
column); :func:`conform` accepts a change of type only when no value can be lost by it.
Reads and replacements select rows by equality on columns (:func:`predicate`); a table that
exists is compared with the schema and partitioning asked for (:func:`require_same`).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyiceberg.expressions import AlwaysFalse, AlwaysTrue, And, BooleanExpression, In, IsNull, Or, Reference
from pyiceberg.expressions.literals import literal
from pyiceberg.expressions.visitors import bind
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import IdentityTransform

from assay.errors import ConfigError

Check = Callable[[pa.DataType, pa.DataType], bool]

ARROW_SCHEMA = "assay.arrow-schema"

_STRINGS = (pa.string(), pa.large_string(), pa.string_view())
_BINARIES = (pa.binary(), pa.large_binary(), pa.binary_view())


def _stored_timestamp(t: pa.DataType) -> pa.DataType:
    # Iceberg keeps instants in UTC (timestamptz) or wall-clock times (timestamp), to the microsecond.
    return pa.timestamp("us", None if t.tz is None else "UTC")


# (does this rule apply to the type, the type Iceberg stores it as); the first match wins.
_STORAGE: tuple[tuple[Callable[[pa.DataType], bool], Callable[[pa.DataType], pa.DataType]], ...] = (
    (pa.types.is_timestamp, _stored_timestamp),
    (pa.types.is_date64, lambda t: pa.date32()),
    (lambda t: pa.types.is_time32(t) or pa.types.is_time64(t), lambda t: pa.time64("us")),
    (lambda t: t in (pa.uint8(), pa.uint16()), lambda t: pa.int32()),
    (lambda t: t == pa.uint32(), lambda t: pa.int64()),
    (pa.types.is_float16, lambda t: pa.float32()),
    (pa.types.is_string_view, lambda t: pa.string()),
    (pa.types.is_binary_view, lambda t: pa.binary()),
)

_UNSUPPORTED: tuple[tuple[Callable[[pa.DataType], bool], str], ...] = (
    (pa.types.is_null, "has no type (every value is null); give it one"),
    (lambda t: t == pa.uint64(), "is uint64, which Iceberg cannot store; use int64 or decimal(20,0)"),
    (pa.types.is_duration, "is a duration, which Iceberg cannot store"),
    (pa.types.is_interval, "is an interval, which Iceberg cannot store"),
)


def table_schema(schema: pa.Schema) -> pa.Schema:
    """The schema a new table keeps: the same names and types, every column nullable, no metadata.

    Every column is nullable because a missing value is the rules' business, not the table's;
    a dictionary-encoded column keeps its values' type.

    >>> table_schema(pa.schema([pa.field("id", pa.int64(), nullable=False)]))
    id: int64
    """
    seen: set[str] = set()
    for field in schema:
        if field.name in seen:
            raise ConfigError(f"column '{field.name}' appears twice")
        seen.add(field.name)
        for applies, reason in _UNSUPPORTED:
            if applies(_decoded(field.type)):
                raise ConfigError(f"column '{field.name}' {reason}")
    return pa.schema([pa.field(f.name, _decoded(f.type), nullable=True) for f in schema])


def _decoded(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


def storage_schema(schema: pa.Schema) -> pa.Schema:
    """The Arrow schema handed to Iceberg: each type replaced by one Iceberg stores losslessly.

    >>> storage_schema(pa.schema([("ts", pa.timestamp("ns")), ("n", pa.uint8())]))
    ts: timestamp[us]
    n: int32
    """
    return pa.schema([pa.field(f.name, _storage_type(f.type)) for f in schema])


def _storage_type(t: pa.DataType) -> pa.DataType:
    for applies, stored in _STORAGE:
        if applies(t):
            return stored(t)
    return t


def _same_kind(kinds: tuple[pa.DataType, ...]) -> Check:
    return lambda source, target: source in kinds and target in kinds


def _wider_integer(source: pa.DataType, target: pa.DataType) -> bool:
    if not (pa.types.is_integer(source) and pa.types.is_integer(target)):
        return False
    if pa.types.is_signed_integer(source) == pa.types.is_signed_integer(target):
        return bool(target.bit_width >= source.bit_width)
    return bool(pa.types.is_unsigned_integer(source) and target.bit_width > source.bit_width)


_MANTISSA_BITS = {16: 11, 32: 24, 64: 53}


def _exact_float(source: pa.DataType, target: pa.DataType) -> bool:
    # A float holds every integer that fits its mantissa, and every narrower float.
    if pa.types.is_floating(source) and pa.types.is_floating(target):
        return bool(target.bit_width >= source.bit_width)
    integer = pa.types.is_integer(source) and pa.types.is_floating(target)
    return integer and bool(source.bit_width <= _MANTISSA_BITS[target.bit_width])


def _wider_decimal(source: pa.DataType, target: pa.DataType) -> bool:
    if not (pa.types.is_decimal(source) and pa.types.is_decimal(target)):
        return False
    return bool(
        target.scale >= source.scale and target.precision - target.scale >= source.precision - source.scale
    )


def _dates(source: pa.DataType, target: pa.DataType) -> bool:
    return bool(pa.types.is_date(source) and pa.types.is_date(target))


def _timestamps(source: pa.DataType, target: pa.DataType) -> bool:
    # Any unit may go to any unit: the cast is safe and fails on the values that would lose precision.
    return bool(pa.types.is_timestamp(source) and pa.types.is_timestamp(target) and source.tz == target.tz)


def _all_null(source: pa.DataType, target: pa.DataType) -> bool:
    return bool(pa.types.is_null(source))


def _dictionary(source: pa.DataType, target: pa.DataType) -> bool:
    return bool(pa.types.is_dictionary(source)) and widens(source.value_type, target)


# Each row: one way an incoming column may differ from the table's without losing a value.
WIDENINGS: tuple[Check, ...] = (
    _same_kind(_STRINGS),
    _same_kind(_BINARIES),
    _wider_integer,
    _exact_float,
    _wider_decimal,
    _dates,
    _timestamps,
    _all_null,
    _dictionary,
)


def widens(source: pa.DataType, target: pa.DataType) -> bool:
    """Whether a column of type ``source`` may be written to a column of type ``target``.

    >>> widens(pa.int32(), pa.int64()), widens(pa.large_string(), pa.string())
    (True, True)
    >>> widens(pa.int64(), pa.int32()), widens(pa.string(), pa.int64())
    (False, False)
    """
    return source == target or any(check(source, target) for check in WIDENINGS)


def conform(rows: pa.Table, schema: pa.Schema, table: str) -> pa.Table:
    """``rows`` in the column order and types of ``schema``, or a :class:`ConfigError` naming the column.

    >>> schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    >>> conform(pa.table({"name": ["a"], "id": pa.array([1], pa.int32())}), schema, "t").schema
    id: int64
    name: string
    >>> conform(pa.table({"id": [1]}), schema, "t")
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: table 't' has column 'name', which the rows lack
    """
    names = rows.column_names
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(f"the rows for table '{table}' have column '{name}' twice")
        if schema.get_field_index(name) < 0:
            raise ConfigError(f"the rows have column '{name}', which table '{table}' does not have")
    columns = []
    for field in schema:
        if field.name not in names:
            raise ConfigError(f"table '{table}' has column '{field.name}', which the rows lack")
        column = rows.column(field.name)
        if not widens(column.type, field.type):
            raise ConfigError(
                f"column '{field.name}' is {field.type} in table '{table}' but {column.type} in the rows"
            )
        columns.append(_cast(column, field.type, field.name, table))
    return pa.Table.from_arrays(columns, schema=schema)


def restore(data: pa.Table, schema: pa.Schema) -> pa.Table:
    """Columns read from Iceberg, cast back to the table's own types (``schema``, by name).

    >>> restore(pa.table({"n": pa.array([1], pa.int32())}), pa.schema([("n", pa.int8())])).schema
    n: int8
    """
    fields = [schema.field(name) for name in data.column_names]
    return data.cast(pa.schema(fields))


def _cast(column: pa.ChunkedArray, target: pa.DataType, name: str, table: str) -> pa.ChunkedArray:
    if column.type == target:
        return column
    try:
        return column.cast(target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
        raise ConfigError(
            f"column '{name}' of table '{table}' cannot take these {column.type} values as {target}: {error}"
        ) from None


def to_storage(rows: pa.Table, schema: pa.Schema, table: str) -> pa.Table:
    """Rows already in the table's types, cast to the types Iceberg stores them as.

    >>> to_storage(pa.table({"n": pa.array([1], pa.uint8())}), pa.schema([("n", pa.uint8())]), "t").schema
    n: int32
    """
    stored = storage_schema(schema)
    columns = [_cast(rows.column(f.name), f.type, f.name, table) for f in stored]
    return pa.Table.from_arrays(columns, schema=stored)


def encode(schema: pa.Schema) -> str:
    """An Arrow schema as text that fits a table property; :func:`decode` reads it back.

    >>> decode(encode(pa.schema([("d", pa.date32())]))) == pa.schema([("d", pa.date32())])
    True
    """
    return base64.b64encode(schema.serialize().to_pybytes()).decode("ascii")


def decode(text: str) -> pa.Schema:
    """The Arrow schema :func:`encode` wrote."""
    schema: pa.Schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text)))
    return schema


def difference(existing: pa.Schema, wanted: pa.Schema) -> str:
    """The first way ``wanted`` differs from ``existing``, naming the column.

    >>> difference(pa.schema([("id", pa.int64())]), pa.schema([("id", pa.string())]))
    "column 'id' is int64 there, string here"
    """
    for field in existing:
        if wanted.get_field_index(field.name) < 0:
            return f"column '{field.name}' is there, not here"
        if wanted.field(field.name).type != field.type:
            return f"column '{field.name}' is {field.type} there, {wanted.field(field.name).type} here"
    for field in wanted:
        if existing.get_field_index(field.name) < 0:
            return f"column '{field.name}' is here, not there"
    return "the same columns in another order" if existing.names != wanted.names else "none"


def predicate(schema: Schema, where: Mapping[str, Any], table: str) -> BooleanExpression:
    """``where`` as an Iceberg filter: each column equal to its value, or to any value of a list.

    ``None`` matches a null, as SQL's ``IS NULL`` does; a value never matches a null.

    >>> from pyiceberg.schema import NestedField
    >>> from pyiceberg.types import StringType
    >>> schema = Schema(NestedField(1, "contributor_id", StringType()))
    >>> predicate(schema, {"contributor_id": "B1"}, "t")
    EqualTo(term=Reference(name='contributor_id'), literal=literal('B1'))
    """
    expression: BooleanExpression = AlwaysTrue()
    for column, value in where.items():
        if column not in schema.column_names:
            raise ConfigError(f"table '{table}' has no column '{column}'")
        expression = And(expression, _equality(column, value))
    try:
        bind(schema, expression, case_sensitive=True)
    except (ValueError, TypeError) as error:
        raise ConfigError(f"table '{table}': cannot compare {dict(where)}: {error}") from None
    return expression


def _equality(column: str, value: Any) -> BooleanExpression:
    reference = Reference(column)
    values = list(value) if isinstance(value, list | tuple | set | frozenset) else [value]
    try:
        present = {literal(v) for v in values if v is not None}
    except TypeError as error:
        raise ConfigError(f"cannot compare column '{column}' with {value!r}: {error}") from None
    term: BooleanExpression = In(term=reference, values=present) if present else AlwaysFalse()
    return Or(IsNull(term=reference), term) if None in values else term


def stored_schema(table: Table) -> pa.Schema:
    """The Arrow schema ``table`` was created with (or, for a table made elsewhere, Iceberg's own)."""
    text = table.properties.get(ARROW_SCHEMA)
    if text is not None:
        return decode(text)
    return table_schema(table.schema().as_arrow().remove_metadata())


def partition_columns(table: Table) -> list[str]:
    """The columns whose identity partitions ``table``, in the order of its partition spec."""
    schema = table.schema()
    return [
        schema.find_column_name(field.source_id) or field.name
        for field in table.spec().fields
        if isinstance(field.transform, IdentityTransform)
    ]


def require_same(name: str, table: Table, schema: pa.Schema, partition_by: Sequence[str]) -> None:
    """Raise a :class:`ConfigError` unless ``table`` has ``schema`` and is partitioned by ``partition_by``."""
    existing = stored_schema(table)
    if not existing.equals(schema):
        raise ConfigError(f"table '{name}' exists with another schema: {difference(existing, schema)}")
    if partition_columns(table) != list(partition_by):
        raise ConfigError(
            f"table '{name}' exists partitioned by {partition_columns(table)}, not by {list(partition_by)}"
        )
