"""A deterministic feed of the event ``trade_executed.v3``: JSON lines, one file per UTC day.

Each record is ``{"event_id", "event_ts", "ingested_at", "payload": {"trade_id", "amount",
"currency", "venue"}}``. The volume follows the hour of the day (busier in the afternoon, UTC),
a few records in a thousand are sent twice (the same ``event_id``, ingested again later), and
``ingested_at`` is a few seconds after ``event_ts``. A :class:`Breakage` makes one field arrive as
the empty string on a share of records that climbs from 0.01 % to over 30 % (the seed's case of a
single broken field in an otherwise healthy event; several break several fields); ``stop_at``
makes the producer stop sending.
The same arguments always write the same bytes.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> [p.name for p in feed(folder, start=date(2026, 11, 1), days=2, per_hour=5)]
['trade_executed-2026-11-01.jsonl', 'trade_executed-2026-11-02.jsonl']
>>> first = json.loads((folder / "trade_executed-2026-11-01.jsonl").read_text().splitlines()[0])
>>> sorted(first), sorted(first["payload"])
(['event_id', 'event_ts', 'ingested_at', 'payload'], ['amount', 'currency', 'trade_id', 'venue'])
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

NAME = "trade_executed.v3"
START = date(2026, 11, 1)
VENUES = ("XNYS", "XNAS", "XLON", "XTKS")
CURRENCIES = ("USD", "EUR", "GBP", "JPY")
DUPLICATES = 0.003
"""The share of records sent twice."""

CONTRACTS = """apiVersion: assay/v1
kind: EventContract
event:
  name: trade_executed.v3
  source: {{path: "{source}"}}
  key: event_id
  event_time: event_ts
  ingest_time: ingested_at
  payload: payload
  description: One executed trade, as the matching engine reports it.
  producer: {{team: trading-core, contact: "mailto:trading-core@example.com"}}
consumer: {{team: risk-analytics, contact: "mailto:risk@example.com", tier: 0}}
window: {{grain: hour}}
fields:
  trade_id: {{present: true, type: string, non_empty: true}}
  amount:   {{present: true, type: decimal, range: [0, 1.0e9]}}
  currency: {{present: true, in: [USD, EUR, GBP, JPY]}}
  venue:    {{non_empty: true, null_rate_drift: {{max_pp: 0.5, vs: "median(last(168))"}}}}
severity: error
---
apiVersion: assay/v1
kind: EventContract
event:
  name: trade_executed.v3
  source: {{path: "{source}"}}
  key: event_id
  event_time: event_ts
  ingest_time: ingested_at
  payload: payload
consumer: {{team: finance-reporting, contact: "mailto:finance@example.com", tier: 2}}
window: {{grain: hour}}
fields:
  amount: {{present: true, type: decimal}}
  venue:  {{non_empty: {{min_rate: 0.5}}}}
severity: warning
"""
"""Two consumers' contracts on the feed: risk-analytics needs every venue, finance-reporting
tolerates half of them missing. ``{source}`` is the feed's glob, relative to the contracts' folder."""


@dataclass(frozen=True)
class Breakage:
    """From ``start`` on, ``field`` arrives as ``value`` (the empty string; None: a JSON null) on
    a share of records that climbs from ``first`` to ``last`` over ``hours`` hours
    (geometrically: a share that doubles, and doubles again), then stays at ``last``."""

    start: datetime
    field: str = "venue"
    hours: int = 24
    first: float = 0.0001
    last: float = 0.32
    value: str | None = ""

    def share(self, at: datetime) -> float:
        if at < self.start:
            return 0.0
        done = min(1.0, (at - self.start).total_seconds() / (3600 * self.hours))
        return float(self.first * (self.last / self.first) ** done)


def volume(hour: int, per_hour: int) -> float:
    """The expected records of an hour of the day (UTC): ``per_hour`` on average, a quarter more
    at 18:00 and a quarter less at 06:00."""
    return per_hour * (1 + 0.25 * math.sin(2 * math.pi * (hour - 12) / 24))


def feed(
    folder: Path,
    *,
    start: date = START,
    days: int = 3,
    per_hour: int = 60,
    breakages: Sequence[Breakage] = (),
    stop_at: datetime | None = None,
    seed: int = 0,
) -> list[Path]:
    """Write ``days`` days of the feed from ``start`` into ``folder``, one JSON-lines file per day
    (``trade_executed-YYYY-MM-DD.jsonl``); returns the files."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for offset in range(days):
        day = start + timedelta(days=offset)
        rng = random.Random(f"{seed}/{day.isoformat()}")
        # breakages draw from their own stream: a broken feed is the healthy one, but for them
        breaker = random.Random(f"{seed}/{day.isoformat()}/breakages")
        records: list[dict[str, Any]] = []
        for hour in range(24):
            began = datetime.combine(day, time(hour), UTC)
            count = round(volume(hour, per_hour) * rng.uniform(0.95, 1.05))
            records.extend(_hour(began, count, rng, breaker, breakages))
        records.sort(key=lambda r: (r["ingested_at"], r["event_id"]))
        if stop_at is not None:
            records = [r for r in records if r["event_ts"] < _stamp(stop_at)]
        path = folder / f"trade_executed-{day.isoformat()}.jsonl"
        path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
        written.append(path)
    return written


def _hour(
    began: datetime, count: int, rng: random.Random, breaker: random.Random, breakages: Sequence[Breakage]
) -> list[dict[str, Any]]:
    out = []
    for n in range(count):
        at = began + timedelta(milliseconds=rng.randrange(3_600_000))
        payload: dict[str, Any] = {
            "trade_id": f"T{rng.randrange(10**8):08d}",
            "amount": round(min(1e6, rng.lognormvariate(8, 1.2)), 2),
            "currency": rng.choice(CURRENCIES),
            "venue": rng.choice(VENUES),
        }
        for breakage in breakages:
            if breaker.random() < breakage.share(at):
                payload[breakage.field] = breakage.value
        record = {
            "event_id": f"{began:%Y%m%d%H}-{n:05d}",
            "event_ts": _stamp(at),
            "ingested_at": _stamp(at + timedelta(milliseconds=rng.randrange(500, 20_000))),
            "payload": payload,
        }
        out.append(record)
        if rng.random() < DUPLICATES:  # sent again, later: the same event, a second record
            again = dict(record, ingested_at=_stamp(at + timedelta(seconds=rng.randrange(30, 120))))
            out.append(again)
    return out


def _stamp(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_contracts(folder: Path, source: str) -> Path:
    """Write :data:`CONTRACTS` as ``folder/events.yaml``, reading the feed at ``source`` (a glob
    relative to ``folder``); returns the file."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "events.yaml"
    path.write_text(CONTRACTS.format(source=source))
    return path
