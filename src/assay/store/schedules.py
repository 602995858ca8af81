"""The store's side of schedules: the ticks a scheduler claimed, and how their runs ended.

:class:`ScheduleRecords` is mixed into :class:`~assay.store.metrics.MetricStore`. Claiming a tick
is inserting its row: the primary key (document, profile, tick) lets exactly one of two
schedulers that see the same tick start its run, on SQLite and on PostgreSQL alike.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay.store import schema
from assay.store.records import require_aware

WORKER = "worker "
"""How a running tick's message names the worker process running it (``worker host:pid:start``)."""
TICK_STATES = ("claimed", "running", "completed", "config_error", "system_error")
"""A tick is ``claimed`` from the moment a scheduler takes it (and, with the queue, while its
job waits), ``running`` once a queue worker took it, then its run's state."""


@dataclass(frozen=True)
class TickRecord:
    """One claimed tick of a profile's schedule."""

    document: str
    profile: str
    tick: datetime
    logical_date: date
    dataset: str
    state: str
    run_id: str | None
    claimed_at: datetime
    finished_at: datetime | None
    message: str | None


class _Store(Protocol):
    def _transaction(self) -> AbstractContextManager[Connection]: ...


class ScheduleRecords:
    """Schedule-related methods of the metric store."""

    def claim_tick(
        self: _Store, document: str, profile: str, tick: datetime, logical_date: date, dataset: str
    ) -> bool:
        """Take ``tick`` of ``document``'s ``profile`` for this process; False when another
        scheduler (or an earlier pass) already took it.

        >>> from assay.store import MetricStore
        >>> tick = datetime(2026, 11, 30, 6, 30, tzinfo=UTC)
        >>> with MetricStore.open("sqlite://") as store:
        ...     first = store.claim_tick("checks/t.yaml", "daily", tick, tick.date(), "t")
        ...     second = store.claim_tick("checks/t.yaml", "daily", tick, tick.date(), "t")
        >>> (first, second)
        (True, False)
        """
        require_aware(tick, "tick")
        table = schema.schedule_ticks
        with self._transaction() as connection:
            insert = schema.upsert(connection, table)
            # RETURNING says whether this insert made the row: on PostgreSQL (psycopg 3) the
            # rowcount of an INSERT ... ON CONFLICT DO NOTHING that made it did not read 1, and
            # two schedulers both took the tick for taken (tests/checks/test_schedule.py)
            done = connection.execute(
                insert.on_conflict_do_nothing(
                    index_elements=[table.c.document, table.c.profile, table.c.tick]
                ).returning(table.c.tick),
                {
                    "document": document,
                    "profile": profile,
                    "tick": tick,
                    "logical_date": logical_date,
                    "dataset": dataset,
                    "state": "claimed",
                    "claimed_at": datetime.now(UTC),
                },
            )
            return done.first() is not None

    def finish_tick(
        self: _Store,
        document: str,
        profile: str,
        tick: datetime,
        *,
        state: str,
        run_id: str | None,
        message: str | None = None,
    ) -> None:
        """Record how the run of a claimed tick ended."""
        if state not in TICK_STATES[2:]:
            raise ValueError(f"a finished tick's state is one of {', '.join(TICK_STATES[2:])}, not {state!r}")
        table = schema.schedule_ticks
        with self._transaction() as connection:
            connection.execute(
                table.update()
                .where(table.c.document == document, table.c.profile == profile, table.c.tick == tick)
                .values(state=state, run_id=run_id, message=message, finished_at=datetime.now(UTC))
            )

    def take_tick(
        self: _Store, document: str, profile: str, tick: datetime, *, worker: str | None = None
    ) -> bool:
        """A queue worker takes a claimed tick to run it (``claimed`` → ``running``, its message
        naming the ``worker`` process); False when the tick was taken already (its job was
        deferred twice, or it ran)."""
        message = None if worker is None else f"{WORKER}{worker}"
        return _move_tick(self, document, profile, tick, "claimed", "running", message)

    def release_tick(self: _Store, document: str, profile: str, tick: datetime) -> bool:
        """A tick whose worker died while running it goes back to ``claimed``, for its job to be
        deferred again; False when it is no longer ``running``."""
        message = "its worker stopped while running it: queued again"
        return _move_tick(self, document, profile, tick, "running", "claimed", message)

    def last_ticks(self: _Store) -> dict[tuple[str, str], datetime]:
        """The latest claimed tick of each (document, profile)."""
        table = schema.schedule_ticks
        latest = sa.func.max(table.c.tick, type_=schema.UTCDateTime())
        query = sa.select(table.c.document, table.c.profile, latest).group_by(
            table.c.document, table.c.profile
        )
        with self._transaction() as connection:
            rows = connection.execute(query).all()
        return {(d, p): t for d, p, t in rows}

    def ticks(self: _Store, document: str | None = None) -> list[TickRecord]:
        """Every claimed tick (of ``document``, when given), oldest first."""
        table = schema.schedule_ticks
        query = sa.select(table).order_by(table.c.tick, table.c.document, table.c.profile)
        if document is not None:
            query = query.where(table.c.document == document)
        with self._transaction() as connection:
            rows = connection.execute(query).mappings().all()
        return [TickRecord(**dict(row)) for row in rows]


def _move_tick(
    store: _Store, document: str, profile: str, tick: datetime, before: str, after: str, message: str | None
) -> bool:
    """Move a tick from state ``before`` to ``after`` with one conditional update; False when it
    was not in ``before`` (another process moved it first)."""
    table = schema.schedule_ticks
    with store._transaction() as connection:
        done = connection.execute(
            table.update()
            .where(
                table.c.document == document,
                table.c.profile == profile,
                table.c.tick == tick,
                table.c.state == before,
            )
            .values(state=after, message=message)
        )
        return done.rowcount == 1
