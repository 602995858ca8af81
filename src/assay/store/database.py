"""The metric store's database: which one, how to reach it, and bringing its schema up to date.

Two backends are supported, each with its engine settings in :data:`_ENGINES`: SQLite (a file in
the workspace, the embedded default) and PostgreSQL through psycopg 3 (a shared deployment).
:func:`open_database` parses the URL, connects with a few retries and runs the Alembic migrations
shipped in ``assay/store/migrations`` up to head, serialised so that several processes opening the
same fresh store at once create the schema exactly once.

>>> url = store_url("postgresql://assay@db.example:5432/quality", workspace=None)
>>> url.drivername
'postgresql+psycopg'
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, OperationalError

from assay.errors import ConfigError, PlatformError
from assay.store.schema import VERSION_TABLE

DEFAULT_WORKSPACE = Path(".assay")
"""The workspace folder when none is given (DESIGN.md, "The workspace")."""

STORE_FILE = "assay.db"
"""The embedded store's file name inside the workspace."""

CONNECT_ATTEMPTS = 3
"""Attempts to reach the database before :func:`open_database` gives up with a PlatformError."""

_RETRY_PAUSE_SECONDS = 0.25
_SQLITE_BUSY_TIMEOUT_SECONDS = 60.0
_POSTGRES_CONNECT_TIMEOUT_SECONDS = 10
_MIGRATIONS = Path(__file__).parent / "migrations"
# Any constant bigint works: it only has to be the same in every process that migrates this store.
_POSTGRES_MIGRATION_LOCK = 0x61737361795F6462  # "assay_db"


def store_url(url: str | None, workspace: Path | None) -> URL:
    """The SQLAlchemy URL of a store; ``None`` means ``<workspace>/assay.db``, creating the folder.

    A driverless ``postgresql://`` or ``sqlite://`` URL gets this platform's driver.

    >>> store_url("sqlite:////tmp/a.db", workspace=None).render_as_string()
    'sqlite+pysqlite:////tmp/a.db'
    """
    if url is None:
        folder = DEFAULT_WORKSPACE if workspace is None else workspace
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise PlatformError(f"cannot create the workspace folder {folder}: {err.strerror}") from err
        return URL.create("sqlite+pysqlite", database=str((folder / STORE_FILE).resolve()))
    try:
        parsed = sa.make_url(url)
    except ArgumentError:
        raise ConfigError(
            f"metric store URL {url!r} is not a database URL; expected e.g. sqlite:///path/to/assay.db "
            "or postgresql+psycopg://user@host:5432/database"
        ) from None
    backend = parsed.get_backend_name()
    if backend not in _ENGINES:
        raise ConfigError(
            f"metric store URL {display_url(parsed)}: backend {backend!r} is not supported; "
            f"use one of {', '.join(_ENGINES)}"
        )
    if parsed.drivername == backend:
        parsed = parsed.set(drivername=_DEFAULT_DRIVERS[backend])
    return parsed


def open_database(url: URL) -> Engine:
    """An engine on the store at ``url``, reachable and with its schema migrated to head.

    Raises :class:`ConfigError` when the URL names a driver that is not installed or options the
    driver refuses, and :class:`PlatformError` when the database cannot be reached after
    :data:`CONNECT_ATTEMPTS` attempts or cannot be migrated.

    >>> engine = open_database(store_url("sqlite://", workspace=None))
    >>> {"assay_alembic_version", "datasets"} <= set(sa.inspect(engine).get_table_names())
    True
    """
    try:
        engine = _ENGINES[url.get_backend_name()](url)
    except (NoSuchModuleError, ImportError) as err:
        raise ConfigError(
            f"metric store URL {display_url(url)}: driver {url.get_driver_name()!r} is not available ({err})"
        ) from None
    try:
        with _connect(engine, url) as connection:
            _upgrade(connection)
    except BaseException:
        engine.dispose()
        raise
    return engine


def describe_error(err: DBAPIError) -> str:
    """The driver's own message on one line, without SQLAlchemy's statement and parameters.

    >>> describe_error(OperationalError("SELECT 1", {}, sqlite3.OperationalError("disk I/O error")))
    'disk I/O error'
    """
    return " ".join(str(err.orig).split())


