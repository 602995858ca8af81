"""The gate run: the stages of :mod:`assay.gate` as a flow on the run driver
(:mod:`assay.platform.runs.driver`), which owns the run, its engine, its checkpoints and its commit.

Each step takes the values the step before returned:

- :meth:`GateRun.read`: the control file's rules, the batch typed against the table's schema
  (retried on a platform failure, ``--retries``), and whether it is a file already gated or an
  empty one (then nothing is measured, judged or committed: the run is recorded at once);
- :meth:`GateRun.measure`: the batch split by identity, joined to its baseline, its held rows
  (retried too: it only reads), then the row states and the month rules, whose metrics are
  persisted as pending loads month by month (the driver's kill point ``after-measure`` follows);
- :meth:`GateRun.judge`: every row committed, quarantined or held (:func:`assay.gate.route.route`);
- :meth:`GateRun.settle`: the quarantine and held files staged, the store's writes planned
  (:func:`assay.gate.committed.settle_plan`), and the commit point handed to the driver: the
  healthy rows committed to the Iceberg table in one snapshot carrying the run id. The driver
  makes the plan durable (``after-stage``), commits the snapshot (``before-commit``,
  ``after-commit``), then the store settles (:func:`assay.gate.publish.settle`) with the run's
  record, and the staged files are published;
- :meth:`GateRun.after_commit`: the result, with what the store's commit recorded.

The platform also finds the dataset's document (:meth:`assay.workspace.Workspace.document_for`)
and hands the gate its settings as values (:func:`settings`, :func:`gate_table`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from assay.engine import DuckDBEngine
from assay.errors import ConfigError
from assay.gate import baseline, committed, holds, identity, publish, states
from assay.gate import batch as batches
from assay.gate.config import GateConfig, GateTable, resolve
from assay.gate.gate import (
    BATCH,
    ROW,
    GateOptions,
    GateResult,
    Scope,
    check_columns,
    duplicate,
    iso,
    table_schema,
)
from assay.gate.route import RoutePlan, route
from assay.gate.summary import Group, Summary
from assay.lake import storage
from assay.lake.iceberg import Warehouse
from assay.lake.quarantine import quarantine_path
from assay.lake.readers import ReadOptions, Registered
from assay.lake.storage import origin
from assay.platform.alerts import Alerting, Routing
from assay.platform.privacy import masker_for
from assay.platform.runs.dqdl import Evaluation
from assay.platform.runs.driver import Driver, Flow, Settlement, Snapshot, required
from assay.platform.runs.run import Input
from assay.rules import control
from assay.store import OutcomeRecord
from assay.vocabulary import RuleSeverity, Severity
from assay.workspace import Workspace

if TYPE_CHECKING:
    from assay.engine import Engine
    from assay.store import MetricStore

__all__ = ["GateOptions", "GateResult", "GateRun", "findings", "gate_options", "gate_table", "settings"]


def settings(workspace: Workspace, table: str) -> tuple[Path | None, GateConfig | None, list[str]]:
    """The document of ``table`` (one rule: :meth:`Workspace.document_for`), its ``gate:``
    section and its domain columns (none without a document)."""
    from assay.platform.checks.settings import load_config

    path = workspace.document_for(table)
    if path is None:
        return None, None, []
    config = load_config(path)  # its gate: section was validated by GateConfig there
    gate = None if config.gate is None else GateConfig.model_validate(config.gate)
    return path, gate, list(config.domain_columns)


def gate_table(
    workspace: Workspace,
    *,
    table: str | None,
    key: str | None,
    order: str | None,
    contributor_column: str | None,
    schema: Path | None,
) -> GateTable:
    """The gate's table and columns: each from its flag, else from the table's document.

    Without ``--table``, the one table of the workspace whose document has a ``gate:`` section
    is chosen; none or several is an error that names them."""
    from assay.platform.checks.settings import load_config

    checks = workspace.checks
    if table is None:
        candidates = (
            sorted(
                config.dataset or path.stem
                for path in checks.glob("*.yaml")
                if path.is_file() and (config := load_config(path)).gate is not None
            )
            if checks.is_dir()
            else []
        )
        if len(candidates) != 1:
            found = (
                f"the workspace configures {', '.join(candidates)}"
                if candidates
                else (f"no table in {checks} has a 'gate:' section")
            )
            raise ConfigError(f"say which table to commit to with --table ({found})")
        table = candidates[0]
    path, configured, _ = settings(workspace, table)
    return resolve(
        configured,
        path or checks / f"{table}.yaml",
        table=table,
        key=key,
        order=order,
        contributor_column=contributor_column,
        schema=schema,
    )


def gate_options(
    workspace: Workspace,
    *,
    batch: Path | str,
    rules: Path | str,
    contributor: str,
    contributor_type: str | None = None,
    table: str | None = None,
    key: str | None = None,
    order: str | None = None,
    contributor_column: str | None = None,
    schema: Path | str | None = None,
    read: ReadOptions | None = None,
) -> GateOptions:
    """What ``assay gate`` (and the Airflow operator) asks of one run, as the gate takes it: the
    table and its columns each from its argument, else from the table's document
    (:func:`gate_table`)."""
    chosen = gate_table(
        workspace,
        table=table,
        key=key,
        order=order,
        contributor_column=contributor_column,
        schema=None if schema is None else Path(schema),
    )
    return GateOptions(
        batch=Path(batch),
        rules=Path(rules),
        contributor=contributor,
        contributor_type=contributor_type,
        workspace=workspace.root,
        table=chosen.table,
        key=chosen.key,
        order=chosen.order,
        contributor_column=chosen.contributor_column,
        schema=chosen.schema,
        read=read or ReadOptions(),
    )


def findings(result: GateResult) -> list[Severity]:
    """What a gate run found on ``--fail-on``'s scale: rows quarantined are a critical rule's
    failure, rows warned (or a dataset rule failed) a warning's."""
    found = {RuleSeverity.CRITICAL: result.critical_failures, RuleSeverity.WARNING: result.warnings}
    return [rule.severity for rule, hit in found.items() if hit]


