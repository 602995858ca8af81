"""Where SQL runs: an :class:`Engine` per backend, queries in as sqlglot trees, Arrow out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.engine.base import Column, DataKind, Engine, EngineError, Limits, Reject
from assay.engine.duckdb import DuckDBEngine

if TYPE_CHECKING:
    from assay.engine.postgres import PostgresEngine

__all__ = [
    "Column",
    "DataKind",
    "DuckDBEngine",
    "Engine",
    "EngineError",
    "Limits",
    "PostgresEngine",
    "Reject",
]


def __getattr__(name: str) -> object:
    # psycopg (an optional extra) is imported only by a run that reads a postgres source
    if name == "PostgresEngine":
        try:
            from assay.engine.postgres import PostgresEngine
        except ModuleNotFoundError as missing:
            if missing.name != "psycopg":
                raise
            from assay.errors import ConfigError

            raise ConfigError(
                "a postgres source needs the PostgreSQL driver: pip install 'assay[postgres]'"
            ) from None
        return PostgresEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
