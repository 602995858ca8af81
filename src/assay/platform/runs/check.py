"""A run of a check document on the driver: measure → persist → judge, one query per profile.

1. **read** — the measurement of the killed run this one follows, when it stopped between
   ``measured`` and ``judged`` on the same day (it is judged, never measured again);
2. **measure** — for each profile that a chosen expectation reads, ONE statement (see
   :mod:`assay.platform.checks.measure`); a platform failure (the engine, a database that went
   away) is retried with backoff through the driver, each attempt recorded;
3. **persist** — the metrics go to the store (one load per profile, ``pending`` until the run
   commits) before anything is judged, with what was measured (to resume from);
4. **judge** — every expectation from stored numbers only (:mod:`assay.platform.checks.judging`);
5. **settle** — the loads become current, the outcomes are recorded, each slice's column profile
   is judged by the drift monitor as ``assay profile`` judges a load
   (:mod:`assay.platform.runs.slices`), and incidents are judged, in the commit's transaction.

Each outcome is ``passed``, ``failed``, ``config_error``, ``system_error`` or ``skipped`` (with a
reason), with its owner (docs/checks.md, "Run states"). A dry run does all of it and records
nothing.
"""

from __future__ import annotations

import hashlib
import time as clock
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from assay.engine import Engine, EngineError
from assay.errors import ConfigError
from assay.lake.readers import Registered
from assay.lang.dqdl import ast
from assay.measure import ScanPlan
from assay.measure.profile import counted_pairs, exact_columns, is_small
from assay.monitor import DatasetConfig
from assay.monitor.history import History, distinct_counts
from assay.monitor.profiler import categories
from assay.platform.baselines import check_holds, rule_keys
from assay.platform.checks.document import Document, Profile
from assay.platform.checks.engine import default_engine
from assay.platform.checks.judging import Judging, metric_key
from assay.platform.checks.measure import (
    ROWS,
    ColumnProfiling,
    Plan,
    ProfileMeasurement,
    dump_measurement,
    load_measurement,
    measure,
    register_rows,
)
from assay.platform.checks.outcomes import CheckResult, parse_at, summarize
from assay.platform.checks.rules import CompiledRules, parse_rule
from assay.platform.checks.source import OpenedSource, open_source
from assay.platform.privacy import document_masker
from assay.platform.reconcile import metric as reconciliations
from assay.platform.runs.driver import Driver, Failed, Flow, Persisted, Retry, Settlement
from assay.platform.runs.run import Input
from assay.platform.runs.slices import Slice, inferred
from assay.platform.sources import confine
from assay.privacy import Masker, mask_profile
from assay.rules.plan import Context
from assay.store import MetricKey
from assay.vocabulary import RunState
from assay.workspace import Workspace

PROFILE_DIALECTS = ("duckdb", "spark")

Measured = dict[str, ProfileMeasurement]
Loads = dict[str, int]


def notify_config(workspace: Workspace, document: Document) -> Any:
    """The workspace's notification settings (assay.yaml), with the document's own routes
    checked against its channels before anything is measured (and by ``assay check validate``)."""
    from assay.platform.notify import load_config

    config = load_config(workspace.root)
    config.refuse_undeclared(document.notify, what="notify: routes", config=workspace.root / "assay.yaml")
    return config


