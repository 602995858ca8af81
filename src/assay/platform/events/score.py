"""The Event Quality Score: 100 points over seven dimensions, read from the event's stored windows.

metadata, freshness and volume stability are worth 20 points each; delivery latency, duplicate
rate, null density and adoption 10 each. A tier has a gate (80 for Tier 0, 60 for Tier 1, 40 for
Tiers 2 and 3); the producer hears of its event after 2 consecutive UTC days scored below it
(:func:`record_event_score`), once per streak. Every dimension reads stored numbers only (the
windows that contract runs measured), never the data; each is one small rule below, with its
formula in docs/events.md.

The weights decide what the score can see (the seed's arithmetic): one 10-point dimension at zero
leaves 90, above the Tier 0 gate; three at zero fall to 70, below it. A single broken field is
caught by the consumer's field requirements, not by the score.

>>> full = {name: Dimension(points, points, "") for name, points in MAX_POINTS.items()}
>>> composite(dict(full, null_density=Dimension(0, 10, "")), tier=0)
(90.0, 80.0, False)
"""

from __future__ import annotations

import math
import statistics
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from assay.durations import duration
from assay.errors import ConfigError
from assay.platform.events.document import Loaded
from assay.platform.events.event import EventSpec, events, workspace_contracts

MAX_POINTS = {
    "metadata": 20,
    "freshness": 20,
    "volume_stability": 20,
    "delivery_latency": 10,
    "duplicate_rate": 10,
    "null_density": 10,
    "adoption": 10,
}
"""Each dimension's points at best; they add up to 100."""
GATES = {0: 80.0, 1: 60.0, 2: 40.0, 3: 40.0}
"""The score an event of each tier must keep."""
PROVISIONAL_DAYS = 14
"""Under this many days of stored windows, a score is provisional (and alerts no one)."""
DAYS_BELOW = 2
"""Consecutive UTC days below the gate before the producer hears of it."""
EXPECTATION = "event-quality-score"
"""The expectation of the producer's incident (what a route's ``expectation:`` matches)."""
DIMENSION = "score"
PERIOD = {"hour": timedelta(days=1), "day": timedelta(days=7)}
"""The windows a score judges: those of the last day (hourly events) or week (daily events)."""
SLOTS = {"hour": (timedelta(days=1), 7), "day": (timedelta(days=7), 4)}
"""A window's baseline volume: the same slot (hour of the day, day of the week), this many times back."""
LATENCY_FULL, LATENCY_ZERO = 300.0, 3600.0
DUPLICATES_FULL, DUPLICATES_ZERO = 0.005, 0.05
DENSITY_FULL, DENSITY_ZERO = 0.01, 0.25
VOLUME_FULL, VOLUME_ZERO = 0.1, 0.6
FRESH_FULL, FRESH_ZERO = 2, 6  # in windows
ADOPTION = {0: 0.0, 1: 5.0, 2: 8.0}
"""Points by number of consumers; three or more: 10."""
READS_SINCE = timedelta(days=30)
SUBJECT = "event"
"""The ``scores.subject`` an event's score is kept under."""
NAMESPACE = uuid.UUID("0d7c1f0e-8a8b-4f7e-bb5e-6a2f0f9c4e21")
SERIES = ("row_count", "duplicates", "latency_p95", "max_event_time", "null_density")


@dataclass(frozen=True)
class Dimension:
    """One dimension's points out of its ``max``, and why (in words, with the numbers)."""

    points: float
    max: int
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"points": round(self.points, 2), "max": self.max, "why": self.why}


def linear(value: float, full: float, zero: float) -> float:
    """The share of a dimension's points at ``value``: all of them up to ``full``, none from
    ``zero`` on, in proportion between.

    >>> linear(300, 300, 3600), linear(1950, 300, 3600), linear(4000, 300, 3600)
    (1.0, 0.5, 0.0)
    """
    if value <= full:
        return 1.0
    if value >= zero:
        return 0.0
    return (zero - value) / (zero - full)


def gate(tier: int) -> float:
    """The gate of a tier: 80 for Tier 0, 60 for Tier 1, 40 for Tiers 2 and 3."""
    return GATES[tier]


def composite(dimensions: Mapping[str, Dimension], tier: int) -> tuple[float, float, bool]:
    """The score (the sum of the dimensions' points), the tier's gate, and whether it is below.

    >>> full = {name: Dimension(points, points, "") for name, points in MAX_POINTS.items()}
    >>> broken = {"delivery_latency", "duplicate_rate", "null_density"}
    >>> composite({n: Dimension(0, d.max, "") if n in broken else d for n, d in full.items()}, tier=0)
    (70.0, 80.0, True)
    """
    score = round(float(sum(d.points for d in dimensions.values())), 2)
    found = gate(tier)
    return score, found, score < found


