"""A DQDL evaluation as a flow on the driver: read → measure (ONE query) → persist → judge.

- **read** — the ruleset (a function that reads it may be given, so that a ruleset that cannot
  be read or parsed is the run's recorded ``config_error``) and the data, registered in the
  run's engine (:mod:`assay.lake.readers`);
- **measure** — every rule and analyzer compiled into one scan (:mod:`assay.measure`);
- **persist** — with ``dataset`` and a store, the load (``pending`` until the run commits, with
  the file's checksum) and its metrics, before any rule is judged (DESIGN.md: persist before
  judging), so dynamic rules of later runs read them;
- **judge** — each rule from the values and the stored history (:mod:`assay.judge.evaluation`);
- **settle** — the load becomes current; failing rules open incidents, as a check run's do.

>>> import pyarrow as pa, tempfile
>>> from assay.lang.dqdl import parse_text
>>> from assay.store import MetricStore
>>> ruleset = parse_text("Rules = [ RowCount > 0 ]").ruleset
>>> with MetricStore.open("sqlite://") as store:
...     result = evaluate(ruleset, pa.table({"id": [1]}), dataset="orders", store=store,
...                       workspace=tempfile.mkdtemp())
...     store.run(result.run_id).state, list(store.run_loads(result.run_id).values())
('completed', ['current'])
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.engine import DuckDBEngine, Engine
from assay.errors import ConfigError
from assay.judge.evaluation import (
    Values,
    judge_rule,
    parse_now,
    plan_values,
    rule_metrics,
    stored_metrics,
)
from assay.judge.result import AnalyzerOutcome, EvaluationResult, RuleOutcome, json_number
from assay.judge.rowlevel import row_outcomes
from assay.lake.checksum import digest
from assay.lake.readers import ReadOptions, register
from assay.lake.storage import origin
from assay.lang.dqdl import ast
from assay.lang.dqdl.printer import analyzer_text, rule_text
from assay.measure import Aggregate, Measurements, ScanPlan
from assay.measure.requests import count_star
from assay.platform.alerts import Alerting, Routing
from assay.platform.baselines import rule_holds, rule_keys
from assay.platform.events.records import supersede_window
from assay.platform.runs.blanks import Blanks
from assay.platform.runs.driver import Driver, Flow, Persisted, Retry, Settlement, required
from assay.platform.runs.run import Input
from assay.rules.compiler import CompiledRule, compile_analyzer, compile_rule, details
from assay.rules.plan import Context, LeafPlan
from assay.store import MetricKey
from assay.store.records import OutcomeRecord
from assay.vocabulary import Outcome, RunState
from assay.workspace import Workspace

if TYPE_CHECKING:
    from assay.store import MetricStore

COMPOSITE_MODES = ("column", "row")
FILTERED_ROWS = ("passed", "skipped")


def _check_alias(alias: str) -> None:
    if not alias or alias.lower() == "primary" or alias.startswith("__"):
        raise ConfigError(f"reference alias '{alias}' is not allowed: it must be a name other than 'primary'")


@dataclass(frozen=True)
class Measured:
    """One scan's outcome: the compiled rules and analyzers, every leaf plan with its values
    (or the engine's error), the scan itself and the load's row count."""

    compiled: list[CompiledRule]
    analyzers: list[list[LeafPlan]]
    plans: list[LeafPlan]
    values: Values
    scanned: Measurements
    rows: float | None
    blanks: Blanks = field(default_factory=Blanks)


class Evaluation:
    """One evaluation of a ruleset on data it reads (registers) in its engine: :meth:`measure`,
    :meth:`persist`, :meth:`judge`; :func:`evaluate` runs it as a flow on the driver."""

    def __init__(
        self,
        ruleset: ast.Ruleset,
        data: Any,
        *,
        references: Mapping[str, Any] | None = None,
        dataset: str | None = None,
        partition: str | None = None,
        store: MetricStore | None = None,
        now: datetime | str | None = None,
        composite_mode: str = "column",
        filtered_rows: str = "passed",
        row_level: bool = False,
        engine: Engine | None = None,
        logical_date: date | None = None,
        run_id: str | None = None,
        read: ReadOptions | None = None,
    ) -> None:
        if composite_mode not in COMPOSITE_MODES:
            raise ConfigError(f"composite mode must be 'column' or 'row', not '{composite_mode}'")
        if filtered_rows not in FILTERED_ROWS:
            raise ConfigError(f"filtered rows must be 'passed' or 'skipped', not '{filtered_rows}'")
        self.ruleset = ruleset
        self.dataset = dataset
        self.partition = partition or ""
        self.store = store if dataset else None
        self.now = parse_now(now)
        self.row_mode = composite_mode == "row"
        self.skip_filtered = filtered_rows == "skipped"
        self.want_rows = row_level
        self.logical_date = logical_date
        self.source_sha256: str | None = None  # the primary file's checksum, when a load records it
        self.run_id = run_id  # the run whose pending loads this evaluation writes and reads
        self.reads: list[list[tuple[str, str, str]]] = []  # each rule's metric keys, once judged
        self.unread = False  # the rule being judged read an empty history
        self.owns_engine = engine is None
        self.engine = engine or DuckDBEngine()
        self.primary = register(self.engine, "primary", data, read)
        self.references = {}
        for alias, source in (references or {}).items():
            _check_alias(alias)
            self.references[alias] = register(self.engine, alias, source, read)
        self.scan = ScanPlan(self.primary.name)
        self.ctx = Context(
            engine=self.engine,
            primary=self.primary,
            references=self.references,
            now=self.now,
            scan=self.scan,
            constants=ruleset.constant_values,
            data_path=self.primary.path,
        )

    def run(self) -> EvaluationResult:
        """Measure, persist and judge, with no run around it (the gate's months, a test)."""
        measured = self.measure()
        load_id = self.persist(measured)
        result = self.judge(measured)
        result.load_id = load_id
        return result

    def measure(self) -> Measured:
        """Every rule and analyzer compiled into ONE scan of the data, run once; a new scan each
        call, so that a measure tried again after a platform failure scans once too."""
        self.scan = self.ctx.scan = ScanPlan(self.primary.name)
        self.ctx.group = ""
        compiled = [
            compile_rule(node, self.ctx, i, row_mode=self.row_mode)
            for i, node in enumerate(self.ruleset.rules or ())
        ]
        analyzers = [compile_analyzer(a, self.ctx, i) for i, a in enumerate(self.ruleset.analyzers or ())]
        self.ctx.group = "load"
        blanks = Blanks.ask(self.ruleset.rules or (), self.primary, self.scan)
        rows_slot = self.scan.add(Aggregate(count_star()), "load")
        scanned = self.scan.run(self.engine)
        plans = [p for rule in compiled for p in rule.leaves.values()]
        plans += [rule.row_mode for rule in compiled if rule.row_mode is not None]
        plans += [p for group in analyzers for p in group]
        values = {id(plan): plan_values(plan, scanned) for plan in plans}
        return Measured(compiled, analyzers, plans, values, scanned, scanned.number(rows_slot), blanks)

    def judge(self, measured: Measured) -> EvaluationResult:
        """Each rule's outcome from the measured values and the stored history."""
        outcomes = []
        self.reads = []
        for rule in measured.compiled:
            self.unread = False
            outcome = self._outcome(rule, measured.values)
            if outcome.state is Outcome.PASSED:
                outcome = replace(outcome, note=measured.blanks.note(rule.node, measured.scanned))
            outcomes.append(outcome)
            # a rule that compared with a history it did not have (last() of nothing is 0.0)
            # failed for want of a past, not for its data: holding its load would leave the
            # history empty for good
            self.reads.append([] if self.unread else rule_keys(rule))
        analyzer_outcomes = [
            self._analyzer_outcome(node, group, measured.values, measured.scanned)
            for node, group in zip(self.ruleset.analyzers or (), measured.analyzers, strict=True)
        ]
        result = EvaluationResult(self.dataset, outcomes, analyzer_outcomes)
        if self.want_rows:
            texts = [rule_text(rule.node) for rule in measured.compiled]
            result.row_level = row_outcomes(
                self.engine, self.primary, measured.compiled, texts, skip_filtered=self.skip_filtered
            )
        result.queries = self.engine.queries
        return result

    # --- measuring and persisting --------------------------------------------------------

    def persist(self, measured: Measured) -> int | None:
        """The load and its metrics (``pending`` inside a run) before any rule is judged."""
        if self.store is None or not self.dataset:
            return None
        rows = measured.rows
        metrics: dict[MetricKey, float | None] = {MetricKey.dataset("RowCount"): rows}
        metrics.update(stored_metrics(measured.plans, measured.values))
        path = self.primary.path
        self.source_sha256 = digest(path) if path else None
        load_id = self.store.create_load(
            self.dataset,
            partition=self.partition,
            logical_time=self.now,
            logical_date=self.logical_date,
            source_path=origin(path) if path else None,
            source_sha256=self.source_sha256,
            row_count=int(rows) if rows is not None else None,
            run_id=self.run_id,
            status="pending" if self.run_id else "current",
        )
        self.store.save_metrics(load_id, metrics)
        return load_id

    def _history(self, key: MetricKey, k: int) -> list[float]:
        if self.store is None or not self.dataset:
            return []
        points = self.store.history(
            self.dataset,
            key,
            partition=self.partition,
            before=self.now,
            limit=k,
            run=self.run_id,
            baseline=True,
        )
        values = [p.value for p in points if p.value is not None]
        self.unread = self.unread or not values
        return values

    # --- judging ---------------------------------------------------------------------------

    def _outcome(self, compiled: CompiledRule, values: Values) -> RuleOutcome:
        judgement = judge_rule(compiled, values, self._history)
        node = compiled.node
        labels = self.ruleset.effective_labels(node)
        return RuleOutcome(
            rule_text(node),
            judgement.outcome,
            judgement.message,
            rule_metrics(compiled, values),
            labels,
            expected=judgement.expected,
        )

    def _analyzer_outcome(
        self,
        node: ast.Analyzer,
        plans: list[LeafPlan],
        values: dict[int, dict[str, float | None] | str],
        scan: Measurements,
    ) -> AnalyzerOutcome:
        outcome = AnalyzerOutcome(analyzer_text(node), {})
        outcome.distributions = details(plans, scan)
        for plan in plans:
            measured = values[id(plan)]
            if plan.error is not None:
                outcome.errors.append(plan.error)
            elif isinstance(measured, str):
                outcome.errors.append(measured)
            else:
                outcome.metrics.update({m.display: measured[m.display] for m in plan.metrics})
        return outcome


class DqdlRun(Flow[Measured, int, EvaluationResult, EvaluationResult]):
    """A ruleset evaluated as one run; :func:`evaluate` is the front door."""

    kind = "dqdl"

    def __init__(
        self,
        ruleset: ast.Ruleset | Callable[[], ast.Ruleset],
        data: Any,
        *,
        dataset: str | None,
        store: MetricStore | None,
        source: str | None,
        engine_factory: Callable[[], Engine] | None,
        options: Mapping[str, Any],
    ) -> None:
        self.ruleset = ruleset
        self.data = data
        self.dataset = dataset
        self.store = store
        self.source = source
        self.engine_factory = engine_factory or DuckDBEngine
        self.options = dict(options)
        self.inputs = [Input(origin(data))] if isinstance(data, str | os.PathLike) else []

    def read(self, driver: Driver) -> None:
        run = driver.current
        routing = (
            Routing.of(driver.workspace.root, self.dataset) if driver.recording and self.dataset else None
        )
        self.alerting = None
        ruleset = self.ruleset() if callable(self.ruleset) else self.ruleset
        engine = driver.engine(self.engine_factory)
        self.evaluation = required(
            driver.attempt(  # registering the data reads it: a platform failure is tried again
                "read",
                lambda: Evaluation(
                    ruleset,
                    self.data,
                    dataset=self.dataset,
                    store=self.store,
                    engine=engine,
                    run_id=run.id if driver.recording else None,
                    **self.options,
                ),
            )
        )
        if routing is not None:  # failing rules open incidents, as a check run's expectations do
            self.alerting = Alerting(routing, "dqdl", at=self.evaluation.now)

    def measure(self, driver: Driver) -> Measured:
        return required(driver.attempt("measure", self.evaluation.measure))

    def persist(self, driver: Driver, measured: Measured) -> Persisted[int] | None:
        load = self.evaluation.persist(measured)
        return None if load is None else Persisted(load)

    def judge(self, driver: Driver, measured: Measured) -> EvaluationResult:
        return self.evaluation.judge(measured)

    def settle(self, driver: Driver, load: int | None, result: EvaluationResult) -> Settlement:
        self.result = result
        result.load_id = load
        evaluation, run = self.evaluation, driver.current
        inputs = self.inputs
        if evaluation.primary.path is not None:
            inputs = [Input(origin(evaluation.primary.path), evaluation.source_sha256)]
        counts = {"rules": len(result.rules), **{name.lower(): n for name, n in result.counts().items()}}
        if not driver.recording:
            return Settlement(RunState.COMPLETED, counts=counts, inputs=inputs)
        result.run_id = run.id
        data = origin(self.data) if self.inputs else None
        attempts = [a.to_dict() for a in driver.attempts]
        summary = {
            "run_id": run.id,
            "ruleset": self.source,
            "data": data,
            **result.to_dict(),
            "attempts": attempts,
        }
        store, alerting = self.store, self.alerting
        assert store is not None

        def writes() -> dict[str, Any] | None:
            if load is not None:
                store.settle_loads({load: "current"})
                # what a failed rule read stays out of later baselines until a person accepts it
                held = rule_holds(
                    (r.rule, Outcome.from_glue(r.outcome).value, keys)
                    for r, keys in zip(result.rules, evaluation.reads, strict=True)
                )
                store.hold_out_of_baselines(load, held, run_id=run.id, at=evaluation.now)
                # the same moment evaluated again (a re-run after a kill, a corrected file) is
                # the same load: history counts it once
                supersede_window(
                    store, evaluation.dataset or "", partition=evaluation.partition,
                    logical_time=evaluation.now, keep=load,
                )  # fmt: skip
            if alerting is None:
                return None
            return {"incidents": alerting(store, summary, run_id=run.id)}

        return Settlement(
            RunState.COMPLETED,
            summary=summary,
            writes=writes,
            outcomes=[
                OutcomeRecord(
                    r.rule,
                    Outcome.from_glue(r.outcome).value,
                    r.message,
                    {k: json_number(v) for k, v in r.metrics.items()},
                    r.labels,
                )
                for r in result.rules
            ],
            load_id=load,
            counts=counts,
            inputs=inputs,
        )


def evaluate(
    ruleset: ast.Ruleset | Callable[[], ast.Ruleset],
    data: Any,
    *,
    dataset: str | None = None,
    store: MetricStore | None = None,
    workspace: Path | str | None = None,
    source: str | None = None,
    retry: Retry | None = None,
    **options: Any,
) -> EvaluationResult:
    """Evaluate a ruleset as one run. With ``dataset`` and ``store`` the run is recorded: its
    load is pending until the run commits, and ``runs/<run_id>.json`` is written in the
    workspace; otherwise the run is ad hoc and leaves nothing behind. ``source`` (the ruleset's
    file) goes into the run summary. ``ruleset`` may be a function that reads it, so that a
    ruleset that cannot be read or parsed is the run's recorded ``config_error``. Reading and
    measuring the data are tried again on a platform failure as ``retry`` says (none by default)."""
    recorded = store if dataset else None
    flow = DqdlRun(
        ruleset,
        data,
        dataset=dataset,
        store=recorded,
        source=source,
        engine_factory=options.pop("engine_factory", None),
        options=options,
    )
    return Driver(store=recorded, workspace=Workspace(workspace), retry=retry).run(flow)


__all__ = ["DqdlRun", "Evaluation", "Measured", "evaluate"]
