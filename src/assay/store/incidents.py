"""The store's side of incidents and notifications: incidents with their events, the outbox.

:class:`IncidentRecords` is mixed into :class:`~assay.store.metrics.MetricStore`. The check run
writes incidents and the notifications they cause inside the transaction of its outcomes
(:mod:`assay.platform.incidents`), so an outcome and what it caused land together or not at all;
a delivery pass (:mod:`assay.platform.outbox`) then sends the pending rows.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay.errors import ConfigError
from assay.store import schema
from assay.store.catalog import mark_stale
from assay.store.checks import group_key, parse_group_key
from assay.store.records import STAGES

INCIDENT_STATES = ("open", "acknowledged", "muted", "resolved")
NOTIFICATION_STATUSES = ("pending", "sent", "failed", "held", "digested")
"""``pending`` until delivered (``sent``) or given up (``failed``); a digest route's item is
``held`` until its day's digest is made, then ``digested``."""


@dataclass
class IncidentRecord:
    """One incident as the store keeps it (times are evaluations' logical times)."""

    id: str
    dataset: str
    dimension: str
    expectation: str
    group: dict[str, Any] | None
    state: str
    severity: str
    owner: str | None
    opened_at: datetime
    evaluated_at: datetime
    resolved_at: datetime | None = None
    muted_until: datetime | None = None
    passes: int = 0
    failures: int = 0
    observed: float | None = None
    notified_observed: float | None = None
    expected: Any = None
    message: str | None = None
    cause: str | None = None
    channels: list[list[Any]] = field(default_factory=list)
    updated_at: datetime | None = None
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.dimension, self.expectation, group_key(self.group))

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for name in ("opened_at", "evaluated_at", "resolved_at", "muted_until", "updated_at"):
            out[name] = None if out[name] is None else out[name].isoformat()
        return out


