"""A run of an event's contracts on one window, on the driver: measure → persist → judge, ONE query.

The run is a check run (kind ``check``) of the dataset named after the event:

1. **measure** — every chosen contract of the event in ONE statement over the window's rows
   (:mod:`assay.platform.events.compile`); a platform failure is retried with backoff through
   the driver;
2. **persist** — the window's metrics are one ``pending`` load of the event (partition: the
   window's grain, logical time: the window's start), before anything is judged;
3. **judge** — each (field, requirement) of each contract from stored numbers
   (:mod:`assay.platform.events.judging`);
4. **settle** — the load becomes current, the outcomes are recorded in ``check_outcomes``, and
   each contract is ONE incident key (``contract:<consumer team>``), so its consumer hears of
   all its broken fields in one alert;
5. **after the commit** — the day's Event Quality Score is kept (docs/scores.md).
"""

from __future__ import annotations

import time as clock
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from assay.engine import Engine, EngineError
from assay.errors import ConfigError
from assay.lake import storage
from assay.platform.checks.outcomes import summarize
from assay.platform.events.compile import EventQuery, WindowMeasurement, measure_window, register_source
from assay.platform.events.document import Loaded
from assay.platform.events.event import EventSpec
from assay.platform.events.judging import (
    DIMENSION,
    EVENT_METRICS,
    EventJudging,
    EventResult,
    metric_key,
    window_start,
)
from assay.platform.runs.driver import Driver, Failed, Flow, Persisted, Retry, Settlement
from assay.platform.runs.run import Input
from assay.platform.sources import SourcePolicy
from assay.vocabulary import RunState
from assay.workspace import Workspace

Measured = tuple[WindowMeasurement | None, tuple[str, str] | None]
"""The window's measurement, or why there is none: ("system" | "config" | "missing", why)."""


