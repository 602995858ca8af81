"""A run of an event's contracts on one window: measure → persist → judge, ONE query, no rescans.

The run is a check run (:class:`assay.platform.runs.run.Run`, kind ``check``) of the dataset named after
the event:

1. **measure** — every chosen contract of the event in ONE statement over the window's rows
   (:mod:`assay.platform.events.compile`); a platform failure is retried with backoff;
2. **persist** — the window's metrics are one ``pending`` load of the event (partition: the
   window's grain, logical time: the window's start), before anything is judged;
3. **judge** — each (field, requirement) of each contract from the stored numbers: the run's,
   and for baselines (``median(last(168))``) the event's stored series, read in ONE store query.
   No query reaches the data: ``queries.judge`` is 0.

Each (field, requirement) is an outcome (``passed``, ``failed``, ``config_error``,
``system_error``, ``skipped``), recorded in ``check_outcomes``; each contract is ONE incident key
(``contract:<consumer team>``), so its consumer hears of all its broken fields in one alert.
"""

from __future__ import annotations

import math
import statistics
import time as clock
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from assay.engine import Engine, EngineError
from assay.errors import ConfigError, PlatformError
from assay.judge import dynamic
from assay.platform.checks import conditions
from assay.platform.checks.runner import Attempt, CheckResult, _finite, _outcome, parse_at, summarize
from assay.platform.events.compile import EventQuery, WindowMeasurement, measure_window, register_source
from assay.platform.events.contract import GRAINS, Contract, Requirement, baseline_condition
from assay.platform.events.document import Loaded
from assay.platform.events.event import EventSpec
from assay.platform.runs.faults import checkpoint
from assay.platform.runs.run import Input, Run
from assay.platform.sources import SourcePolicy
from assay.store import MetricKey
from assay.vocabulary import Outcome, RunState
from assay.workspace import Workspace

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
        payload["contracts"] = _finite(self.contracts)
        payload["metrics"] = _finite(self.metrics)
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


