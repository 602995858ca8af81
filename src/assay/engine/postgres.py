"""PostgreSQL, remote: a source whose queries run inside the user's server.

Nothing is copied out of the database except the rows a query returns (a profile's aggregates,
a rule's samples). The session is read only: the server itself refuses any write, so assay never
changes a user's database. PostgreSQL refuses even ``CREATE TEMP VIEW`` in a read-only session
(``cannot execute CREATE VIEW in a read-only transaction``, SQLSTATE 25006, checked on
PostgreSQL 15), and so does a hot standby in any session. A registered name is therefore no
object on the server: the engine keeps its definition (a sqlglot tree) and binds it into each
query that reads it as a ``WITH`` entry, at render time. The session holds no state, which also
makes a reconnect after a lost connection complete by itself.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import psycopg
import pyarrow as pa
import sqlglot
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.string import TextLoader
from sqlglot import exp

from assay.engine.base import Column, DataKind, Engine, EngineError, Reject
from assay.errors import ConfigError, PlatformError

if TYPE_CHECKING:
    from assay.lake.readers import ReadOptions

# The family of each built-in type name (pg_type.typname); anything else (time, interval, uuid,
# json, arrays, enums, user types) is OTHER, which the rules treat as neither number nor text.
_KINDS: dict[str, DataKind] = {
    **dict.fromkeys(("int2", "int4", "int8"), DataKind.INTEGER),
    "numeric": DataKind.DECIMAL,
    **dict.fromkeys(("float4", "float8"), DataKind.FLOAT),
    **dict.fromkeys(("text", "varchar", "bpchar", "char", "name"), DataKind.STRING),
    "bool": DataKind.BOOLEAN,
    "date": DataKind.DATE,
    **dict.fromkeys(("timestamp", "timestamptz"), DataKind.TIMESTAMP),
}


def kind_of(type_name: str) -> DataKind:
    """The family of a PostgreSQL type, by its catalog name (``pg_type.typname``) or its SQL
    name with or without a modifier.

    >>> [kind_of(t).value for t in ("int8", "numeric(10,2)", "timestamptz", "varchar(3)", "jsonb")]
    ['integer', 'decimal', 'timestamp', 'string', 'other']
    """
    return _KINDS.get(type_name.split("(")[0], DataKind.OTHER)


# The Arrow type of each built-in type name. numeric with a declared precision (<= 38 digits) is
# decimal128(p, s), exact, as DuckDB returns DECIMAL; a numeric without one (what sum(), avg()
# and arithmetic on numerics return, with a scale that differs from value to value) is float64:
# metrics are stored as floats anyway, and a type that depended on the values would change from
# run to run. timestamptz is read in the session's UTC.
_ARROW: dict[str, pa.DataType] = {
    "int2": pa.int16(),
    "int4": pa.int32(),
    "int8": pa.int64(),
    "oid": pa.int64(),
    "float4": pa.float32(),
    "float8": pa.float64(),
    "numeric": pa.float64(),
    "bool": pa.bool_(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "time": pa.time64("us"),
    "interval": pa.duration("us"),
    "bytea": pa.binary(),
    **dict.fromkeys(("text", "varchar", "bpchar", "char", "name", "json", "jsonb", "uuid"), pa.string()),
}
# loaded as Python objects that Arrow does not take as text (timetz: a time64 would drop the offset)
_TO_TEXT = frozenset(("uuid", "timetz"))

# SQLSTATE classes of a failing server or connection, not of a wrong query: connection (08),
# transaction rollback (40: a standby cancelling a query on recovery), resources (53), operator
# intervention (57: timeouts, shutdowns), system/I-O (58), internal (XX). They become a
# PlatformError, which the check run retries; every other refusal is the query's (a config error).
_SYSTEM_CLASSES = frozenset(("08", "40", "53", "57", "58", "XX"))

_RELATION_KINDS = ("r", "v", "m", "p", "f")  # tables, views, materialized views, partitioned, foreign


def _catalog(sql: str) -> exp.Query:
    """A fixed catalog query, as a tree (values are bound as parameters, never pasted)."""
    tree = sqlglot.parse_one(sql, read="postgres")
    assert isinstance(tree, exp.Query)
    return tree


_KINDS_SQL = ", ".join(f"'{k}'" for k in _RELATION_KINDS)
_RESOLVE = _catalog(
    "SELECT n.nspname, c.relname FROM pg_catalog.pg_class AS c "
    "JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
    f"WHERE c.oid = pg_catalog.to_regclass(%s) AND c.relkind IN ({_KINDS_SQL})"
)
_SCHEMA = _catalog("SELECT nspname FROM pg_catalog.pg_namespace WHERE oid = pg_catalog.to_regnamespace(%s)")
_CURRENT_SCHEMA = _catalog("SELECT current_schema()")
_SCHEMAS = _catalog(
    "SELECT nspname FROM pg_catalog.pg_namespace "
    "WHERE NOT starts_with(nspname, 'pg_') AND nspname <> 'information_schema' ORDER BY 1"
)
_TABLES = _catalog(
    "SELECT c.relname FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n "
    f"ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind IN ({_KINDS_SQL}) ORDER BY 1"
)
_TYPE_NAME = _catalog("SELECT pg_catalog.format_type(CAST(%s AS OID), NULL)")
_LISTED = 20  # names shown in an error message; more are counted


@dataclass(frozen=True)
class _Server:
    """Where a URL points, for messages: never the password."""

    host: str
    port: str
    database: str
    password: str | None

    def __str__(self) -> str:
        return f"{self.host}:{self.port}/{self.database}"

    def scrub(self, text: str) -> str:
        """``text`` without the password, should a driver ever echo it."""
        if self.password:
            for secret in {self.password, quote(self.password, safe="")}:
                text = text.replace(secret, "***")
        return text


def _libpq_url(url: str) -> str:
    """A libpq URL from a libpq or SQLAlchemy one (``postgresql+psycopg://``).

    >>> _libpq_url("postgresql+psycopg://ana@db:5432/wh")
    'postgresql://ana@db:5432/wh'
    """
    return re.sub(r"^(postgres(?:ql)?)\+\w+://", r"\1://", url.strip())


class PostgresEngine(Engine):
    """A PostgreSQL database, queried in place through one read-only connection.

    The connection opens on first use and opens again after it was lost, so a retry after the
    server came back works on the same engine. Queries render for the ``postgres`` dialect.

    >>> from sqlglot import exp
    >>> engine = PostgresEngine("postgresql+psycopg://ana:secret@db.example.com:5432/wh")
    >>> str(engine.server)
    'db.example.com:5432/wh'
    >>> engine.render(exp.select(exp.func("count", exp.Star())).from_("trades"))
    'SELECT COUNT(*) FROM trades'
    """

    dialect = "postgres"

    def __init__(
        self, url: str, *, connect_timeout: float = 10, statement_timeout: float | None = None
    ) -> None:
        super().__init__()
        self._url = _libpq_url(url)  # holds the password: never shown
        try:
            params = conninfo_to_dict(self._url)
        except psycopg.ProgrammingError:
            # the driver's message can quote the URL, password included
            raise ConfigError("the postgres source's url is not a valid PostgreSQL URL") from None
        self.server = _Server(
            host=str(params.get("host") or params.get("hostaddr") or "localhost"),
            port=str(params.get("port") or 5432),
            database=str(params.get("dbname") or params.get("user") or "postgres"),
            password=str(params["password"]) if params.get("password") else None,
        )
        # Read only, UTC (timestamp literals and now() mean one instant), no SQL needed: the
        # settings travel with the connection request and hold for the whole session.
        options = ["-c default_transaction_read_only=on", "-c TimeZone=UTC"]
        if statement_timeout is not None:
            options.append(f"-c statement_timeout={max(1, round(statement_timeout * 1000))}")
        self._connect_args: dict[str, Any] = {
            "autocommit": True,
            # libpq takes whole seconds (and treats 1 as 2)
            "connect_timeout": max(1, math.ceil(connect_timeout)),
            "options": " ".join(filter(None, [str(params.get("options") or ""), *options])),
            "application_name": params.get("application_name") or "assay",
        }
        self._connection: psycopg.Connection[tuple[Any, ...]] | None = None
        self._lock = threading.RLock()
        self._views: dict[str, tuple[exp.Query, bool]] = {}
        self._type_names: dict[int, str] = {}

    def __repr__(self) -> str:
        return f"PostgresEngine({str(self.server)!r})"

    def hex_number(self, digits: exp.Expr) -> exp.Expr:
        """``('x' || digits)::bit(32)::bigint``: PostgreSQL reads hex as a bit string (0.05 s a
        million rows, against 2.5 s for the portable default)."""
        bits = exp.cast(
            exp.DPipe(this=exp.Literal.string("x"), expression=digits), exp.DataType.build("BIT(32)")
        )
        return exp.cast(bits, exp.DataType.build("BIGINT"))

    # --- registration: names bound at render time --------------------------------------------

    def register_table(self, name: str, table: str) -> None:
        """Make the user's table (``schema.table``, or ``table`` on the search path) queryable as
        ``name``. Raises ConfigError when the server has no such table, naming the tables it has.

        >>> PostgresEngine("postgresql://db/wh").register_table("rows", "public.trades")  # doctest: +SKIP
        """
        try:
            parsed = exp.to_table(table, dialect="postgres")
        except sqlglot.errors.ParseError:
            raise ConfigError(f"postgres table {table}: not a table name (schema.table)") from None
        if not parsed.name or not isinstance(parsed.this, exp.Identifier):
            raise ConfigError(f"postgres table {table}: not a table name (schema.table)")
        if parsed.catalog and parsed.catalog != self.server.database:
            raise ConfigError(
                f"postgres table {table}: in database {parsed.catalog}, but the source's url "
                f"connects to {self.server.database}"
            )
        local = exp.Table(this=parsed.this.copy(), db=parsed.args["db"].copy() if parsed.db else None)
        try:
            found = self._catalog_rows(_RESOLVE, [local.sql(dialect="postgres")])
            if not found:
                raise ConfigError(f"postgres table {table}: {self._missing(parsed)}")
        except EngineError as error:  # a name the server cannot read as one
            raise ConfigError(f"postgres table {table}: {error.message}") from None
        schema, relation = found[0]
        # qualified by the catalog's own names: the definition never depends on the search path
        source = exp.Table(
            this=exp.to_identifier(relation, quoted=True), db=exp.to_identifier(schema, quoted=True)
        )
        self._views.pop(name, None)
        self._views[name] = (exp.select(exp.Star()).from_(source), False)

    def _missing(self, table: exp.Table) -> str:
        """Why ``table`` resolved to nothing: the schema's tables, or the schemas there are."""
        if table.db:
            schemas = self._catalog_rows(_SCHEMA, [table.args["db"].sql(dialect="postgres")])
            if not schemas:
                names = [str(row[0]) for row in self._catalog_rows(_SCHEMAS)]
                return f"no such schema {table.db} (schemas: {_listing(names)})"
            schema = str(schemas[0][0])
        else:
            schema = str(self._catalog_rows(_CURRENT_SCHEMA)[0][0])
        names = [str(row[0]) for row in self._catalog_rows(_TABLES, [schema])]
        return f"no such table (tables in {schema}: {_listing(names)})"

    def register_query(
        self, name: str, query: exp.Query, *, materialize: bool = False, unrepeated: bool = False
    ) -> None:
        # Bound now, against the names registered now (as a view is), so that a later
        # registration of the same name does not change it; checked by the server now.
        bound = self._bind(query)
        self.describe(bound)
        self._views.pop(name, None)
        self._views[name] = (bound, materialize)

    def register_arrow(self, name: str, data: pa.Table | pa.RecordBatchReader) -> None:
        raise ConfigError(_no_local_data(f"the table {name}"))

    def register_file(self, name: str, path: str | list[str], fmt: str, compression: str = "none") -> None:
        raise ConfigError(_no_local_data(f"the {fmt} file {path}"))

    def register_csv_text(
        self, name: str, path: str, read: ReadOptions, compression: str = "none", *, whole_file: bool = False
    ) -> list[Column]:
        raise ConfigError(_no_local_data(f"the CSV file {path}"))

    def read_csv_text(
        self, path: str, read: ReadOptions | None = None, compression: str = "none"
    ) -> tuple[pa.Table, list[Reject]]:
        raise ConfigError(_no_local_data(f"the CSV file {path}"))

    def render(self, query: exp.Expr) -> str:
        if isinstance(query, exp.Query):
            query = self._bind(query)
        return query.sql(dialect=self.dialect)

    def _bind(self, query: exp.Query) -> exp.Query:
        """``query`` with a ``WITH`` entry for every registered name it reads (a name the query
        defines itself, as a CTE, stays the query's own)."""
        tree = _tables(query.copy())
        own = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
        ctes: dict[str, exp.CTE] = {}
        # A registered name may read another (a view of a view): bind names until none is left,
        # each before the names that read it.
        pending: list[exp.Expr] = [tree]
        order: list[str] = []
        while pending:
            node = pending.pop()
            for table in node.find_all(exp.Table):
                name = table.name
                if table.db or table.catalog or name in own or name in ctes or name not in self._views:
                    continue
                body, materialize = self._views[name]
                body = _tables(body.copy())
                ctes[name] = exp.CTE(
                    this=body.copy(),
                    alias=exp.TableAlias(this=table.this.copy()),
                    # a materialized name is computed once per query (no rows are kept on the server)
                    materialized=True if materialize else None,
                )
                order.append(name)
                pending.append(body)
        if not ctes:
            return tree
        ctes = {name: ctes[name] for name in reversed(order)}
        existing = tree.args.get("with_")
        theirs = list(existing.expressions) if isinstance(existing, exp.With) else []
        recursive = bool(existing.args.get("recursive")) if isinstance(existing, exp.With) else False
        tree.set("with_", exp.With(expressions=[*ctes.values(), *theirs], recursive=recursive or None))
        return tree

    # --- reading ---------------------------------------------------------------------------

    def columns(self, name: str) -> list[Column]:
        if name not in self._views:
            raise EngineError(f'Table with name "{name}" does not exist (it was never registered)')
        return self.describe(exp.select(exp.Star()).from_(exp.table_(name)))

    def describe(self, query: exp.Query) -> list[Column]:
        # LIMIT 0: the server plans and binds the query but its Limit node never pulls a row
        probe = exp.select(exp.Star()).from_(self._bind(query).subquery("q")).limit(0)
        description, _ = self._execute(probe.sql(dialect=self.dialect), fetch=False)
        return [
            Column(name, self._type_name(code, display), kind_of(typname))
            for name, code, display, typname in description
        ]

    def inspect(self, query: exp.Query) -> pa.Table:
        return self._run(self.render(query))

    def _run(self, sql: str) -> pa.Table:
        description, rows = self._execute(sql, fetch=True)
        arrays = [
            _arrow([row[index] for row in rows], typname, display)
            for index, (_, _, display, typname) in enumerate(description)
        ]
        return pa.Table.from_arrays(arrays, names=[column[0] for column in description])

    # --- the connection ------------------------------------------------------------------------

    def _connect(self) -> psycopg.Connection[tuple[Any, ...]]:
        if self._connection is not None and not self._connection.closed:
            return self._connection
        try:
            connection = psycopg.connect(self._url, **self._connect_args)
        except psycopg.Error as error:
            raise PlatformError(
                f"could not connect to the PostgreSQL server {self.server}: {self._reason(error)}"
            ) from None
        # json as its text: a value in a result is data, not a Python structure
        for json_type in ("json", "jsonb"):
            connection.adapters.register_loader(json_type, TextLoader)
        self._connection = connection
        return connection

    def _execute(
        self, sql: str, params: Sequence[object] | None = None, *, fetch: bool
    ) -> tuple[list[tuple[str, int, str, str]], list[tuple[Any, ...]]]:
        """Run one statement: its columns (name, type OID, type as shown, typname) and rows."""
        with self._lock:
            connection = self._connect()
            try:
                cursor = connection.execute(sql, params)
                rows = cursor.fetchall() if fetch else []
            except psycopg.Error as error:
                raise self._failure(error) from None
            description = [
                (
                    column.name,
                    column.type_code,
                    column.type_display,
                    _typname(connection, column.type_code),
                )
                for column in cursor.description or []
            ]
            return description, rows

    def _catalog_rows(
        self, query: exp.Query, params: Sequence[object] | None = None
    ) -> list[tuple[Any, ...]]:
        return self._execute(query.sql(dialect=self.dialect), params, fetch=True)[1]

    def _type_name(self, code: int, display: str) -> str:
        """The type's name: psycopg's for the built-in types, the catalog's for the others."""
        if display != str(code):
            return display
        if code not in self._type_names:
            self._type_names[code] = str(self._catalog_rows(_TYPE_NAME, [code])[0][0])
        return self._type_names[code]

    def _failure(self, error: psycopg.Error) -> Exception:
        """The server's refusal as assay reports it, dropping a connection that is lost."""
        connection = self._connection
        if connection is not None and (connection.closed or connection.broken):
            connection.close()
            self._connection = None
        state = error.sqlstate or ""
        if (
            isinstance(error, psycopg.OperationalError | psycopg.InterfaceError)
            or state[:2] in _SYSTEM_CLASSES
        ):
            return PlatformError(f"the PostgreSQL server {self.server} failed: {self._reason(error)}")
        return EngineError(self._reason(error))

    def _reason(self, error: psycopg.Error) -> str:
        """The server's message on one line, without the echo of the query."""
        text = error.diag.message_primary or str(error).split("\nLINE ")[0]
        return self.server.scrub(" ".join(text.split()))

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


def _typname(connection: psycopg.Connection[tuple[Any, ...]], code: int) -> str:
    """The catalog name of a built-in type; "" for arrays (psycopg files an array's OID under
    its element's type) and for types psycopg does not know (enums, user types)."""
    info = connection.adapters.types.get(code)
    return info.name if info is not None and info.oid == code else ""


def _listing(names: list[str]) -> str:
    """At most :data:`_LISTED` names, and how many more there are.

    >>> _listing(["a", "b"]), _listing([])
    ('a, b', 'none')
    """
    if not names:
        return "none"
    shown = ", ".join(names[:_LISTED])
    return shown if len(names) <= _LISTED else f"{shown} and {len(names) - _LISTED} more"


def _no_local_data(what: str) -> str:
    return (
        f"a PostgreSQL source holds no local data: {what} cannot be read next to it "
        "(its queries run inside the server; use a file or DuckDB source for local data)"
    )


def _numeric(display: str) -> pa.DataType:
    """decimal128(p, s) for a numeric of declared precision up to 38, else float64."""
    found = re.fullmatch(r"numeric\((\d+),(\d+)\)", display)
    if found and int(found.group(1)) <= 38:
        return pa.decimal128(int(found.group(1)), int(found.group(2)))
    return pa.float64()


def _arrow(values: list[Any], typname: str, display: str) -> pa.Array:
    """One result column as Arrow, typed by the server's type, not guessed from the values."""
    if typname == "numeric":
        target = _numeric(display)
        if pa.types.is_decimal(target) and all(v is None or v.is_finite() for v in values):
            return pa.array(values, type=target)
        # NaN and infinities have no decimal128: the column is read as float64 then
        return pa.array([None if v is None else float(v) for v in values], type=pa.float64())
    if typname in _TO_TEXT:
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())
    if typname in _ARROW:
        return pa.array(values, type=_ARROW[typname])
    # arrays, enums, ranges, user types: Arrow's own reading, else the values' text
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def _tables(tree: exp.Query) -> exp.Query:
    """``tree`` with every ``FROM name`` / ``JOIN name`` written as a bare identifier (as sqlglot's
    builders make from ``from_(identifier)``) turned into a table node, so that binding sees it."""
    for node in list(tree.find_all(exp.From, exp.Join)):
        inner = node.this
        if isinstance(inner, exp.Identifier):
            node.set("this", exp.Table(this=inner.copy()))
    return tree