# --- what the dimensions read ------------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """What a score is computed from: the event as its contracts declare it, its stored windows
    (metric → [(window start, value)], most recent first), its readers, the clock."""

    event: EventSpec
    series: Mapping[str, list[tuple[datetime, float]]]
    readers: frozenset[str]
    now: datetime

    def recent(self, metric: str) -> list[tuple[datetime, float]]:
        """The metric's values in the scored period: the windows that ended in the last day
        (hourly events) or week (daily events) before the clock."""
        since = self.now - PERIOD[self.event.grain] - timedelta(seconds=self.event.seconds)
        return [(at, v) for at, v in self.series.get(metric, []) if at > since]

    def weighted(self, metric: str) -> float | None:
        """The metric's mean over the period, each window weighted by its rows."""
        rows = dict(self.recent("row_count"))
        pairs = [(v, rows.get(at, 0.0)) for at, v in self.recent(metric)]
        total = sum(w for _, w in pairs)
        return None if not total else sum(v * w for v, w in pairs) / total


def _metadata(e: Evidence) -> Dimension:
    """4 points each for a description, a producer team, a producer contact and a key; 4 for the
    share of the declared fields some contract gives a type."""
    event = e.event
    producer = event.producer
    items = {
        "description": bool(event.description),
        "producer team": bool(producer and producer.team),
        "producer contact": bool(producer and producer.contact),
        "key": bool(event.key),
    }
    typed = {r.field for item in event.contracts for r in item.contract.requirements() if r.kind == "type"}
    fields = event.fields
    share = len(typed & set(fields)) / len(fields) if fields else 0.0
    missing = [name for name, given in items.items() if not given]
    why = f"missing {', '.join(missing)}" if missing else "description, producer team and contact, key"
    why += f"; {len(typed & set(fields))} of {len(fields)} field(s) typed"
    return Dimension(4.0 * sum(items.values()) + 4.0 * share, MAX_POINTS["metadata"], why)


def _freshness(e: Evidence) -> Dimension:
    """All 20 points while the latest event seen is at most 2 windows old, none from 6 windows,
    in proportion between."""
    latest = [v for _, v in e.series.get("max_event_time", [])]
    if not latest:
        return Dimension(0.0, MAX_POINTS["freshness"], "no window with an event is stored")
    lag = e.now.timestamp() - max(latest)
    grain = e.event.seconds
    share = linear(lag, FRESH_FULL * grain, FRESH_ZERO * grain)
    why = (
        f"the latest event is {duration(max(0.0, lag))} old "
        f"(all points within {duration(FRESH_FULL * grain)}, none after {duration(FRESH_ZERO * grain)})"
    )
    return Dimension(MAX_POINTS["freshness"] * share, MAX_POINTS["freshness"], why)


def _volume(e: Evidence) -> Dimension:
    """Each window of the period against the median of the same slot (hour of the day, or day of
    the week) in the windows before: all 20 points while the root mean square of the relative
    deviations is at most 10 %, none from 60 %."""
    counts = dict(e.series.get("row_count", []))
    step, back = SLOTS[e.event.grain]
    deviations = []
    for at, count in e.recent("row_count"):
        past = [counts[at - step * k] for k in range(1, back + 1) if at - step * k in counts]
        baseline = statistics.median(past) if past else None
        if baseline:
            deviations.append((count - baseline) / baseline)
    if not deviations:
        return Dimension(0.0, MAX_POINTS["volume_stability"], "no window has a same-slot history yet")
    spread = math.sqrt(sum(d * d for d in deviations) / len(deviations))
    share = linear(spread, VOLUME_FULL, VOLUME_ZERO)
    why = (
        f"{len(deviations)} window(s) deviate {spread:.1%} (root mean square) from the median of the "
        f"same slot (all points within {VOLUME_FULL:.0%}, none from {VOLUME_ZERO:.0%})"
    )
    return Dimension(MAX_POINTS["volume_stability"] * share, MAX_POINTS["volume_stability"], why)


def _latency(e: Evidence) -> Dimension:
    """The median over the period's windows of their p95 delivery latency (ingest − event time):
    all 10 points up to 5 minutes, none from an hour."""
    values = [v for _, v in e.recent("latency_p95")]
    if not values:
        why = "no ingest time is declared" if e.event.ingest_time is None else "no window of the period"
        return Dimension(0.0, MAX_POINTS["delivery_latency"], why)
    p95 = statistics.median(values)
    share = linear(p95, LATENCY_FULL, LATENCY_ZERO)
    why = f"p95 latency {duration(max(0.0, p95))} ({_bounds(duration(LATENCY_FULL), duration(LATENCY_ZERO))})"
    return Dimension(MAX_POINTS["delivery_latency"] * share, MAX_POINTS["delivery_latency"], why)


