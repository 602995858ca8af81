"""The ingestion gate: read a contributor's batch, give every row its own past, judge it, route it.

read → baseline → measure → persist → judge → route → record (DESIGN.md's flow):

1. The batch is read as text and typed against the table's schema; malformed lines and cells
   become parse errors (quarantined, raw text kept). A row with a blank key or statement date,
   and every copy of a key sent twice for one date, is quarantined before any rule sees it.
2. It is unioned with the contributor's last committed month before it, and ``LAG()`` gives
   each row its ``prev_`` columns (:mod:`assay.gate.baseline`): its key's latest committed
   record. A backfill's rows that the run will not commit are nobody's baseline, so the batch
   is lagged again after a month that leaves such rows (:meth:`assay.gate.states.Judge.judge`).
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
   its snapshot is finished by the next one. ``total == passed + quarantined + held``, always
   (:class:`assay.gate.route.RoutePlan` refuses any other count).

This package is the gate's stages, each taking values and returning values: identity
(:mod:`assay.gate.identity`), baseline (:mod:`assay.gate.baseline`), row states and month
judgements (:mod:`assay.gate.states`), routing (:mod:`assay.gate.route`) and the committed rows
(:mod:`assay.gate.committed`). The run that strings them together, with its phases, checkpoints,
staging, commit and publishing, is :mod:`assay.platform.runs.gate`; nothing here imports the platform.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from assay.errors import ConfigError
from assay.gate import batch as batches
from assay.gate.publish import same_file
from assay.gate.schema import load_schema
from assay.gate.summary import Summary
from assay.lake.iceberg import Warehouse
from assay.lake.readers import ReadOptions
from assay.privacy import Masker
from assay.rules import control
from assay.vocabulary import Outcome

if TYPE_CHECKING:
    from assay.engine import Engine
    from assay.store import MetricStore

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
    quarantine_file: Path | str | None  # a str: an s3:// object (storage: dq_error:)
    summary_file: Path | str

    @property
    def critical_failures(self) -> bool:
        return self.summary.quarantined > 0

    @property
    def warnings(self) -> bool:
        return self.summary.warned > 0 or any(
            r.outcome == Outcome.FAILED for g in self.summary.groups for r in g.dataset_rules
        )


@dataclass(frozen=True)
class Scope:
    """What every stage of one gate run reads: the options, the contributor (checked as a
    name), the run's id, and the engine and store the run opened."""

    options: GateOptions
    contributor: str
    run_id: str
    engine: Engine
    store: MetricStore
    # the platform's DQDL evaluation (measure, persist pending, judge) of one month's rules,
    # handed down so that the gate stays below the platform: ``evaluation(ruleset, rows, **how)``
    evaluation: Callable[..., Any]
    # the table's classified columns (docs/privacy.md): a domain column's values are kept and
    # compared as their keyed hashes, so that its decisions never show a person's value
    masker: Masker = field(default_factory=Masker.none)


def table_schema(options: GateOptions, warehouse: Warehouse, exists: bool) -> pa.Schema | None:
    """The schema the batch is typed against: the declared one, else the table's."""
    declared = load_schema(options.schema) if options.schema else None
    if not exists:
        return declared
    existing = warehouse.schema(options.table)
    if declared is not None and not declared.equals(existing):
        raise ConfigError(
            f"{options.schema}: the table {options.table} already exists with another schema; "
            "its schema was fixed by its first commit"
        )
    # the declared file also says per column whether a blank cell is missing
    return declared if declared is not None else existing


def check_columns(
    options: GateOptions, schema: pa.Schema, chosen: list[control.ControlRule], *, empty: bool
) -> None:
    """The key, order and contributor columns exist, the order holds dates (an empty first
    batch cannot tell), and every ``prev_`` column a rule reads has its column."""
    for what, name in (
        ("--key", options.key),
        ("--order", options.order),
        ("the contributor column", options.contributor_column),
    ):
        if name not in schema.names:
            raise ConfigError(
                f"{options.batch}: {what} column '{name}' is not in the batch "
                f"(columns: {', '.join(schema.names)})"
            )
    order_type = schema.field(options.order).type
    typed = pa.types.is_date(order_type) or pa.types.is_timestamp(order_type)
    if not typed and not (empty and pa.types.is_string(order_type)):
        raise ConfigError(
            f"{options.batch}: the --order column '{options.order}' must hold dates, not {order_type}"
        )
    for rule in chosen:
        for name in sorted(rule.prev_columns):
            if name.removeprefix("prev_") not in schema.names:
                raise ConfigError(
                    f"{options.rules}:{rule.line}: rule {rule.rule_id} reads {name}, "
                    f"but the table has no column '{name.removeprefix('prev_')}'"
                )


def duplicate(scope: Scope, warehouse: Warehouse, exists: bool, sha256: str) -> str | None:
    """The run that already gated this very file for this contributor and table, if any."""
    options = scope.options
    if exists:
        found = warehouse.find_snapshot(
            options.table, **{"assay.source-sha256": sha256, "assay.contributor": scope.contributor}
        )
        if found is not None:
            return found.properties.get("assay.run-id", str(found.snapshot_id))
    return same_file(scope.store, options.table, scope.contributor, sha256, scope.run_id)


def ours(scope: Scope, schema: pa.Schema) -> exp.Expr:
    """The condition that a row is the gated contributor's (NULL when the column is)."""
    column: exp.Expr = exp.column(scope.options.contributor_column, quoted=True)
    if not pa.types.is_string(schema.field(scope.options.contributor_column).type):
        column = exp.cast(column, exp.DataType.build("VARCHAR"))
    return exp.EQ(this=column, expression=exp.Literal.string(scope.contributor))


def day_literal(day: date | datetime) -> exp.Expr:
    """A statement date (or time) as a typed SQL literal."""
    if isinstance(day, datetime):
        return exp.cast(exp.Literal.string(day.isoformat(sep=" ")), "timestamp")
    return exp.cast(exp.Literal.string(day.isoformat()), "date")


def instant(day: date) -> datetime:
    return datetime.combine(day, time(0), UTC)


def iso(day: date | None) -> str | None:
    return day.isoformat() if day else None
