"""A run of a check document: measure → persist → judge, one query per profile, no rescans.

1. **measure** — for each profile that a chosen expectation reads, ONE statement (see
   :mod:`assay.platform.checks.measure`); a platform failure (the engine, a database that went
   away) is retried with backoff, each attempt recorded;
2. **persist** — the metrics go to the store (one load per profile, ``pending`` until the run
   commits) before anything is judged;
3. **judge** — every expectation from stored numbers only: the run's metrics and, for dynamic
   conditions (``avg(last(7))``), the metric's stored history, read in one store query per
   profile. No query reaches the data: ``queries.judge`` counts them, and it is 0.

Each outcome is ``passed``, ``failed``, ``config_error``, ``system_error`` or ``skipped`` (with a
reason), with its owner (docs/checks.md, "Run states"). A dry run does all of it and records
nothing.
"""

from __future__ import annotations

import time as clock
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

from assay.engine import Engine, EngineError
from assay.errors import ConfigError, PlatformError
from assay.judge.result import json_number
from assay.lake.readers import Registered
from assay.lang.dqdl import ast
from assay.measure import Measurements, ScanPlan
from assay.platform.checks import conditions
from assay.platform.checks.document import Document, Expectation, Profile
from assay.platform.checks.measure import (
    ROWS,
    Group,
    OpenedSource,
    Plan,
    ProfileMeasurement,
    group_label,
    measure,
    open_source,
    register_rows,
)
from assay.platform.checks.rules import CompiledRules, parse_rule
from assay.platform.runs.faults import checkpoint
from assay.platform.runs.run import Input, Run
from assay.platform.sources import confine
from assay.rules.plan import Context
from assay.store import MetricKey
from assay.store.checks import group_key, parse_group_key
from assay.vocabulary import Outcome, RunState
from assay.workspace import Workspace

ADDITIVE = ("row_count", "null_count", "sum", "count_where")
"""Metrics whose total is the sum of its groups': only these are explained by groups."""

PLATFORM_OWNER = "platform"

HISTORY_REACH = 3
"""Judging reads the metrics of at most this many times as many recent loads as the deepest
window of a profile's expectations (``last(7)``: 21 loads), so that a year of history costs what
a week does; a group absent from most of those loads has a shorter history."""


@dataclass
class Attempt:
    profile: str
    attempt: int
    error: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"profile": self.profile, "attempt": self.attempt, "error": self.error}


@dataclass
class CheckResult:
    """A check run as its JSON reports it (docs/checks.md, "The run's JSON")."""

    run_id: str
    document: str
    dataset: str
    at: str
    now: datetime
    dry_run: bool
    state: str = RunState.COMPLETED.value
    queries: dict[str, int] = field(default_factory=lambda: {"measure": 0, "judge": 0})
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    attempts: list[Attempt] = field(default_factory=list)
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None
    seconds: dict[str, float] = field(default_factory=dict)  # wall time of measure, persist, judge
    incidents: dict[str, int] | None = None  # what the run did to incidents (a recorded run only)
    resumed_from: str | None = None  # the killed run whose stored measurement it judged

    def to_dict(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "run_id": self.run_id,
            "document": self.document,
            "dataset": self.dataset,
            "at": self.at,
            "now": self.now.isoformat(),
            "dry_run": self.dry_run,
            "state": self.state,
            "queries": dict(self.queries),
            "outcomes": _finite(self.outcomes),
            "summary": self.summary,
            "attempts": [a.to_dict() for a in self.attempts],
            "profiles": self.profiles,
            "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
        }
        if self.error is not None:
            payload["error"] = self.error
        if self.incidents is not None:
            payload["incidents"] = dict(self.incidents)
        if self.resumed_from is not None:
            payload["resumed_from"] = self.resumed_from
        return payload


def parse_at(text: str | date | datetime | None, now: datetime) -> tuple[datetime, str]:
    """The run's logical time and how it is printed: a date (its midnight UTC), a date-time, or
    by default the date of the run's clock."""
    if text is None:
        day = now.astimezone(UTC).date()
        return datetime.combine(day, time(0), UTC), day.isoformat()
    if isinstance(text, datetime):
        moment = text if text.tzinfo else text.replace(tzinfo=UTC)
        return moment, moment.isoformat()
    if isinstance(text, date):
        return datetime.combine(text, time(0), UTC), text.isoformat()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return datetime.combine(day, time(0), UTC), day.isoformat()
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(
            f"--at: '{text}' is not a date (2026-11-12) or date-time (2026-11-12T06:30:00Z)"
        ) from None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment, moment.isoformat()


