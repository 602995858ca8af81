"""The store's side of schedules: the ticks a scheduler claimed, and how their runs ended.

:class:`ScheduleRecords` is mixed into :class:`~assay.store.metrics.MetricStore`. Claiming a tick
is inserting its row: the primary key (document, profile, tick) lets exactly one of two
schedulers that see the same tick start its run, on SQLite and on PostgreSQL alike.

A tick not finished has an ``owner``, the process that holds it (``host:pid:start``, as a run
records its owner), or none while it waits on the queue. A process that takes a tick from a dead
owner does it with one conditional update on that owner, so of two that find the same tick
orphaned exactly one takes it.
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
job waits), ``running`` once a queue worker took it or a pass took it over from a dead process,
then its run's state."""
HELD = TICK_STATES[:2]
"""The states of a tick not finished: its owner, when it has one, is running it."""


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
    owner: str | None = None  # the process holding it (host:pid:start); None: waiting on the queue


class _Store(Protocol):
    def _transaction(self) -> AbstractContextManager[Connection]: ...


class ScheduleRecords:
    """Schedule-related methods of the metric store."""

    def claim_tick(
        self: _Store,
        document: str,
        profile: str,
        tick: datetime,
        logical_date: date,
        dataset: str,
        *,
        owner: str | None = None,
        run_id: str | None = None,
    ) -> bool:
        """Take ``tick`` of ``document``'s ``profile`` for the process ``owner``, naming the run
        that will check it (``run_id``); False when another scheduler (or an earlier pass)
        already took it.

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
                    "run_id": run_id,
                    "owner": owner,
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
        """Record how the run of a claimed tick ended: it has no owner any more."""
        if state not in TICK_STATES[2:]:
            raise ValueError(f"a finished tick's state is one of {', '.join(TICK_STATES[2:])}, not {state!r}")
        table = schema.schedule_ticks
        with self._transaction() as connection:
            connection.execute(
                table.update()
                .where(table.c.document == document, table.c.profile == profile, table.c.tick == tick)
                .values(
                    state=state, run_id=run_id, message=message, finished_at=datetime.now(UTC), owner=None
                )
            )

    def take_tick(
        self: _Store,
        document: str,
        profile: str,
        tick: datetime,
        *,
        worker: str | None = None,
        run_id: str | None = None,
    ) -> bool:
        """A queue worker takes a claimed tick to run it (``claimed`` → ``running``, owned by and
        its message naming the ``worker`` process, naming the run ``run_id``); False when the
        tick was taken already (its job was deferred twice, it ran, or a pass took it over)."""
        table = schema.schedule_ticks
        with self._transaction() as connection:
            done = connection.execute(
                table.update()
                .where(*_key(document, profile, tick), table.c.state == "claimed")
                .values(
                    state="running",
                    owner=worker,
                    run_id=run_id,
                    message=None if worker is None else f"{WORKER}{worker}",
                )
            )
            return done.rowcount == 1

    def release_tick(self: _Store, document: str, profile: str, tick: datetime, *, dead: str) -> bool:
        """A tick whose owner ``dead`` stopped goes back to ``claimed`` with no owner, for its
        job to be deferred again; False when ``dead`` no longer holds it."""
        message = f"its process ({dead}) stopped before the tick was done: queued again"
        return _take_over(self, document, profile, tick, dead, state="claimed", owner=None, message=message)

    def take_over_tick(
        self: _Store, document: str, profile: str, tick: datetime, *, dead: str, owner: str, run_id: str
    ) -> bool:
        """This process (``owner``) takes a tick whose owner ``dead`` stopped, to run it again as
        the run ``run_id`` (``running``); False when ``dead`` no longer holds it (another process
        took it first)."""
        message = f"its process ({dead}) stopped before the tick was done: run again"
        return _take_over(
            self, document, profile, tick, dead, state="running", owner=owner, message=message, run_id=run_id
        )

    def queue_tick(self: _Store, document: str, profile: str, tick: datetime, *, owner: str) -> None:
        """The pass ``owner`` has put the tick on the queue: the tick waits there, with no owner
        (unless a worker took it meanwhile)."""
        table = schema.schedule_ticks
        with self._transaction() as connection:
            connection.execute(
                table.update()
                .where(*_key(document, profile, tick), table.c.state == "claimed", table.c.owner == owner)
                .values(owner=None)
            )

    def held_ticks(self: _Store) -> list[TickRecord]:
        """The ticks not finished that a process holds (``claimed`` or ``running`` with an
        owner), oldest first: those whose owner is gone are orphans."""
        table = schema.schedule_ticks
        query = (
            sa.select(table)
            .where(table.c.state.in_(HELD), table.c.owner.is_not(None))
            .order_by(table.c.tick, table.c.document, table.c.profile)
        )
        with self._transaction() as connection:
            rows = connection.execute(query).mappings().all()
        return [TickRecord(**dict(row)) for row in rows]

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


def _key(document: str, profile: str, tick: datetime) -> tuple[sa.ColumnElement[bool], ...]:
    table = schema.schedule_ticks
    return (table.c.document == document, table.c.profile == profile, table.c.tick == tick)


def _take_over(
    store: _Store,
    document: str,
    profile: str,
    tick: datetime,
    dead: str,
    *,
    state: str,
    owner: str | None,
    message: str,
    run_id: str | None = None,
) -> bool:
    """Move a tick held by ``dead`` to ``state`` and ``owner`` with one conditional update;
    False when ``dead`` no longer holds it (another process moved it first)."""
    table = schema.schedule_ticks
    values: dict[str, object] = {"state": state, "owner": owner, "message": message}
    if run_id is not None:
        values["run_id"] = run_id
    with store._transaction() as connection:
        done = connection.execute(
            table.update()
            .where(*_key(document, profile, tick), table.c.state.in_(HELD), table.c.owner == dead)
            .values(**values)
        )
        return done.rowcount == 1