def display_url(url: URL) -> str:
    """``url`` as text fit for a message: its password, if any, is hidden.

    >>> display_url(sa.make_url("postgresql+psycopg://assay:secret@db:5432/quality"))
    'postgresql+psycopg://assay:***@db:5432/quality'
    """
    return url.render_as_string(hide_password=True)


def _connect(engine: Engine, url: URL) -> Connection:
    attempt = 1
    while True:
        try:
            return engine.connect()
        except OperationalError as err:
            if attempt == CONNECT_ATTEMPTS:
                raise PlatformError(
                    f"cannot connect to the metric store {display_url(url)} "
                    f"after {attempt} attempts: {describe_error(err)}"
                ) from err
        except DBAPIError as err:
            raise ConfigError(
                f"metric store {display_url(url)} refused the connection: {describe_error(err)}"
            ) from err
        time.sleep(_RETRY_PAUSE_SECONDS * attempt)
        attempt += 1


HEAD_REVISION = "0013"
"""The newest migration (a test checks it against Alembic's head): a store already there is
opened without importing Alembic, which costs a tenth of a second on every command."""


def _at_head(connection: Connection) -> bool:
    version = sa.table(VERSION_TABLE, sa.column("version_num", sa.String))
    try:
        with connection.begin():
            found = connection.execute(sa.select(version.c.version_num)).scalars().all()
    except DBAPIError:
        return False  # no version table yet: a new store
    return found == [HEAD_REVISION]


def _upgrade(connection: Connection) -> None:
    if _at_head(connection):
        return
    from alembic import command
    from alembic.config import Config
    from alembic.util import CommandError

    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    config.attributes["connection"] = connection
    try:
        with connection.begin():
            # SQLite needs no lock here: every transaction starts with BEGIN IMMEDIATE (see
            # _sqlite_engine), so a second process waits for the first one's upgrade to commit.
            if connection.dialect.name == "postgresql":
                connection.execute(sa.select(sa.func.pg_advisory_xact_lock(_POSTGRES_MIGRATION_LOCK)))
            command.upgrade(config, "head")
    except CommandError as err:
        raise PlatformError(
            f"cannot migrate the metric store {display_url(connection.engine.url)}: {err}"
        ) from err
    except DBAPIError as err:
        raise PlatformError(
            f"cannot migrate the metric store {display_url(connection.engine.url)}: {describe_error(err)}"
        ) from err


def _sqlite_engine(url: URL) -> Engine:
    engine = sa.create_engine(url, connect_args={"timeout": _SQLITE_BUSY_TIMEOUT_SECONDS})
    sa.event.listen(engine, "connect", _sqlite_on_connect)
    sa.event.listen(engine, "begin", _sqlite_on_begin)
    return engine


def _sqlite_on_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
    # Take transaction control away from the sqlite3 module, which would otherwise BEGIN only
    # before DML and commit implicitly before DDL (SQLAlchemy's pysqlite "transaction" recipe).
    dbapi_connection.isolation_level = None
    dbapi_connection.execute("PRAGMA foreign_keys = ON")


def _sqlite_on_begin(connection: Connection) -> None:
    # Take the write lock when the transaction starts, not at its first write: a deferred
    # transaction that reads and then writes fails at once with "database is locked" when
    # another process wrote meanwhile, whereas BEGIN IMMEDIATE waits on the busy timeout.
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def _postgres_engine(url: URL) -> Engine:
    defaults = {"connect_timeout": _POSTGRES_CONNECT_TIMEOUT_SECONDS, "application_name": "assay"}
    connect_args = {name: value for name, value in defaults.items() if name not in url.query}
    return sa.create_engine(url, pool_pre_ping=True, connect_args=connect_args)


_ENGINES: dict[str, Callable[[URL], Engine]] = {"sqlite": _sqlite_engine, "postgresql": _postgres_engine}
_DEFAULT_DRIVERS = {"sqlite": "sqlite+pysqlite", "postgresql": "postgresql+psycopg"}