@dataclass
class Read:
    """What :meth:`GateRun.read` found: the chosen rules, the batch, the table, the summary."""

    chosen: list[control.ControlRule]
    batch: batches.Batch
    warehouse: Warehouse
    exists: bool
    summary: Summary

    @property
    def done(self) -> bool:
        """A file gated before, or an empty one: recorded with nothing measured or committed."""
        return self.summary.duplicate_of is not None or self.batch.total == 0


@dataclass
class Measured:
    """What :meth:`GateRun.measure` found: the batch split by identity, its held and rejected
    rows, the lagged batch, the rules sorted into row and month rules, and the row states and
    month groups they judged."""

    identified: identity.Identified
    found: holds.Holds
    enriched: Registered
    relag: Callable[[list[int]], Registered] | None
    never: list[int]
    row_rules: states.RowRules
    group_rules: list[control.ControlRule]
    baseline: str | None
    baseline_date: date | None
    judged: states.RowStates | None = None
    groups: dict[date, Group] = field(default_factory=dict)


class GateRun(Flow[Measured | None, None, RoutePlan | None, GateResult]):
    """One gate run on the driver: ``Driver(...).run(GateRun(options, store, ...))`` returns the
    result or raises ConfigError (exit 2, nothing committed) or PlatformError (exit 3, nothing
    half-written left visible). The table's domain columns are its document's (:func:`settings`)."""

    kind = "gate"

    def __init__(
        self, options: GateOptions, store: MetricStore, engine_factory: Callable[[], Engine] | None = None
    ) -> None:
        self.options = options
        self.dataset = options.table
        self.inputs = [Input(origin(options.batch))]
        self.store = store
        self.engine_factory = engine_factory or DuckDBEngine
        self.workspace = Workspace(options.workspace)
        self.document: Path | None = None
        self.domain: list[str] = []
        self.texts: dict[str, str] = {}  # each chosen rule's DQDL text, by rule id
        self.written: dict[str, str] = {}  # and as the control file wrote it
        self.groups: dict[date, Group] = {}  # the batch's months, as they were judged

    # --- the steps ---------------------------------------------------------------------------

    def read(self, driver: Driver) -> None:
        opts, run = self.options, driver.current
        assert run.dataset is not None
        # quarantined rows, a refused file and held rows open incidents at the commit
        run.alerting = Alerting(Routing.of(run.workspace.root, run.dataset), "gate")
        self.scope = Scope(
            opts,
            batches.safe_name(opts.contributor, "contributor"),
            run.id,
            driver.engine(self.engine_factory),
            self.store,
            evaluation=lambda ruleset, rows, **how: Evaluation(ruleset, rows, **how).run(),
            masker=masker_for(self.workspace, opts.table),
        )
        self.judging = states.Judge(self.scope, self._phase(driver))
        run.phase = "reading the rules"
        control_file = control.load(opts.rules)
        chosen = control_file.select(opts.contributor_type)
        self.texts = {rule.rule_id: rule.text for rule in chosen}
        self.written = {rule.rule_id: rule.condition or rule.text for rule in chosen}
        self.workspace.ensure()
        self.document, _, self.domain = settings(self.workspace, opts.table)
        warehouse = self.workspace.warehouse()
        exists = warehouse.exists(opts.table)
        schema = table_schema(opts, warehouse, exists)
        run.phase = f"reading {opts.batch}"
        batch = required(
            driver.attempt("read", lambda: batches.read(self.scope.engine, opts.batch, schema, opts.read))
        )
        run.inputs = [Input(origin(opts.batch), batch.sha256)]
        check_columns(opts, batch.schema, chosen, empty=batch.total == 0)
        summary = Summary(
            self.scope.run_id,
            self.scope.contributor,
            opts.contributor_type or control.ALL,
            opts.table,
            origin(opts.batch),
            batch.sha256,
            started_at=run.started_at.isoformat(),
        )
        summary.read = opts.read.recorded()
        summary.duplicate_of = duplicate(self.scope, warehouse, exists, batch.sha256)
        self.found = Read(chosen, batch, warehouse, exists, summary)

    def measure(self, driver: Driver) -> Measured | None:
        read = self.found
        if read.done:
            return None
        measured = required(driver.attempt("measure", lambda: self._prepare(driver, read)))
        # each month's metrics are persisted as it is judged (a later month's rules read the
        # earlier ones'): not retried, a second try would persist them twice
        measured.judged, measured.groups = self.judging.judge(
            measured.row_rules,
            measured.group_rules,
            measured.enriched,
            measured.relag,
            measured.never,
            measured.identified.month_rows,
            measured.baseline,
            measured.baseline_date,
            measured.identified.dates,
        )
        self.groups = measured.groups
        read.summary.groups = list(measured.groups.values())
        return measured

    def judge(self, driver: Driver, measured: Measured | None) -> RoutePlan | None:
        if measured is None:
            return None
        assert measured.judged is not None
        read = self.found
        plan = route(
            self.scope,
            read.batch,
            measured.identified,
            measured.found,
            measured.judged,
            measured.row_rules,
            measured.group_rules,
            measured.groups,
            self.written,
        )
        summary = read.summary
        summary.rules.update(plan.rules)
        summary.quarantined_by = plan.quarantined_by
        summary.total = plan.total
        summary.quarantined = plan.quarantined
        summary.passed = plan.committed
        summary.held = plan.held
        summary.warned = plan.warned
        summary.parse_errors = plan.parse_errors
        return plan

    def settle(self, driver: Driver, persisted: None, plan: RoutePlan | None) -> Settlement:
        """The quarantine and held files staged, the store's writes planned, and the commit
        point (a snapshot of the healthy rows) handed to the driver."""
        read, run = self.found, driver.current
        summary = read.summary
        if plan is None:  # nothing measured, staged or committed: a duplicate file or an empty one
            settle = self._settle_plan(pa.schema([]), {}, {}, summary)
        else:
            self._stage(driver, plan)
            settle = self._settle_plan(read.batch.schema, plan.committed_by_date, self.groups, summary)
            settle["decisions"] = plan.decisions
        summary.attempts = [a.to_dict() for a in driver.attempts]
        summary.finished_at = datetime.now(UTC).isoformat()
        loads = self.judging.loads
        settlement = Settlement(
            summary=summary.to_dict(),
            writes=lambda: publish.settle(self.store, self.workspace, run.manifest),
            outcomes=[
                OutcomeRecord(
                    rule.rule_id,
                    rule.outcome,
                    rule.message,
                    {"observed": rule.observed},
                    {
                        "statement_date": group.statement_date,
                        "severity": rule.severity,
                        "dqdl": self.texts.get(rule.rule_id, ""),
                    },
                )
                for group in summary.groups
                for rule in group.dataset_rules
            ]
            + (plan.row_outcomes if plan is not None else []),
            load_id=max(loads) if loads else None,
            counts={
                "total": summary.total,
                "committed": summary.passed,
                "quarantined": summary.quarantined,
                "held": summary.held,
            },
            plan=settle,
        )
        if plan is not None and plan.committed_by_date:
            settlement.commit = lambda: self._snapshot(driver, plan, settle, settlement)
        return settlement

    def after_commit(self, driver: Driver) -> None:
        """The result, with what the store's commit recorded (decisions, incidents, a twin)."""
        summary, recorded = self.found.summary, driver.recorded
        summary.decisions = list(recorded.get("decisions", []))
        summary.incidents = recorded.get("incidents")
        if recorded.get("duplicate_of"):
            summary.duplicate_of = recorded["duplicate_of"]
            summary.quarantine_file = summary.held_file = None
        quarantine = summary.quarantine_file
        summary_file = self.workspace.published(self.workspace.runs / f"{self.scope.run_id}.json")
        self.result = GateResult(
            summary,
            None if quarantine is None else quarantine if storage.is_url(quarantine) else Path(quarantine),
            summary_file if storage.is_url(summary_file) else Path(summary_file),
        )

    # --- helpers -----------------------------------------------------------------------------

    def _phase(self, driver: Driver) -> Callable[[str], None]:
        def phase(text: str) -> None:
            driver.current.phase = text

        return phase

    def _prepare(self, driver: Driver, read: Read) -> Measured:
        """The batch split by identity and joined to its baseline, its held and rejected rows,
        and the rules sorted: reads only, so it is safe to try again."""
        scope, schema = self.scope, read.batch.schema
        identified = identity.identify(scope, read.batch)
        baseline_date = baseline.baseline_date(scope, read.warehouse, read.exists, identified.dates)
        read.summary.baseline_date = iso(baseline_date)
        driver.current.phase = "joining the batch to its baseline"
        base = older = None
        prev = sorted({name.removeprefix("prev_") for rule in read.chosen for name in rule.prev_columns})
        if baseline_date is not None:
            base = baseline.register_baseline(scope, read.warehouse, baseline_date, schema)
            if prev:
                older = baseline.register_older(scope, read.warehouse, base, baseline_date, schema)
        # A held row, or one carrying a rejected value, is not committed whatever the rules say:
        # nobody's baseline. Only a backfill's later months can have such a row before them.
        found = self._holds(schema)
        never = sorted(set(found.waits) | set(found.rejected))
        relag = None
        if prev and len(identified.dates) > 1:

            def relag(rows: list[int]) -> Registered:
                return baseline.register_lagged(scope, base, schema, prev, older, rows)

        enriched = (
            relag(never) if relag is not None else baseline.register_lagged(scope, base, schema, prev, older)
        )
        row_rules, group_rules = states.classify(scope, read.chosen, enriched)
        return Measured(
            identified, found, enriched, relag, never, row_rules, group_rules, base, baseline_date
        )

    def _stage(self, driver: Driver, plan: RoutePlan) -> None:
        """The quarantine and held files, written to the run's staging folder (published after
        the commit)."""
        opts, scope, summary, run = self.options, self.scope, self.found.summary, driver.current
        run.phase = "staging the quarantine and held rows"
        if len(plan.quarantine):
            run_day = opts.run_date or datetime.now(UTC).date()
            target = quarantine_path(self.workspace.root, run_day, scope.contributor, scope.run_id)
            plan.quarantine.write(run.stage(target))
            summary.quarantine_file = self.workspace.published(target)
        if plan.held:
            held_target = holds.held_path(self.workspace, opts.table, scope.contributor, scope.run_id)
            layout = holds.Layout(opts.key, opts.order, opts.contributor_column)
            rows = plan.held_rows.drop_columns([ROW])
            holds.write(run.stage(held_target), rows, plan.waits, layout)
            summary.held_file = str(held_target)

    def _snapshot(
        self, driver: Driver, plan: RoutePlan, settle: dict[str, Any], settlement: Settlement
    ) -> Snapshot:
        """The healthy rows as one snapshot carrying the run id (the commit point), unless a run
        beside this one committed the same file first."""
        opts, scope, read = self.options, self.scope, self.found
        summary, warehouse, schema = read.summary, read.warehouse, read.batch.schema
        replaced = [date.fromisoformat(day) for day in settle["committed_dates"]]
        driver.current.phase = f"committing to table {opts.table}"
        if not read.exists:
            warehouse.create(opts.table, schema, [opts.contributor_column, opts.order])
        rows, files = committed.committed_rows(scope, warehouse, schema, list(plan.committed_by_date))
        existing = {
            p.values[opts.order]
            for p in warehouse.partitions(opts.table, {opts.contributor_column: scope.contributor})
        }

        def landed(snapshot: int | None, twin: str | None) -> None:
            if twin is not None:
                settle["duplicate_of"] = twin
            else:
                settle["snapshot_id"] = summary.snapshot_id = snapshot
                summary.replaced_dates = [day.isoformat() for day in replaced if day in existing]
            summary.finished_at = datetime.now(UTC).isoformat()
            settlement.summary.update(summary.to_dict())

        return Snapshot(
            warehouse,
            opts.table,
            rows,
            files,
            replace={opts.contributor_column: scope.contributor, opts.order: replaced},
            properties={
                "assay.run-id": scope.run_id,
                "assay.source-sha256": summary.source_sha256,
                "assay.contributor": scope.contributor,
                "assay.contributor-type": opts.contributor_type or control.ALL,
                "assay.source-path": origin(opts.batch),
                "assay.months": ",".join(settle["committed_dates"]),
            },
            unless={"assay.source-sha256": summary.source_sha256, "assay.contributor": scope.contributor},
            landed=landed,
            discard=lambda: committed.discard(files),
        )

    def _holds(self, schema: pa.Schema) -> holds.Holds:
        """The batch's rows carrying a never-seen value of a domain column (held for a decision)
        or a value rejected before (quarantined): a row's value says so, not its baseline."""
        if not self.domain:
            return holds.Holds()
        query = exp.select(exp.Star()).from_(exp.to_identifier(BATCH, quoted=True))
        names = [ROW, *schema.names]
        scope = self.scope
        return holds.find(
            scope.engine,
            scope.store,
            self.options.table,
            self.domain,
            query,
            names,
            document=self.document,
            masker=scope.masker,
        )

    def _settle_plan(
        self, schema: pa.Schema, rows: dict[Any, int], groups: dict[date, Group], summary: Summary
    ) -> dict[str, Any]:
        return committed.settle_plan(
            self.scope,
            schema,
            rows,
            groups,
            summary.source_sha256,
            domain=self.domain,
            loads=self.judging.loads,
            baseline_loads=self.judging.baseline_loads,
        )
