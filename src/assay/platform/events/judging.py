"""Judging an event's contracts on one window from stored numbers only: each (field, requirement)
from the run's metrics and, for baselines (``median(last(168))``), the event's stored series, read
in ONE store query. No query reaches the data: ``queries.judge`` is 0."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from assay.judge import dynamic
from assay.platform.checks import conditions
from assay.platform.checks.outcomes import CheckResult, as_outcome, finite, parse_at
from assay.platform.events.compile import WindowMeasurement
from assay.platform.events.contract import GRAINS, Contract, Requirement, baseline_condition
from assay.platform.events.document import Loaded
from assay.platform.events.event import EventSpec
from assay.store import MetricKey
from assay.vocabulary import Outcome

PLATFORM_OWNER = "platform"
BASELINE_WINDOWS = 24
"""The baseline an alert shows for a share requirement: the median of its last 24 stored windows."""
DIMENSION = "validity"
"""The quality dimension of a contract's incidents (a contract spans several: one key per contract)."""
EVENT_METRICS = (
    "row_count",
    "duplicates",
    "duplicate_rate",
    "latency_p50",
    "latency_p95",
    "latency_max",
    "freshness",
    "max_event_time",
    "null_density",
)
"""The event's own numbers, stored every window (what the Event Quality Score reads)."""


@dataclass
class EventResult(CheckResult):
    """An event run as its JSON reports it: a check run's JSON with ``event``, ``window``,
    ``contracts`` and the event's own ``metrics`` (docs/events.md, "The run's JSON")."""

    event: str = ""
    window: dict[str, str] = field(default_factory=dict)
    contracts: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, float | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        payload = super().to_dict()
        payload["kind"] = "event"
        payload["event"] = self.event
        payload["window"] = dict(self.window)
        payload["contracts"] = finite(self.contracts)
        payload["metrics"] = finite(self.metrics)
        return payload


def window_start(at: str | date | datetime | None, now: datetime, grain: str) -> datetime:
    """The start of the window a run measures: the one holding ``at`` (a date is its midnight
    UTC), or by default the last window that ended at or before ``now``.

    >>> now = datetime(2026, 11, 12, 10, 20, tzinfo=UTC)
    >>> window_start("2026-11-12T10:30", now, "hour").isoformat(), window_start(None, now, "hour").hour
    ('2026-11-12T10:00:00+00:00', 9)
    """
    seconds = GRAINS[grain]
    moment = now - timedelta(seconds=seconds) if at is None else parse_at(at, now)[0]
    floored = math.floor(moment.timestamp() / seconds) * seconds
    return datetime.fromtimestamp(floored, UTC)