class EventRun(Flow[Measured, int, list[dict[str, Any]], EventResult]):
    """One run of an event's contracts on one window; :func:`run_event` is the front door."""

    kind = "check"

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
        self.dataset = event.name
        self.inputs = [Input(event.source)]
        self.now = parse_now(now)
        self.start = window_start(at, self.now, event.grain)
        self.end = self.start + timedelta(seconds=event.seconds)
        self.counts = {"at": self.start.isoformat()}
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
        self.retry = Retry(1 if retries is None else retries + 1, 0.0 if backoff is None else backoff, sleep)
        self.engine_factory = engine_factory or _duckdb
        self.judging = EventJudging(event, self.chosen, start=self.start, end=self.end, store=store)
        self.failure: tuple[str, str] | None = None

    @property
    def closes_day(self) -> bool:
        """Whether the window is the last of its UTC day (it ends at midnight)."""
        end = self.end.astimezone(UTC)
        return (end.hour, end.minute, end.second) == (0, 0, 0)

    def run(self) -> EventResult:
        driver = Driver(
            store=self.store,
            workspace=self.workspace,
            dry_run=self.dry_run,
            retry=self.retry,
            run_id=self.run_id,
            now=self.now,
        )
        return driver.run(self)

    # --- read and measure ----------------------------------------------------------------------

    def read(self, driver: Driver) -> None:
        event, at = self.event, self.start.isoformat()
        result = EventResult(
            driver.current.id, ", ".join(event.files), event.name, at, self.now, self.dry_run
        )
        result.event = event.name
        result.window = {"grain": event.grain, "start": at, "end": self.end.isoformat()}
        result.attempts = driver.attempts
        result.queries = driver.queries
        result.seconds = driver.seconds
        self.result = result

    def measure(self, driver: Driver) -> Measured:
        grain, result = self.event.grain, self.result
        done = driver.attempt(grain, lambda: self._measure_once(driver))
        attempts = driver.tries(grain)
        if isinstance(done, Failed):
            result.profiles[grain] = {"rows": None, "attempts": attempts, "error": done.message}
            return None, (done.kind, done.message)
        missing = None if done is not None else f"no file matches {self.event.source}"
        result.profiles[grain] = {
            "rows": None if done is None else done.rows,
            "attempts": attempts,
            "groups_beyond_top_k": {},
            "missing": missing,
        }
        if done is None:
            return None, ("missing", f"upstream missing: {missing}")
        result.metrics = {name: done.value("*", name) for name in EVENT_METRICS}
        problem = self._unreadable(done)
        if problem is not None:
            result.profiles[grain]["error"] = problem
            return done, ("config", problem)
        return done, None

    def _measure_once(self, driver: Driver) -> WindowMeasurement | None:
        engine = driver.engine(self.engine_factory)
        policy = SourcePolicy.of(self.workspace.root)
        if storage.is_url(self.event.source):  # confined, listed, then read as local copies
            paths = storage.stage_objects(policy.objects(self.event.source))
        else:
            policy.path(self.event.source, base=Path(self.event.source).parent)
            paths = self.event.paths()
            policy.paths(paths, self.event.source)
        if not paths:
            return None
        requirements = [r for _, r in self.judging.requirements]
        query = EventQuery(self.event, requirements, start=self.start, end=self.end)
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

    # --- persist, judge, settle ----------------------------------------------------------------

    def persist(self, driver: Driver, measured: Measured) -> Persisted[int] | None:
        """The window's metrics, one pending load, before any judgement."""
        m, failure = measured
        if m is None or failure is not None:
            return None
        load = int(
            self.store.create_load(
                self.event.name,
                partition=self.event.grain,
                logical_time=self.start,
                logical_date=self.start.date(),
                source_path=self.event.source,
                row_count=m.rows,
                run_id=driver.current.id,
                status="pending",
            )
        )
        self.store.save_metrics(
            load, {metric_key(name, metric): value for (name, metric), value in m.values.items()}
        )
        return Persisted(load)

    def judge(self, driver: Driver, measured: Measured) -> list[dict[str, Any]]:
        self.failure = measured[1]
        return self.judging.outcomes(*measured)

    def settle(self, driver: Driver, load: int | None, judged: list[dict[str, Any]]) -> Settlement:
        result, failure = self.result, self.failure
        result.outcomes = judged
        result.contracts = [self.judging.contract(item.contract, judged) for item in self.chosen]
        result.summary = summarize(judged)
        system = failure is not None and failure[0] == "system"
        state = RunState.SYSTEM_ERROR if system else RunState.COMPLETED
        result.state = state.value
        if system:
            result.error = failure[1] if failure else None
        return Settlement(
            state,
            summary=result.to_dict(),
            writes=lambda: self._settle(driver, load),
            counts={"at": result.at, "outcomes": len(judged), "queries": driver.queries["measure"]},
            error=result.error,
        )

    def _settle(self, driver: Driver, load: int | None) -> dict[str, Any] | None:
        from assay.platform.events.records import supersede_window

        store, result = self.store, self.result
        if load is not None:
            store.settle_loads({load: "current"})
            supersede_window(
                store, self.event.name, partition=self.event.grain, logical_time=self.start, keep=load
            )
        store.save_check_outcomes(driver.current.id, self.event.name, self.start, result.outcomes)
        if self.notify is not None:
            result.incidents = self._incidents(driver.current.id)
        return None if result.incidents is None else {"incidents": result.incidents}

    def _incidents(self, run_id: str) -> dict[str, int]:
        """Each enforced contract as ONE incident key: its consumer hears once of all its fields."""
        from assay.platform.incidents import Context, judge
        from assay.platform.notify import route

        config = self.notify
        assert config is not None
        counts = {"opened": 0, "escalated": 0, "resolved": 0, "notifications": 0}
        for item, summary in zip(self.chosen, self.result.contracts, strict=True):
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
            done = judge(self.store, [outcome], context, at=self.start, run_id=run_id, now=self.now)
            for name, count in done.items():
                counts[name] = counts.get(name, 0) + count
        return counts

    # --- after the commit ----------------------------------------------------------------------

    def after_commit(self, driver: Driver) -> None:
        """The Event Quality Score of the clock's day is kept, and the producer alerted on the
        second day below the gate (docs/scores.md, "The producer's alert")."""
        if not self._scores_the_day():
            return
        from assay.platform.events.score import record_event_score

        # scored from the contracts this run read (they may live outside the workspace)
        record_event_score(
            self.store,
            self.workspace.root,
            self.event.name,
            now=self.now,
            contracts=list(self.event.contracts),
        )

    def _scores_the_day(self) -> bool:
        """Whether this run keeps the day's score: the run of the day's last window does, and the
        first run of a clock's day that has none kept yet (when that run was killed after its
        commit, or never ran), so that no day goes without its score."""
        if self.closes_day:
            return True
        kept = self.store.score_history("event", self.event.name, limit=1)
        return not kept or kept[0].day != self.now.astimezone(UTC).date()


def _duckdb() -> Engine:
    from assay.engine import DuckDBEngine

    return DuckDBEngine()


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


def duckdb_only(engine: str) -> None:
    """Event contracts run on DuckDB: any other engine named is the user's mistake."""
    if engine.strip().lower() != "duckdb":
        raise ConfigError(f"event contracts run on the DuckDB engine, not on {engine}")


def events_payload(results: Sequence[EventResult]) -> dict[str, Any]:
    """The JSON of a ``check run`` of event contracts: one event's run, or ``{"events": [...]}``."""
    payloads = [r.to_dict() for r in results]
    return payloads[0] if len(payloads) == 1 else {"events": payloads}


__all__ = ["EventRun", "duckdb_only", "events_payload", "run_event", "run_events"]
