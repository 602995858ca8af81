"""One commit of a table, staged: the rows written as data files (or an engine's files adopted),
the files it replaces planned against the table as it is, and one snapshot that swaps them
(:func:`stage`); and a catalog's or disk's failure as a :class:`PlatformError`
(:func:`platform_errors`). :class:`assay.lake.iceberg.Warehouse` commits what is staged here and
plans again when another writer moved the table first.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.exceptions import RESTError
from pyiceberg.expressions import AlwaysFalse, AlwaysTrue, BooleanExpression
from pyiceberg.expressions.visitors import bind
from pyiceberg.io.pyarrow import (
    ArrowScan,
    _dataframe_to_data_files,
    _determine_partitions,
    bin_pack_arrow_table,
    expression_to_pyarrow,
    parquet_file_to_data_file,
    pyarrow_to_schema,
    write_file,
)
from pyiceberg.manifest import DataFile
from pyiceberg.partitioning import PartitionKey
from pyiceberg.table import (
    DOWNCAST_NS_TIMESTAMP_TO_US_ON_WRITE,
    Table,
    TableProperties,
    Transaction,
    WriteTask,
)
from pyiceberg.table.snapshots import Snapshot, ancestors_of
from pyiceberg.transforms import IdentityTransform
from pyiceberg.utils.config import Config
from pyiceberg.utils.properties import property_as_int
from requests import RequestException
from sqlalchemy.exc import SQLAlchemyError

from assay.errors import PlatformError
from assay.lake import fields


@dataclass(frozen=True)
class CommitInfo:
    """The snapshot one :meth:`Warehouse.commit` made and the rows it added and removed."""

    snapshot_id: int
    rows_added: int
    rows_deleted: int


@dataclass(frozen=True)
class SnapshotInfo:
    """One snapshot of a table, with the properties its commit wrote into the summary."""

    snapshot_id: int
    committed_at: datetime
    operation: str
    properties: dict[str, str]

    @classmethod
    def of(cls, snapshot: Snapshot) -> SnapshotInfo:
        summary = snapshot.summary
        return cls(
            snapshot_id=snapshot.snapshot_id,
            committed_at=datetime.fromtimestamp(snapshot.timestamp_ms / 1000, tz=UTC),
            operation=summary.operation.value if summary is not None else "unknown",
            properties=dict(summary.additional_properties) if summary is not None else {},
        )


def find(table: Table, properties: Mapping[str, str]) -> SnapshotInfo | None:
    for snapshot in ancestors_of(table.current_snapshot(), table.metadata):
        info = SnapshotInfo.of(snapshot)
        if all(info.properties.get(key) == value for key, value in properties.items()):
            return info
    return None


def stage(
    table: Table,
    name: str,
    files: list[DataFile],
    predicate: BooleanExpression | None,
    replace: Mapping[str, Any] | None,
    properties: dict[str, str],
) -> tuple[Transaction, CommitInfo, list[DataFile]]:
    """A transaction holding one snapshot, not yet committed: the replaced files out, ``files`` in.

    Also returns the files written for rows kept from partly replaced files.
    """
    transaction = table.transaction()
    if files and table.metadata.name_mapping() is None:
        # files written by an engine carry no Iceberg field ids: readers find their columns by
        # name, through the table's default name mapping (as PyIceberg's add_files sets it)
        mapping = table.schema().name_mapping.model_dump_json()
        transaction.set_properties({TableProperties.DEFAULT_NAME_MAPPING: mapping})
    update = transaction.update_snapshot(snapshot_properties=properties)
    added = sum(f.record_count for f in files)
    removed: list[DataFile] = []
    kept: list[DataFile] = []
    if predicate is not None and replace is not None and predicate != AlwaysFalse():
        removed, kept = _remove_matching(table, name, predicate, replace)
    if not removed and not kept:
        # nothing to replace (a month gated for the first time): an append, which spares the
        # overwrite's second plan of the table (a rival's commit in between fails ours, which
        # is staged again on the fresh table: see commit)
        with update.fast_append() as append:
            for data_file in files:
                append.append_data_file(data_file)
        return transaction, CommitInfo(append.snapshot_id, added, 0), []
    assert predicate is not None
    with update.overwrite() as overwrite:
        overwrite.delete_by_predicate(predicate)
        for data_file in removed:
            overwrite.delete_data_file(data_file)
        for data_file in [*kept, *files]:
            overwrite.append_data_file(data_file)
    deleted = sum(f.record_count for f in removed) - sum(f.record_count for f in kept)
    return transaction, CommitInfo(overwrite.snapshot_id, added, deleted), kept


def _remove_matching(
    table: Table, name: str, predicate: BooleanExpression, replace: Mapping[str, Any]
) -> tuple[list[DataFile], list[DataFile]]:
    """The files holding rows that match ``predicate``, and new files with their other rows.

    When ``replace`` names only partition columns, each file the scan plans matches whole and no
    data file is opened; otherwise each is read and its other rows are written to a new file.
    """
    with platform_errors(f"table '{name}'"):
        tasks = list(table.scan(row_filter=predicate).plan_files())
        if set(replace) <= set(fields.partition_columns(table)):
            return [task.file for task in tasks], []
        removed: list[DataFile] = []
        kept: list[DataFile] = []
        scan = ArrowScan(table.metadata, table.io, table.schema(), AlwaysTrue())
        matching = expression_to_pyarrow(bind(table.schema(), predicate, case_sensitive=True))
        others = ~matching | matching.is_null()  # a null neither equals a value nor is deleted
        for task in tasks:
            data = scan.to_table([task])
            rest = data.filter(others)
            if rest.num_rows < data.num_rows:
                removed.append(task.file)
                kept.extend(write(table, name, rest))
        return removed, kept


def write(table: Table, name: str, rows: pa.Table) -> list[DataFile]:
    """Data files of ``table`` holding ``rows``, split by partition; no snapshot refers to them yet."""
    if rows.num_rows == 0:
        return []
    with platform_errors(f"table '{name}'"):
        key = single_partition(table, rows)
        if key is None:
            return list(_dataframe_to_data_files(table_metadata=table.metadata, df=rows, io=table.io))
        return list(_write_partition(table, rows, key))


def adopt(table: Table, name: str, paths: Sequence[Path]) -> list[DataFile]:
    """Data files of ``table`` for Parquet files an engine wrote, each of one partition; no
    snapshot refers to them yet. Their statistics and partition come from their footers."""
    adopted: list[DataFile] = []
    try:
        with platform_errors(f"table '{name}'"):
            for path in paths:
                adopted.append(parquet_file_to_data_file(table.io, table.metadata, str(path)))
    except (ValueError, TypeError) as error:
        for path in paths:
            with suppress(OSError):
                path.unlink()
        raise PlatformError(
            f"table '{name}': the engine wrote Parquet files that do not fit the table: {error}"
        ) from None
    return adopted


def single_partition(table: Table, rows: pa.Table) -> PartitionKey | None:
    """The partition key of ``rows`` when they all fall in one partition of ``table``'s identity
    partitioning (a contributor's month, the gate's usual batch), else None."""
    spec, schema = table.spec(), table.schema()
    if spec.is_unpartitioned() or not all(isinstance(f.transform, IdentityTransform) for f in spec.fields):
        return None
    for field in spec.fields:
        column = schema.find_column_name(field.source_id)
        if column is None or rows.schema.get_field_index(column) < 0:
            return None
        if pc.count_distinct(rows.column(column), mode="all").as_py() != 1:
            return None
    # PyIceberg's own partitioning of the first row gives the key exactly as it would.
    (first,) = _determine_partitions(spec, schema, rows.slice(0, 1))
    return first.partition_key


def _write_partition(table: Table, rows: pa.Table, key: PartitionKey) -> Iterator[DataFile]:
    """``rows``, all of partition ``key``, written as PyIceberg's ``_dataframe_to_data_files``
    writes each partition, without its filtered copy of the rows per partition (half a second
    and 200 MB for a million-row month): the same target file size, schema and file names."""
    metadata = table.metadata
    default_size = TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT
    target_size = property_as_int(
        metadata.properties, TableProperties.WRITE_TARGET_FILE_SIZE_BYTES, default_size
    )
    task_schema = pyarrow_to_schema(
        rows.schema,
        name_mapping=metadata.schema().name_mapping,
        downcast_ns_timestamp_to_us=Config().get_bool(DOWNCAST_NS_TIMESTAMP_TO_US_ON_WRITE) or False,
        format_version=metadata.format_version,
    )
    write_uuid = uuid.uuid4()
    tasks = (
        WriteTask(
            write_uuid=write_uuid, task_id=task, record_batches=batches, partition_key=key, schema=task_schema
        )
        for task, batches in enumerate(bin_pack_arrow_table(rows, target_size or default_size))
    )
    return write_file(io=table.io, table_metadata=metadata, tasks=tasks)


def delete(table: Table, files: list[DataFile]) -> None:
    # A file left behind is an orphan: no snapshot refers to it, so no reader ever sees it.
    for data_file in files:
        with suppress(OSError):
            table.io.delete(data_file.file_path)


@contextmanager
def platform_errors(what: str) -> Iterator[None]:
    """Turn a failure of the catalog's database or server, or of the disk, into a :class:`PlatformError`."""
    try:
        yield
    except SQLAlchemyError as error:
        raise PlatformError(f"{what}: the catalog database failed: {getattr(error, 'orig', error)}") from None
    except (RESTError, RequestException) as error:
        raise PlatformError(f"{what}: the REST catalog failed: {error}") from None
    except OSError as error:
        raise PlatformError(f"{what}: {error}") from None
