"""A window of an event measured again replaces the earlier one: superseded by logical *time*.

The store supersedes a check run's loads by logical *date* (one per day and profile); an event's
windows are hours, 24 a day, so the earlier measurement of the same window is found by its
logical time here. It runs on the store's connection of the open transaction (the store mixins'
``_transaction``), so that it lands in the run's commit with the rest.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa

from assay.store import schema
from assay.store.records import require_aware

if TYPE_CHECKING:
    from assay.store import MetricStore


def supersede_window(
    store: MetricStore, dataset: str, *, partition: str, logical_time: datetime, keep: int
) -> int:
    """Mark every other current load of ``dataset``'s ``partition`` at ``logical_time`` as
    superseded by load ``keep``; returns how many were.

    >>> from datetime import UTC
    >>> from assay.store import MetricStore
    >>> with MetricStore.open("sqlite://") as store:
    ...     at = datetime(2026, 11, 12, 10, tzinfo=UTC)
    ...     first = store.create_load("e", partition="hour", logical_time=at)
    ...     other = store.create_load("e", partition="hour", logical_time=at.replace(hour=11))
    ...     again = store.create_load("e", partition="hour", logical_time=at)
    ...     supersede_window(store, "e", partition="hour", logical_time=at, keep=again)
    1
    """
    require_aware(logical_time, "logical_time")
    loads = schema.loads
    with store._transaction() as connection:
        dataset_id = store._ensure_dataset(connection, dataset)
        done = connection.execute(
            sa.update(loads)
            .where(
                loads.c.dataset_id == dataset_id,
                loads.c.partition == partition,
                loads.c.logical_time == logical_time,
                loads.c.id != keep,
                loads.c.status == "current",
            )
            .values(status="superseded")
        )
        return int(done.rowcount or 0)
