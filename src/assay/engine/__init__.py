"""Where SQL runs: an :class:`Engine` per backend, queries in as sqlglot trees, Arrow out."""

from assay.engine.base import Column, DataKind, Engine, EngineError, Reject
from assay.engine.duckdb import DuckDBEngine

__all__ = ["Column", "DataKind", "DuckDBEngine", "Engine", "EngineError", "Reject"]
