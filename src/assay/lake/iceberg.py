"""The workspace's Iceberg tables: one catalog, atomic commits, partition-pruned reads.

DESIGN.md: tables are Apache Iceberg through PyIceberg, with a SQL catalog in the workspace
(``<workspace>/warehouse/catalog.db``, data under ``<workspace>/warehouse/``) unless assay.yaml's
``catalog:`` names one that several machines share (:mod:`assay.lake.catalogs`: PyIceberg's SQL
catalog on PostgreSQL, or a REST catalog). Three choices here:

* **One snapshot per commit.** PyIceberg's ``overwrite`` stages a DELETE snapshot and then an
  APPEND snapshot; both land in one catalog update, but the DELETE one stays in the history, where
  a time-travel reader sees the table with the months gone. :meth:`Warehouse.commit` builds a single
  OVERWRITE snapshot instead: the replaced files leave and the new files arrive together.
* **Every attempt is planned again.** A commit fails with ``CommitFailedException`` when another
  writer moved the table since it was loaded. The new rows' data files are written once; each
  attempt reloads the table, plans the replaced files against it and commits. PyIceberg's own retry
  is off on tables created here (``commit.retry.num-retries = 0``) so that ``retries`` means what
  it says.
* **The input's Arrow schema is kept** in a table property and given back by reads, because Iceberg
  has fewer types than Arrow (:mod:`assay.lake.fields`).

>>> import datetime, tempfile
>>> rows = pa.table({"contributor_id": ["B1"], "statement_date": [datetime.date(2024, 1, 31)]})
>>> with tempfile.TemporaryDirectory() as folder, Warehouse.open(Path(folder)) as warehouse:
...     warehouse.create("silver.accounts", rows.schema, partition_by=["contributor_id", "statement_date"])
...     warehouse.commit("silver.accounts", rows, properties={"run_id": "r1"}).rows_added
...     warehouse.read("silver.accounts", {"contributor_id": "B1"}).num_rows
1
1
"""

from __future__ import annotations

import logging
import random
import re
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import (
    CommitFailedException,
    ForbiddenError,
    NamespaceAlreadyExistsError,
    NoSuchTableError,
    OAuthError,
    RESTError,
    TableAlreadyExistsError,
    UnauthorizedError,
    ValidationException,
)
from pyiceberg.expressions import AlwaysTrue, BooleanExpression
from pyiceberg.io.pyarrow import (
    PyArrowFileIO,
    UnsupportedPyArrowTypeException,
)
from pyiceberg.manifest import FileFormat
from pyiceberg.table import (
    Table,
)
from pyiceberg.table.snapshots import ancestors_of
from requests import RequestException
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from assay.errors import ConfigError, PlatformError
from assay.lake import catalogs, fields
from assay.lake.catalogs import RestSettings, SqlSettings
from assay.lake.commits import (
    CommitInfo,
    SnapshotInfo,
    adopt,
    delete,
    find,
    platform_errors,
    stage,
    write,
)

__all__ = [
    "CATALOG",
    "CommitInfo",
    "PartitionInfo",
    "PreconditionFailed",
    "SnapshotInfo",
    "TableInfo",
    "Warehouse",
]

logger = logging.getLogger(__name__)

CATALOG = "assay"
NAME_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
TABLE_PROPERTIES = {"commit.retry.num-retries": "0"}
# The snapshot-summary keys Iceberg writes itself (spec, "Snapshot Summary"): a caller's may not shadow one.
RESERVED_PROPERTY = re.compile(
    r"operation|partition(s\..*|-summaries-included)|(added|deleted|removed|total|changed)-.*"
)
FIRST_WAIT_S = 0.05
LONGEST_WAIT_S = 2.0
# Failures after which the table is known to be untouched: the next attempt plans again.
CONFLICTS = (CommitFailedException, ValidationException)
EXPORTERS: dict[str, type[pq.ParquetWriter] | type[pacsv.CSVWriter]] = {
    ".parquet": pq.ParquetWriter,
    ".csv": pacsv.CSVWriter,
}


