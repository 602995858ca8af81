"""The ingestion gate: read a contributor's batch, give every row its own past, judge it, route it.

read → baseline → measure → persist → judge → route → record (DESIGN.md's flow):

1. The batch is read as text and typed against the table's schema; malformed lines and cells
   become parse errors (quarantined, raw text kept). A row with a blank key or statement date,
   and every copy of a key sent twice for one date, is quarantined before any rule sees it.
2. It is unioned with the contributor's last committed month before it, and ``LAG()`` gives
   each row its ``prev_`` columns (:mod:`assay.gate.baseline`): its key's latest committed
   record. A backfill's rows that the run will not commit are nobody's baseline, so the batch
   is lagged again after a month that leaves such rows (:meth:`Gate._judge`).
3. Row rules (those with a per-row form and no threshold) are judged row by row in one query;
   a rule reading ``prev_`` columns skips rows without a previous record.
4. Dataset-level rules (RowCount, Sum, Completeness, thresholds...) are judged per statement
   date, in date order, with ``last(k)`` reading the same metric at earlier dates of the same
   table and contributor: from the store, from earlier months of the batch, and, where the store
   lacks the baseline month, from the baseline rows themselves.
5. A row failing a critical rule, a row of a month failing a critical dataset-level rule, and
   a parse error are quarantined; a row failing only warnings is committed and counted as warned.
6. The quarantine and held files and the run's manifest are staged; the healthy rows are
   committed to the Iceberg table in one atomic snapshot that replaces the batch's months already
   committed for the contributor (the commit point, carrying the run id); then the store settles
   the run (:mod:`assay.gate.publish`) and the staged files are published. A run killed after
   its snapshot is finished by the next one. ``total == passed + quarantined + held``, always.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from assay.engine import EngineError
from assay.errors import ConfigError, PlatformError
from assay.gate import baseline as baseline_module
from assay.gate import batch as batches
from assay.gate import holds, publish
from assay.gate.baseline import HAS_PREV, lagged
from assay.gate.schema import load_schema, sql_type, type_name
from assay.gate.summary import Group, GroupRule, RuleStats, Summary
from assay.lake import fields
from assay.lake.iceberg import PreconditionFailed, Warehouse
from assay.lake.quarantine import QuarantineFile, quarantine_path
from assay.lake.readers import ReadOptions, Registered
from assay.lang.dqdl import ast
from assay.measure import ScanPlan
from assay.platform.runs.dqdl import Evaluation
from assay.platform.runs.faults import checkpoint
from assay.platform.runs.run import Input
from assay.rules import control
from assay.rules.compiler import CompiledRule, compile_rule
from assay.rules.plan import AllOne, Compliance, Context
from assay.rules.rows import FAIL, PASS, SKIP, RowLayout, tree_state
from assay.store import MetricKey, OutcomeRecord
from assay.vocabulary import Outcome

if TYPE_CHECKING:
    from assay.platform.runs.run import Run

ROW = batches.ROW
PARSE_ERROR = "parse_error"
WRONG_CONTRIBUTOR = "contributor"
IDENTITY = "identity"  # a blank key or statement date
DUPLICATE = "duplicate"  # a key sent more than once for one statement date
# The tables the gate registers with its engine: the typed batch, and the baseline month as its
# Parquet files or as rows read into Arrow.
BATCH = "__gate_batch"
BASELINE_FILES = "__gate_baseline_files"
BASELINE_ROWS = "__gate_baseline"
OLDER_ROWS = "__gate_older"
OLDER_CANDIDATES = "__gate_older_files"
MISSING_KEYS = "__gate_missing_keys"
UNIDENTIFIED = "__gate_unidentified"  # the ROWs of the rows without an identity of their own
NOT_BASE = "__gate_not_base"  # the ROWs of a backfill's rows that are nobody's baseline
DAY = "__day"  # a row state's statement date
LOOKBACK_MONTHS = 12
LAGGED = "primary"  # the lagged batch, a view in the engine under the name DQDL rules read
STATES = "__gate_states"  # each row's state per row rule, kept in the engine
LAGGED_ROWS = "__gate_lagged"  # the lagged batch kept as a table, for month rules reading prev_
COMMITTED = "__gate_committed"  # the rows to commit: the batch less its quarantined and held rows
EXCLUDED = "__gate_excluded"  # the ROWs of those
"""How far back an account missing from the last committed month finds its own latest record:
a record older than a year is no baseline for a trend rule (docs/gate.md)."""


@dataclass(frozen=True)
class GateOptions:
    """What ``assay gate`` was asked to do."""

    batch: Path
    rules: Path
    contributor: str
    contributor_type: str | None
    workspace: Path
    table: str = "silver.accounts"
    key: str = "account_id"
    order: str = "statement_date"
    contributor_column: str = "contributor_id"
    schema: Path | None = None
    store_url: str | None = None
    run_date: date | None = None
    read: ReadOptions = field(default_factory=ReadOptions)


@dataclass
class GateResult:
    summary: Summary
    quarantine_file: Path | None
    summary_file: Path

    @property
    def critical_failures(self) -> bool:
        return self.summary.quarantined > 0

    @property
    def warnings(self) -> bool:
        return self.summary.warned > 0 or any(
            r.outcome == Outcome.FAILED for g in self.summary.groups for r in g.dataset_rules
        )


class Gate:
    """One gate run inside a :class:`~assay.platform.runs.run.Run` (which owns the engine, the store
    and the workspace). ``Gate(options, run).run()`` returns the result or raises ConfigError
    (exit 2, nothing committed) or PlatformError (exit 3, nothing half-written left visible)."""

    def __init__(self, options: GateOptions, run: Run) -> None:
        if run.store is None:
            raise ConfigError("the gate needs a metric store")
        self.options = options
        self.contributor = batches.safe_name(options.contributor, "contributor")
        self.execution = run
        self.store = run.store
        self.workspace = run.workspace
        self.run_id = run.id
        self.started = run.started_at
        self.engine = run.engine
        self.loads: dict[int, date] = {}  # loads this run measured, and their statement dates
        self.baseline_loads: set[int] = set()  # of those, the committed month before the batch
        self.domain: list[str] = []
        self.texts: dict[str, str] = {}  # each chosen rule's DQDL text, by rule id
        self.written: dict[str, str] = {}  # and as the control file wrote it
        self.row_outcomes: list[OutcomeRecord] = []  # each row rule's outcome over the batch

    # --- the run ---------------------------------------------------------------------------

    def run(self) -> GateResult:
        opts = self.options
        self.execution.phase = "reading the rules"
        control_file = control.load(opts.rules)
        chosen = control_file.select(opts.contributor_type)
        self.texts = {rule.rule_id: rule.text for rule in chosen}
        self.written = {rule.rule_id: rule.condition or rule.text for rule in chosen}
        self.workspace.ensure()
        self.domain = holds.domain_columns(self.workspace, opts.table)
        warehouse = Warehouse.open(self.workspace.root)
        exists = warehouse.exists(opts.table)
        schema = self._schema(warehouse, exists)
        self.execution.phase = f"reading {opts.batch}"
        batch = batches.read(self.engine, opts.batch, schema, opts.read)
        self.execution.inputs = [Input(str(opts.batch), batch.sha256)]
        self._check_columns(batch.schema, chosen, empty=batch.total == 0)
        summary = Summary(
            self.run_id,
            self.contributor,
            opts.contributor_type or control.ALL,
            opts.table,
            str(opts.batch),
            batch.sha256,
            started_at=self.started.isoformat(),
        )
        duplicate = self._duplicate(warehouse, exists, batch.sha256)
        if duplicate is not None:
            summary.duplicate_of = duplicate
            return self._finish(summary)
        if batch.total == 0:  # an empty batch is a recorded run with zero rows
            return self._finish(summary)
        return self._gate(warehouse, exists, batch, chosen, summary)

    def _gate(
        self,
        warehouse: Warehouse,
        exists: bool,
        batch: batches.Batch,
        chosen: list[control.ControlRule],
        summary: Summary,
    ) -> GateResult:
        opts = self.options
        schema = batch.schema
        # The batch stays in the engine: what comes back is its rows of another contributor
        # (usually none), its statement dates and its rows per date.
        ours = self._ours(schema)
        order = exp.column(opts.order, quoted=True)
        mine = exp.Coalesce(this=ours.copy(), expressions=[exp.false()])
        one = exp.Literal.number(1)
        theirs = exp.Sum(
            this=exp.Case(ifs=[exp.If(this=exp.not_(mine.copy()), true=one)], default=exp.Literal.number(0))
        )
        per_date = self.engine.query(
            exp.select(
                exp.alias_(order.copy(), "d", quoted=True),
                exp.alias_(exp.Count(this=exp.Star()), "n", quoted=True),
                exp.alias_(theirs, "theirs", quoted=True),
            )
            .from_(exp.to_identifier(batch.typed, quoted=True))
            .group_by(order.copy())
        ).to_pylist()
        wrong = pa.table({ROW: pa.array([], pa.int64()), opts.contributor_column: pa.array([], pa.string())})
        rows = exp.select(exp.Star()).from_(exp.to_identifier(batch.typed, quoted=True))
        if any(r["theirs"] for r in per_date):  # usually none: then no second look at the batch
            wrong = self.engine.query(
                exp.select(exp.column(ROW, quoted=True), exp.column(opts.contributor_column, quoted=True))
                .from_(exp.to_identifier(batch.typed, quoted=True))
                .where(exp.not_(mine.copy()))
                .order_by(exp.column(ROW, quoted=True))
            )
            rows = rows.where(ours)
        unidentified = self._unidentified(rows, schema)
        if unidentified.num_rows:  # usually none: then the batch is judged as it is
            positions = unidentified.column(ROW).to_pylist()
            rows = rows.where(exp.not_(batches.in_rows(self.engine, positions, UNIDENTIFIED)))
        self.engine.register_query(BATCH, rows)
        month_rows = {r["d"]: int(r["n"]) - int(r["theirs"] or 0) for r in per_date}
        for day in unidentified.column("d").to_pylist():
            month_rows[day] -= 1
        month_rows = {d: n for d, n in month_rows.items() if n}
        dates = sorted(d for d in month_rows if d is not None)
        baseline_date = self._baseline_date(warehouse, exists, dates)
        summary.baseline_date = _iso(baseline_date)
        self.execution.phase = "joining the batch to its baseline"
        baseline = older = None
        prev = sorted({name.removeprefix("prev_") for rule in chosen for name in rule.prev_columns})
        if baseline_date is not None:
            baseline = self._register_baseline(warehouse, baseline_date, schema)
            if prev:
                older = self._register_older(warehouse, baseline, baseline_date, schema)
        # A held row, or one carrying a rejected value, is not committed whatever the rules say:
        # nobody's baseline. Only a backfill's later months can have such a row before them.
        found = self._holds(batch.schema)
        never = sorted(set(found.waits) | set(found.rejected))
        relag = None
        if prev and len(dates) > 1:

            def relag(rows: list[int]) -> Registered:
                return self._lagged(baseline, schema, prev, older, rows)

        enriched = relag(never) if relag is not None else self._lagged(baseline, schema, prev, older)
        row_rules, group_rules = self._classify(chosen, enriched)
        states, groups = self._judge(
            row_rules, group_rules, enriched, relag, never, month_rows, baseline, baseline_date, dates
        )
        checkpoint("after-measure")
        summary.groups = list(groups.values())
        return self._route_and_commit(
            warehouse,
            exists,
            batch,
            wrong,
            unidentified,
            found,
            states,
            row_rules,
            group_rules,
            groups,
            summary,
        )

    def _holds(self, schema: pa.Schema) -> holds.Holds:
        """The batch's rows carrying a never-seen value of a domain column (held for a decision)
        or a value rejected before (quarantined): a row's value says so, not its baseline."""
        if not self.domain:
            return holds.Holds()
        query = exp.select(exp.Star()).from_(exp.to_identifier(BATCH, quoted=True))
        return holds.find(
            self.engine, self.store, self.options.table, self.domain, query, [ROW, *schema.names]
        )

    def _unidentified(self, rows: exp.Select, schema: pa.Schema) -> pa.Table:
        """The rows of ``rows`` that cannot be told apart as records (ROW, key ``k``, statement
        date ``d``, copies ``n``, ``blank_key``): a blank key or statement date, or a key sent
        more than once for one statement date. None of them is judged, committed or anyone's
        baseline: the table never holds two records of one key for one date, and which copy
        is the record only the contributor can say (docs/gate.md, "Row identity").

        Two cheap queries find them, a filter and a grouping that is empty for a clean file; only
        keys that are sent twice are looked up row by row (a window over every row of a million-
        row batch cost a tenth of the gate's time)."""
        opts = self.options
        key = exp.column(opts.key, quoted=True)
        order = exp.column(opts.order, quoted=True)
        source = exp.alias_(exp.Subquery(this=rows.copy()), "__identity", table=True, quoted=True)
        blank_key: exp.Expr = key.copy().is_(exp.null())
        if pa.types.is_string(schema.field(opts.key).type):  # blank_is_null: false keeps "" as text
            blank = exp.EQ(this=exp.Trim(this=key.copy()), expression=exp.Literal.string(""))
            blank_key = exp.or_(blank_key, blank)

        def columns(copies: exp.Expr, blank: exp.Expr) -> list[exp.Expr]:
            return [
                exp.column(ROW, quoted=True),
                exp.alias_(key.copy(), "k", quoted=True),
                exp.alias_(order.copy(), "d", quoted=True),
                exp.alias_(copies, "n", quoted=True),
                exp.alias_(blank, "blank_key", quoted=True),
            ]

        blanks = self.engine.query(
            exp.select(*columns(exp.Literal.number(1), blank_key.copy()))
            .from_(source.copy())
            .where(exp.or_(blank_key.copy(), order.copy().is_(exp.null())))
        )
        # the keys sent twice, under names of their own: the batch's columns stay unambiguous
        twice_key, twice_order, copies = "__twice_key", "__twice_order", "__copies"
        sent = (
            exp.select(
                exp.alias_(key.copy(), twice_key, quoted=True),
                exp.alias_(order.copy(), twice_order, quoted=True),
                exp.alias_(exp.Count(this=exp.Star()), copies, quoted=True),
            )
            .from_(source.copy())
            .where(exp.and_(exp.not_(blank_key.copy()), exp.not_(order.copy().is_(exp.null()))))
            .group_by(key.copy(), order.copy())
            .having(exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(1)))
        )
        if not self.engine.query(sent.copy().limit(1)).num_rows:
            return blanks.sort_by(ROW)
        same = exp.and_(
            exp.EQ(this=key.copy(), expression=exp.column(twice_key, quoted=True)),
            exp.EQ(this=order.copy(), expression=exp.column(twice_order, quoted=True)),
        )
        twice = self.engine.query(
            exp.select(*columns(exp.column(copies, quoted=True), exp.false()))
            .from_(source.copy())
            .join(exp.alias_(exp.Subquery(this=sent), "__twice", table=True, quoted=True), on=same)
        )
        return pa.concat_tables([blanks, twice.cast(blanks.schema)]).sort_by(ROW)

    def _ours(self, schema: pa.Schema) -> exp.Expr:
        """The condition that a row is the gated contributor's (NULL when the column is)."""
        column: exp.Expr = exp.column(self.options.contributor_column, quoted=True)
        if not pa.types.is_string(schema.field(self.options.contributor_column).type):
            column = exp.cast(column, exp.DataType.build("VARCHAR"))
        return exp.EQ(this=column, expression=exp.Literal.string(self.contributor))

    # --- reading -----------------------------------------------------------------------------

    def _schema(self, warehouse: Warehouse, exists: bool) -> pa.Schema | None:
        declared = load_schema(self.options.schema) if self.options.schema else None
        if not exists:
            return declared
        table_schema = warehouse.schema(self.options.table)
        if declared is not None and not declared.equals(table_schema):
            raise ConfigError(
                f"{self.options.schema}: the table {self.options.table} already exists with another schema; "
                "its schema was fixed by its first commit"
            )
        # the declared file also says per column whether a blank cell is missing
        return declared if declared is not None else table_schema

    def _check_columns(self, schema: pa.Schema, chosen: list[control.ControlRule], *, empty: bool) -> None:
        """The key, order and contributor columns exist, the order holds dates (an empty first
        batch cannot tell), and every ``prev_`` column a rule reads has its column."""
        opts = self.options
        for what, name in (
            ("--key", opts.key),
            ("--order", opts.order),
            ("the contributor column", opts.contributor_column),
        ):
            if name not in schema.names:
                raise ConfigError(
                    f"{opts.batch}: {what} column '{name}' is not in the batch "
                    f"(columns: {', '.join(schema.names)})"
                )
        order_type = schema.field(opts.order).type
        typed = pa.types.is_date(order_type) or pa.types.is_timestamp(order_type)
        if not typed and not (empty and pa.types.is_string(order_type)):
            raise ConfigError(
                f"{opts.batch}: the --order column '{opts.order}' must hold dates, not {order_type}"
            )
        for rule in chosen:
            for name in sorted(rule.prev_columns):
                if name.removeprefix("prev_") not in schema.names:
                    raise ConfigError(
                        f"{opts.rules}:{rule.line}: rule {rule.rule_id} reads {name}, "
                        f"but the table has no column '{name.removeprefix('prev_')}'"
                    )

    def _duplicate(self, warehouse: Warehouse, exists: bool, sha256: str) -> str | None:
        """The run that already gated this very file for this contributor and table, if any."""
        if exists:
            found = warehouse.find_snapshot(
                self.options.table, **{"assay.source-sha256": sha256, "assay.contributor": self.contributor}
            )
            if found is not None:
                return found.properties.get("assay.run-id", str(found.snapshot_id))
        return publish.same_file(self.store, self.options.table, self.contributor, sha256, self.run_id)

    def _baseline_date(self, warehouse: Warehouse, exists: bool, dates: list[date]) -> date | None:
        if not exists or not dates:
            return None
        committed = warehouse.partitions(
            self.options.table, {self.options.contributor_column: self.contributor}
        )
        earlier = [p.values[self.options.order] for p in committed if p.values[self.options.order] < dates[0]]
        return max(earlier) if earlier else None

    def _register_baseline(self, warehouse: Warehouse, day: date, schema: pa.Schema) -> str:
        """Register the contributor's committed month ``day`` with the engine; return its name.

        DuckDB scans the month's Parquet files in place, inside the LAG query, when PyIceberg's
        plan says they hold exactly that month (:meth:`Warehouse.parquet_files`) and their
        columns have the batch's types: the union then sees the rows and types a read through
        PyIceberg would give, without a copy of the month in Arrow (half a second and a few
        hundred MB per million rows). Otherwise (delete files, an evolved table, unreadable
        files) the month is read through PyIceberg. The paths come from Iceberg's metadata and
        reach DuckDB's Parquet reader as values, never as SQL text.
        """
        where = {self.options.contributor_column: self.contributor, self.options.order: day}
        files = warehouse.parquet_files(self.options.table, where)
        if files:
            try:
                self.engine.register_file(BASELINE_FILES, [str(path) for path in files], "parquet")
                if self._types(BASELINE_FILES, schema) == self._types(BATCH, schema):
                    return BASELINE_FILES
            except EngineError:
                pass  # the read through PyIceberg below says what is wrong with the files
        rows = warehouse.read(self.options.table, where)
        self.engine.register_arrow(BASELINE_ROWS, rows.select(schema.names).cast(schema))
        return BASELINE_ROWS

    def _register_older(
        self, warehouse: Warehouse, baseline: str, baseline_date: date, schema: pa.Schema
    ) -> str | None:
        """The latest committed record of each batch account that the baseline month lacks (an
        account quarantined or held last month is still judged against its own past), looked up
        only when there are such accounts, within :data:`LOOKBACK_MONTHS`.

        The older months' Parquet files are scanned in place by DuckDB with a semi-join on the
        missing keys, as the baseline month is, so memory does not grow with the table's history;
        where Iceberg's plan does not allow it, they are read through PyIceberg filtered on the
        keys."""
        opts = self.options
        keys = self.engine.query(baseline_module.missing(BATCH, baseline, opts.key))
        if not keys.num_rows:
            return None
        earliest = date(baseline_date.year - 1, baseline_date.month, 1)
        months = [
            p.values[opts.order]
            for p in warehouse.partitions(opts.table, {opts.contributor_column: self.contributor})
            if earliest <= p.values[opts.order] < baseline_date
        ]
        if not months:
            return None
        self.engine.register_arrow(MISSING_KEYS, keys)
        # one scan plan for all the months (one per month cost a manifest read each: 4.5 of the
        # demo's 73 profiled seconds)
        files = warehouse.parquet_files(
            opts.table, {opts.contributor_column: self.contributor, opts.order: months}
        )
        candidates = None
        if files:
            try:
                self.engine.register_file(OLDER_CANDIDATES, [str(path) for path in files], "parquet")
                if self._types(OLDER_CANDIDATES, schema) == self._types(BATCH, schema):
                    candidates = OLDER_CANDIDATES
            except EngineError:
                pass  # read through PyIceberg below
        if candidates is None:
            where = {
                opts.contributor_column: self.contributor,
                opts.order: months,
                opts.key: keys.column(0).to_pylist(),
            }
            rows = warehouse.read(opts.table, where)
            self.engine.register_arrow(OLDER_ROWS + "_read", rows.select(schema.names).cast(schema))
            candidates = OLDER_ROWS + "_read"
        older = self.engine.query(
            baseline_module.latest(candidates, opts.key, opts.order, schema.names, among=MISSING_KEYS)
        )
        if not older.num_rows:
            return None
        self.engine.register_arrow(OLDER_ROWS, older.select(schema.names).cast(schema))
        return OLDER_ROWS

    def _types(self, table: str, schema: pa.Schema) -> list[str | None]:
        """The engine's type of each column of ``schema`` in registered ``table`` (None: absent)."""
        found = {column.name: column.type for column in self.engine.columns(table)}
        return [found.get(name) for name in schema.names]

    def _lagged(
        self,
        baseline: str | None,
        schema: pa.Schema,
        prev: list[str],
        older: str | None,
        no_base: list[int] | None = None,
    ) -> Registered:
        """The batch with its ``prev_`` columns, kept inside the engine as the view ``primary``
        (the name DQDL rules read): the row states are computed from it in the engine, and it
        never crosses into Python as a million-row Arrow table (materialising it there cost as
        much as the Arrow round trip it replaces; as a view, the window runs inside the states'
        one query). The batch rows ``no_base`` (a backfill's rows that will not be committed)
        are nobody's baseline."""
        condition = None
        if no_base is not None:
            condition = batches.in_rows(self.engine, no_base, NOT_BASE) if no_base else exp.false()
        query = lagged(
            BATCH,
            baseline,
            schema,
            key=self.options.key,
            order=self.options.order,
            prev=prev,
            older=older,
            no_base=condition,
        )
        self.engine.register_query(LAGGED, query)
        return Registered(LAGGED, tuple(self.engine.columns(LAGGED)))

    # --- judging -----------------------------------------------------------------------------

    def _context(self, enriched: Registered) -> Context:
        return Context(self.engine, enriched, {}, datetime.now(UTC), ScanPlan(enriched.name))

    def _classify(
        self, chosen: list[control.ControlRule], enriched: Registered
    ) -> tuple[list[tuple[control.ControlRule, CompiledRule]], list[control.ControlRule]]:
        """Row rules are judged row by row; the rest (ratios, aggregates, thresholds) per month."""
        ctx = self._context(enriched)
        row_rules, group_rules = [], []
        for position, rule in enumerate(chosen):
            compiled = compile_rule(rule.node, ctx, position, row_mode=True)
            for plan in compiled.leaves.values():
                if plan.error is not None:
                    raise ConfigError(
                        f"{self.options.rules}:{rule.line}: rule {rule.rule_id} cannot run: {plan.error}"
                    )
            per_row = all(
                plan.row is not None
                and plan.row.in_row_composites
                and isinstance(plan.verdict, AllOne | Compliance)
                and (not isinstance(plan.verdict, Compliance) or plan.verdict.threshold is None)
                for plan in compiled.leaves.values()
            )
            (row_rules.append((rule, compiled)) if per_row else group_rules.append(rule))
        return row_rules, group_rules

    def _row_states(
        self, row_rules: list[tuple[control.ControlRule, CompiledRule]], enriched: Registered
    ) -> RowStates:
        """Each row's state (P, F, S) for every row rule, computed in one query and kept in the
        engine; what comes back is each rule's counts and the rows that failed it (one query
        each, over the kept states), not a million-row table of states."""
        layout = RowLayout(PASS)
        columns: list[exp.Expr] = [
            exp.column(ROW, quoted=True),
            exp.alias_(exp.column(self.options.order, quoted=True), DAY, quoted=True),
        ]
        for rule, compiled in row_rules:
            tree = layout.add(compiled.node, compiled.leaves, row_mode=True)
            assert tree is not None
            state = tree_state(tree)
            if rule.prev_columns:
                state = (
                    exp.Case()
                    .when(exp.Not(this=exp.column(HAS_PREV, quoted=True)), exp.Literal.string(SKIP))
                    .else_(state)
                )
            columns.append(exp.alias_(state, rule.rule_id, quoted=True))
        out = RowStates()
        if not row_rules:
            return out
        states = exp.select(*columns).from_(
            exp.alias_(exp.Subquery(this=layout.select(exp.to_table(enriched.name))), "__states", table=True)
        )
        self.engine.register_query(STATES, states, materialize=True)
        ids = [rule.rule_id for rule, _ in row_rules]
        slots = [(rid, letter) for rid in ids for letter in (PASS, FAIL, SKIP)]
        day = exp.column(DAY, quoted=True)
        counts = exp.select(
            day.copy(),
            *(
                exp.alias_(
                    exp.Sum(
                        this=exp.Case()
                        .when(
                            exp.EQ(this=exp.column(rid, quoted=True), expression=exp.Literal.string(letter)),
                            exp.Literal.number(1),
                        )
                        .else_(exp.Literal.number(0))
                    ),
                    f"n{i}",
                    quoted=True,
                )
                for i, (rid, letter) in enumerate(slots)
            ),
        ).from_(exp.to_table(STATES))
        for row in self.engine.query(counts.group_by(day.copy())).to_pylist():
            month = out.by_day.setdefault(row[DAY], RowStates())
            for i, (rid, letter) in enumerate(slots):
                month.counts.setdefault(rid, {})[letter] = int(row[f"n{i}"] or 0)
            out.merge(month)
        failed = [rid for rid in ids if out.counts.get(rid, {}).get(FAIL)]
        if failed:
            any_failed = exp.or_(
                *(
                    exp.EQ(this=exp.column(rid, quoted=True), expression=exp.Literal.string(FAIL))
                    for rid in failed
                )
            )
            picked = exp.select(
                exp.column(ROW, quoted=True), day.copy(), *(exp.column(rid, quoted=True) for rid in failed)
            )
            rows = self.engine.query(picked.from_(exp.to_table(STATES)).where(any_failed))
            for rid in failed:
                mine = rows.filter(pc.equal(rows.column(rid), FAIL))
                for position, when in zip(
                    mine.column(ROW).to_pylist(), mine.column(DAY).to_pylist(), strict=True
                ):
                    out.by_day[when].failing.setdefault(rid, []).append(position)
                out.failing[rid] = mine.column(ROW).to_pylist()
        return out

    def _dataset_ruleset(self, rules: list[control.ControlRule]) -> ast.Ruleset:
        return ast.Ruleset(rules=tuple(rule.node for rule in rules))

    def _judge(
        self,
        row_rules: list[tuple[control.ControlRule, CompiledRule]],
        group_rules: list[control.ControlRule],
        enriched: Registered,
        relag: Callable[[list[int]], Registered] | None,
        never: list[int],
        month_rows: dict[Any, int],
        baseline: str | None,
        baseline_date: date | None,
        dates: list[date],
    ) -> tuple[RowStates, dict[date, Group]]:
        """The row states and the month rules' outcomes, month by month, oldest first.

        A row's baseline is its key's latest committed record: in the table, or earlier in the
        batch and committed by this run. In a backfill whose rules read ``prev_`` columns
        (``relag`` given), a month's rows that will not be committed (failing a critical rule,
        in a refused month, held: ``never``) are nobody's baseline, so when a month leaves such
        rows, the batch is lagged and its row states computed again before the next month is
        judged. A month's states are final once the months before it are judged, so the batch
        is judged at most once per month, and once when every row of its earlier months is
        committed (the usual backfill, and every one-month batch)."""
        self.execution.phase = "judging the rows"
        states = self._row_states(row_rules, enriched)
        source = self._month_source(group_rules, enriched)
        ruleset = self._dataset_ruleset(group_rules)
        if (
            group_rules
            and baseline is not None
            and baseline_date is not None
            and not self._stored(baseline_date)
        ):
            whole_baseline = exp.select(exp.Star()).from_(exp.to_identifier(baseline, quoted=True))
            measured = self._evaluate(ruleset, whole_baseline, baseline_date)
            if measured.load_id is not None:
                self.baseline_loads.add(measured.load_id)
        judged = RowStates()
        groups: dict[date, Group] = {}
        not_base, lagged_with = set(never), len(never)
        for day in dates:
            if relag is not None and len(not_base) != lagged_with:
                self.execution.phase = f"judging the rows again from {day}"
                lagged_with = len(not_base)
                enriched = relag(sorted(not_base))
                states = self._row_states(row_rules, enriched)
                source = self._month_source(group_rules, enriched)
            month = states.by_day.get(day, RowStates())
            judged.merge(month)
            self.execution.phase = f"judging the month {day}"
            groups[day] = self._judge_month(
                group_rules, ruleset, source, day, month_rows, whole=len(dates) == 1
            )
            if groups[day].rejected and len(dates) > 1:
                # a refused month is no later month's history (its load would be, pending in
                # this run): rejected now, as the run's commit would settle it anyway
                refused = {
                    i: "rejected" for i, d in self.loads.items() if d == day and i not in self.baseline_loads
                }
                if refused:
                    self.store.settle_loads(refused)
            if relag is not None:
                for rule, _ in row_rules:
                    if rule.severity == "critical":
                        not_base.update(month.failing.get(rule.rule_id, []))
                if groups[day].rejected:
                    not_base.update(self._rows_of_month(day))
        return judged, groups

    def _month_source(self, rules: list[control.ControlRule], enriched: Registered) -> str:
        """What the month rules read: the typed batch, or the lagged one when a rule reads a
        ``prev_`` column. The lagged batch is the view "primary", the name each month's view
        takes too, so it is kept as a table of its own first."""
        if rules and any(rule.prev_columns for rule in rules):
            self.engine.register_query(
                LAGGED_ROWS, exp.select(exp.Star()).from_(exp.to_table(enriched.name)), materialize=True
            )
            return LAGGED_ROWS
        return BATCH

    def _judge_month(
        self,
        rules: list[control.ControlRule],
        ruleset: ast.Ruleset,
        source: str,
        day: date,
        month_rows: dict[Any, int],
        *,
        whole: bool,
    ) -> Group:
        """The dataset-level rules of the month ``day``, its metrics persisted before it is
        judged so that the next month's ``last()`` reads it. A batch of one month (the usual
        case) is that month whole (``whole``): no filter."""
        group = Group(day.isoformat(), month_rows.get(day, 0))
        if not rules:
            return group
        rows = exp.select(exp.Star()).from_(exp.to_table(source))
        if not whole:
            rows = rows.where(exp.column(self.options.order, quoted=True).eq(_day(day)))
        result = self._evaluate(ruleset, rows, day)
        for rule, outcome in zip(rules, result.rules, strict=True):
            if outcome.outcome == "Error":
                raise ConfigError(
                    f"{self.options.rules}:{rule.line}: rule {rule.rule_id} cannot run: {outcome.message}"
                )
            observed = next(iter(outcome.metrics.values()), None)
            group.dataset_rules.append(
                GroupRule(
                    rule.rule_id,
                    rule.severity,
                    Outcome.from_glue(outcome.outcome).value,
                    observed,
                    outcome.message,
                )
            )
            if outcome.outcome == "Failed" and rule.severity == "critical":
                group.rejected = True
        return group

    def _stored(self, day: date) -> bool:
        """Whether the store already holds this contributor's metrics for ``day``."""
        points = self.store.history(
            self.options.table,
            MetricKey.dataset("RowCount"),
            partition=self.contributor,
            before=_instant(day + timedelta(days=1)),
            limit=1,
            run=self.run_id,
        )
        return bool(points) and points[0].logical_date == day

    def _evaluate(self, ruleset: ast.Ruleset, rows: exp.Query, day: date) -> Any:
        """Evaluate the month rules on ``rows`` (a view of the batch in the run's engine)."""
        queries = self.engine.queries
        result = Evaluation(
            ruleset,
            rows,
            dataset=self.options.table,
            partition=self.contributor,
            store=self.store,
            now=_instant(day),
            logical_date=day,
            run_id=self.run_id,
            engine=self.engine,
        ).run()
        result.queries = self.engine.queries - queries
        if result.load_id is not None:
            self.loads[result.load_id] = day
        return result

    # --- routing and committing --------------------------------------------------------------

    def _route_and_commit(
        self,
        warehouse: Warehouse,
        exists: bool,
        batch: batches.Batch,
        wrong: pa.Table,
        unidentified: pa.Table,
        found: holds.Holds,
        states: RowStates,
        row_rules: list[tuple[control.ControlRule, CompiledRule]],
        group_rules: list[control.ControlRule],
        groups: dict[date, Group],
        summary: Summary,
    ) -> GateResult:
        opts = self.options
        quarantine = QuarantineFile(batch.header, self.run_id)
        reasons: dict[int, tuple[list[str], list[str]]] = {}

        def fail(row: int, rule_id: str, reason: str) -> None:
            ids, messages = reasons.setdefault(row, ([], []))
            if rule_id not in ids:
                ids.append(rule_id)
                messages.append(reason)

        for error in batch.errors:
            if error.row is None:
                quarantine.add({}, [PARSE_ERROR], [error.message], line=error.line, raw_line=error.raw_line)
            else:
                fail(error.row, PARSE_ERROR, error.message)
        for row, value in zip(
            wrong.column(ROW).to_pylist(), wrong.column(opts.contributor_column).to_pylist(), strict=True
        ):
            sent = "blank" if value is None else f"'{value}'"
            fail(
                row,
                WRONG_CONTRIBUTOR,
                f"{opts.contributor_column} is {sent}, not {self.contributor}, the contributor gated",
            )

        for found_row in unidentified.to_pylist():
            row, day = found_row[ROW], found_row["d"]
            blanks = [
                name
                for name, blank in ((opts.key, found_row["blank_key"]), (opts.order, day is None))
                if blank
            ]
            if blanks:
                verb = "is" if len(blanks) == 1 else "are"
                fail(
                    row,
                    IDENTITY,
                    f"{' and '.join(blanks)} {verb} blank: a record needs its key and its {opts.order}",
                )
            else:
                copies = f"{opts.key} {found_row['k']} appears {found_row['n']} times"
                fail(row, DUPLICATE, f"{copies} for {opts.order} {day} in this load")

        warned = set()
        self.row_outcomes = []
        for rule, _ in row_rules:
            stats = summary.rules.setdefault(
                rule.rule_id, RuleStats(rule.severity, rule.category, dqdl=rule.text)
            )
            counts = states.counts.get(rule.rule_id, {PASS: 0, FAIL: 0, SKIP: 0})
            stats.passed, stats.failed, stats.skipped = counts[PASS], counts[FAIL], counts[SKIP]
            self.row_outcomes.append(_row_outcome(rule, stats))
            if not stats.failed:
                continue
            failing = states.failing[rule.rule_id]
            if rule.severity == "critical":
                reason = f"{rule.rule_id}: {rule.description or rule.text}"
                for row in failing:
                    fail(row, rule.rule_id, reason)
            else:
                warned.update(failing)

        for rule in group_rules:
            stats = summary.rules.setdefault(
                rule.rule_id, RuleStats(rule.severity, rule.category, dqdl=rule.text)
            )
            for day, group in groups.items():
                outcome = next((r for r in group.dataset_rules if r.rule_id == rule.rule_id), None)
                if outcome is None:
                    continue
                if outcome.outcome == Outcome.PASSED:
                    stats.passed += group.rows
                else:
                    stats.failed += group.rows
                    if rule.severity == "critical":
                        reason = f"{rule.rule_id}: {outcome.message or rule.description}"
                        for row in self._rows_of_month(day):
                            fail(row, rule.rule_id, reason)

        for row, why in found.rejected.items():
            if row in reasons:  # a rule's failure is the row's reason enough
                continue
            for message in why:
                fail(row, "domain", message)

        quarantined_rows = sorted(reasons)
        summary.quarantined_by = self._fired(reasons, [e for e in batch.errors if e.row is None])
        if quarantined_rows:
            raw = batches.fetch_text(self.engine, batch, quarantined_rows).to_pylist()
            for row, values in zip(quarantined_rows, raw, strict=True):
                ids, messages = reasons[row]
                quarantine.add({k: v for k, v in values.items() if k != ROW}, ids, messages)

        held_rows = sorted(set(found.waits) - set(quarantined_rows))
        self.engine.register_query(COMMITTED, self._without(batch.typed, quarantined_rows + held_rows))
        held = batches.fetch(self.engine, batch.typed, held_rows, schema=batch.schema)
        committed = self._per_date(COMMITTED)  # the rows to commit per statement date
        summary.total = batch.total
        summary.quarantined = len(quarantine)
        summary.passed = sum(committed.values())
        summary.held = held.num_rows
        summary.warned = len(warned - set(quarantined_rows) - set(held_rows))
        summary.parse_errors = len(batch.errors)
        if summary.total != summary.passed + summary.quarantined + summary.held:
            raise AssertionError(
                f"row accounting broken: {summary.total} != "
                f"{summary.passed} + {summary.quarantined} + {summary.held}"
            )

        self.execution.phase = "staging the quarantine and held rows"
        if len(quarantine):
            run_day = opts.run_date or datetime.now(UTC).date()
            target = quarantine_path(self.workspace.root, run_day, self.contributor, self.run_id)
            quarantine.write(self.execution.stage(target))
            summary.quarantine_file = str(target)
        if held.num_rows:
            held_target = holds.held_path(self.workspace, opts.table, self.contributor, self.run_id)
            waits = [found.waits[row] for row in held.column(ROW).to_pylist()]
            layout = holds.Layout(opts.key, opts.order, opts.contributor_column)
            holds.write(self.execution.stage(held_target), held.drop_columns([ROW]), waits, layout)
            summary.held_file = str(held_target)
        waiting = [found.waits[row] for row in held.column(ROW).to_pylist()]
        needed = holds.counts(waiting)
        first: dict[tuple[str, str], str] = {}  # the earliest statement date a value came with
        for pairs, held_day in zip(waiting, held.column(opts.order).to_pylist(), strict=True):
            for pair in pairs:
                if held_day is not None:
                    first[pair] = min(first.get(pair, str(held_day)), str(held_day))
        plan = self._plan(batch.schema, committed, groups, summary)
        plan["decisions"] = [
            [column, value, rows, first.get((column, value))]
            for (column, value), rows in sorted(needed.items())
        ]
        return self._commit(warehouse, exists, batch.schema, committed, plan, summary)

    def _fired(
        self, reasons: dict[int, tuple[list[str], list[str]]], unread: list[Any]
    ) -> dict[str, dict[str, Any]]:
        """The rows each rule (or reason of the gate's own) quarantined, with its DQDL text and
        one of its reasons: what an incident about it tells the contributor's owners."""
        fired: dict[str, dict[str, Any]] = {}
        for ids, messages in [*reasons.values(), *(([PARSE_ERROR], [e.message]) for e in unread)]:
            for rule_id, message in zip(ids, messages, strict=True):
                entry = fired.setdefault(
                    rule_id,
                    {
                        "rows": 0,
                        "rule": self.written.get(rule_id),
                        "reason": message.removeprefix(f"{rule_id}: "),
                    },
                )
                entry["rows"] += 1
        return fired

    def _without(self, table: str, rows: list[int]) -> exp.Select:
        """The rows of the batch's ``table`` whose ROW is not in ``rows``, as a query."""
        query = exp.select(exp.Star()).from_(exp.to_identifier(table, quoted=True))
        if not rows:
            return query
        return query.where(exp.not_(batches.in_rows(self.engine, rows, EXCLUDED)))

    def _per_date(self, table: str) -> dict[Any, int]:
        """The rows of ``table`` per statement date (one query; dates with no row are absent)."""
        order = exp.column(self.options.order, quoted=True)
        found = self.engine.query(
            exp.select(
                exp.alias_(order.copy(), "d", quoted=True),
                exp.alias_(exp.Count(this=exp.Star()), "n", quoted=True),
            )
            .from_(exp.to_identifier(table, quoted=True))
            .group_by(order.copy())
        ).to_pylist()
        return {r["d"]: int(r["n"]) for r in found}

    def _rows_of_month(self, day: date) -> list[int]:
        """The batch positions of the rows dated ``day`` (when a month fails a critical rule)."""
        found = self.engine.query(
            exp.select(exp.column(ROW, quoted=True))
            .from_(exp.to_identifier(BATCH, quoted=True))
            .where(exp.column(self.options.order, quoted=True).eq(_day(day)))
            .order_by(exp.column(ROW, quoted=True))
        )
        rows: list[int] = found.column(ROW).to_pylist()
        return rows

    def _plan(
        self, schema: pa.Schema, committed: dict[Any, int], groups: dict[date, Group], summary: Summary
    ) -> dict[str, Any]:
        """The store writes this run makes when it commits (:func:`assay.gate.publish.settle`)."""
        order = self.options.order
        days = set(committed)
        # A month is replaced only when this batch commits rows for it: a resend refused whole
        # (a truncated extract) leaves the month that was there.
        replaced = sorted(day for day in groups if day in days)
        plan: dict[str, Any] = {
            "table": self.options.table,
            "contributor": self.contributor,
            "sha256": summary.source_sha256,
            "snapshot_id": None,
            "loads": [
                {"id": load, "date": day.isoformat(), "baseline": load in self.baseline_loads}
                for load, day in sorted(self.loads.items())
            ],
            "committed_dates": [day.isoformat() for day in replaced],
            "rows_by_date": {},
            "values": [],
            "schema": [[f.name, str(f.type)] for f in schema],
            "duplicate_of": None,
        }
        if self.domain and days:
            # the values this run's committed rows teach the domain columns, month by month:
            # counted in the engine, turned into text here as the store keeps them
            counts: dict[Any, dict[str, dict[str, int]]] = {day: {c: {} for c in self.domain} for day in days}
            for column in self.domain:
                grouped = self.engine.query(
                    exp.select(
                        exp.alias_(exp.column(order, quoted=True), "d", quoted=True),
                        exp.alias_(exp.column(column, quoted=True), "v", quoted=True),
                        exp.alias_(exp.Count(this=exp.Star()), "n", quoted=True),
                    )
                    .from_(exp.to_identifier(COMMITTED, quoted=True))
                    .group_by(exp.column(order, quoted=True), exp.column(column, quoted=True))
                )
                values = pc.cast(grouped.column("v"), pa.string()).to_pylist()
                for day, value, n in zip(
                    grouped.column("d").to_pylist(), values, grouped.column("n").to_pylist(), strict=True
                ):
                    if value is not None:
                        counts[day][column][value] = int(n)
            for day in sorted(d for d in days if d is not None):
                plan["rows_by_date"][day.isoformat()] = committed[day]
                plan["values"].append({"date": day.isoformat(), "counts": counts[day]})
        return plan

    def _commit(
        self,
        warehouse: Warehouse,
        exists: bool,
        schema: pa.Schema,
        committed: dict[Any, int],
        plan: dict[str, Any],
        summary: Summary,
    ) -> GateResult:
        opts = self.options
        replaced = [date.fromisoformat(day) for day in plan["committed_dates"]]
        self.execution.manifest.settle = plan
        self.execution.manifest.summary = summary.to_dict()
        self.execution.write_manifest()
        checkpoint("after-stage")
        if committed:
            self.execution.phase = f"committing to table {opts.table}"
            if not exists:
                warehouse.create(opts.table, schema, [opts.contributor_column, opts.order])
            rows, files = self._committed_rows(warehouse, schema, list(committed))
            existing = {
                p.values[opts.order]
                for p in warehouse.partitions(opts.table, {opts.contributor_column: self.contributor})
            }
            checkpoint("before-commit")
            try:
                info = warehouse.commit(
                    opts.table,
                    rows,
                    files=files,
                    replace={opts.contributor_column: self.contributor, opts.order: replaced},
                    properties={
                        "assay.run-id": self.run_id,
                        "assay.source-sha256": summary.source_sha256,
                        "assay.contributor": self.contributor,
                        "assay.contributor-type": opts.contributor_type or control.ALL,
                        "assay.source-path": str(opts.batch),
                        "assay.months": ",".join(plan["committed_dates"]),
                    },
                    unless={
                        "assay.source-sha256": summary.source_sha256,
                        "assay.contributor": self.contributor,
                    },
                )
            except PreconditionFailed as twin:  # the same file committed by a run beside this one
                _discard(files)
                plan["duplicate_of"] = twin.found.properties.get("assay.run-id", str(twin.found.snapshot_id))
            except PlatformError:
                _discard(files)  # the warehouse says nothing was committed: no snapshot refers to them
                raise
            else:
                checkpoint("after-commit")
                plan["snapshot_id"] = info.snapshot_id
                summary.snapshot_id = info.snapshot_id
                summary.replaced_dates = [day.isoformat() for day in replaced if day in existing]
        return self._finish(summary, plan)

    def _committed_rows(
        self, warehouse: Warehouse, schema: pa.Schema, days: list[Any]
    ) -> tuple[pa.Table | None, list[Path]]:
        """The rows to commit, written by the engine as Parquet files into the table's data
        folder, one folder per statement date (a file holds one partition); or, where the
        engine cannot write them there (the table is not on the local disk, a type the
        engine's Parquet does not hold as Iceberg wants), fetched as Arrow for PyIceberg."""
        opts = self.options
        types = [_write_type(f.type) for f in fields.storage_schema(schema)]
        folder = warehouse.data_folder(opts.table, self.run_id)
        if folder is None or any(t is None for t in types):
            query = exp.select(*(exp.column(n, quoted=True) for n in schema.names)).from_(
                exp.to_identifier(COMMITTED, quoted=True)
            )
            return self.engine.query(query), []
        columns = [
            exp.alias_(exp.cast(exp.column(name, quoted=True), kind), name, quoted=True)
            for name, kind in zip(schema.names, types, strict=True)
            if kind is not None
        ]
        order = exp.column(opts.order, quoted=True)
        files: list[Path] = []
        try:
            for i, day in enumerate(sorted(days, key=lambda d: (d is None, d or 0))):
                where = order.copy().is_(exp.null()) if day is None else order.copy().eq(_day(day))
                query = exp.select(*(c.copy() for c in columns)).from_(
                    exp.to_identifier(COMMITTED, quoted=True)
                )
                files += self.engine.write_parquet(query.where(where), folder / f"{i:05d}")
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)  # no snapshot refers to them
            raise
        return None, files

    # --- recording ---------------------------------------------------------------------------

    def _finish(self, summary: Summary, plan: dict[str, Any] | None = None) -> GateResult:
        """The run's store commit (its settle and its completed record), then its publishing."""
        self.execution.phase = "recording the run"
        summary.finished_at = datetime.now(UTC).isoformat()
        if plan is None:  # nothing measured, staged or committed: a duplicate file or an empty one
            plan = self._plan(pa.schema([]), {}, {}, summary)
        self.execution.manifest.settle = plan
        self.execution.counts = {
            "total": summary.total,
            "committed": summary.passed,
            "quarantined": summary.quarantined,
            "held": summary.held,
        }
        recorded = self.execution.commit(
            lambda: publish.settle(self.store, self.workspace, self.execution.manifest),
            summary=summary.to_dict(),
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
            + self.row_outcomes,
            load_id=max(self.loads) if self.loads else None,
        )
        summary.decisions = list(recorded.get("decisions", []))
        summary.incidents = recorded.get("incidents")
        if recorded.get("duplicate_of"):
            summary.duplicate_of = recorded["duplicate_of"]
            summary.quarantine_file = summary.held_file = None
        quarantine = Path(summary.quarantine_file) if summary.quarantine_file else None
        return GateResult(summary, quarantine, self.workspace.runs / f"{self.run_id}.json")