@dataclass(frozen=True)
class OutboxRow:
    """One notification to one channel, as the outbox keeps it."""

    id: str
    channel: str
    kind: str
    status: str
    payload: dict[str, Any]
    attempts: int
    created_at: datetime
    next_attempt_at: datetime
    sent_at: datetime | None
    error: str | None
    digest_day: date | None
    run_id: str | None
    incident_id: str | None

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``assay notify outbox``."""
        return {
            "id": self.id,
            "kind": self.kind,
            "channel": self.channel,
            "status": self.status,
            "attempts": self.attempts,
            "created_at": self.created_at.isoformat(),
            "sent_at": None if self.sent_at is None else self.sent_at.isoformat(),
            "error": self.error,
            "dataset": self.payload.get("dataset"),
            "expectation": self.payload.get("expectation"),
            "run_id": self.run_id,
            "incident_id": self.incident_id,
            "digest_day": None if self.digest_day is None else self.digest_day.isoformat(),
        }


class _Store(Protocol):
    def _transaction(self) -> AbstractContextManager[Connection]: ...

    def _ensure_dataset(self, connection: Connection, name: str) -> int: ...


_COLUMNS = (
    "dimension",
    "expectation",
    "state",
    "severity",
    "owner",
    "opened_at",
    "evaluated_at",
    "resolved_at",
    "muted_until",
    "passes",
    "failures",
    "observed",
    "notified_observed",
    "expected",
    "message",
    "cause",
    "channels",
)


class IncidentRecords:
    """Incident and outbox methods of the metric store."""

    # --- incidents --------------------------------------------------------------------------------

    def incidents(
        self: _Store,
        *,
        dataset: str | None = None,
        states: Sequence[str] | None = None,
        layers: bool = False,
    ) -> list[IncidentRecord]:
        """Incidents (of ``dataset``, in ``states``), most recently opened first, without events.

        ``layers``: also the incidents ``dataset`` is a layer of (opened on a dataset upstream or
        downstream of it, :mod:`assay.platform.incidents.layers`): what people ask when they ask
        for a dataset's incidents. Judging asks without, for the incidents of its own keys."""
        table = schema.incidents
        query = (
            sa.select(table, schema.datasets.c.name.label("dataset"))
            .select_from(table.join(schema.datasets))
            .order_by(table.c.opened_at.desc(), table.c.id)
        )
        if dataset is not None and layers:
            layered = (
                sa.select(schema.incident_layers.c.incident_id)
                .select_from(schema.incident_layers.join(schema.datasets))
                .where(schema.datasets.c.name == dataset)
            )
            query = query.where(sa.or_(schema.datasets.c.name == dataset, table.c.id.in_(layered)))
        elif dataset is not None:
            query = query.where(schema.datasets.c.name == dataset)
        if states:
            query = query.where(table.c.state.in_(list(states)))
        with self._transaction() as connection:
            return [_incident(row) for row in connection.execute(query).mappings()]

    def incident(self: _Store, incident_id: str) -> IncidentRecord:
        """One incident with its events; a ConfigError naming the id when there is none."""
        table, events = schema.incidents, schema.incident_events
        with self._transaction() as connection:
            row = (
                connection.execute(
                    sa.select(table, schema.datasets.c.name.label("dataset"))
                    .select_from(table.join(schema.datasets))
                    .where(table.c.id == incident_id)
                )
                .mappings()
                .first()
            )
            if row is None:
                raise ConfigError(f"no incident {incident_id!r} (assay incidents list shows them)")
            found = _incident(row)
            found.events = [
                {
                    "seq": e.seq,
                    "kind": e.kind,
                    "at": e.at.isoformat(),
                    "recorded_at": e.recorded_at.isoformat(),
                    "run_id": e.run_id,
                    "by": e.by,
                    "detail": e.detail or {},
                }
                for e in connection.execute(
                    sa.select(events).where(events.c.incident_id == incident_id).order_by(events.c.seq)
                )
            ]
        return found

    def latest_incidents(self: _Store, dataset: str) -> dict[tuple[str, str, str], IncidentRecord]:
        """The latest incident of each key of ``dataset`` (the unresolved one when there is one)."""
        out: dict[tuple[str, str, str], IncidentRecord] = {}
        for found in reversed(IncidentRecords.incidents(self, dataset=dataset)):  # oldest first
            out[found.key] = found
        return out

    def save_incident(self: _Store, record: IncidentRecord, *, new: bool) -> None:
        """Insert (``new``) or update ``record``."""
        table = schema.incidents
        values = {name: getattr(record, name) for name in _COLUMNS}
        values["updated_at"] = datetime.now(UTC)
        with self._transaction() as connection:
            if new:
                dataset_id = self._ensure_dataset(connection, record.dataset)
                connection.execute(
                    sa.insert(table),
                    {
                        "id": record.id,
                        "dataset_id": dataset_id,
                        "group_key": group_key(record.group),
                        **values,
                    },
                )
                mark_stale(connection, dataset_id)
            else:
                connection.execute(table.update().where(table.c.id == record.id).values(**values))
                # its own dataset's entry and every layer's count it (open_incidents)
                found = connection.execute(
                    sa.select(table.c.dataset_id)
                    .where(table.c.id == record.id)
                    .union(
                        sa.select(schema.incident_layers.c.dataset_id).where(
                            schema.incident_layers.c.incident_id == record.id
                        )
                    )
                ).all()
                for (dataset_id,) in found:
                    mark_stale(connection, dataset_id)

    def add_incident_event(
        self: _Store,
        incident_id: str,
        kind: str,
        at: datetime,
        *,
        run_id: str | None = None,
        by: str | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> int:
        """Append an event to an incident's history; its sequence number."""
        events = schema.incident_events
        with self._transaction() as connection:
            last = connection.execute(
                sa.select(sa.func.max(events.c.seq)).where(events.c.incident_id == incident_id)
            ).scalar_one_or_none()
            seq = (last or 0) + 1
            connection.execute(
                sa.insert(events),
                {
                    "incident_id": incident_id,
                    "seq": seq,
                    "kind": kind,
                    "at": at,
                    "recorded_at": datetime.now(UTC),
                    "run_id": run_id,
                    "by": by,
                    "detail": dict(detail or {}),
                },
            )
        return seq

    def incident_run_ids(self: _Store, incident_id: str) -> list[str]:
        """The runs whose failing evaluations an incident holds (its opened and failed events)."""
        events = schema.incident_events
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(events.c.run_id).where(
                    events.c.incident_id == incident_id,
                    events.c.kind.in_(["opened", "reopened", "failed", "escalated"]),
                    events.c.run_id.is_not(None),
                )
            )
            return sorted({row[0] for row in rows})

    # --- a run's stages ---------------------------------------------------------------------------

    def add_stage(
        self: _Store,
        run_id: str,
        stage: str,
        at: datetime | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        """Record that run ``run_id`` passed ``stage`` (once: a stage passed again keeps its time),
        with ``detail`` (``measured``: what the run measured, to resume it from)."""
        if stage not in STAGES:
            raise ValueError(f"a stage is one of {', '.join(STAGES)}, not {stage!r}")
        with self._transaction() as connection:
            _add_stage(connection, run_id, stage, at, detail)

    def stage_detail(self: _Store, run_id: str, stage: str) -> dict[str, Any] | None:
        """The ``detail`` run ``run_id`` recorded with ``stage``, or None."""
        table = schema.run_stages
        with self._transaction() as connection:
            found = connection.execute(
                sa.select(table.c.detail).where(table.c.run_id == run_id, table.c.stage == stage)
            ).first()
        return None if found is None or found[0] is None else dict(found[0])

    def stages(self: _Store, run_id: str) -> list[tuple[str, datetime]]:
        """The stages run ``run_id`` passed, in order."""
        table = schema.run_stages
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(table.c.stage, table.c.at).where(table.c.run_id == run_id)
            ).all()
        return sorted(((stage, at) for stage, at in rows), key=lambda row: STAGES.index(row[0]))

    def note_notified(self: _Store, run_id: str) -> None:
        """Record ``notified`` for a run none of whose notifications still waits (none: at once)."""
        with self._transaction() as connection:
            IncidentRecords._notified_if_done(self, connection, run_id)

    def _notified_if_done(self: _Store, connection: Connection, run_id: str | None) -> None:
        """A run whose notifications were all delivered or given up has passed ``notified``."""
        if run_id is None:
            return
        table = schema.notifications
        waiting = connection.execute(
            sa.select(table.c.id)
            .where(table.c.run_id == run_id, table.c.status.in_(["pending", "held"]))
            .limit(1)
        ).first()
        if waiting is None:
            _add_stage(connection, run_id, "notified")

    # --- the outbox -------------------------------------------------------------------------------

    def enqueue(
        self: _Store,
        notification: Mapping[str, Any],
        channels: Sequence[tuple[str, str | None]],
        *,
        now: datetime,
        day: date | None = None,
        dedupe_key: str | None = None,
    ) -> int:
        """Put ``notification`` (a payload without ``sent_at``) in the outbox for each channel:
        ``pending``, or ``held`` for the digest of ``day`` when its route has one. A row already
        there (same id, same channel) is kept as it is; how many rows were added."""
        table = schema.notifications
        added = 0
        with self._transaction() as connection:
            insert = schema.upsert(connection, table)
            for channel, digest in channels:
                done = connection.execute(
                    insert.on_conflict_do_nothing(index_elements=[table.c.id, table.c.channel]).returning(
                        table.c.id
                    ),
                    {
                        "id": notification["id"],
                        "channel": channel,
                        "kind": notification["kind"],
                        "status": "held" if digest else "pending",
                        "payload": dict(notification),
                        "attempts": 0,
                        "created_at": now,
                        "next_attempt_at": now,
                        "dedupe_key": dedupe_key,
                        "digest_day": day if digest else None,
                        "run_id": notification.get("run_id"),
                        "incident_id": notification.get("incident_id"),
                    },
                )
                added += done.first() is not None
        return added

    def notified(self: _Store, dedupe_key: str, *, since: datetime | None = None) -> bool:
        """Whether a notification with ``dedupe_key`` is in the outbox (created after ``since``)."""
        table = schema.notifications
        query = sa.select(table.c.id).where(table.c.dedupe_key == dedupe_key).limit(1)
        if since is not None:
            query = query.where(table.c.created_at > since)
        with self._transaction() as connection:
            return connection.execute(query).first() is not None

    def outbox(self: _Store, *, status: str | None = None, limit: int | None = None) -> list[OutboxRow]:
        """The outbox's rows (in ``status``), oldest first."""
        if status is not None and status not in NOTIFICATION_STATUSES:
            raise ConfigError(
                f"unknown status {status!r}: expected one of {', '.join(NOTIFICATION_STATUSES)}"
            )
        table = schema.notifications
        query = sa.select(table).order_by(table.c.created_at, table.c.id, table.c.channel)
        if status is not None:
            query = query.where(table.c.status == status)
        if limit is not None:
            query = query.limit(limit)
        with self._transaction() as connection:
            return [_outbox(row) for row in connection.execute(query).mappings()]

    def make_digests(self: _Store, now: datetime, new_id: Any) -> int:
        """Gather the held items of every day before ``now``'s (UTC) into one ``digest``
        notification per channel and day (id ``new_id(channel, day, item ids)``: items held for a
        day whose digest went already, a backfill's, make a digest of their own); how many were made."""
        table = schema.notifications
        today = now.astimezone(UTC).date()
        made = 0
        with self._transaction() as connection:
            held = connection.execute(
                sa.select(table)
                .where(table.c.status == "held", table.c.digest_day < today)
                .order_by(table.c.digest_day, table.c.channel, table.c.created_at, table.c.id)
            ).mappings()
            days: dict[tuple[str, date], list[Any]] = {}
            for row in held:
                days.setdefault((row.channel, row.digest_day), []).append(row)
            insert = schema.upsert(connection, table)
            for (channel, day), rows in days.items():
                digest_id = str(new_id(channel, day, [r.id for r in rows]))
                items = [dict(r.payload) for r in rows]
                kinds = sorted({i["kind"] for i in items})
                payload = {
                    "id": digest_id,
                    "kind": "digest",
                    "message": f"{len(items)} notification(s) of {day.isoformat()} ({', '.join(kinds)})",
                    "items": items,
                }
                connection.execute(
                    insert.on_conflict_do_nothing(index_elements=[table.c.id, table.c.channel]),
                    {
                        "id": digest_id,
                        "channel": channel,
                        "kind": "digest",
                        "status": "pending",
                        "payload": payload,
                        "attempts": 0,
                        "created_at": now,
                        "next_attempt_at": now,
                        "digest_day": day,
                    },
                )
                connection.execute(
                    table.update()
                    .where(
                        table.c.channel == channel,
                        table.c.id.in_([r.id for r in rows]),
                        table.c.status == "held",
                    )
                    .values(status="digested", digest_id=digest_id)
                )
                made += 1
        return made

    def claim_notifications(
        self: _Store, now: datetime, *, lease: timedelta, limit: int = 500, skip: Collection[str] = ()
    ) -> list[OutboxRow]:
        """Take the pending rows due at ``now`` for this delivery pass, in one statement: each
        row is leased to one pass (an ``UPDATE … RETURNING`` whose condition a second pass at
        the same moment finds false once the first committed), so two passes at once never send
        the same row twice. At most ``limit`` rows, none of the channels in ``skip``."""
        table = schema.notifications
        free = sa.or_(table.c.lease_until.is_(None), table.c.lease_until < now)
        due = (
            sa.select(table.c.id, table.c.channel)
            .where(table.c.status == "pending", table.c.next_attempt_at <= now, free)
            .where(table.c.channel.not_in(sorted(skip)))
            .order_by(table.c.created_at, table.c.id, table.c.channel)
            .limit(limit)
        )
        with self._transaction() as connection:
            rows = connection.execute(
                table.update()
                .where(sa.tuple_(table.c.id, table.c.channel).in_(due), table.c.status == "pending", free)
                .values(lease_until=now + lease)
                .returning(*table.c)
            ).mappings()
            taken = [_outbox(row) for row in rows]
        return sorted(taken, key=lambda r: (r.created_at, r.id, r.channel))

    def finish_notifications(self: _Store, done: Sequence[tuple[OutboxRow, Mapping[str, Any]]]) -> None:
        """Record several delivery attempts in one transaction (each: ``status``, ``attempts``,
        ``error``, ``sent_at``, ``next_attempt_at``), releasing their leases; a run whose last
        notification this settles has passed ``notified``."""
        if not done:
            return
        table = schema.notifications
        with self._transaction() as connection:
            for row, how in done:
                values: dict[str, Any] = {
                    "status": how["status"],
                    "attempts": how["attempts"],
                    "error": how.get("error"),
                    "lease_until": None,
                }
                if how.get("sent_at") is not None:
                    values["sent_at"] = how["sent_at"]
                if how.get("next_attempt_at") is not None:
                    values["next_attempt_at"] = how["next_attempt_at"]
                connection.execute(
                    table.update()
                    .where(table.c.id == row.id, table.c.channel == row.channel)
                    .values(**values)
                )
            for run_id in sorted(
                {row.run_id for row, how in done if how["status"] in ("sent", "failed") and row.run_id}
            ):
                IncidentRecords._notified_if_done(self, connection, run_id)