@dataclass(frozen=True)
class TableInfo:
    """What :meth:`Warehouse.tables` says about one table."""

    name: str
    rows: int
    snapshots: int
    partitions: int
    schema: pa.Schema
    location: str


@dataclass(frozen=True)
class PartitionInfo:
    """One partition of a table's current snapshot: its values and how many rows it holds."""

    values: dict[str, Any]
    rows: int


class PreconditionFailed(Exception):
    """A commit's precondition found the table in a state where the commit must not happen
    (the gate: another run already committed the same file). ``found`` says what it found."""

    def __init__(self, found: SnapshotInfo) -> None:
        super().__init__(f"snapshot {found.snapshot_id} already holds this commit")
        self.found = found


class Warehouse:
    """The workspace's Iceberg catalog.

    Open it with :meth:`open` and close it (or use it as a context manager). Any number of
    processes may open the same workspace and commit to the same table at once.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder, Warehouse.open(Path(folder)) as warehouse:
    ...     warehouse.exists("silver.accounts")
    False
    """

    def __init__(self, catalog: Catalog) -> None:
        """Wrap an open catalog; use :meth:`open` instead."""
        self._catalog = catalog

    @classmethod
    def open(
        cls, workspace: Path, chosen: SqlSettings | RestSettings | None = None, config: Path | None = None
    ) -> Warehouse:
        """The catalog ``chosen`` (``catalog:`` of the workspace's assay.yaml, read by
        :meth:`assay.workspace.Workspace.warehouse`, the one way the platform opens it), or
        without one the SQLite catalog of ``workspace``, created with ``<workspace>/warehouse/``
        on first use.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     Warehouse.open(Path(folder)).close()
        ...     (Path(folder) / "warehouse" / "catalog.db").exists()
        True
        """
        config = config or workspace / "assay.yaml"
        if chosen is None:
            root = workspace / "warehouse"
            location = catalogs.local_location(root.resolve(), workspace)
            try:
                root.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise PlatformError(f"{root}: cannot create the warehouse: {error.strerror}") from None
            what = str(root / "catalog.db")
        else:
            what = f"the Iceberg catalog at {chosen.uri}"
        attempt = 0
        while True:
            try:
                with _catalog_errors(what):
                    if chosen is None:
                        uri = f"sqlite:///{(root / 'catalog.db').resolve()}"
                        return cls(SqlCatalog(CATALOG, uri=uri, warehouse=location))
                    return cls(catalogs.open_catalog(chosen, workspace, config))
            except _Busy as busy:
                # Two processes making the catalog's tables at once: the loser finds them made next time.
                if attempt == 2:
                    raise PlatformError(f"{what}: cannot open the Iceberg catalog: {busy}") from None
                _pause(attempt)
                attempt += 1

    def close(self) -> None:
        """Release the catalog's database connections."""
        self._catalog.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def tables(self) -> list[TableInfo]:
        """Every table in the workspace, sorted by name.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder, Warehouse.open(Path(folder)) as warehouse:
        ...     warehouse.create("silver.accounts", pa.schema([("id", pa.int64())]), partition_by=[])
        ...     [(t.name, t.rows, t.snapshots) for t in warehouse.tables()]
        [('silver.accounts', 0, 0)]
        """
        with platform_errors("the Iceberg catalog"):
            names = [
                ".".join(identifier)
                for namespace in self._catalog.list_namespaces()
                for identifier in self._catalog.list_tables(namespace)
            ]
        infos = []
        for name in sorted(names):
            table = self._load(name)
            snapshot = table.current_snapshot()
            summary = snapshot.summary if snapshot is not None else None
            total = summary.additional_properties.get("total-records", "0") if summary is not None else "0"
            infos.append(
                TableInfo(
                    name=name,
                    rows=int(total),
                    snapshots=len(table.snapshots()),
                    partitions=len(self._partitions(table, name, None)),
                    schema=fields.stored_schema(table),
                    location=table.location(),
                )
            )
        return infos

    def exists(self, name: str) -> bool:
        """Whether table ``name`` (``namespace.table``) exists."""
        identifier = _identifier(name)
        with platform_errors("the Iceberg catalog"):
            return self._catalog.table_exists(identifier)

    def location(self, name: str) -> str:
        """Where table ``name`` keeps its data and metadata (a ``file://`` or ``s3://`` URL): what
        OpenLineage names the table by."""
        return str(self._load(name).location())

    def schema(self, name: str) -> pa.Schema:
        """The Arrow schema of table ``name``: the columns and types it was created with, in order."""
        return fields.stored_schema(self._load(name))

    def create(self, name: str, schema: pa.Schema, partition_by: Sequence[str]) -> None:
        """Create table ``name`` with ``schema``, partitioned by the identity of each ``partition_by`` column.

        Creates the namespace if needed. Creating a table that exists with the same schema and
        partitioning does nothing, so two processes may create the same table at once.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder, Warehouse.open(Path(folder)) as warehouse:
        ...     warehouse.create("silver.accounts", pa.schema([("id", pa.int64())]), partition_by=[])
        ...     warehouse.create("silver.accounts", pa.schema([("id", pa.string())]), partition_by=[])
        Traceback (most recent call last):
        ...
        assay.errors.ConfigError: table 'silver.accounts' exists with another schema: column 'id' is int64 ...
        """
        namespace, table_name = _identifier(name)
        kept = fields.table_schema(schema)
        for column in partition_by:
            if kept.get_field_index(column) < 0:
                raise ConfigError(f"cannot partition table '{name}' by '{column}': it has no such column")
        if len(set(partition_by)) != len(partition_by):
            raise ConfigError(f"table '{name}': a partition column is named twice in {list(partition_by)}")
        if self.exists(name):
            fields.require_same(name, self._load(name), kept, partition_by)
            return
        properties = {**TABLE_PROPERTIES, fields.ARROW_SCHEMA: fields.encode(kept)}
        with platform_errors("the Iceberg catalog"):
            # IntegrityError: another process made the namespace between the check and the insert.
            with suppress(NamespaceAlreadyExistsError, IntegrityError):
                self._catalog.create_namespace(namespace)
            try:
                with (
                    self._catalog.create_table_transaction(
                        (namespace, table_name), schema=fields.storage_schema(kept), properties=properties
                    ) as transaction,
                    transaction.update_spec() as spec,
                ):
                    for column in partition_by:
                        spec.add_identity(column)
            except (TableAlreadyExistsError, CommitFailedException) as error:
                # Another process created it first: PyIceberg says so either way, by the moment it noticed.
                if not self._catalog.table_exists((namespace, table_name)):
                    raise PlatformError(f"cannot create table '{name}': {error}") from None
                fields.require_same(name, self._load(name), kept, partition_by)
            except UnsupportedPyArrowTypeException as error:
                raise ConfigError(f"cannot create table '{name}': {error}") from None

    def partitions(self, name: str, where: Mapping[str, Any] | None = None) -> list[PartitionInfo]:
        """The partitions of the current snapshot and their row counts, read from metadata alone.

        ``where`` keeps the partitions whose values equal the given ones (a list means any of them).
        """
        return self._partitions(self._load(name), name, where)

    def partition_columns(self, name: str) -> list[str]:
        """The columns ``name`` is partitioned by, in the spec's order."""
        return fields.partition_columns(self._load(name))

    def read(
        self,
        name: str,
        where: Mapping[str, Any],
        columns: Sequence[str] | None = None,
        *,
        snapshot: int | None = None,
    ) -> pa.Table:
        """The rows of ``name`` whose columns equal the values in ``where`` (a list means any of them),
        in the current snapshot or in ``snapshot`` (time travel: what that commit left).

        Equality on partition columns prunes the scan to those partitions' files (:meth:`scan_files`
        counts them), so reading one contributor-month costs the same however long the history grows.
        """
        table = self._load(name)
        stored = fields.stored_schema(table)
        selected = list(columns) if columns is not None else stored.names
        for column in selected:
            if stored.get_field_index(column) < 0:
                raise ConfigError(f"table '{name}' has no column '{column}'")
        scan = table.scan(
            row_filter=_filter(table, name, where), selected_fields=tuple(selected), snapshot_id=snapshot
        )
        with platform_errors(f"table '{name}'"):
            data = scan.to_arrow()
        return fields.restore(data.select(selected), stored)

    def scan_files(self, name: str, where: Mapping[str, Any]) -> int:
        """How many data files :meth:`read` with the same ``where`` opens."""
        table = self._load(name)
        with platform_errors(f"table '{name}'"):
            return sum(1 for _ in table.scan(row_filter=_filter(table, name, where)).plan_files())

    def parquet_files(self, name: str, where: Mapping[str, Any]) -> list[Path] | None:
        """The local Parquet files that hold exactly the rows :meth:`read` returns for ``where``,
        for an engine to scan in place; None when they cannot stand for that read.

        Scanning them directly spares PyIceberg's copy of the rows into Arrow (a third of a
        second per million rows). They stand for the read only when every planned file matches
        ``where`` whole (equality on identity partitions: no residual filter), has no delete
        files, and was written under the table's only schema and partition spec (so its column
        names and types are the table's); and when every file is on the local disk. A caller
        still compares the columns it finds with the ones it expects.
        """
        table = self._load(name)
        if len(table.schemas()) != 1 or not isinstance(table.io, PyArrowFileIO):
            return None
        with platform_errors(f"table '{name}'"):
            tasks = list(table.scan(row_filter=_filter(table, name, where)).plan_files())
        paths = []
        for task in tasks:
            whole = task.residual == AlwaysTrue() and task.file.spec_id == table.spec().spec_id
            if not whole or task.delete_files or task.file.file_format != FileFormat.PARQUET:
                return None
            scheme, _, location = PyArrowFileIO.parse_location(task.file.file_path)
            path = Path(location)
            if scheme != "file" or not path.is_file():
                return None
            paths.append(path)
        return paths

    def data_folder(self, name: str, label: str) -> Path | None:
        """A new folder in table ``name``'s data location for an engine to write Parquet files
        into (:meth:`commit` with ``files``), named after ``label`` (a run id); None when the
        table's data is not on the local disk."""
        table = self._load(name)
        scheme, _, location = PyArrowFileIO.parse_location(table.location())
        if scheme != "file" or not isinstance(table.io, PyArrowFileIO):
            return None
        return Path(location) / "data" / f"assay-{label}-{uuid.uuid4().hex[:8]}"

    def commit(
        self,
        name: str,
        rows: pa.Table | None = None,
        *,
        files: Sequence[Path] = (),
        replace: Mapping[str, Any] | None = None,
        properties: Mapping[str, str] | None = None,
        retries: int = 8,
        unless: Mapping[str, str] | None = None,
    ) -> CommitInfo:
        """Delete the rows matching ``replace`` and append ``rows``, in one snapshot.

        ``unless`` is the commit's precondition, checked on every attempt against the table as
        it then is: when a snapshot in its history already has all of these properties (the
        gate: the same file from the same contributor), nothing is committed and
        :class:`PreconditionFailed` says which snapshot it was. Checked inside the optimistic
        retry, two runs committing the same file at once commit it once.

        ``files`` instead of ``rows``: Parquet files already written (by an engine, into
        :meth:`data_folder`), each holding the rows of one partition in the table's storage
        types; they are adopted as they are (their columns found by name through the table's
        name mapping, which the commit sets when the table has none) and deleted when nothing
        commits them.

        ``replace`` is equality on columns, a list meaning any of its values; with empty ``rows``
        the commit only deletes. ``rows`` must have the table's columns, in any order; a type may
        differ only where no value changes (``int32`` into ``int64``). ``properties`` go into the
        snapshot summary, where :meth:`find_snapshot` finds them. When another writer commits
        first, the table is reloaded and the commit planned again, up to ``retries`` times.

        >>> import datetime, tempfile
        >>> jan, feb = datetime.date(2024, 1, 31), datetime.date(2024, 2, 29)
        >>> first = pa.table({"contributor_id": ["B1", "B1"], "statement_date": [jan, feb]})
        >>> resend = pa.table({"contributor_id": ["B1"] * 3, "statement_date": [jan, jan, feb]})
        >>> months = {"contributor_id": "B1", "statement_date": [jan, feb]}
        >>> with tempfile.TemporaryDirectory() as folder, Warehouse.open(Path(folder)) as warehouse:
        ...     warehouse.create("silver.accounts", first.schema, ["contributor_id", "statement_date"])
        ...     _ = warehouse.commit("silver.accounts", first)
        ...     warehouse.commit("silver.accounts", resend, replace=months)
        CommitInfo(snapshot_id=..., rows_added=3, rows_deleted=2)
        """
        if retries < 0:
            raise ConfigError(f"retries must be 0 or more, not {retries}")
        table = self._load(name)
        stored = fields.stored_schema(table)
        summary = _summary_properties(properties or {})
        predicate = _filter(table, name, replace) if replace is not None else None
        if rows is not None and files:
            raise ValueError("commit takes rows or files, not both")
        if rows is not None:
            written = write(table, name, fields.to_storage(fields.conform(rows, stored, name), stored, name))
        else:
            written = adopt(table, name, files)
        staged: CommitInfo | None = None  # the attempt whose outcome is unknown, if any
        failure: Exception | None = None
        for attempt in range(retries + 1):
            if attempt:
                _pause(attempt - 1)
                table = self._load(name)
                if staged is not None and table.snapshot_by_id(staged.snapshot_id) is not None:
                    return staged
            if unless:
                found = find(table, unless)
                if found is not None:
                    delete(table, written)
                    raise PreconditionFailed(found)
            transaction, staged, rewritten = stage(table, name, written, predicate, replace, summary)
            try:
                with platform_errors(f"table '{name}'"):
                    transaction.commit_transaction()
                return staged
            except CONFLICTS as error:
                failure, staged = error, None
                delete(table, rewritten)
            except PlatformError as error:
                # The catalog was busy or failed mid-commit: the next attempt looks for the snapshot first.
                failure = error
            logger.info("table '%s': commit attempt %d did not land: %s", name, attempt + 1, failure)
        if staged is not None and self._load(name).snapshot_by_id(staged.snapshot_id) is not None:
            return staged
        delete(table, written)  # no snapshot refers to them, and none ever will
        raise PlatformError(
            f"table '{name}': {retries + 1} attempts to commit failed, the last with: {failure}; "
            "nothing was committed"
        )

    def snapshots(self, name: str) -> list[SnapshotInfo]:
        """Every snapshot of ``name``, oldest first."""
        return [SnapshotInfo.of(snapshot) for snapshot in self._load(name).snapshots()]

    def find_snapshot(self, name: str, **properties: str) -> SnapshotInfo | None:
        """The latest snapshot in the current history whose summary has all of ``properties``.

        This is how a gate learns that it already committed a file: it writes the file's checksum
        into its commit and looks for it before committing again.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder, Warehouse.open(Path(folder)) as warehouse:
        ...     warehouse.create("silver.accounts", pa.schema([("id", pa.int64())]), partition_by=[])
        ...     done = warehouse.commit("silver.accounts", pa.table({"id": [1]}), properties={"sha": "ab"})
        ...     warehouse.find_snapshot("silver.accounts", sha="ab").snapshot_id == done.snapshot_id
        True
        """
        return find(self._load(name), properties)

    def writers(self, name: str, **properties: str) -> dict[str, str]:
        """Which run wrote each value of the ``assay.months`` property last: for every month the
        snapshots having ``properties`` replaced, the ``assay.run-id`` of the newest of them.

        A gate that commits a month writes it into ``assay.months``; when two runs commit the
        same contributor-month, the table holds the newer run's rows, and this says which.
        """
        table = self._load(name)
        found: dict[str, str] = {}
        for snapshot in ancestors_of(table.current_snapshot(), table.metadata):
            info = SnapshotInfo.of(snapshot)
            if not all(info.properties.get(key) == value for key, value in properties.items()):
                continue
            for month in filter(None, info.properties.get("assay.months", "").split(",")):
                found.setdefault(month, info.properties.get("assay.run-id", ""))
        return found

    def export(self, name: str, path: Path) -> int:
        """Write the whole current table to ``path`` (``.parquet`` or ``.csv``); return its row count.

        The table is streamed batch by batch, and the file appears only when it is complete.
        """
        exporter = EXPORTERS.get(path.suffix.lower())
        if exporter is None:
            raise ConfigError(f"{path}: export a table to a .parquet or .csv file")
        table = self._load(name)
        stored = fields.stored_schema(table)
        partial = path.with_name(path.name + ".partial")
        rows = 0
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with exporter(partial, stored) as writer:
                for batch in table.scan().to_arrow_batch_reader():
                    part = fields.restore(pa.Table.from_batches([batch]), stored)
                    writer.write_table(part)
                    rows += part.num_rows
            partial.replace(path)
        except OSError as error:
            partial.unlink(missing_ok=True)
            raise ConfigError(f"{path}: cannot write: {error.strerror}") from None
        return rows

    def _load(self, name: str) -> Table:
        identifier = _identifier(name)
        with platform_errors("the Iceberg catalog"):
            try:
                return self._catalog.load_table(identifier)
            except NoSuchTableError:
                raise ConfigError(
                    f"no table '{name}' in the workspace; `assay table list` shows them"
                ) from None

    def _partitions(self, table: Table, name: str, where: Mapping[str, Any] | None) -> list[PartitionInfo]:
        columns = fields.partition_columns(table)
        for column in where or {}:
            if column not in columns:
                raise ConfigError(
                    f"'{column}' is not a partition column of table '{name}' ({', '.join(columns)})"
                )
        if table.current_snapshot() is None:
            return []
        with platform_errors(f"table '{name}'"):
            stats = table.inspect.partitions(row_filter=_filter(table, name, where or {})).to_pylist()
        infos = [PartitionInfo(dict(row.get("partition") or {}), int(row["record_count"])) for row in stats]
        return sorted(infos, key=lambda info: [(v is None, v) for v in info.values.values()])