def _duplicates(e: Evidence) -> Dimension:
    """Records sharing a key over all records of the period: all 10 points up to 0.5 %, none from 5 %."""
    if e.event.key is None:
        return Dimension(0.0, MAX_POINTS["duplicate_rate"], "no key is declared: duplicates cannot be told")
    rows = sum(v for _, v in e.recent("row_count"))
    if not rows:
        return Dimension(0.0, MAX_POINTS["duplicate_rate"], "no event in the period")
    rate = sum(v for _, v in e.recent("duplicates")) / rows
    share = linear(rate, DUPLICATES_FULL, DUPLICATES_ZERO)
    bounds = _bounds(f"{DUPLICATES_FULL:.1%}", f"{DUPLICATES_ZERO:.0%}")
    why = f"{rate:.2%} of {int(rows)} record(s) repeat a key ({bounds})"
    return Dimension(MAX_POINTS["duplicate_rate"] * share, MAX_POINTS["duplicate_rate"], why)


def _density(e: Evidence) -> Dimension:
    """The share of declared field values that carry nothing (missing, null or blank text), over
    the period: all 10 points up to 1 %, none from 25 %."""
    density = e.weighted("null_density")
    if density is None:
        return Dimension(0.0, MAX_POINTS["null_density"], "no event in the period")
    share = linear(density, DENSITY_FULL, DENSITY_ZERO)
    bounds = _bounds(f"{DENSITY_FULL:.0%}", f"{DENSITY_ZERO:.0%}")
    why = f"{density:.2%} of the declared fields' values are empty ({bounds})"
    return Dimension(MAX_POINTS["null_density"] * share, MAX_POINTS["null_density"], why)


def _adoption(e: Evidence) -> Dimension:
    """The consumers: the teams with a contract on the event and the readers the store recorded
    in the last 30 days; 5 points for one, 8 for two, 10 for three or more."""
    teams = {item.contract.consumer.team for item in e.event.contracts}
    consumers = teams | e.readers
    points = ADOPTION.get(len(consumers), 10.0)
    why = f"{len(consumers)} consumer(s): {', '.join(sorted(consumers)) or 'none'}"
    return Dimension(points, MAX_POINTS["adoption"], why)


RULES: dict[str, Callable[[Evidence], Dimension]] = {
    "metadata": _metadata,
    "freshness": _freshness,
    "volume_stability": _volume,
    "delivery_latency": _latency,
    "duplicate_rate": _duplicates,
    "null_density": _density,
    "adoption": _adoption,
}
"""One rule per dimension, in the order the score lists them."""


def _bounds(full: str, zero: str) -> str:
    return f"all points within {full}, none from {zero}"


# --- the score ---------------------------------------------------------------------------------------


def find_event(root: Path, name: str, contracts: Sequence[Loaded] | None = None) -> EventSpec:
    """The event ``name`` as the workspace's contracts (``checks/*.yaml``), or ``contracts``, declare it."""
    found = events(workspace_contracts(root) if contracts is None else contracts)
    if name not in found:
        known = ", ".join(sorted(found)) or "none"
        raise ConfigError(f"no event contract in {root / 'checks'} declares event {name!r} (events: {known})")
    return found[name]


