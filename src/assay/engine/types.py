"""One type vocabulary for every engine: Apache Iceberg's type names.

Each engine names its types its own way (DuckDB ``BIGINT``, ``VARCHAR``, ``TIMESTAMP WITH TIME
ZONE``; Spark ``bigint``, ``string``, ``timestamp``; PostgreSQL ``bigint``, ``text``, ``timestamp
with time zone``). What the store keeps of a column, and what the schema-drift judgement compares,
is the *canonical* name, so that moving a dataset from one engine to another changes no type.
The vocabulary is Iceberg's (``boolean int long float double decimal(P,S) date time timestamp
timestamptz string uuid binary list<T> map<K,V> struct<...>``), because assay's tables are Iceberg
tables: a column reads the same in a profile and in the table's schema. Iceberg has no 8- or 16-bit
integers (it widens them to ``int``, and so does this mapping), nor unsigned ones: DuckDB's
``UBIGINT`` is ``decimal(20,0)`` and ``HUGEINT`` ``decimal(38,0)``, as Spark reads them from a
Parquet file; DuckDB's ``NULL`` type (a JSON or Parquet column with no value at all) is
``string``, as Spark reads it. A type Iceberg has no name for (``UHUGEINT``, ``INTERVAL``) keeps
the engine's own name, lowercased.

Timestamps are where engines differ in meaning, not only in name: DuckDB's ``TIMESTAMP`` and
Spark's ``timestamp_ntz`` are wall-clock times (``timestamp``), DuckDB's ``TIMESTAMPTZ`` and
Spark's ``timestamp`` are instants (``timestamptz``).

The mapping is idempotent on canonical names for DuckDB (a canonical name is also a DuckDB type
name meaning the same), which is how a store written before this vocabulary is read:
``canonical("duckdb", stored)``.

>>> [canonical("duckdb", t) for t in ("BIGINT", "VARCHAR", "TIMESTAMP WITH TIME ZONE", "DECIMAL(18,3)")]
['long', 'string', 'timestamptz', 'decimal(18,3)']
>>> [canonical("spark", t) for t in ("bigint", "string", "timestamp", "timestamp_ntz", "array<int>")]
['long', 'string', 'timestamptz', 'timestamp', 'list<int>']
>>> canonical("duckdb", "long"), canonical("duckdb", "timestamptz"), canonical("duckdb", "list<int>")
('long', 'timestamptz', 'list<int>')
"""

from __future__ import annotations

import re

from assay.errors import ConfigError

# per dialect: the engine's name (lowercased, without parameters) -> the canonical name
_NAMES: dict[str, dict[str, str]] = {
    "duckdb": {
        "boolean": "boolean",
        "bool": "boolean",
        "tinyint": "int",
        "int1": "int",
        "smallint": "int",
        "int2": "int",
        "short": "int",
        "integer": "int",
        "int": "int",
        "int4": "int",
        "signed": "int",
        "bigint": "long",
        "int8": "long",
        "long": "long",
        "utinyint": "int",
        "usmallint": "int",
        "uinteger": "long",
        # Iceberg has no unsigned 64-bit nor 128-bit integers: the decimals that hold them, as
        # Spark reads a Parquet file's UINT64 (decimal(20,0))
        "ubigint": "decimal(20,0)",
        "hugeint": "decimal(38,0)",
        # a column with no value at all (JSON, Parquet): text, as Spark reads it and as a CSV's is
        '"null"': "string",
        "null": "string",
        "real": "float",
        "float4": "float",
        "float": "float",
        "double": "double",
        "float8": "double",
        "varchar": "string",
        "char": "string",
        "bpchar": "string",
        "text": "string",
        "string": "string",
        "blob": "binary",
        "bytea": "binary",
        "binary": "binary",
        "varbinary": "binary",
        "uuid": "uuid",
        "date": "date",
        "time": "time",
        "timestamp": "timestamp",
        "datetime": "timestamp",
        "timestamp_s": "timestamp",
        "timestamp_ms": "timestamp",
        "timestamp_ns": "timestamp",
        "timestamp_us": "timestamp",
        "timestamp with time zone": "timestamptz",
        "timestamptz": "timestamptz",
        "decimal": "decimal",
        "numeric": "decimal",
    },
    "spark": {
        "boolean": "boolean",
        "tinyint": "int",
        "byte": "int",
        "smallint": "int",
        "short": "int",
        "int": "int",
        "integer": "int",
        "bigint": "long",
        "long": "long",
        "float": "float",
        "real": "float",
        "double": "double",
        "string": "string",
        "varchar": "string",
        "char": "string",
        "binary": "binary",
        "date": "date",
        "timestamp": "timestamptz",  # Spark's default timestamp is an instant (session-local)
        "timestamp_ltz": "timestamptz",
        "timestamp_ntz": "timestamp",
        "decimal": "decimal",
        "numeric": "decimal",
        "dec": "decimal",
    },
    "postgres": {
        "boolean": "boolean",
        "smallint": "int",
        "integer": "int",
        "bigint": "long",
        "real": "float",
        "double precision": "double",
        "text": "string",
        "character varying": "string",
        "character": "string",
        "varchar": "string",
        "bytea": "binary",
        "uuid": "uuid",
        "date": "date",
        "time without time zone": "time",
        "timestamp without time zone": "timestamp",
        "timestamp with time zone": "timestamptz",
        "numeric": "decimal",
    },
}
_PARAMETERS = re.compile(r"^(?P<name>[a-z_ ]+?)\s*\((?P<args>[0-9 ,]*)\)$")


def canonical(dialect: str, type_name: str) -> str:
    """The canonical (Iceberg) name of an engine's type ``type_name`` in ``dialect``."""
    names = _NAMES.get(dialect, _NAMES["duckdb"])
    text = " ".join(type_name.strip().lower().split())
    if text.endswith("[]"):  # DuckDB's lists
        return f"list<{canonical(dialect, text[:-2])}>"
    for prefix in ("array<", "list<"):
        if text.startswith(prefix) and text.endswith(">"):
            return f"list<{canonical(dialect, text[len(prefix) : -1])}>"
    if text in names:
        return names[text]
    match = _PARAMETERS.match(text)
    if match:
        name = names.get(match["name"].strip())
        args = match["args"].replace(" ", "")
        if name == "decimal":
            return f"decimal({args})" if "," in args else f"decimal({args},0)"
        if name is not None:  # VARCHAR(20), char(3), timestamp(6): the length is no new type
            return name
    return text


def require_canonical(column: str, type_name: str) -> None:
    """Refuse a type name that is not canonical (one :func:`canonical` would rename): what the
    store keeps is compared with ``==`` by the schema-drift judgement and the web's templates, so
    an engine's own name (``BIGINT`` beside ``long``) would read as another type.

    >>> require_canonical("id", "long"), require_canonical("p", "decimal(18,3)")
    (None, None)
    >>> require_canonical("id", "BIGINT")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: column id: type 'BIGINT' is not a canonical type name; the store keeps ...
    """
    kept = canonical("duckdb", type_name)
    if kept != type_name:
        raise ConfigError(
            f"column {column}: type '{type_name}' is not a canonical type name; the store keeps "
            f"'{kept}' (assay.engine.types.canonical)"
        )