@dataclass
class RowStates:
    """What the routing needs of the row states: per row rule, its P/F/S counts and the batch
    positions of the rows that failed it; and the same per statement date (``by_day``)."""

    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    failing: dict[str, list[int]] = field(default_factory=dict)
    by_day: dict[Any, RowStates] = field(default_factory=dict)

    def merge(self, other: RowStates) -> None:
        """Add ``other``'s counts and failing rows (another month's) to these."""
        for rid, letters in other.counts.items():
            mine = self.counts.setdefault(rid, {PASS: 0, FAIL: 0, SKIP: 0})
            for letter, n in letters.items():
                mine[letter] = mine.get(letter, 0) + n
        for rid, rows in other.failing.items():
            self.failing.setdefault(rid, []).extend(rows)


def _row_outcome(rule: control.ControlRule, stats: RuleStats) -> OutcomeRecord:
    """A row rule's outcome over the batch, as a score reads it: failed when a row failed it,
    passed when rows passed it and none failed, skipped when it judged no row (a trend rule on
    a first month); its observed value is the share of the judged rows that passed."""
    judged = stats.passed + stats.failed
    if stats.failed:
        outcome, message = Outcome.FAILED, f"{stats.failed} of {judged} row(s) failed"
    elif stats.passed:
        outcome, message = Outcome.PASSED, f"{judged} row(s) passed"
    else:
        outcome, message = Outcome.SKIPPED, f"no row judged ({stats.skipped} skipped)"
    observed = stats.passed / judged if judged else None
    labels = {"severity": rule.severity, "dqdl": rule.text, "rows": "row rule"}
    return OutcomeRecord(rule.rule_id, outcome.value, message, {"observed": observed}, labels)


def _discard(files: list[Path]) -> None:
    """Remove the folder of the engine-written files of a commit that did not happen."""
    if files:
        shutil.rmtree(files[0].parent.parent, ignore_errors=True)


def _day(day: date | datetime) -> exp.Expr:
    """A statement date (or time) as a typed SQL literal."""
    if isinstance(day, datetime):
        return exp.cast(exp.Literal.string(day.isoformat(sep=" ")), "timestamp")
    return exp.cast(exp.Literal.string(day.isoformat()), "date")


_WRITE_TYPES = {"string", "bigint", "int", "double", "date", "timestamp", "timestamptz", "boolean"}


def _write_type(dtype: pa.DataType) -> exp.DataType | None:
    """The engine type a committed column is written as, so that its Parquet type is the
    table's (None: a type the gate does not declare, committed through Arrow)."""
    name = type_name(dtype)
    if name in _WRITE_TYPES or pa.types.is_decimal(dtype):
        return sql_type(dtype)
    return None


def _instant(day: date) -> datetime:
    return datetime.combine(day, time(0), UTC)


def _iso(day: date | None) -> str | None:
    return day.isoformat() if day else None
