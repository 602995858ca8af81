"""Evaluate a DQDL ruleset on one dataset: read → compile → measure (one query) → persist → judge.

Metrics are written to the store before any rule is judged (DESIGN.md: persist before
judging), so a judgement that fails can be redone from stored numbers, and dynamic rules read
the history of earlier evaluations of the same dataset and partition.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from assay.engine import DuckDBEngine, Engine
from assay.errors import ConfigError
from assay.judge import verdicts
from assay.judge.result import AnalyzerOutcome, EvaluationResult, RuleOutcome
from assay.judge.rowlevel import row_outcomes
from assay.lake.checksum import digest
from assay.lake.readers import ReadOptions, register
from assay.lang.dqdl import ast
from assay.lang.dqdl.printer import analyzer_text, rule_text
from assay.measure import Aggregate, Measurements, ScanPlan
from assay.measure.requests import count_star
from assay.rules.compiler import CompiledRule, compile_analyzer, compile_rule, details
from assay.rules.plan import Context, LeafPlan
from assay.store import MetricKey

if TYPE_CHECKING:
    from assay.store import MetricStore

COMPOSITE_MODES = ("column", "row")
FILTERED_ROWS = ("passed", "skipped")


def parse_now(now: datetime | str | None) -> datetime:
    """The evaluation clock: the given instant (naive means UTC), or now, at full precision: it is
    also the evaluation's point in history, and two evaluations a second apart must see each
    other in ``last(k)``."""
    if now is None:
        return datetime.now(UTC)
    if isinstance(now, str):
        try:
            now = datetime.fromisoformat(now)
        except ValueError:
            raise ConfigError(
                f"--now: '{now}' is not an ISO-8601 date-time such as 2024-06-10T12:00:00Z"
            ) from None
    return now if now.tzinfo else now.replace(tzinfo=UTC)


def _check_alias(alias: str) -> None:
    if not alias or alias.lower() == "primary" or alias.startswith("__"):
        raise ConfigError(f"reference alias '{alias}' is not allowed: it must be a name other than 'primary'")


Values = dict[int, dict[str, float | None] | str]
"""Each leaf plan's metric values (by ``id`` of the plan), or the engine's error for it."""


def stored_metrics(plans: list[LeafPlan], values: Values) -> dict[MetricKey, float | None]:
    """The plans' metrics as the store keeps them (NaN and infinities as no value); a plan
    that could not be measured stores nothing."""
    metrics: dict[MetricKey, float | None] = {}
    for plan in plans:
        measured = values[id(plan)]
        if isinstance(measured, str) or plan.error:
            continue
        for spec in plan.metrics:
            value = measured.get(spec.display)
            metrics[spec.stored] = value if value is None or math.isfinite(value) else None
    return metrics


def judge_rule(compiled: CompiledRule, values: Values, history: verdicts.HistoryLookup) -> verdicts.Judgement:
    """A compiled top-level rule judged on its plans' values: each leaf by its verdict (an
    unmeasurable leaf is ``Error``), composites combined, a ROW-mode composite by its own plan."""

    def leaf(plan: LeafPlan) -> verdicts.Judgement:
        if plan.error is not None:
            return verdicts.Judgement(verdicts.ERROR, plan.error)
        measured = values[id(plan)]
        if isinstance(measured, str):
            return verdicts.Judgement(verdicts.ERROR, f"The rule could not be measured: {_reason(measured)}")
        return verdicts.judge(plan.verdict, measured, history)

    def node(item: ast.RuleNode) -> verdicts.Judgement:
        if isinstance(item, ast.Rule):
            return leaf(compiled.leaves[id(item)])
        return verdicts.combine(item.op, [node(child) for child in item.children])

    if compiled.row_mode is not None:
        return leaf(compiled.row_mode)
    return node(compiled.node)


def _reason(message: str) -> str:
    """The engine's reason, in the rule's terms where the engine speaks of its own plan: a
    CustomSql query with a condition runs as a scalar subquery, and one that returns several
    rows is refused by DuckDB and Spark alike as "more than one row returned by a subquery".

    >>> _reason("Invalid Input Error: More than one row returned by a subquery used as an expression")[:60]
    'the query returns more than one row; a CustomSql rule with a'
    """
    if "more than one row returned by a subquery" in message.lower():
        return (
            "the query returns more than one row; a CustomSql rule with a condition needs one value "
            "(without a condition, a query of primary rows is judged row by row: add "
            "'with threshold > 0.9' for a share)"
        )
    return message


def rule_metrics(compiled: CompiledRule, values: Values) -> dict[str, float | None]:
    """The metric values a rule's outcome reports, by display name."""
    metrics: dict[str, float | None] = {}
    for plan in compiled.leaves.values():
        measured = values[id(plan)]
        if isinstance(measured, dict):
            metrics.update({m.display: measured[m.display] for m in plan.metrics})
    return metrics