class EventJudging:
    """The judgement of the ``chosen`` contracts of ``event`` on the window [start, end);
    ``store`` (None: no history) is read, never written."""

    def __init__(
        self, event: EventSpec, chosen: Sequence[Loaded], *, start: datetime, end: datetime, store: Any
    ) -> None:
        self.event = event
        self.chosen = list(chosen)
        self.start = start
        self.end = end
        self.store = store
        self.requirements = [(item.contract, r) for item in self.chosen for r in item.contract.requirements()]

    def _series(self) -> dict[tuple[str, str, str], list[float]]:
        """The event's stored history of every metric the chosen contracts read, in ONE store query."""
        if self.store is None:
            return {}
        names = {r.metric for _, r in self.requirements}
        deepest = BASELINE_WINDOWS
        for _, r in self.requirements:
            if r.drift is not None:
                deepest = max(
                    deepest, conditions.needs_history(baseline_condition(r.drift.vs)), r.drift.min_history
                )
        found = self.store.metric_series(
            self.event.name,
            partition=self.event.grain,
            names=names,
            before=self.start,
            entities=("Column",),
            loads=deepest,
        )
        return {k: [v for _, v in points if v is not None] for k, points in found.items()}

    def outcomes(self, m: WindowMeasurement | None, failure: tuple[str, str] | None) -> list[dict[str, Any]]:
        series = self._series() if failure is None and m is not None and m.rows else {}
        out = []
        for contract, requirement in self.requirements:
            base = self._base(contract, requirement)
            if failure is not None:
                kind, why = failure
                if kind == "system":
                    out.append(as_outcome(base, Outcome.SYSTEM_ERROR, PLATFORM_OWNER, why))
                elif kind == "config":
                    out.append(as_outcome(base, Outcome.CONFIG_ERROR, contract.consumer.team, why))
                else:
                    out.append(as_outcome(base, Outcome.SKIPPED, None, why, reason="upstream_missing"))
                continue
            assert m is not None
            base["rows"] = m.rows
            if not m.rows:
                why = (
                    f"upstream missing: no event of {self.event.name} in the window {self.start.isoformat()}"
                )
                out.append(as_outcome(base, Outcome.SKIPPED, None, why, reason="upstream_missing"))
                continue
            history = series.get(("Column", requirement.field, requirement.metric), [])
            observed = m.value(requirement.field, requirement.metric)
            base["observed"] = observed
            if requirement.drift is not None:
                out.append(self._drift(contract, requirement, base, observed, history))
            else:
                out.append(self._share(contract, requirement, base, observed, history))
        return out

    def _share(
        self,
        contract: Contract,
        requirement: Requirement,
        base: dict[str, Any],
        observed: float | None,
        history: list[float],
    ) -> dict[str, Any]:
        assert requirement.min_rate is not None
        base["baseline"] = statistics.median(history[:BASELINE_WINDOWS]) if history else None
        base["expected"] = {"low": requirement.min_rate}
        if observed is None:
            why = f"upstream missing: no row of the window has a value of '{requirement.field}'"
            return as_outcome(base, Outcome.SKIPPED, None, why, reason="upstream_missing")
        shown = (
            f"{requirement.name} = {_percent(observed)}, expected at least {_percent(requirement.min_rate)}"
        )
        if observed >= requirement.min_rate - 1e-12:
            return as_outcome(base, Outcome.PASSED, None, shown)
        baseline = "no history" if base["baseline"] is None else f"baseline {_percent(base['baseline'])}"
        return as_outcome(base, Outcome.FAILED, self._owner(contract), f"{shown} ({baseline})")

    def _drift(
        self,
        contract: Contract,
        requirement: Requirement,
        base: dict[str, Any],
        observed: float | None,
        history: list[float],
    ) -> dict[str, Any]:
        drift = requirement.drift
        assert drift is not None
        if len(history) < drift.min_history:
            why = (
                f"warming up: {len(history)} stored window(s) of {requirement.field}'s null rate, "
                f"{drift.min_history} needed"
            )
            return as_outcome(base, Outcome.SKIPPED, None, why, reason="warming_up")
        condition = baseline_condition(drift.vs)
        try:
            baseline = dynamic.number(condition.operands[0], lambda k: history[:k])
        except dynamic.DynamicError as error:
            return as_outcome(base, Outcome.CONFIG_ERROR, contract.consumer.team, f"vs: {error}")
        if baseline is None or observed is None:
            return as_outcome(
                base, Outcome.SKIPPED, None, "no null rate to compare", reason="upstream_missing"
            )
        base["baseline"] = baseline
        base["expected"] = {"high": baseline + drift.max_pp / 100}
        moved = (observed - baseline) * 100
        shown = (
            f"{requirement.name}: null rate {_percent(observed)} vs {_percent(baseline)} ({drift.vs}), "
            f"{moved:+.2f} pp, at most +{drift.max_pp:g} pp"
        )
        if moved <= drift.max_pp + 1e-9:
            return as_outcome(base, Outcome.PASSED, None, shown)
        return as_outcome(base, Outcome.FAILED, self._owner(contract), shown)

    def contract(self, contract: Contract, outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """A contract's one line of the run: its outcome, and every broken (field, requirement)."""
        mine = [o for o in outcomes if o["contract"] == contract.id]
        states = {o["outcome"] for o in mine}
        outcome = next(
            (s for s in ("failed", "system_error", "config_error", "passed") if s in states),
            Outcome.SKIPPED.value,
        )
        broken = [
            {
                "field": o["field"],
                "requirement": o["requirement"],
                "observed": o["observed"],
                "baseline": o["baseline"],
                "expected": o["expected"],
            }
            for o in mine
            if o["outcome"] == "failed"
        ]
        window = f"{self.event.name} [{self.start.isoformat()}, {self.end.isoformat()})"
        if broken:
            message = f"{len(broken)} requirement(s) of {contract.id} broken on {window}: " + "; ".join(
                o["message"] for o in mine if o["outcome"] == "failed"
            )
        elif outcome in ("config_error", "system_error"):
            message = "; ".join(dict.fromkeys(o["message"] for o in mine if o["outcome"] == outcome))
        else:
            message = f"{contract.id}: {outcome} on {window}"
        return {
            "consumer": contract.id,
            "contact": contract.consumer.contact,
            "tier": contract.consumer.tier,
            "expectation": contract.expectation,
            "severity": contract.severity,
            "mode": contract.mode,
            "outcome": outcome,
            "owner": self._owner(contract) if broken else None,
            "requirements": len(mine),
            "broken": broken,
            "message": message,
        }

    def _base(self, contract: Contract, requirement: Requirement) -> dict[str, Any]:
        return {
            "expectation": f"{contract.id}/{requirement.name}",
            "group": None,
            "outcome": None,
            "severity": contract.severity,
            "mode": contract.mode,
            "owner": None,
            "observed": None,
            "expected": None,
            "message": None,
            "reason": None,
            "attempts": 1,
            "explained_by": [],
            "samples": [],
            "contract": contract.id,
            "field": requirement.field,
            "requirement": requirement.kind,
            "metric": requirement.metric,
            "baseline": None,
            "rows": None,
        }

    def _owner(self, contract: Contract) -> str:
        """Who answers for a broken field: the event's producer, else the consumer that declared it."""
        producer = self.event.producer
        return (producer.team if producer is not None else None) or contract.consumer.team


def metric_key(name: str, metric: str) -> MetricKey:
    return MetricKey("Dataset", "*", metric) if name == "*" else MetricKey("Column", name, metric)


def _percent(value: float) -> str:
    return f"{value * 100:.4g}%"
