"""The two sides of a reconciliation, named as other commands name inputs, each opened on the
engine where its data is: a file or glob, ``iceberg:NAME`` or ``duckdb:PATH#TABLE`` on DuckDB,
``postgres:URL#schema.table`` on that server, ``spark:db.table`` on the Spark session. Every
side is confined as a check document's source is (:mod:`assay.platform.sources`).

>>> location("postgres:postgresql://db/wh#public.orders").postgres.table
'public.orders'
>>> location("spark:shop.orders")
'shop.orders'
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from assay.engine import Column, Engine
from assay.errors import ConfigError
from assay.platform.checks.model import DuckDBSource, PostgresSource, Source
from assay.platform.checks.source import open_location
from assay.platform.sources import SourcePolicy
from assay.workspace import Workspace

SPARK = "spark:"

EngineFactory = Callable[[str], Engine]
"""Builds the engine of a kind: ``duckdb``, ``spark`` or ``postgres:URL``."""


def location(text: str) -> Source | str:
    """``text`` as a check document's :class:`Source`, or a Spark table's name (a str)."""
    kind, colon, rest = text.partition(":")
    if colon and kind == "spark":
        if not rest:
            raise ConfigError(f"{text}: name the table, spark:db.table")
        return rest
    if colon and kind in ("postgres", "duckdb"):
        where, hash_, table = rest.rpartition("#")
        if not hash_ or not where or not table:
            example = (
                "postgres:postgresql://host/db#schema.table" if kind == "postgres" else "duckdb:PATH#TABLE"
            )
            raise ConfigError(f"{text}: a {kind} side is written {example}")
        if kind == "postgres":
            return Source(postgres=PostgresSource(url=where, table=table))
        return Source(duckdb=DuckDBSource(path=where, table=table))
    if colon and kind == "iceberg":
        if not rest:
            raise ConfigError(f"{text}: name the table, iceberg:NAME")
        return Source(iceberg=rest)
    return Source(path=text)


def engine_kind(where: Source | str) -> str:
    """The engine a side runs on; two sides of one kind are compared in one join."""
    if isinstance(where, str):
        return "spark"
    if where.postgres is not None:
        return f"postgres:{where.postgres.url}"
    return "duckdb"


@dataclass(frozen=True)
class Side:
    engine: Engine
    name: str  # the relation's name in its engine
    description: str
    columns: tuple[Column, ...]


@dataclass
class Engines:
    """The engines of one reconciliation, one per kind, closed together."""

    factory: EngineFactory
    opened: dict[str, Engine] = field(default_factory=dict)
    borrowed: set[str] = field(default_factory=set)  # kinds whose engine the caller closes

    def lend(self, kind: str, engine: Engine) -> None:
        """Use ``engine`` (a run's own) for ``kind``, without closing it."""
        self.opened[kind] = engine
        self.borrowed.add(kind)

    def get(self, kind: str) -> Engine:
        if kind not in self.opened:
            self.opened[kind] = self.factory(kind)
        return self.opened[kind]

    def close(self) -> None:
        for kind, engine in self.opened.items():
            if kind not in self.borrowed:
                engine.close()


def default_factory(kind: str) -> Engine:
    """DuckDB, the Spark session assay builds, or the PostgreSQL server a side names."""
    from assay.engine.registry import make_engine, source_engine

    if kind.startswith("postgres:"):
        return source_engine("postgres", url=kind.removeprefix("postgres:"))
    return make_engine(kind)


@contextmanager
def engines(factory: EngineFactory | None = None) -> Iterator[Engines]:
    opened = Engines(factory or default_factory)
    try:
        yield opened
    finally:
        opened.close()


def open_side(text: str | Source, role: str, opened: Engines, *, base: Path, workspace: Path | None) -> Side:
    """Register the side ``text`` (``role``: source or target; or a check document's source as
    it is) on its engine as ``__<role>``."""
    where = location(text) if isinstance(text, str) else text
    text = text if isinstance(text, str) else text.describe()
    if isinstance(where, Source) and where.postgres is not None:  # refused before any connection
        SourcePolicy.of(workspace or Workspace(None).root).server(where.postgres.url, f"{role} {text}")
    engine = opened.get(engine_kind(where))
    name = f"__{role}"
    if isinstance(where, str):
        register_table = getattr(engine, "register_table", None)
        if register_table is None:
            raise ConfigError(f"{text}: a spark: side needs the Spark engine")
        register_table(name, where)
        return Side(engine, name, text, tuple(engine.columns(name)))
    found = open_location(engine, where, base=base, workspace=workspace, name=name)
    if found.registered is None:
        raise ConfigError(f"{role} {text}: {found.missing}")
    return Side(engine, name, found.description, tuple(found.registered.columns))