class Evaluation:
    """One evaluation of a ruleset; :func:`evaluate` is the convenient front door."""

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
        compiled = [
            compile_rule(node, self.ctx, i, row_mode=self.row_mode)
            for i, node in enumerate(self.ruleset.rules or ())
        ]
        analyzers = [compile_analyzer(a, self.ctx, i) for i, a in enumerate(self.ruleset.analyzers or ())]
        self.ctx.group = "load"
        rows_slot = self.scan.add(Aggregate(count_star()), "load")
        measured = self.scan.run(self.engine)
        plans = [p for rule in compiled for p in rule.leaves.values()]
        plans += [rule.row_mode for rule in compiled if rule.row_mode is not None]
        plans += [p for group in analyzers for p in group]
        values = {id(plan): self._values(plan, measured) for plan in plans}
        load_id = self._persist(plans, values, measured.number(rows_slot))
        outcomes = [self._outcome(rule, values) for rule in compiled]
        analyzer_outcomes = [
            self._analyzer_outcome(node, group, values, measured)
            for node, group in zip(self.ruleset.analyzers or (), analyzers, strict=True)
        ]
        result = EvaluationResult(self.dataset, outcomes, analyzer_outcomes)
        if self.want_rows:
            texts = [rule_text(rule.node) for rule in compiled]
            result.row_level = row_outcomes(
                self.engine, self.primary, compiled, texts, skip_filtered=self.skip_filtered
            )
        result.queries = self.engine.queries
        result.load_id = load_id
        return result

    # --- measuring and persisting --------------------------------------------------------

    @staticmethod
    def _values(plan: LeafPlan, measured: Measurements) -> dict[str, float | None] | str:
        """The plan's metric values, or the engine's error when a slot could not be measured."""
        for slot in plan.slots:
            if slot not in measured.values and slot in measured.errors:
                return measured.errors[slot]
        out: dict[str, float | None] = {}
        for name, spec in [*((m.display, m) for m in plan.metrics), *plan.hidden.items()]:
            out[name] = spec.compute(measured)
        return out

    def _persist(
        self, plans: list[LeafPlan], values: dict[int, dict[str, float | None] | str], rows: float | None
    ) -> int | None:
        if self.store is None or not self.dataset:
            return None
        metrics: dict[MetricKey, float | None] = {MetricKey.dataset("RowCount"): rows}
        metrics.update(stored_metrics(plans, values))
        path = self.primary.path
        self.source_sha256 = digest(path) if path else None
        load_id = self.store.create_load(
            self.dataset,
            partition=self.partition,
            logical_time=self.now,
            logical_date=self.logical_date,
            source_path=str(path) if path else None,
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
            self.dataset, key, partition=self.partition, before=self.now, limit=k, run=self.run_id
        )
        return [p.value for p in points if p.value is not None]

    # --- judging ---------------------------------------------------------------------------

    def _outcome(self, compiled: CompiledRule, values: Values) -> RuleOutcome:
        judgement = judge_rule(compiled, values, self._history)
        node = compiled.node
        labels = self.ruleset.effective_labels(node)
        return RuleOutcome(
            rule_text(node), judgement.outcome, judgement.message, rule_metrics(compiled, values), labels
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


def evaluate(ruleset: ast.Ruleset, data: Any, **options: Any) -> EvaluationResult:
    """Evaluate a parsed ruleset on ``data`` with no run around it (nothing recorded); the
    public :func:`assay.dqdl.evaluate` runs it inside a run."""
    evaluation = Evaluation(ruleset, data, **options)
    try:
        return evaluation.run()
    finally:
        if evaluation.owns_engine:
            evaluation.engine.close()
