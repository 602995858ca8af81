"""Delivering the outbox: one pass sends every pending notification that is due.

A check run puts its notifications in the store's outbox in the transaction of its outcomes
(:mod:`assay.platform.incidents`); ``assay notify deliver``, each pass of ``assay run --due`` and
the scheduler's loop deliver them. A pass:

1. gathers the held items of every finished day into one ``digest`` per channel and day;
2. leases the pending rows that are due, so two passes at once never send one row twice;
3. sends each once (no sleeping inside a pass): sent, or on a connection error, a timeout, a
   5xx or a 429 tried again by a later pass after a backoff (30 s, doubling, at most an hour;
   :data:`GIVE_UP_AFTER` attempts in all), or ``failed`` on an answer no retry changes (a 4xx).
   A channel that fails in a pass is not tried again in that pass: a channel that is down does
   not hold up the others, and the runs never wait for any channel.

Delivery is at least once: a pass records its deliveries :data:`RECORD_EVERY` at a time, so a
process killed after sending and before recording sends those notifications again on the next
pass, with the same ids (the ``Idempotency-Key``), which the receiver can drop.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from assay.errors import ConfigError
from assay.platform.incidents import NAMESPACE
from assay.platform.notify import Config, Delivery, Notification, deliver
from assay.platform.runs.faults import checkpoint

FIRST_RETRY = timedelta(seconds=30)
LONGEST_RETRY = timedelta(hours=1)
GIVE_UP_AFTER = 12
"""Attempts before a notification is ``failed`` (about six hours of retries)."""
LEASE = timedelta(minutes=5)
BATCH = 200
"""Rows claimed at a time; a pass claims batches until nothing due is left."""
RECORD_EVERY = 20
"""Deliveries recorded in one store transaction: a pass killed mid-way sends at most this many
notifications again on the next pass (with their ids), and a pass costs one commit per 20 sends
instead of one per send."""


@dataclass
class DeliveryPass:
    """What one delivery pass did."""

    now: datetime
    digests: int = 0
    deliveries: list[dict[str, Any]] = field(default_factory=list)
    channels_down: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for d in self.deliveries if d["status"] == status)

    def to_dict(self) -> dict[str, Any]:
        return {
            "now": self.now.isoformat(),
            "sent": self.count("sent"),
            "retrying": self.count("retrying"),
            "failed": self.count("failed"),
            "digests": self.digests,
            "channels_down": self.channels_down,
            "deliveries": self.deliveries,
        }


def digest_id(channel: str, day: date, items: Sequence[str]) -> uuid.UUID:
    """The id of ``channel``'s digest of ``day`` holding ``items`` (their ids): the same digest,
    the same id, whichever pass makes it."""
    return uuid.uuid5(NAMESPACE, f"digest/{channel}/{day.isoformat()}/{','.join(sorted(items))}")


def retry_wait(attempts: int) -> timedelta:
    """How long after its ``attempts``-th failed attempt a notification is tried again.

    >>> [int(retry_wait(n).total_seconds()) for n in (1, 2, 3, 8, 9)]
    [30, 60, 120, 3600, 3600]
    """
    return min(FIRST_RETRY * (1 << min(attempts - 1, 20)), LONGEST_RETRY)


def deliver_pass(
    store: Any,
    config: Config,
    *,
    now: datetime | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> DeliveryPass:
    """One delivery pass at ``now`` (the wall clock by default; ``--now`` in a simulation, which
    decides which days are over and what is due, while ``sent_at`` stays the real time)."""
    now = now or clock()
    done = DeliveryPass(now)
    done.digests = store.make_digests(now, digest_id)
    down: set[str] = set()
    settled: list[tuple[Any, dict[str, Any]]] = []  # recorded RECORD_EVERY at a time

    def settle(row: Any, status: str, attempts: int, error: str | None, **more: Any) -> None:
        settled.append((row, {"status": status, "attempts": attempts, "error": error, **more}))
        if len(settled) >= RECORD_EVERY:
            store.finish_notifications(settled)
            settled.clear()

    try:
        for row in _due(store, now, down):
            if row.channel in down:
                settle(row, "pending", row.attempts, row.error)
                continue
            try:
                channel = config.channel(row.channel)
            except ConfigError as error:
                settle(row, "failed", row.attempts, str(error))
                done.deliveries.append(_entry(row, "failed", str(error), row.attempts))
                continue
            fields = {
                k: v
                for k, v in row.payload.items()
                if k in Notification.__dataclass_fields__ and k != "sent_at"
            }
            delivery: Delivery = deliver(
                row.channel, channel, Notification(**fields), smtp=config.smtp, attempts=1, clock=clock
            )
            checkpoint("after-send")  # sent, not yet recorded: the next pass sends it again (same id)
            attempts = row.attempts + 1
            if delivery.status == "sent":
                settle(row, "sent", attempts, None, sent_at=delivery.sent_at)
                done.deliveries.append(_entry(row, "sent", None, attempts))
            elif delivery.retryable and attempts < GIVE_UP_AFTER:
                down.add(row.channel)
                settle(row, "pending", attempts, delivery.error, next_attempt_at=now + retry_wait(attempts))
                done.deliveries.append(_entry(row, "retrying", delivery.error, attempts))
            else:
                settle(row, "failed", attempts, delivery.error)
                done.deliveries.append(_entry(row, "failed", delivery.error, attempts))
    finally:
        store.finish_notifications(settled)
    done.channels_down = sorted(down)
    return done


def _due(store: Any, now: datetime, down: set[str]) -> Any:
    """Every row due at ``now``, claimed :data:`BATCH` at a time, leaving out the channels found
    down in this pass (they wait for a later one)."""
    while True:
        batch = store.claim_notifications(now, lease=LEASE, limit=BATCH, skip=down)
        if not batch:
            return
        yield from batch


def _entry(row: Any, status: str, error: str | None, attempts: int) -> dict[str, Any]:
    return {
        "id": row.id,
        "kind": row.kind,
        "channel": row.channel,
        "status": status,
        "attempts": attempts,
        "error": error,
        "dataset": row.payload.get("dataset"),
        "incident_id": row.incident_id,
    }
