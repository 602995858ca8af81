"""A dataset's value sets: every value each categorical column has held in current loads, with
the dates of its first and last load, kept up to date as loads are saved, replaced or rejected;
and the lock by which two processes changing a dataset's value sets or decisions take turns.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import date, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay.store import schema


def refresh_after(connection: Connection, dataset_id: int, load_ids: Sequence[int]) -> None:
    """Recompute the value sets of the values these loads held, after their status changed."""
    rows = connection.execute(
        sa.select(schema.load_values.c.column, schema.load_values.c.value).where(
            schema.load_values.c.load_id.in_(list(load_ids))
        )
    )
    refresh_value_sets(connection, dataset_id, [(str(row.column), str(row.value)) for row in rows])


def lock_dataset(connection: Connection, dataset_id: int) -> None:
    """Hold the dataset's row until the transaction ends, so that two processes recomputing its
    value sets or decisions take turns (PostgreSQL; SQLite has one writer at a time anyway).
    Without it both would delete a value's row, both insert it again, and one would fail.
    (:meth:`~assay.store.metrics.MetricStore.transaction` takes the same lock for a whole profile,
    and marking the catalog entry stale takes it first.) Once per transaction.

    ``FOR NO KEY UPDATE``: the turn conflicts with itself but not with the ``KEY SHARE`` lock an
    insert's foreign key takes on the row. With ``FOR UPDATE`` two transactions that had each
    inserted a load of the dataset waited for each other's ``KEY SHARE`` to take their turn, and
    PostgreSQL aborted one (tests/store/test_concurrency.py)."""
    if not schema.first_in_transaction(connection, ("locked", dataset_id)):
        return
    connection.execute(
        sa.select(schema.datasets.c.id)
        .where(schema.datasets.c.id == dataset_id)
        .with_for_update(key_share=True)
    )


def extend_value_sets(
    connection: Connection, dataset_id: int, load_id: int, pairs: Sequence[tuple[str, str]]
) -> None:
    """Fold one newly saved load's (column, value) pairs into the value sets: each value's first
    and last load move to this one when it is earlier or later. The same result as recomputing
    them from every load that holds the values (:func:`refresh_value_sets`), without reading the
    whole history: a value held by 365 daily loads costs one row here, not 365."""
    lock_dataset(connection, dataset_id)
    load = connection.execute(
        sa.select(schema.loads.c.status, schema.loads.c.logical_date, schema.loads.c.logical_time).where(
            schema.loads.c.id == load_id
        )
    ).one()
    if load.status != "current":
        return  # a load that is not current holds no value
    keys = {load_id: _order_key(load.logical_date, load.logical_time, load_id)}
    when = keys[load_id][0][0]  # this load's date, as the value sets keep it
    for column, chunk in _by_column(pairs):
        known = {
            str(row.value): (int(row.first_load_id), int(row.last_load_id))
            for row in connection.execute(
                sa.select(
                    schema.value_sets.c.value,
                    schema.value_sets.c.first_load_id,
                    schema.value_sets.c.last_load_id,
                ).where(
                    schema.value_sets.c.dataset_id == dataset_id,
                    schema.value_sets.c.column == column,
                    schema.value_sets.c.value.in_(chunk),
                )
            )
        }
        wanted = {load for ends in known.values() for load in ends} - keys.keys()
        if wanted:
            for row in connection.execute(
                sa.select(schema.loads.c.id, schema.loads.c.logical_date, schema.loads.c.logical_time).where(
                    schema.loads.c.id.in_(sorted(wanted))
                )
            ):
                keys[int(row.id)] = _order_key(row.logical_date, row.logical_time, int(row.id))
        fresh = [value for value in chunk if value not in known]
        if fresh:
            connection.execute(
                sa.insert(schema.value_sets),
                [
                    {
                        "dataset_id": dataset_id,
                        "column": column,
                        "value": value,
                        "first_load_id": load_id,
                        "last_load_id": load_id,
                        "first_date": when,
                        "last_date": when,
                    }
                    for value in fresh
                ],
            )
        # a load later than a value's last moves its last; earlier than its first moves its first
        for end, moved in (
            ("last", [v for v, (_, last) in known.items() if keys[load_id] > keys[last]]),
            ("first", [v for v, (first, _) in known.items() if keys[load_id] < keys[first]]),
        ):
            if moved:
                connection.execute(
                    sa.update(schema.value_sets)
                    .where(
                        schema.value_sets.c.dataset_id == dataset_id,
                        schema.value_sets.c.column == column,
                        schema.value_sets.c.value.in_(moved),
                    )
                    .values({f"{end}_load_id": load_id, f"{end}_date": when})
                )


def _order_key(
    logical_date: date | None, logical_time: datetime, load_id: int
) -> tuple[tuple[date, datetime], int]:
    """How loads are ordered in a value set: by logical date, then time, then id."""
    return (logical_date or logical_time.date(), logical_time), load_id


def refresh_value_sets(connection: Connection, dataset_id: int, pairs: Sequence[tuple[str, str]]) -> None:
    """Recompute the value-set rows of these (column, value) pairs from the current loads that
    hold them: a load saved, replaced or rejected changes where a value was first and last seen."""
    lock_dataset(connection, dataset_id)
    for column, chunk in _by_column(pairs):
        holders = (
            sa.select(
                schema.load_values.c.value,
                schema.loads.c.id,
                schema.loads.c.logical_date,
                schema.loads.c.logical_time,
            )
            .select_from(schema.load_values.join(schema.loads))
            .where(
                schema.loads.c.dataset_id == dataset_id,
                schema.loads.c.status == "current",
                schema.load_values.c.column == column,
                schema.load_values.c.value.in_(chunk),
            )
        )
        seen: dict[str, list[tuple[Any, int]]] = {}
        for row in connection.execute(holders):
            seen.setdefault(row.value, []).append(_order_key(row.logical_date, row.logical_time, row.id))
        connection.execute(
            sa.delete(schema.value_sets).where(
                schema.value_sets.c.dataset_id == dataset_id,
                schema.value_sets.c.column == column,
                schema.value_sets.c.value.in_(chunk),
            )
        )
        rows = []
        for value, loads in seen.items():
            loads.sort()
            (first_key, first_id), (last_key, last_id) = loads[0], loads[-1]
            rows.append(
                {
                    "dataset_id": dataset_id,
                    "column": column,
                    "value": value,
                    "first_load_id": first_id,
                    "last_load_id": last_id,
                    "first_date": first_key[0],
                    "last_date": last_key[0],
                }
            )
        if rows:
            connection.execute(sa.insert(schema.value_sets), rows)


def _by_column(pairs: Sequence[tuple[str, str]], size: int = 500) -> Iterator[tuple[str, list[str]]]:
    grouped: dict[str, list[str]] = {}
    for column, value in pairs:
        grouped.setdefault(column, []).append(value)
    for column, values in grouped.items():
        for start in range(0, len(values), size):
            yield column, values[start : start + size]