class EventRun:
    """One run of an event's contracts on one window; :func:`run_event` is the front door."""

    def __init__(
        self,
        event: EventSpec,
        *,
        at: str | date | datetime | None = None,
        now: datetime | str | None = None,
        store: Any = None,
        workspace: Workspace | None = None,
        only: Sequence[str] = (),
        dry_run: bool = False,
        retries: int | None = None,
        backoff: float | None = None,
        engine_factory: Callable[[], Engine] | None = None,
        sleep: Callable[[float], None] = clock.sleep,
        run_id: str | None = None,
    ) -> None:
        from assay.judge.evaluation import parse_now

        self.run_id = run_id  # chosen by the caller (a scheduler's tick names its run before it starts)
        self.event = event
        self.now = parse_now(now)
        self.start = window_start(at, self.now, event.grain)
        self.end = self.start + timedelta(seconds=event.seconds)
        self.store = store
        self.workspace = workspace or Workspace(None)
        self.dry_run = dry_run
        teams = [item.contract.id for item in event.contracts]
        unknown = [team for team in only if team not in teams]
        if unknown:
            raise ConfigError(
                f"--only: no contract of {', '.join(repr(t) for t in unknown)} on event {event.name} "
                f"(its consumers: {', '.join(teams)})"
            )
        self.chosen: list[Loaded] = [item for item in event.contracts if not only or item.contract.id in only]
        self.notify = None if dry_run else _notify_config(self.workspace)
        self.attempts = 1 if retries is None else retries + 1
        self.backoff = 0.0 if backoff is None else backoff
        self.sleep = sleep
        self.engine_factory = engine_factory or _duckdb
        self.engines: list[Engine] = []
        self.requirements = [(item.contract, r) for item in self.chosen for r in item.contract.requirements()]

    @property
    def closes_day(self) -> bool:
        """Whether the window is the last of its UTC day (it ends at midnight)."""
        end = self.end.astimezone(UTC)
        return (end.hour, end.minute, end.second) == (0, 0, 0)

    # --- the run ---------------------------------------------------------------------------------

    def run(self) -> EventResult:
        event = self.event
        run = Run(
            "check",
            dataset=event.name,
            workspace=self.workspace,
            store=None if self.dry_run else self.store,
            inputs=[Input(event.source)],
            run_id=self.run_id,
            now=self.now,
        )
        at = self.start.isoformat()
        result = EventResult(run.id, ", ".join(event.files), event.name, at, self.now, self.dry_run)
        result.event = event.name
        result.window = {"grain": event.grain, "start": at, "end": self.end.isoformat()}
        run.counts = {"at": at}
        recording = not self.dry_run and self.store is not None
        try:
            with run:
                if recording:
                    self.store.add_stage(run.id, "running")
                run.phase = "measuring"
                started = clock.perf_counter()
                measured, failure = self._measure(result)
                result.queries["measure"] = sum(e.queries for e in self.engines)
                result.seconds["measure"] = clock.perf_counter() - started
                if measured is not None:
                    result.metrics = {name: measured.value("*", name) for name in EVENT_METRICS}
                started = clock.perf_counter()
                load = self._persist(run, measured) if recording and failure is None else None
                checkpoint("after-measure")
                result.seconds["persist"] = clock.perf_counter() - started
                run.phase = "judging"
                started = clock.perf_counter()
                before = sum(e.queries for e in self.engines)
                result.outcomes = self._judge(measured, failure)
                result.queries["judge"] = sum(e.queries for e in self.engines) - before
                result.seconds["judge"] = clock.perf_counter() - started
                result.contracts = [self._contract(item.contract, result.outcomes) for item in self.chosen]
                result.summary = summarize(result.outcomes)
                state = (
                    RunState.SYSTEM_ERROR
                    if failure is not None and failure[0] == "system"
                    else RunState.COMPLETED
                )
                result.state = state.value
                if state is RunState.SYSTEM_ERROR:
                    result.error = run.error = failure[1] if failure else None
                checkpoint("before-commit")
                if recording:
                    run.counts = {
                        "at": at,
                        "outcomes": len(result.outcomes),
                        "queries": result.queries["measure"],
                    }
                    run.commit(
                        lambda: self._settle(run, load, result),
                        summary=result.to_dict(),
                        state=state,
                    )
                else:
                    run.state = state
        finally:
            for engine in self.engines:
                engine.close()
        if recording and result.state == RunState.COMPLETED.value and self._scores_the_day():
            # the Event Quality Score of the clock's day is kept, and the producer alerted on the
            # second day below the gate (docs/scores.md, "The producer's alert")
            from assay.platform.events.score import record_event_score

            # scored from the contracts this run read (they may live outside the workspace)
            record_event_score(
                self.store, self.workspace.root, event.name, now=self.now, contracts=list(event.contracts)
            )
        return result

    def _scores_the_day(self) -> bool:
        """Whether this run keeps the day's score: the run of the day's last window does, and the
        first run of a clock's day that has none kept yet (when that run was killed after its
        commit, or never ran), so that no day goes without its score."""
        if self.closes_day:
            return True
        kept = self.store.score_history("event", self.event.name, limit=1)
        return not kept or kept[0].day != self.now.astimezone(UTC).date()

    # --- measure ---------------------------------------------------------------------------------

    def _measure(self, result: EventResult) -> tuple[WindowMeasurement | None, tuple[str, str] | None]:
        """The window's measurement, or why there is none: ("system" | "config" | "missing", why)."""
        grain = self.event.grain
        failure = "the platform failed"
        for attempt in range(1, self.attempts + 1):
            try:
                measured = self._measure_once()
            except PlatformError as error:
                failure = error.message
                result.attempts.append(Attempt(grain, attempt, failure))
                if attempt < self.attempts:
                    self.sleep(self.backoff * (2 ** (attempt - 1)))
                continue
            except ConfigError as error:
                result.attempts.append(Attempt(grain, attempt, None))
                result.profiles[grain] = {"rows": None, "attempts": attempt, "error": error.message}
                return None, ("config", error.message)
            result.attempts.append(Attempt(grain, attempt, None))
            missing = None if measured is not None else f"no file matches {self.event.source}"
            result.profiles[grain] = {
                "rows": None if measured is None else measured.rows,
                "attempts": attempt,
                "groups_beyond_top_k": {},
                "missing": missing,
            }
            if measured is None:
                return None, ("missing", f"upstream missing: {missing}")
            problem = self._unreadable(measured)
            if problem is not None:
                result.profiles[grain]["error"] = problem
                return measured, ("config", problem)
            return measured, None
        result.profiles[grain] = {"rows": None, "attempts": self.attempts, "error": failure}
        return None, ("system", failure)

    def _measure_once(self) -> WindowMeasurement | None:
        try:
            engine = self.engine_factory()
        except EngineError as error:
            raise PlatformError(f"opening the engine: {error.message}") from None
        self.engines.append(engine)
        policy = SourcePolicy.of(self.workspace.root)
        policy.path(self.event.source, base=Path(self.event.source).parent)
        paths = self.event.paths()
        policy.paths(paths, self.event.source)
        if not paths:
            return None
        query = EventQuery(self.event, [r for _, r in self.requirements], start=self.start, end=self.end)
        try:
            register_source(engine, self.event, paths)
            return measure_window(engine, query, self.now)
        except EngineError as error:
            raise ConfigError(
                f"event {self.event.name}: reading {self.event.source}: {error.message}"
            ) from None

    def _unreadable(self, m: WindowMeasurement) -> str | None:
        """Why the source's records cannot be this event's as the contracts read it: no record has
        an event time, or (with ``payload``) none has a payload object."""
        event = self.event
        if m.source_rows and not m.timed_rows:
            return (
                f"event {event.name}: event_time '{event.event_time}' is missing or not a timestamp in every "
                f"one of the source's {m.source_rows} record(s)"
            )
        if event.payload is not None and m.source_rows and not m.payload_objects:
            return (
                f"event {event.name}: payload '{event.payload}' is not a JSON object in any of the source's "
                f"{m.source_rows} record(s) (leave payload out when the fields are top-level)"
            )
        return None

    # --- persist ---------------------------------------------------------------------------------

    def _persist(self, run: Run, m: WindowMeasurement | None) -> int | None:
        """The window's metrics, one pending load, before any judgement."""
        store = self.store
        if m is None:
            return None
        run.phase = "storing the metrics"
        with store.transaction(lock=self.event.name):
            load = int(
                store.create_load(
                    self.event.name,
                    partition=self.event.grain,
                    logical_time=self.start,
                    logical_date=self.start.date(),
                    source_path=self.event.source,
                    row_count=m.rows,
                    run_id=run.id,
                    status="pending",
                )
            )
            store.save_metrics(
                load, {_key(name, metric): value for (name, metric), value in m.values.items()}
            )
            store.add_stage(run.id, "measured")
        return load

    def _settle(self, run: Run, load: int | None, result: EventResult) -> dict[str, Any] | None:
        from assay.platform.events.records import supersede_window

        store = self.store
        if load is not None:
            store.settle_loads({load: "current"})
            supersede_window(
                store, self.event.name, partition=self.event.grain, logical_time=self.start, keep=load
            )
        store.save_check_outcomes(run.id, self.event.name, self.start, result.outcomes)
        if self.notify is not None:
            result.incidents = self._incidents(run, result)
        store.add_stage(run.id, "judged")
        store.note_notified(run.id)
        return None if result.incidents is None else {"incidents": result.incidents}

    def _incidents(self, run: Run, result: EventResult) -> dict[str, int]:
        """Each enforced contract as ONE incident key: its consumer hears once of all its fields."""
        from assay.platform.incidents import Context, judge
        from assay.platform.notify import route

        config = self.notify
        assert config is not None
        counts = {"opened": 0, "escalated": 0, "resolved": 0, "notifications": 0}
        for item, summary in zip(self.chosen, result.contracts, strict=True):
            contract = item.contract
            if contract.mode != "enforce":
                continue
            tier = self.event.tier if contract.consumer.tier is None else contract.consumer.tier
            context = Context(
                dataset=self.event.name,
                source=self.event.source,
                tags=self.event.tags,
                tier=tier,
                dimensions={contract.expectation: DIMENSION},
                divided=frozenset(),
                route=lambda facts: route(config.routes, facts),
                move_share=config.incidents.move_share,
                flow="event",
            )
            outcome = {
                "expectation": contract.expectation,
                "group": None,
                "outcome": summary["outcome"],
                "severity": contract.severity,
                "mode": contract.mode,
                "owner": summary["owner"],
                "observed": float(len(summary["broken"])),
                "expected": {"broken": summary["broken"]},
                "message": summary["message"],
            }
            done = judge(self.store, [outcome], context, at=self.start, run_id=run.id, now=self.now)
            for name, count in done.items():
                counts[name] = counts.get(name, 0) + count
        return counts

    # --- judge ---------------------------------------------------------------------------------

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

    def _judge(self, m: WindowMeasurement | None, failure: tuple[str, str] | None) -> list[dict[str, Any]]:
        series = self._series() if failure is None and m is not None and m.rows else {}
        out = []
        for contract, requirement in self.requirements:
            base = self._base(contract, requirement)
            if failure is not None:
                kind, why = failure
                if kind == "system":
                    out.append(_outcome(base, Outcome.SYSTEM_ERROR, PLATFORM_OWNER, why))
                elif kind == "config":
                    out.append(_outcome(base, Outcome.CONFIG_ERROR, contract.consumer.team, why))
                else:
                    out.append(_outcome(base, Outcome.SKIPPED, None, why, reason="upstream_missing"))
                continue
            assert m is not None
            base["rows"] = m.rows
            if not m.rows:
                why = (
                    f"upstream missing: no event of {self.event.name} in the window {self.start.isoformat()}"
                )
                out.append(_outcome(base, Outcome.SKIPPED, None, why, reason="upstream_missing"))
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
            return _outcome(base, Outcome.SKIPPED, None, why, reason="upstream_missing")
        shown = (
            f"{requirement.name} = {_percent(observed)}, expected at least {_percent(requirement.min_rate)}"
        )
        if observed >= requirement.min_rate - 1e-12:
            return _outcome(base, Outcome.PASSED, None, shown)
        baseline = "no history" if base["baseline"] is None else f"baseline {_percent(base['baseline'])}"
        return _outcome(base, Outcome.FAILED, self._owner(contract), f"{shown} ({baseline})")

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
            return _outcome(base, Outcome.SKIPPED, None, why, reason="warming_up")
        condition = baseline_condition(drift.vs)
        try:
            baseline = dynamic.number(condition.operands[0], lambda k: history[:k])
        except dynamic.DynamicError as error:
            return _outcome(base, Outcome.CONFIG_ERROR, contract.consumer.team, f"vs: {error}")
        if baseline is None or observed is None:
            return _outcome(base, Outcome.SKIPPED, None, "no null rate to compare", reason="upstream_missing")
        base["baseline"] = baseline
        base["expected"] = {"high": baseline + drift.max_pp / 100}
        moved = (observed - baseline) * 100
        shown = (
            f"{requirement.name}: null rate {_percent(observed)} vs {_percent(baseline)} ({drift.vs}), "
            f"{moved:+.2f} pp, at most +{drift.max_pp:g} pp"
        )
        if moved <= drift.max_pp + 1e-9:
            return _outcome(base, Outcome.PASSED, None, shown)
        return _outcome(base, Outcome.FAILED, self._owner(contract), shown)

    def _contract(self, contract: Contract, outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
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


def _duckdb() -> Engine:
    from assay.engine import DuckDBEngine

    return DuckDBEngine()


def _key(name: str, metric: str) -> MetricKey:
    return MetricKey("Dataset", "*", metric) if name == "*" else MetricKey("Column", name, metric)


def _percent(value: float) -> str:
    return f"{value * 100:.4g}%"


def _notify_config(workspace: Workspace) -> Any:
    from assay.platform.notify import load_config

    return load_config(workspace.root)


def run_event(event: EventSpec, **options: Any) -> EventResult:
    """Run an event's contracts on one window (see :class:`EventRun` for the options)."""
    return EventRun(event, **options).run()


def run_events(found: Mapping[str, EventSpec], **options: Any) -> list[EventResult]:
    """Run each event of ``found`` on its window: one run and one query per event. ``options`` as
    :class:`EventRun` takes them; ``only`` names consumer teams, on whichever events they are."""
    only = tuple(options.pop("only", ()) or ())
    teams = {name: [item.contract.id for item in event.contracts] for name, event in found.items()}
    unknown = [team for team in only if not any(team in listed for listed in teams.values())]
    if unknown:
        known = sorted({team for listed in teams.values() for team in listed})
        raise ConfigError(
            f"--only: no contract of {', '.join(repr(t) for t in unknown)} (consumers: {', '.join(known)})"
        )
    runs = [
        EventRun(event, only=[t for t in only if t in teams[name]], **options)
        for name, event in found.items()
        if not only or any(t in teams[name] for t in only)
    ]
    return [run.run() for run in runs]


__all__ = [
    "EVENT_METRICS",
    "EventResult",
    "EventRun",
    "run_event",
    "run_events",
    "window_start",
]