def default_engine(document: Document, engine: Any = None, **options: Any) -> Engine:
    """The engine that runs where the data is: PostgreSQL for a postgres source; else the
    engine chosen (a name, ``duckdb`` or ``spark``, else ``ASSAY_ENGINE``, else DuckDB; or a
    SparkSession), with ``options`` (``master`` for Spark)."""
    source = document.dataset.source
    if source.postgres is not None:
        from assay.engine.postgres import PostgresEngine  # type: ignore[import-not-found,unused-ignore]

        found: Engine = PostgresEngine(source.postgres.url)
        return found
    from assay.engine.registry import engine_name, make_engine, open_engine

    if engine is None or isinstance(engine, str):
        name = engine_name(engine)
        if source.duckdb is not None and name != "duckdb":
            raise ConfigError(f"a duckdb source runs on the DuckDB engine, not on {name}")
        return make_engine(
            name, **({k: v for k, v in options.items() if v is not None} if name == "spark" else {})
        )
    return open_engine(engine)


class CheckRun:
    """One run of a document; :func:`run_document` is the front door."""

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
    ) -> None:
        from assay.judge.evaluation import parse_now

        self.run_id = run_id  # chosen by the caller (a scheduler's tick names its run before it starts)
        self.document = document
        self.path = path
        self.now = parse_now(now)
        self.at, self.at_text = parse_at(at, self.now)
        self.store = store
        self.workspace = workspace or Workspace(None)
        self.dry_run = dry_run
        known = {e.id for e in document.expectations}
        unknown = [i for i in only if i not in known]
        if unknown:
            raise ConfigError(
                f"--only: no expectation {', '.join(repr(i) for i in unknown)} in {path} "
                f"(expectations: {', '.join(sorted(known))})"
            )
        self.chosen = [e for e in document.expectations if not only or e.id in only]
        self.notify = None if dry_run else notify_config(self.workspace, document)
        self.resumed_from: str | None = None  # the killed run whose measurement this one took
        retry = document.dataset.retry
        self.attempts = retry.attempts if retries is None else retries + 1
        self.backoff = retry.backoff if backoff is None else backoff
        self.engine_factory = engine_factory or (
            lambda document: default_engine(document, engine, master=spark_master)
        )
        self.sleep = sleep
        self.engines: list[Engine] = []
        # each profile's stored series, read once per run (every expectation of it reads them)
        self.conditions: dict[str, ast.Condition] = {}
        self.series_cache: dict[
            tuple[str, frozenset[str]], dict[tuple[str, str, str], list[tuple[datetime, float | None]]]
        ] = {}

    # --- the run -------------------------------------------------------------------------------

    def run(self) -> CheckResult:
        dataset = self.document.dataset.name
        run = Run(
            "check",
            dataset=dataset,
            workspace=self.workspace,
            store=None if self.dry_run else self.store,
            inputs=[Input(self.document.dataset.source.describe())],
            run_id=self.run_id,
            now=self.now,
        )
        result = CheckResult(run.id, str(self.path), dataset, self.at_text, self.now, self.dry_run)
        run.counts = {"at": self.at_text}  # recorded from the start: a run that fails keeps its date
        try:
            with run:
                if not self.dry_run and self.store is not None:
                    self.store.add_stage(run.id, "running")
                run.phase = "measuring"
                started = clock.perf_counter()
                resumed = self._resumable(run)
                measured = {p.id: self._measure(p, result, resumed.get(p.id)) for p in self._profiles()}
                if self.resumed_from is not None:
                    result.resumed_from = self.resumed_from
                result.queries["measure"] = sum(e.queries for e in self.engines)
                result.seconds["measure"] = clock.perf_counter() - started
                started = clock.perf_counter()
                loads = {} if self.dry_run else self._persist(run, measured)
                checkpoint("after-measure")  # pending loads and their metrics written
                result.seconds["persist"] = clock.perf_counter() - started
                run.phase = "judging"
                started = clock.perf_counter()
                before = sum(e.queries for e in self.engines)
                result.outcomes = [o for e in self.chosen for o in self._judge(e, measured)]
                result.queries["judge"] = sum(e.queries for e in self.engines) - before
                result.seconds["judge"] = clock.perf_counter() - started
                result.summary = summarize(result.outcomes)
                everything_failed = bool(measured) and all(m.failure == "system" for m in measured.values())
                state = RunState.SYSTEM_ERROR if everything_failed else RunState.COMPLETED
                result.state = state.value
                if state is RunState.SYSTEM_ERROR:
                    result.error = "; ".join(a.error or "" for a in result.attempts if a.error)
                    run.error = result.error
                checkpoint("before-commit")  # judged; nothing of it recorded yet
                if not self.dry_run and self.store is not None:
                    run.counts = {
                        "at": self.at_text,
                        "outcomes": len(result.outcomes),
                        "queries": result.queries["measure"],
                    }
                    payload = {"kind": "check", **result.to_dict()}  # runs/<id>.json: the run's JSON
                    run.commit(
                        lambda: self._settle(run, loads, result),
                        summary=payload,
                        state=state,
                    )
                else:
                    run.state = state
        finally:
            for engine in self.engines:
                engine.close()
        return result

    def _profiles(self) -> list[Profile]:
        wanted = {self.document.expectation_profile(e).id for e in self.chosen}
        return [p for p in self.document.profiles if p.id in wanted]

    def _rules(self, profile: Profile) -> dict[str, ast.Ruleset]:
        return {
            e.id: parse_rule(e.rule)
            for e in self.chosen
            if e.rule is not None and self.document.expectation_profile(e).id == profile.id
        }

    # --- measure ---------------------------------------------------------------------------------

    def _measure(
        self, profile: Profile, result: CheckResult, stored: dict[str, Any] | None = None
    ) -> ProfileMeasurement:
        """The profile's one statement, retried on platform failures; with ``stored`` (what a
        killed run measured), no statement: the measurement is taken from it."""
        failure: str | None = None
        for attempt in range(1, self.attempts + 1):
            try:
                measured = self._measure_once(profile, stored)
            except PlatformError as error:
                failure = error.message
                result.attempts.append(Attempt(profile.id, attempt, failure))
                if attempt < self.attempts:
                    self.sleep(self.backoff * (2 ** (attempt - 1)))
                continue
            except ConfigError as error:
                result.attempts.append(Attempt(profile.id, attempt, None))
                out = ProfileMeasurement(profile, failure="config")
                out.errors["*"] = error.message
                result.profiles[profile.id] = {"rows": None, "attempts": attempt, "error": error.message}
                return out
            result.attempts.append(Attempt(profile.id, attempt, None))
            measured.attempts = attempt
            result.profiles[profile.id] = {
                "rows": measured.rows,
                "attempts": attempt,
                "groups_beyond_top_k": measured.dropped,
                "missing": measured.missing,
            }
            return measured
        out = ProfileMeasurement(profile, failure="system")
        out.errors["*"] = failure or "the platform failed"
        out.attempts = self.attempts
        result.profiles[profile.id] = {"rows": None, "attempts": self.attempts, "error": failure}
        return out

    def _measure_once(self, profile: Profile, stored: dict[str, Any] | None = None) -> ProfileMeasurement:
        # before the engine: a postgres source's engine connects, and an undeclared server must
        # not learn of the attempt (nor the author whether it answers)
        confine(self.document.dataset.source, base=self.path.parent, workspace=self.workspace.root)
        try:
            engine = self.engine_factory(self.document)
        except EngineError as error:
            raise PlatformError(f"opening the engine: {error.message}") from None
        self.engines.append(engine)
        base = self.path.parent
        source: OpenedSource = open_source(engine, self.document, base=base, workspace=self.workspace.root)
        if source.registered is None:
            out = ProfileMeasurement(profile, missing=source.missing)
            return out
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
        )
        slots = rules.slots
        if stored is not None:  # resumed: the killed run's numbers, rules compiled, no scan
            from assay.platform.checks.measure import load_measurement

            resumed = load_measurement(profile, stored)
            resumed.rules = rules
            return resumed
        try:
            measured = measure(engine, plan, slots)
        except EngineError as error:
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
            del error
        measured.rules = rules
        if measured.rows == 0 and profile.slice is not None:
            measured.missing = f"the slice {profile.slice.column} = {self.at.date().isoformat()} has no rows"
        return measured

    # --- persist ------------------------------------------------------------------------------------

    def _persist(self, run: Run, measured: dict[str, ProfileMeasurement]) -> dict[str, int]:
        """The run's metrics, one pending load per measured profile, before any judgement."""
        store = self.store
        if store is None:
            return {}
        loads: dict[str, int] = {}
        run.phase = "storing the metrics"
        with store.transaction(lock=self.document.dataset.name):
            for pid, m in measured.items():
                if m.failure or m.missing:
                    continue
                load = store.create_load(
                    self.document.dataset.name,
                    partition=pid,
                    logical_time=self.at,
                    logical_date=self.at.date(),
                    source_path=self.document.dataset.source.describe(),
                    row_count=m.rows,
                    run_id=run.id,
                    status="pending",
                )
                values: dict[MetricKey, float | None] = {}
                for (key, group), value in m.values.items():
                    if key.startswith("__"):
                        continue
                    values[_metric_key(key, group)] = value
                rules: CompiledRules | None = m.rules
                if rules is not None and rules.slots:
                    values.update(rules.stored(rules.measurements(m.dqdl, m.dqdl_errors)))
                store.save_metrics(load, values)
                loads[pid] = load
            # with the metrics, what was measured: both land, or neither; a run killed before
            # judging is resumed from it by the next run of the day (never measured again)
            store.add_stage(run.id, "measured", detail=self._snapshot(measured))
        return loads

    def _snapshot(self, measured: dict[str, ProfileMeasurement]) -> dict[str, Any]:
        from assay.platform.checks.measure import dump_measurement

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
        import hashlib

        text = "\n".join((profile.model_dump_json(), self.document.dataset.source.describe(), self.at_text))
        return hashlib.sha256(text.encode()).hexdigest()

    def _resumable(self, run: Run) -> dict[str, dict[str, Any]]:
        """The measurements of the killed run this one follows, when it stopped after
        ``measured`` and before ``judged`` on the same day: {profile id: measurement}. Only the
        run started right before this one counts (a later run of the day measures afresh)."""
        store = self.store
        if self.dry_run or store is None:
            return {}
        earlier = [r for r in store.runs(self.document.dataset.name, limit=5, kind="check") if r.id != run.id]
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
            self.resumed_from = killed.id
        return out

    def _settle(self, run: Run, loads: dict[str, int], result: CheckResult) -> dict[str, Any] | None:
        store = self.store
        statuses = {load: "current" for load in loads.values()}
        if statuses:
            store.settle_loads(statuses)
        for pid, load in loads.items():
            store.supersede(self.document.dataset.name, self.at.date(), partition=pid, keep=load)
        store.save_check_outcomes(run.id, self.document.dataset.name, self.at, result.outcomes)
        if self.notify is not None:  # incidents and their notifications: the same transaction
            from assay.platform.incidents import judge

            started = clock.perf_counter()
            result.incidents = judge(
                store, result.outcomes, self._incident_context(), at=self.at, run_id=run.id, now=self.now
            )
            result.seconds["incidents"] = clock.perf_counter() - started
        # judged with its outcomes and what they caused; notified at once when they caused nothing
        store.add_stage(run.id, "judged")
        store.note_notified(run.id)
        return None if result.incidents is None else {"incidents": result.incidents}

    def _incident_context(self) -> Any:
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
                e.id: dimension_of(e.metric, e.rule, e.dimension) for e in self.document.expectations
            },
            divided=frozenset(e.id for e in self.document.expectations if e.divide_by_group),
            route=lambda facts: route(routes, facts),
            move_share=config.incidents.move_share,
            flow="check",
        )

    # --- judge --------------------------------------------------------------------------------------

    def _series(
        self, profile_id: str, names: set[str], weekday: int | None = None
    ) -> dict[tuple[str, str, str], list[float]]:
        """The profile's stored series (read once per run), most recent first; with ``weekday``,
        only the points whose logical time falls on that weekday (``history: same_weekday``)."""
        cache = self.series_cache
        key = (profile_id, frozenset(names))
        if key not in cache:
            cache[key] = (
                {}
                if self.store is None
                else self.store.metric_series(
                    self.document.dataset.name,
                    partition=profile_id,
                    names=names,
                    before=self.at,
                    loads=HISTORY_REACH * self._depth(profile_id),
                )
            )
        return {
            k: [v for at, v in points if v is not None and (weekday is None or at.weekday() == weekday)]
            for k, points in cache[key].items()
        }

    def _depth(self, profile_id: str) -> int:
        """How many past values the profile's expectations read at most (1 at least: the
        previous value explains a change)."""
        deepest = 1
        for e in self.chosen:
            if e.metric is None or e.reference.profile != profile_id:
                continue
            try:
                condition = self._condition(e)
            except conditions.ConditionError:
                continue
            needs = max(conditions.needs_history(condition), e.min_history)
            # one point a week: k same-weekday values lie among the 7k most recent loads
            deepest = max(deepest, 7 * needs if e.history == "same_weekday" else needs)
        return deepest

    def _condition(self, expectation: Expectation) -> ast.Condition:
        """An expectation's ``expect``, parsed once per run (durations allowed on freshness)."""
        found = self.conditions.get(expectation.id)
        if found is None:
            spec = self.document.expectation_profile(expectation).spec(expectation.reference.key)
            duration = spec is not None and spec.kind == "freshness"
            found = self.conditions[expectation.id] = conditions.parse_expect(
                str(expectation.expect), duration=duration
            )
        return found

    def _profile_names(self, profile_id: str) -> set[str]:
        return {
            e.reference.key for e in self.chosen if e.metric is not None and e.reference.profile == profile_id
        }

    def _judge(
        self, expectation: Expectation, measured: dict[str, ProfileMeasurement]
    ) -> list[dict[str, Any]]:
        profile = self.document.expectation_profile(expectation)
        m = measured[profile.id]
        base = self._base(expectation)
        base["attempts"] = m.attempts
        if m.failure == "system":
            return [_outcome(base, Outcome.SYSTEM_ERROR, PLATFORM_OWNER, m.errors["*"])]
        if m.failure == "config":
            return [_outcome(base, Outcome.CONFIG_ERROR, self._author(), m.errors["*"])]
        if m.missing:
            return [
                _outcome(
                    base, Outcome.SKIPPED, None, f"upstream missing: {m.missing}", reason="upstream_missing"
                )
            ]
        if expectation.rule is not None:
            return [self._judge_rule(expectation, m, base)]
        ref = expectation.reference
        if ref.key in m.errors:
            return [_outcome(base, Outcome.CONFIG_ERROR, self._author(), m.errors[ref.key])]
        spec = profile.spec(ref.key)
        assert spec is not None  # the document's check: a reference names a declared metric
        condition = self._condition(expectation)
        weekday = self.at.weekday() if expectation.history == "same_weekday" else None
        series = self._series(profile.id, self._profile_names(profile.id), weekday)
        dimensions = _ordered(profile, expectation.by)
        groups: list[Group] = [()] if not expectation.by else list(m.groups.get(dimensions, []))
        vanished = self._vanished(profile, dimensions, ref.key, groups) if expectation.by else []
        out = []
        for group in [*groups, *vanished]:
            entity, instance = ("Group", group_key(dict(group))) if group else ("Dataset", "*")
            history = series.get((entity, instance, ref.key), [])
            item = dict(base, group=group_label(group))
            observed = m.value(ref.key, group)
            gone = group in vanished
            if gone:
                capped = [d for d in dimensions if m.dropped.get(d)]
                if capped:  # beyond today's top_k groups, or gone: not measured either way
                    why = f"{group_label(group)} is not among this load's top_k groups of {', '.join(capped)}"
                    out.append(_outcome(item, Outcome.SKIPPED, None, why, reason="beyond_top_k"))
                    continue
                if spec.kind not in ADDITIVE:  # a mean or a rate of no rows is no number
                    why = f"{ref.key}: no rows in this load (the group had rows in the previous one)"
                    out.append(_outcome(item, Outcome.SKIPPED, None, why, reason="no_rows"))
                    continue
                observed = 0.0  # a count or a sum of no rows
            item["observed"] = observed
            needed = max(expectation.min_history, 0)
            if needed and len(history) < needed:
                out.append(
                    _outcome(
                        item,
                        Outcome.SKIPPED,
                        None,
                        f"warming up: {len(history)} stored point(s) of {ref.key}, {needed} needed",
                        reason="warming_up",
                    )
                )
                continue
            try:
                verdict = conditions.judge(condition, observed, history)
            except conditions.ConditionError as error:
                out.append(_outcome(item, Outcome.CONFIG_ERROR, self._author(), f"expect: {error}"))
                continue
            item["expected"] = verdict.expected
            shown = "no value" if observed is None else _fmt(observed)
            if verdict.holds:
                out.append(
                    _outcome(
                        item,
                        Outcome.PASSED,
                        None,
                        f"{ref.key} = {shown}, expected {conditions.text(condition)}",
                    )
                )
                continue
            message = _failure_message(ref.key, shown, verdict.expected, condition)
            if gone:
                message += "; no rows in this load (the group had rows in the previous one)"
            failed = _outcome(item, Outcome.FAILED, self._owner(expectation), message)
            if not group and profile.dimensions and spec.kind in ADDITIVE:
                failed["explained_by"] = self._explain(profile, m, ref.key, series)
            if spec.where is not None:
                failed["samples"] = m.samples.get(ref.key, [])
                failed["flagged"] = observed
            out.append(failed)
        return out

    def _judge_rule(
        self, expectation: Expectation, m: ProfileMeasurement, base: dict[str, Any]
    ) -> dict[str, Any]:
        rules: CompiledRules = m.rules
        measured: Measurements = rules.measurements(m.dqdl, m.dqdl_errors)
        partition = self.document.expectation_profile(expectation).id

        def history(key: MetricKey, k: int) -> list[float]:
            if self.store is None:
                return []
            points = self.store.history(
                self.document.dataset.name, key, partition=partition, before=self.at, limit=k
            )
            return [p.value for p in points if p.value is not None]

        outcome, message, metrics = rules.judge(expectation.id, measured, history)
        item = dict(base, group=None)
        values = [v for v in metrics.values() if v is not None]
        item["observed"] = values[0] if len(values) == 1 else None
        if metrics:
            item["metrics"] = metrics
        owner = {Outcome.FAILED: self._owner(expectation), Outcome.CONFIG_ERROR: self._author()}.get(outcome)
        text = message or f"{expectation.rule}: {outcome.value}"
        return _outcome(item, outcome, owner, text)

    def _vanished(
        self, profile: Profile, dimensions: tuple[str, ...], key: str, today: list[Group]
    ) -> list[Group]:
        """The groups of ``dimensions`` that had a stored value of ``key`` on the profile's
        previous load and have no rows in this one: a carrier that stopped flying. Only the
        previous load's: a group gone for a week is reported the day it went, not every day after
        (its absence stores no value)."""
        stored = self.series_cache.get((profile.id, frozenset(self._profile_names(profile.id))), {})
        total = stored.get(("Dataset", "*", key), [])
        if not total:
            return []
        previous = total[0][0]
        found: list[Group] = []
        for (entity, instance, name), points in stored.items():
            if entity != "Group" or name != key or not points or points[0][0] != previous:
                continue
            values = parse_group_key(instance) or {}
            if sorted(values) != sorted(dimensions):
                continue
            group: Group = tuple((d, values[d]) for d in dimensions)
            if group not in today and group not in found:
                found.append(group)
        return sorted(found, key=lambda g: [str(v) for _, v in g])

    def _explain(
        self,
        profile: Profile,
        m: ProfileMeasurement,
        key: str,
        series: dict[tuple[str, str, str], list[float]],
    ) -> list[dict[str, Any]]:
        """The groups that explain a change of the total: each group's change from its own
        previous stored value, as a share of the total's change, largest first."""
        history = series.get(("Dataset", "*", key), [])
        observed = m.value(key)
        if not history or observed is None:
            return []
        change = observed - history[0]
        if change == 0:
            return []
        found: list[dict[str, Any]] = []
        for dimension in profile.dimensions:
            groups: list[Group] = list(m.groups.get((dimension,), []))
            # A group that sent nothing today (a venue that stopped) explains by its absence.
            for entity, instance, name in series:
                if entity == "Group" and name == key:
                    stored = parse_group_key(instance) or {}
                    absent: Group = ((dimension, stored.get(dimension)),)
                    if list(stored) == [dimension] and absent not in groups:
                        groups.append(absent)
            for group in groups:
                past = series.get(("Group", group_key(dict(group)), key), [])
                value = m.value(key, group)
                if value is None and (key, group) not in m.values:
                    value = 0.0  # an additive metric of a group with no rows
                if not past or value is None:
                    continue
                delta = value - past[0]
                share = delta / change
                if abs(share) >= 0.1:
                    found.append(
                        {
                            "dimension": dimension,
                            "value": group[0][1],
                            "observed": value,
                            "baseline": past[0],
                            "change": delta,
                            "share": round(share, 4),
                        }
                    )
        found.sort(key=lambda item: (-abs(item["share"]), item["dimension"], str(item["value"])))
        return found[:5]

    # --- owners -------------------------------------------------------------------------------------

    def _base(self, expectation: Expectation) -> dict[str, Any]:
        return {
            "expectation": expectation.id,
            "group": None,
            "outcome": None,
            "severity": expectation.severity,
            "mode": expectation.mode,
            "owner": None,
            "observed": None,
            "expected": None,
            "message": None,
            "reason": None,
            "attempts": 1,
            "explained_by": [],
            "samples": [],
        }

    def _owner(self, expectation: Expectation) -> str | None:
        owners = self.document.dataset.owners
        return expectation.owner or owners.team or owners.contact

    def _author(self) -> str | None:
        return self.document.dataset.author or self.document.dataset.owners.team