def event_score(
    store: Any,
    workspace_root: Path | str,
    name: str,
    *,
    now: datetime,
    contracts: Sequence[Loaded] | None = None,
) -> dict[str, Any]:
    """The Event Quality Score of event ``name`` at ``now``: ``{"event", "score", "dimensions":
    {name: {"points", "max", "why"}}, "tier", "gate", "below_gate", "provisional"}``. Reads the
    event's stored windows in one store query, and its recorded readers."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    event = find_event(Path(workspace_root), name, contracts)
    per_day = 86400 // event.seconds
    found = store.metric_series(
        event.name,
        partition=event.grain,
        names=set(SERIES),
        before=now,
        entities=("Dataset",),
        loads=(PROVISIONAL_DAYS + 8 * (1 if event.grain == "hour" else 4)) * per_day,
    )
    series = {key[2]: [(at, v) for at, v in points if v is not None] for key, points in found.items()}
    readers = frozenset(by for _, by in store.reads_between(event.name, now - READS_SINCE, now) if by)
    evidence = Evidence(event, series, readers, now)
    dimensions = {name_: rule(evidence) for name_, rule in RULES.items()}
    score, found_gate, below = composite(dimensions, event.tier)
    starts = [at for points in found.values() for at, _ in points]
    provisional = not starts or now - min(starts) < timedelta(days=PROVISIONAL_DAYS)
    return {
        "event": event.name,
        "score": score,
        "dimensions": {key: d.to_dict() for key, d in dimensions.items()},
        "tier": event.tier,
        "gate": found_gate,
        "below_gate": below,
        "provisional": provisional,
    }


def record_event_score(
    store: Any,
    workspace_root: Path | str,
    name: str,
    *,
    now: datetime,
    score: Mapping[str, Any] | None = None,
    contracts: Sequence[Loaded] | None = None,
) -> dict[str, Any]:
    """Keep the score of ``now``'s UTC day (the last one of a day replaces the others) and, when
    it and the stored score of the day before are both below the gate (neither provisional), put
    the producer's notification in the outbox, once per streak: the streak is an incident of the
    event (expectation ``event-quality-score``), opened on its second day, resolved after 2 days
    at or above the gate. ``score`` is one :func:`event_score` computed (computed here if not given).
    Returns the score with ``day`` and ``incidents`` (what the day did to the incident)."""
    from assay.platform.incidents import Context, judge
    from assay.platform.notify import load_config, route

    root = Path(workspace_root)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    event = find_event(root, name, contracts)
    computed = (
        dict(score) if score is not None else event_score(store, root, name, now=now, contracts=contracts)
    )
    day = now.astimezone(UTC).date()
    config = load_config(root)
    with store.transaction(lock=event.name):
        store.record_score(
            SUBJECT,
            event.name,
            day,
            float(computed["score"]),
            gate=float(computed["gate"]),
            below_gate=bool(computed["below_gate"]),
            detail=computed,
        )
        kept = {
            row.day: row for row in store.score_history(SUBJECT, event.name, before=day, limit=DAYS_BELOW - 1)
        }
        outcome = _streak(computed, [kept.get(day - timedelta(days=k)) for k in range(1, DAYS_BELOW)])
        counts = {"opened": 0, "escalated": 0, "resolved": 0, "notifications": 0}
        if outcome is not None:
            producer = event.producer
            context = Context(
                dataset=event.name,
                source=event.source,
                tags=event.tags,
                tier=event.tier,
                dimensions={EXPECTATION: DIMENSION},
                divided=frozenset(),
                route=lambda facts: route(config.routes, facts),
                move_share=config.incidents.move_share,
                flow="event",
            )
            item = {
                "expectation": EXPECTATION,
                "group": None,
                "outcome": outcome,
                "severity": "error",
                "mode": "enforce",
                "owner": (producer.team if producer else None) or None,
                "observed": float(computed["score"]),
                "expected": {"low": float(computed["gate"])},
                "message": _message(event, computed, day),
            }
            run_id = str(uuid.uuid5(NAMESPACE, f"score/{event.name}/{day.isoformat()}"))
            at = datetime.combine(day, time(0), UTC)
            counts = judge(store, [item], context, at=at, run_id=run_id, now=now)
    return {**computed, "day": day.isoformat(), "incidents": counts}


def _streak(today: Mapping[str, Any], days: Sequence[Any]) -> str | None:
    """The day's evaluation of the producer's incident: ``failed`` on the :data:`DAYS_BELOW`-th
    consecutive day below the gate, ``passed`` on a day at or above it, nothing otherwise (the
    first day below, or a provisional score)."""
    if today.get("provisional"):
        return None
    if not today["below_gate"]:
        return "passed"
    for row in days:
        if row is None or not row.below_gate or (row.detail or {}).get("provisional"):
            return None
    return "failed"


def _message(event: EventSpec, score: Mapping[str, Any], day: date) -> str:
    producer = event.producer
    who = (
        ", ".join(x for x in ((producer.team, producer.contact) if producer else ()) if x)
        or "no producer declared"
    )
    weakest = sorted(
        score["dimensions"].items(),
        key=lambda item: item[1]["points"] / item[1]["max"] if item[1]["max"] else 1.0,
    )[:3]
    shown = "; ".join(f"{name} {d['points']:g}/{d['max']} ({d['why']})" for name, d in weakest)
    return (
        f"{event.name}: Event Quality Score {score['score']:g} below the Tier {score['tier']} gate "
        f"{score['gate']:g} for {DAYS_BELOW} days in a row, up to {day.isoformat()} (producer: {who}); "
        f"weakest: {shown}"
    )


__all__ = ["GATES", "MAX_POINTS", "Dimension", "composite", "event_score", "gate", "record_event_score"]
