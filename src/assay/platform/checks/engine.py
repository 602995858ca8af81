"""The engine a check document runs on: where its source's data is (a PostgreSQL server's own
engine), else the one chosen by name; every engine comes from :mod:`assay.engine.registry`."""

from __future__ import annotations

from typing import Any

from assay.engine import Engine
from assay.errors import ConfigError
from assay.platform.checks.document import Document


def default_engine(document: Document, engine: Any = None, **options: Any) -> Engine:
    """The engine that runs where the data is: PostgreSQL for a postgres source; else the
    engine chosen (a name, ``duckdb`` or ``spark``, else ``ASSAY_ENGINE``, else DuckDB; or a
    SparkSession), with ``options`` (``master`` for Spark)."""
    source = document.dataset.source
    from assay.engine.registry import engine_name, make_engine, open_engine, source_engine

    if source.postgres is not None:
        return source_engine("postgres", url=source.postgres.url)

    if engine is None or isinstance(engine, str):
        name = engine_name(engine)
        if source.duckdb is not None and name != "duckdb":
            raise ConfigError(f"a duckdb source runs on the DuckDB engine, not on {name}")
        return make_engine(
            name, **({k: v for k, v in options.items() if v is not None} if name == "spark" else {})
        )
    return open_engine(engine)
