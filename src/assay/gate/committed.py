"""The rows a gate run commits: the store writes its commit makes (:func:`settle_plan`, applied
by :func:`assay.gate.publish.settle`) and the Parquet files the engine writes for the Iceberg
snapshot (:func:`committed_rows`). Both read :data:`COMMITTED`, the batch less its quarantined
and held rows, kept in the engine by :func:`assay.gate.route.route`."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from assay.gate.gate import COMMITTED, Scope, day_literal
from assay.gate.schema import sql_type, type_name
from assay.gate.summary import Group
from assay.lake import fields
from assay.lake.iceberg import Warehouse


def settle_plan(
    scope: Scope,
    schema: pa.Schema,
    committed: dict[Any, int],
    groups: dict[date, Group],
    sha256: str,
    *,
    domain: list[str],
    loads: dict[int, date],
    baseline_loads: set[int],
) -> dict[str, Any]:
    """The store writes this run makes when it commits (:func:`assay.gate.publish.settle`): the
    loads it measured (``baseline_loads`` among them, the committed month before the batch), and
    the values its committed rows teach the ``domain`` columns, counted in the engine."""
    order = scope.options.order
    days = set(committed)
    # A month is replaced only when this batch commits rows for it: a resend refused whole
    # (a truncated extract) leaves the month that was there.
    replaced = sorted(day for day in groups if day in days)
    plan: dict[str, Any] = {
        "table": scope.options.table,
        "contributor": scope.contributor,
        "sha256": sha256,
        "snapshot_id": None,
        "loads": [
            {"id": load, "date": day.isoformat(), "baseline": load in baseline_loads}
            for load, day in sorted(loads.items())
        ],
        "committed_dates": [day.isoformat() for day in replaced],
        "rows_by_date": {},
        "values": [],
        "schema": [[f.name, str(f.type)] for f in schema],
        "duplicate_of": None,
    }
    if domain and days:
        # the values this run's committed rows teach the domain columns, month by month:
        # counted in the engine, turned into text here as the store keeps them
        counts: dict[Any, dict[str, dict[str, int]]] = {day: {c: {} for c in domain} for day in days}
        for column in domain:
            grouped = scope.engine.query(
                exp.select(
                    exp.alias_(exp.column(order, quoted=True), "d", quoted=True),
                    exp.alias_(exp.column(column, quoted=True), "v", quoted=True),
                    exp.alias_(exp.Count(this=exp.Star()), "n", quoted=True),
                )
                .from_(exp.to_identifier(COMMITTED, quoted=True))
                .group_by(exp.column(order, quoted=True), exp.column(column, quoted=True))
            )
            values = pc.cast(grouped.column("v"), pa.string()).to_pylist()
            for day, value, n in zip(
                grouped.column("d").to_pylist(), values, grouped.column("n").to_pylist(), strict=True
            ):
                if value is not None:
                    counts[day][column][scope.masker.value(column, value)] = int(n)
        for day in sorted(d for d in days if d is not None):
            plan["rows_by_date"][day.isoformat()] = committed[day]
            plan["values"].append({"date": day.isoformat(), "counts": counts[day]})
    return plan


def committed_rows(
    scope: Scope, warehouse: Warehouse, schema: pa.Schema, days: list[Any]
) -> tuple[pa.Table | None, list[Path]]:
    """The rows to commit, written by the engine as Parquet files into the table's data
    folder, one folder per statement date (a file holds one partition); or, where the
    engine cannot write them there (the table is not on the local disk, a type the
    engine's Parquet does not hold as Iceberg wants), fetched as Arrow for PyIceberg."""
    opts = scope.options
    types = [_write_type(f.type) for f in fields.storage_schema(schema)]
    folder = warehouse.data_folder(opts.table, scope.run_id)
    if folder is None or any(t is None for t in types):
        query = exp.select(*(exp.column(n, quoted=True) for n in schema.names)).from_(
            exp.to_identifier(COMMITTED, quoted=True)
        )
        return scope.engine.query(query), []
    columns = [
        exp.alias_(exp.cast(exp.column(name, quoted=True), kind), name, quoted=True)
        for name, kind in zip(schema.names, types, strict=True)
        if kind is not None
    ]
    order = exp.column(opts.order, quoted=True)
    files: list[Path] = []
    try:
        for i, day in enumerate(sorted(days, key=lambda d: (d is None, d or 0))):
            where = order.copy().is_(exp.null()) if day is None else order.copy().eq(day_literal(day))
            query = exp.select(*(c.copy() for c in columns)).from_(exp.to_identifier(COMMITTED, quoted=True))
            files += scope.engine.write_parquet(query.where(where), folder / f"{i:05d}")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)  # no snapshot refers to them
        raise
    return None, files


# --- recording ---------------------------------------------------------------------------


def discard(files: list[Path]) -> None:
    """Remove the folder of the engine-written files of a commit that did not happen."""
    if files:
        shutil.rmtree(files[0].parent.parent, ignore_errors=True)


_WRITE_TYPES = {"string", "bigint", "int", "double", "date", "timestamp", "timestamptz", "boolean"}


def _write_type(dtype: pa.DataType) -> exp.DataType | None:
    """The engine type a committed column is written as, so that its Parquet type is the
    table's (None: a type the gate does not declare, committed through Arrow)."""
    name = type_name(dtype)
    if name in _WRITE_TYPES or pa.types.is_decimal(dtype):
        return sql_type(dtype)
    return None