class _Busy(Exception):
    """Opening the catalog met another process creating its tables: worth another try."""


@contextmanager
def _catalog_errors(what: str) -> Iterator[None]:
    """Opening a catalog: its database busy (:class:`_Busy`), its server refusing the credentials
    (a ConfigError: the user's to fix), or unreachable (a PlatformError)."""
    try:
        yield
    except SQLAlchemyError as error:
        # SQLite's lock, or PostgreSQL's duplicate table when two processes create the catalog's
        # tables at once; a server that cannot be reached fails the same way three times
        raise _Busy(str(getattr(error, "orig", error)).strip()) from None
    except (UnauthorizedError, ForbiddenError, OAuthError) as error:
        raise ConfigError(
            f"{what}: the catalog refused the credentials ({error}); check the variables that "
            "catalog: token_env / credential_env name in assay.yaml"
        ) from None
    except (RESTError, OSError, RequestException) as error:
        raise PlatformError(f"{what}: cannot open the Iceberg catalog: {error}") from None


def _identifier(name: str) -> tuple[str, str]:
    parts = name.split(".")
    if len(parts) != 2 or not all(NAME_PART.fullmatch(part) for part in parts):
        raise ConfigError(
            f"'{name}' is not a table name: write namespace.table, each part a letter or '_' "
            "followed by at most 63 letters, digits or '_'"
        )
    return parts[0], parts[1]


def _filter(table: Table, name: str, where: Mapping[str, Any]) -> BooleanExpression:
    return fields.predicate(table.schema(), where, name)


def _summary_properties(properties: Mapping[str, str]) -> dict[str, str]:
    for key, value in properties.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ConfigError(f"snapshot property {key!r}: keys and values must be strings, not {value!r}")
        if RESERVED_PROPERTY.fullmatch(key):
            raise ConfigError(f"snapshot property '{key}' is one Iceberg writes itself; choose another name")
    return dict(properties)


def _pause(attempt: int) -> None:
    """Sleep before the attempt after ``attempt``: exponential, jittered so that rivals drift apart."""
    ceiling = min(LONGEST_WAIT_S, FIRST_WAIT_S * 2**attempt)
    time.sleep(random.uniform(ceiling / 2, ceiling))
