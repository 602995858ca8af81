"""One registry of engines by name: a run chooses its engine once and hands it to every stage.

``duckdb`` (embedded, the default) and ``spark`` (PySpark, an optional extra) run any input;
the ``postgres`` engine is the one entry of ``SOURCE_ENGINES``: a check document's source chooses
it (the data is in that server), never a name a user passes.
A new engine is one module with an :class:`~assay.engine.base.Engine` subclass and one entry in
``ENGINES`` (see docs/engines.md).

>>> from assay.engine.registry import make_engine
>>> engine = make_engine("duckdb")
>>> engine.dialect
'duckdb'
>>> make_engine("oracle")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
assay.errors.ConfigError: unknown engine 'oracle': choose one of duckdb, spark
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from assay.engine.base import Engine
from assay.errors import ConfigError


def _duckdb(**options: Any) -> Engine:
    from assay.engine.duckdb import DuckDBEngine

    return DuckDBEngine(**{k: v for k, v in options.items() if k in ("threads", "memory_limit") and v})


def _spark(**options: Any) -> Engine:
    try:
        import pyspark  # noqa: F401
    except ModuleNotFoundError:
        raise ConfigError("the spark engine needs PySpark: pip install 'assay[spark]'") from None
    from assay.engine.spark import SparkEngine

    return SparkEngine(options.get("session"), master=options.get("master"), conf=options.get("conf"))


# name -> a function building the engine from keyword options (an engine ignores the ones it
# does not take: ``threads`` means nothing to Spark, ``master`` nothing to DuckDB)
ENGINES: dict[str, Callable[..., Engine]] = {"duckdb": _duckdb, "spark": _spark}
DEFAULT = "duckdb"


def _postgres(**options: Any) -> Engine:
    from assay.engine.postgres import PostgresEngine  # type: ignore[import-not-found,unused-ignore]

    found: Engine = PostgresEngine(options["url"])
    return found


SOURCE_ENGINES: dict[str, Callable[..., Engine]] = {"postgres": _postgres}
"""Engines a source chooses by where its data is: ``source_engine("postgres", url=...)``."""


def source_engine(kind: str, **options: Any) -> Engine:
    """The engine of a source that lives in a server (``postgres``), built with ``options``."""
    if kind not in SOURCE_ENGINES:
        raise ConfigError(f"unknown source engine {kind!r}: one of {', '.join(SOURCE_ENGINES)}")
    return SOURCE_ENGINES[kind](**options)


def engine_name(name: str | None = None) -> str:
    """The engine a run uses: ``name``, else ``ASSAY_ENGINE``, else ``duckdb``; checked.

    >>> engine_name("Spark")
    'spark'
    """
    chosen = (name or os.environ.get("ASSAY_ENGINE") or DEFAULT).strip().lower()
    if chosen not in ENGINES:
        raise ConfigError(f"unknown engine {chosen!r}: choose one of {', '.join(ENGINES)}")
    return chosen


def make_engine(name: str | None = None, **options: Any) -> Engine:
    """A new engine: ``name`` (else ``ASSAY_ENGINE``, else ``duckdb``) built with ``options``
    (``threads``, ``memory_limit`` for DuckDB; ``master``, ``conf``, ``session`` for Spark).
    An unknown name, or ``spark`` without PySpark installed, is a ConfigError."""
    return ENGINES[engine_name(name)](**options)


def engine_for(engine: Any, data: Any) -> Any:
    """The engine a run on ``data`` uses when none is named: a Spark DataFrame's own session
    (its rows are in it); otherwise ``engine`` as given."""
    if engine is None:
        from assay.engine.spark_session import is_spark_dataframe

        if is_spark_dataframe(data):
            return data.sparkSession
    return engine


def open_engine(engine: Any = None, **options: Any) -> Engine:
    """An open engine for a name, a ``SparkSession`` or None (``ASSAY_ENGINE``, else DuckDB),
    as :func:`engine_factory` chooses it.

    >>> open_engine().dialect
    'duckdb'
    """
    factory = engine_factory(engine, **options)
    return factory() if factory is not None else _duckdb()


def engine_factory(engine: Any = None, **options: Any) -> Callable[[], Engine] | None:
    """What a :class:`~assay.platform.runs.run.Run` calls to open its engine: for a name (or None:
    ``ASSAY_ENGINE``, else DuckDB) or a ``SparkSession`` (used, never stopped). None when the
    run's default engine (DuckDB, default settings) is meant. The name is checked now, so that
    a wrong one fails before any input is read.

    >>> engine_factory() is None, engine_factory("duckdb", threads=2) is None
    (True, False)
    """
    if engine is not None and not isinstance(engine, str):
        if type(engine).__name__ == "SparkSession":
            return lambda: _spark(session=engine)
        raise ConfigError(
            f"engine: give an engine name ({', '.join(ENGINES)}) or a SparkSession, "
            f"not {type(engine).__name__}"
        )
    name = engine_name(engine)
    given = {k: v for k, v in options.items() if v is not None}
    if name == DEFAULT and not given:
        return None
    return lambda: ENGINES[name](**given)