class CheckRun(Flow[Measured, Loads, list[dict[str, Any]], CheckResult]):
    """One run of a document; :func:`run_document` is the front door."""

    kind = "check"

    def __init__(
        self,
        document: Document,
        path: Path,
        *,
        at: str | date | datetime | None = None,
        now: datetime | str | None = None,
        store: Any = None,
        workspace: Workspace | None = None,
        only: Sequence[str] = (),
        dry_run: bool = False,
        retries: int | None = None,
        backoff: float | None = None,
        engine_factory: Callable[[Document], Engine] | None = None,
        engine: Any = None,
        spark_master: str | None = None,
        sleep: Callable[[float], None] = clock.sleep,
        run_id: str | None = None,
        scheduled: bool = False,
    ) -> None:
        from assay.judge.evaluation import parse_now

        self.run_id = run_id  # chosen by the caller (a scheduler's tick names its run before it starts)
        self.scheduled = scheduled  # a schedule's tick: a day whose slice is empty is an incident
        self.document = document
        self.dataset = document.dataset.name
        self.path = path
        self.now = parse_now(now)
        self.at, self.at_text = parse_at(at, self.now)
        self.store = store
        self.workspace = workspace or Workspace(None)
        self.dry_run = dry_run
        self.inputs = [Input(document.dataset.source.describe())]
        self.counts = {"at": self.at_text}  # recorded from the start: a run that fails keeps its date
        known = {e.id for e in document.expectations}
        unknown = [i for i in only if i not in known]
        if unknown:
            raise ConfigError(
                f"--only: no expectation {', '.join(repr(i) for i in unknown)} in {path} "
                f"(expectations: {', '.join(sorted(known))})"
            )
        self.chosen = [e for e in document.expectations if not only or e.id in only]
        self.notify = None if dry_run else notify_config(self.workspace, document)
        retry = document.dataset.retry
        self.retry = Retry(
            retry.attempts if retries is None else retries + 1,
            retry.backoff if backoff is None else backoff,
            sleep,
        )
        self.engine_factory = engine_factory or (
            lambda document: default_engine(document, engine, master=spark_master)
        )
        self.judging = Judging(document, self.chosen, at=self.at, store=store)
        self.monitor: DatasetConfig = document.monitor_config()  # the drift monitor's, of every slice
        self.resumed: dict[str, dict[str, Any]] = {}
        self.measured: Measured = {}

    @cached_property
    def masker(self) -> Masker:
        """The document's masker (docs/privacy.md), built once a run: it reads the workspace's
        secret, and a run measures each of its profiles."""
        return document_masker(self.document, self.workspace)

    def run(self) -> CheckResult:
        driver = Driver(
            store=self.store,
            workspace=self.workspace,
            dry_run=self.dry_run,
            retry=self.retry,
            run_id=self.run_id,
            now=self.now,
        )
        return driver.run(self)

    def _profiles(self) -> list[Profile]:
        wanted = {self.document.expectation_profile(e).id for e in self.chosen}
        return [p for p in self.document.profiles if p.id in wanted]

    def _rules(self, profile: Profile) -> dict[str, ast.Ruleset]:
        return {
            e.id: parse_rule(e.rule)
            for e in self.chosen
            if e.rule is not None and self.document.expectation_profile(e).id == profile.id
        }

    # --- read and measure ----------------------------------------------------------------------

    def read(self, driver: Driver) -> None:
        run = driver.current
        self.result = CheckResult(
            run.id, str(self.path), self.document.dataset.name, self.at_text, self.now, self.dry_run
        )
        self.result.attempts = driver.attempts
        self.result.drift = []  # judged at the commit (_settle): a dry run's stays empty
        self.result.queries = driver.queries
        self.result.seconds = driver.seconds
        if driver.recording:
            self.resumed = self._resumable(run.id)

    def measure(self, driver: Driver) -> Measured:
        self.measured = {p.id: self._measure(driver, p, self.resumed.get(p.id)) for p in self._profiles()}
        return self.measured

    def _measure(self, driver: Driver, profile: Profile, stored: dict[str, Any] | None) -> ProfileMeasurement:
        """The profile's one statement, retried on platform failures; with ``stored`` (what a
        killed run measured), no statement: the measurement is taken from it."""
        done = driver.attempt(profile.id, lambda: self._measure_once(driver, profile, stored))
        attempts = driver.tries(profile.id)
        if isinstance(done, Failed):
            out = ProfileMeasurement(profile, failure=done.kind)
            out.errors["*"] = done.message
            out.attempts = attempts
            self.result.profiles[profile.id] = {"rows": None, "attempts": attempts, "error": done.message}
            return out
        done.attempts = attempts
        self.result.profiles[profile.id] = {
            "rows": done.rows,
            "attempts": attempts,
            "groups_beyond_top_k": done.dropped,
            "missing": done.missing,
        }
        return done

    def _measure_once(
        self, driver: Driver, profile: Profile, stored: dict[str, Any] | None
    ) -> ProfileMeasurement:
        # before the engine: a postgres source's engine connects, and an undeclared server must
        # not learn of the attempt (nor the author whether it answers)
        confine(self.document.dataset.source, base=self.path.parent, workspace=self.workspace.root)
        engine = driver.engine(lambda: self.engine_factory(self.document))
        source: OpenedSource = open_source(
            engine, self.document, base=self.path.parent, workspace=self.workspace.root
        )
        if source.registered is None:
            return ProfileMeasurement(profile, missing=source.missing)
        register_rows(engine, profile, source.registered, self.at, self.now)
        rows = Registered(ROWS, source.registered.columns, source.registered.path)
        ctx = Context(engine=engine, primary=rows, references={}, now=self.now, scan=ScanPlan(ROWS))
        rules = CompiledRules(self._rules(profile), ctx)
        by = [
            tuple(e.by)
            for e in self.chosen
            if e.by and e.metric is not None and e.reference.profile == profile.id
        ]
        plan = Plan(
            profile,
            rows.columns,
            now=self.now,
            extra_groupings=by,
            dqdl=rules.statement(),
            dialect=engine.dialect,
            profiling=self._profiling(driver, engine, profile, rows) if stored is None else None,
            key=[k for k in [(self.document.gate or {}).get("key")] if isinstance(k, str)],
        )
        if stored is not None:  # resumed: the killed run's numbers, rules compiled, no scan
            resumed = load_measurement(profile, stored)
            resumed.rules = rules
            return resumed
        try:
            measured = measure(engine, plan, rules.slots)
        except EngineError:
            # One statement failed: measure the profile's own metrics and each rule apart, so that
            # only what fails is lost (a DQDL CustomSql that fails at run time, say).
            plan.dqdl = None
            try:
                measured = measure(engine, plan)
            except EngineError as inner:
                raise ConfigError(f"profile {profile.id}: the query failed: {inner.message}") from None
            scan = rules.scan.run(engine)
            measured.dqdl = dict(scan.values)
            measured.dqdl_errors = dict(scan.errors)
        measured.rules = rules
        reconciliations.measure_into(
            measured,
            engine,
            self.document.dataset.source,
            source.registered,
            profile,
            base=self.path.parent,
            workspace=self.workspace.root,
        )
        # masked before anything keeps or shows it: the store, the summary, notifications and
        # pages all read this measurement (a resumed one was kept masked)
        masker = self.masker
        measured.samples = {key: masker.rows(rows) for key, rows in measured.samples.items()}
        measured.columns = mask_profile(measured.columns, masker)
        if measured.rows == 0 and profile.slice is not None:
            measured.missing = f"the slice {profile.slice.column} = {self.at.date().isoformat()} has no rows"
        return measured

    def _profiling(
        self, driver: Driver, engine: Engine, profile: Profile, rows: Registered
    ) -> ColumnProfiling | None:
        """The per-column profile a recorded run measures of its slice in its one statement, as
        ``assay profile`` measures a load: what to count exactly, which column pairs, and which
        columns keep their values (a category, a panel's dimension), decided from the profile's
        own earlier loads as the monitor decides them (measure/profile.py, monitor/profiler.py). None
        for a dry run (nothing is recorded) and on PostgreSQL, whose dialect the profile's
        statement does not have (value lists as arrays of structs)."""
        if not driver.recording or self.dry_run or engine.dialect not in PROFILE_DIALECTS:
            return None
        history = History(self.store, self.document.dataset.name, self.at.date(), partition=profile.id)
        earlier = self.store.window(self.dataset, self.at.date(), partition=profile.id)[:1]
        previous = self.store.load_metrics([earlier[0].id])[earlier[0].id] if earlier else {}
        columns = rows.columns
        exact = exact_columns(
            columns,
            distinct_counts(previous) if earlier else None,
            small=is_small(engine, ROWS, len(columns)),
        )
        pairs, mixed = counted_pairs(columns, previous)
        kept = categories(history, columns, self.monitor, previous)
        return ColumnProfiling(tuple(exact), tuple(pairs), tuple(mixed), tuple(kept))

    # --- persist -------------------------------------------------------------------------------

    def persist(self, driver: Driver, measured: Measured) -> Persisted[Loads]:
        """The run's metrics, one pending load per measured profile, before any judgement; with
        them, what was measured, so that a run killed before judging is resumed from it."""
        store = self.store
        loads: Loads = {}
        for pid, m in measured.items():
            if m.failure or m.missing:
                continue
            load = store.create_load(
                self.dataset,
                partition=pid,
                logical_time=self.at,
                logical_date=self.at.date(),
                source_path=self.document.dataset.source.describe(),
                row_count=m.rows,
                run_id=driver.current.id,
                status="pending",
            )
            # the per-column profile's metrics first (Column.<c>.NullCount, ...: the names
            # ``assay profile`` stores), so that drift, proposals and scores read this load too
            values: dict[MetricKey, float | None] = dict(m.columns.metrics()) if m.columns else {}
            for (key, group), value in m.values.items():
                if key.startswith("__"):
                    continue
                values[metric_key(key, group)] = value
            rules: CompiledRules | None = m.rules
            if rules is not None and rules.slots:
                values.update(rules.stored(rules.measurements(m.dqdl, m.dqdl_errors)))
            store.save_metrics(load, values)
            loads[pid] = load
        return Persisted(loads, detail=self._snapshot(measured))

    def _snapshot(self, measured: Measured) -> dict[str, Any]:
        return {
            "at": self.at_text,
            "profiles": {
                pid: {"fingerprint": self._fingerprint(m.profile), "measurement": dump_measurement(m)}
                for pid, m in measured.items()
                if not m.failure  # a failed measurement is tried again, not resumed
            },
        }

    def _fingerprint(self, profile: Profile) -> str:
        """What a stored measurement must have been made for to be reused: the profile as
        written, the dataset's source, the run's logical time."""
        text = "\n".join((profile.model_dump_json(), self.document.dataset.source.describe(), self.at_text))
        return hashlib.sha256(text.encode()).hexdigest()

    def _resumable(self, run_id: str) -> dict[str, dict[str, Any]]:
        """The measurements of the killed run this one follows, when it stopped after
        ``measured`` and before ``judged`` on the same day: {profile id: measurement}. Only the
        run started right before this one counts (a later run of the day measures afresh)."""
        store = self.store
        earlier = [r for r in store.runs(self.dataset, limit=5, kind="check") if r.id != run_id]
        if not earlier or earlier[0].state != RunState.SYSTEM_ERROR.value:
            return {}
        killed = earlier[0]
        passed = [stage for stage, _ in store.stages(killed.id)]
        if "measured" not in passed or "judged" in passed:
            return {}
        detail = store.stage_detail(killed.id, "measured") or {}
        if detail.get("at") != self.at_text:
            return {}
        out = {}
        for profile in self._profiles():
            found = (detail.get("profiles") or {}).get(profile.id)
            if found and found.get("fingerprint") == self._fingerprint(profile):
                out[profile.id] = found["measurement"]
        if out:
            self.result.resumed_from = killed.id
        return out

    # --- judge and settle ----------------------------------------------------------------------

    def judge(self, driver: Driver, measured: Measured) -> list[dict[str, Any]]:
        return self.judging.outcomes(measured)

    def settle(self, driver: Driver, loads: Loads | None, judged: list[dict[str, Any]]) -> Settlement:
        result = self.result
        result.outcomes = judged
        result.summary = summarize(judged)
        measured = self.measured
        everything_failed = bool(measured) and all(m.failure == "system" for m in measured.values())
        state = RunState.SYSTEM_ERROR if everything_failed else RunState.COMPLETED
        result.state = state.value
        if state is RunState.SYSTEM_ERROR:
            result.error = "; ".join(a.error or "" for a in result.attempts if a.error)
        return Settlement(
            state,
            summary={"kind": "check", **result.to_dict()},  # runs/<id>.json: the run's JSON
            writes=lambda: self._settle(driver, loads or {}),
            counts={"at": self.at_text, "outcomes": len(judged), "queries": driver.queries["measure"]},
            error=result.error,
        )

    def _settle(self, driver: Driver, loads: Loads) -> dict[str, Any] | None:
        store, result, run_id = self.store, self.result, driver.current.id
        statuses = {load: "current" for load in loads.values()}
        if statuses:
            store.settle_loads(statuses)
        config = self.monitor
        # each slice's profile as assay profile takes a load: which columns are categories is
        # decided before its value counts are kept
        slices = {pid: self._slice(pid, config) for pid in loads if self.measured[pid].columns is not None}
        for pid, load in loads.items():
            if pid in slices:  # its schema and value counts, as assay profile keeps a load's
                store.save_profile(load, slices[pid].result.profile.schema, slices[pid].values())
            store.supersede(self.dataset, self.at.date(), partition=pid, keep=load)
        store.save_check_outcomes(run_id, self.dataset, self.at, result.outcomes)
        # the graph learns what the document declares with the run that read it (docs/lineage.md)
        store.declare_upstream(self.dataset, self.document.dataset.upstream, at=self.now)
        for pid, load in loads.items():  # what failed stays out of later baselines
            holds = check_holds(result.outcomes, self._reads(pid), self.judging.unread)
            store.hold_out_of_baselines(load, holds, run_id=run_id, at=self.now)
        started = clock.perf_counter()
        for pid, sliced in slices.items():  # the drift monitor's judgements of each slice
            sliced.judge(store, loads[pid], config, run_id=run_id, at=self.now)
        result.drift = [alert for sliced in slices.values() for alert in sliced.alerts()]
        if slices:
            result.seconds["drift"] = clock.perf_counter() - started
        if self.notify is not None:  # incidents and their notifications: the same transaction
            from assay.platform.incidents import judge

            started = clock.perf_counter()
            owners = self.document.dataset.owners
            drifted: list[dict[str, Any]] = []
            dimensions: dict[str, str] = {}
            for sliced in slices.values():
                found, kinds = sliced.outcomes(owners.team or owners.contact)
                drifted += found
                dimensions.update(kinds)
            outcomes = [*result.outcomes, *self._arrivals(), *drifted]
            result.incidents = judge(
                store, outcomes, self._incident_context(dimensions), at=self.at, run_id=run_id, now=self.now
            )
            result.seconds["incidents"] = clock.perf_counter() - started
        updates: dict[str, Any] = {"drift": result.drift}
        return updates if result.incidents is None else {**updates, "incidents": result.incidents}

    def _slice(self, profile: str, config: DatasetConfig) -> Slice:
        """A profile's slice as the drift monitor takes it (:mod:`assay.platform.runs.slices`)."""
        columns = self.measured[profile].columns
        assert columns is not None
        kinds = inferred(self.document.dataset.source.path, columns)
        return Slice.of(
            self.store, self.document.dataset.name, profile, self.at.date(), columns, config, kinds
        )

    def _arrivals(self) -> list[dict[str, Any]]:
        """A scheduled run's word on each sliced profile it measured: did the day's rows arrive?
        Failed when the slice is empty ("no data for D", critical, the dataset's owners'), passed
        when it has rows, so that the incident it opens resolves once the rows come. Not among the
        run's outcomes: the expectations say what the rows hold, this says whether there were
        any (a run by hand, ``assay check run``, keeps the empty day as skipped)."""
        if not self.scheduled:
            return []
        owners = self.document.dataset.owners
        out = []
        for pid, m in self.measured.items():
            if m.profile.slice is None or m.failure:
                continue
            day = self.at.date().isoformat()
            message = f"no data for {day}: {m.missing}" if m.missing else f"{m.rows} rows for {day}"
            out.append(
                {
                    "expectation": arrival(pid),
                    "mode": "enforce",
                    "outcome": "failed" if m.missing else "passed",
                    "severity": "critical",
                    "owner": owners.team or owners.contact,
                    "observed": float(m.rows or 0),
                    "expected": {"low": 1.0, "high": None},
                    "message": message,
                    "group": None,
                }
            )
        return out

    def _reads(self, profile_id: str) -> dict[str, list[tuple[str, str, str]]]:
        """The metric keys each chosen expectation of a profile reads (a DQDL rule's, as its
        compiled plans store them)."""
        measured = self.measured.get(profile_id)
        rules = measured.rules if measured is not None else None
        reads: dict[str, list[tuple[str, str, str]]] = {}
        for e in self.chosen:
            if self.document.expectation_profile(e).id != profile_id:
                continue
            if e.metric is not None:
                reads[e.id] = [("Dataset", "*", e.reference.key)]
            elif rules is not None and e.id in rules.compiled:
                reads[e.id] = rule_keys(rules.compiled[e.id])
        return reads

    def _incident_context(self, drift: Mapping[str, str]) -> Any:
        from assay.platform.alerts import neighbours
        from assay.platform.incidents import Context, dimension_of
        from assay.platform.notify import route

        config = self.notify
        assert config is not None
        routes = (*self.document.notify, *config.routes)
        dataset = self.document.dataset
        return Context(
            dataset=dataset.name,
            source=dataset.source.describe(),
            tags=dataset.tags,
            tier=dataset.tier,
            dimensions={
                **{e.id: dimension_of(e.metric, e.rule, e.dimension) for e in self.document.expectations},
                **{arrival(p.id): "volume" for p in self.document.profiles},
                **drift,  # the drift monitor's judgements of the slices: profile:<kind>(<column>)
            },
            divided=frozenset(e.id for e in self.document.expectations if e.divide_by_group),
            route=lambda facts: route(routes, facts),
            move_share=config.incidents.move_share,
            flow="check",
            others=neighbours(self.workspace.root, "check"),
        )


def arrival(profile: str) -> str:
    """The incident key's name for a scheduled profile's day that brought no rows (``CheckRun._arrivals``).

    >>> arrival("daily")
    'arrival:daily'
    """
    return f"arrival:{profile}"


def run_document(document: Document, path: Path | str, **options: Any) -> CheckResult:
    """Run a check document (see :class:`CheckRun` for the options)."""
    return CheckRun(document, Path(path), **options).run()


__all__ = ["CheckRun", "arrival", "default_engine", "notify_config", "run_document"]