def _add_stage(
    connection: Connection,
    run_id: str,
    stage: str,
    at: datetime | None = None,
    detail: Mapping[str, Any] | None = None,
) -> None:
    """Insert a run's stage row unless it is there (a stage passed again keeps its time)."""
    table = schema.run_stages
    insert = schema.upsert(connection, table)
    connection.execute(
        insert.on_conflict_do_nothing(index_elements=[table.c.run_id, table.c.stage]),
        {"run_id": run_id, "stage": stage, "at": at or datetime.now(UTC), "detail": detail},
    )


def _incident(row: Any) -> IncidentRecord:
    return IncidentRecord(
        id=row.id,
        dataset=row.dataset,
        dimension=row.dimension,
        expectation=row.expectation,
        group=parse_group_key(row.group_key),
        state=row.state,
        severity=row.severity,
        owner=row.owner,
        opened_at=row.opened_at,
        evaluated_at=row.evaluated_at,
        resolved_at=row.resolved_at,
        muted_until=row.muted_until,
        passes=row.passes,
        failures=row.failures,
        observed=row.observed,
        notified_observed=row.notified_observed,
        expected=row.expected,
        message=row.message,
        cause=row.cause,
        channels=list(row.channels or []),
        updated_at=row.updated_at,
    )


def _outbox(row: Any) -> OutboxRow:
    return OutboxRow(
        id=row.id,
        channel=row.channel,
        kind=row.kind,
        status=row.status,
        payload=dict(row.payload),
        attempts=row.attempts,
        created_at=row.created_at,
        next_attempt_at=row.next_attempt_at,
        sent_at=row.sent_at,
        error=row.error,
        digest_day=row.digest_day,
        run_id=row.run_id,
        incident_id=row.incident_id,
    )
