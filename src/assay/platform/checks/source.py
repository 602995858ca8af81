"""The source of a check document, registered with the run's engine as ``__source``: files (a glob,
relative to the document's folder, confined to the paths the workspace allows), ``s3://`` objects
(an object, a prefix or a glob, confined to the workspace's bucket prefixes), an Iceberg table,
a table of a DuckDB database file, or a PostgreSQL table. The rows a run measures are a view over
it (:func:`assay.platform.checks.measure.register_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlglot import exp

from assay.engine import Engine, EngineError
from assay.errors import ConfigError, PlatformError
from assay.lake import storage
from assay.lake.readers import Registered, file_format, register
from assay.platform.checks.document import Document
from assay.platform.checks.model import Source
from assay.platform.sources import SourcePolicy
from assay.workspace import Workspace

SOURCE = "__source"


@dataclass(frozen=True)
class OpenedSource:
    registered: Registered | None  # None: the source is absent (no file matches)
    description: str
    paths: tuple[Path, ...] = ()
    missing: str | None = None


def open_source(engine: Engine, document: Document, *, base: Path, workspace: Path | None) -> OpenedSource:
    """Register the document's source with ``engine`` as ``__source``. Files are relative to
    the document's folder; a glob that matches nothing is an absent source (upstream_missing)."""
    return open_location(engine, document.dataset.source, base=base, workspace=workspace)


def open_location(
    engine: Engine, source: Source, *, base: Path, workspace: Path | None, name: str = SOURCE
) -> OpenedSource:
    """Register ``source`` with ``engine`` as ``name``, confined as a document's source is
    (``assay reconcile`` opens its two sides this way, under two names)."""
    policy = SourcePolicy.of(workspace or Workspace(None).root)
    if source.path is not None and storage.is_url(source.path):
        found = policy.objects(source.path)
        if not found:
            return OpenedSource(None, source.path, missing=f"no object matches {source.path}")
        copies = storage.stage_objects(found)
        return OpenedSource(_register_files(engine, copies, name), source.path, tuple(copies))
    if source.path is not None:
        matches = policy.files(source.path, base=base)
        if not matches:
            return OpenedSource(None, source.path, missing=f"no file matches {source.path}")
        return OpenedSource(_register_files(engine, matches, name), source.path, tuple(matches))
    if source.iceberg is not None:
        if workspace is None:
            raise ConfigError("an iceberg source needs a workspace (--workspace)")
        with Workspace(workspace).warehouse() as warehouse:
            if not warehouse.exists(source.iceberg):
                known = ", ".join(t.name for t in warehouse.tables()) or "none"
                raise ConfigError(f"iceberg table '{source.iceberg}' does not exist (tables: {known})")
            files = warehouse.parquet_files(source.iceberg, {})
            if files:
                engine.register_file(name, [str(p) for p in files], "parquet")
                return OpenedSource(
                    Registered(name, tuple(engine.columns(name))), f"iceberg:{source.iceberg}"
                )
            if files == []:
                schema = warehouse.schema(source.iceberg)
                engine.register_arrow(name, schema.empty_table())
            else:
                engine.register_arrow(name, warehouse.read(source.iceberg, {}))
        return OpenedSource(Registered(name, tuple(engine.columns(name))), f"iceberg:{source.iceberg}")
    if source.duckdb is not None:
        attach = getattr(engine, "attach", None)
        if attach is None:
            raise ConfigError("a duckdb source runs on the DuckDB engine")
        path = policy.path(source.duckdb.path, base=base)
        if not path.is_file():
            return OpenedSource(None, source.describe(), missing=f"no DuckDB database at {path}")
        policy.paths([path], source.duckdb.path)
        _refuse_other_than_duckdb(path)
        try:
            attach(path, f"{name}db")
        except EngineError as error:
            raise PlatformError(f"duckdb source {path}: {error.message}") from None
        table = exp.to_table(source.duckdb.table)
        qualified = exp.Table(
            this=table.this,
            db=table.args.get("db") or exp.to_identifier("main"),
            catalog=exp.to_identifier(f"{name}db"),
        )
        try:
            engine.register_query(name, exp.select("*").from_(qualified))
            columns = engine.columns(name)
        except EngineError as error:
            raise ConfigError(f"duckdb table {source.duckdb.table} in {path}: {error.message}") from None
        return OpenedSource(Registered(name, tuple(columns)), source.describe(), (path,))
    assert source.postgres is not None
    policy.server(source.postgres.url, f"postgres source {source.postgres.table}")
    register_table = getattr(engine, "register_table", None)
    if register_table is None:
        raise ConfigError("a postgres source runs on the PostgreSQL engine")
    register_table(name, source.postgres.table)
    return OpenedSource(Registered(name, tuple(engine.columns(name))), source.describe())


# The first bytes of a DuckDB database file: a header checksum, then the magic (storage format
# docs). Checked before ATTACH because DuckDB answers a SQLite file by loading its sqlite extension
# and any other file with an I/O error that does not say which file the author must change.
_DUCKDB_MAGIC = (8, b"DUCK")
_OTHER_FORMATS = {b"SQLite format 3\x00": "a SQLite database", b"PAR1": "a Parquet file"}


def _refuse_other_than_duckdb(path: Path) -> None:
    try:
        with path.open("rb") as file:
            head = file.read(16)
    except OSError as error:
        raise PlatformError(f"duckdb source {path}: cannot be read: {error.strerror}") from None
    offset, magic = _DUCKDB_MAGIC
    if head[offset : offset + len(magic)] == magic:
        return
    kind = next((name for start, name in _OTHER_FORMATS.items() if head.startswith(start)), None)
    raise ConfigError(
        f"duckdb source {path} is not a DuckDB database file"
        + (f" (it is {kind})" if kind else "")
        + ": point duckdb.path at a database DuckDB wrote, or use path: for data files"
    )


def _register_files(engine: Engine, paths: list[Path], name: str) -> Registered:
    if len(paths) == 1:
        found = register(engine, name, paths[0])
        return Registered(name, found.columns, paths[0])
    formats = {file_format(p) for p in paths}
    if len(formats) > 1:
        raise ConfigError(f"the source's files mix formats ({', '.join(sorted(formats))}): use one")
    fmt = formats.pop()
    if fmt == "csv":
        parts = []
        for i, path in enumerate(paths):
            part = register(engine, f"{name}{i}", path)
            parts.append(
                exp.select(*(exp.column(c.name, quoted=True) for c in part.columns)).from_(part.name)
            )
        union: exp.Query = parts[0]
        for part_query in parts[1:]:
            union = exp.union(union, part_query, distinct=False)
        engine.register_query(name, exp.select("*").from_(exp.Subquery(this=union, alias="__files")))
    else:
        engine.register_file(name, [str(p) for p in paths], fmt)
    return Registered(name, tuple(engine.columns(name)))


__all__ = ["SOURCE", "OpenedSource", "open_location", "open_source"]