def _ordered(profile: Profile, by: Sequence[str]) -> tuple[str, ...]:
    return tuple(d for d in profile.dimensions if d in by)


def _metric_key(key: str, group: Group) -> MetricKey:
    if not group:
        return MetricKey("Dataset", "*", key)
    return MetricKey("Group", group_key(dict(group)), key)


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities as None, in every list and mapping: JSON has neither
    (an empty input's Completeness is 0/0; the outcome's message says so)."""
    if isinstance(value, float):
        return json_number(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _outcome(
    item: dict[str, Any], outcome: Outcome, owner: str | None, message: str, *, reason: str | None = None
) -> dict[str, Any]:
    out = dict(item)
    out["outcome"] = outcome.value
    out["owner"] = owner
    out["message"] = message
    out["reason"] = reason
    return out


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4g}"


def _failure_message(key: str, shown: str, expected: dict[str, Any], condition: ast.Condition) -> str:
    bounds = ", ".join(
        f"{k} {_fmt(v) if isinstance(v, float | int) else v}" for k, v in expected.items() if k != "values"
    )
    text = conditions.text(condition)
    return f"{key} = {shown}, expected {text}" + (f" ({bounds})" if bounds and "last" in text else "")


def summarize(outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts of the enforced outcomes, ``pass_rate = passed / (passed + failed)`` and
    ``evaluation_rate = (passed + failed) / scheduled``, side by side; advisory outcomes are
    counted apart and enter neither rate.

    >>> done = [{"outcome": "passed", "mode": "enforce"}, {"outcome": "skipped", "mode": "enforce"}]
    >>> summarize(done)["evaluation_rate"]
    0.5
    """
    counts = {o.value: 0 for o in Outcome}
    advisory = {o.value: 0 for o in Outcome}
    for item in outcomes:
        (advisory if item.get("mode") == "advisory" else counts)[item["outcome"]] += 1
    judged = counts["passed"] + counts["failed"]
    scheduled = sum(counts.values())
    return {
        **counts,
        "pass_rate": round(counts["passed"] / judged, 4) if judged else None,
        "evaluation_rate": round(judged / scheduled, 4) if scheduled else None,
        "advisory": advisory,
    }


def run_document(document: Document, path: Path | str, **options: Any) -> CheckResult:
    """Run a check document (see :class:`CheckRun` for the options)."""
    return CheckRun(document, Path(path), **options).run()


def failing_severities(result: CheckResult, threshold: str) -> bool:
    """Whether an enforced expectation of ``threshold`` severity or worse failed."""
    from assay.vocabulary import Severity, fail_on, reached

    found = (
        Severity(o["severity"])
        for o in result.outcomes
        if o["outcome"] == Outcome.FAILED.value and o["mode"] == "enforce"
    )
    return reached(found, fail_on(threshold))


__all__ = ["CheckResult", "CheckRun", "failing_severities", "notify_config", "run_document", "summarize"]


def notify_config(workspace: Workspace, document: Document) -> Any:
    """The workspace's notification settings (assay.yaml), with the document's own routes
    checked against its channels before anything is measured (and by ``assay check validate``)."""
    from assay.platform.notify import load_config

    config = load_config(workspace.root)
    config.refuse_undeclared(document.notify, what="notify: routes", config=workspace.root / "assay.yaml")
    return config
