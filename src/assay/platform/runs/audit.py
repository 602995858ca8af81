"""``assay gate audit``: a gate run accounts for every row of its batch, from what it left.

The evidence is independent of the run's own counters (its summary says ``total == passed +
quarantined + held``; the audit does not read those numbers): the batch file is read again by
the gate's own reader (:func:`assay.gate.batch.read`, with the reading options the run recorded,
so a parse error counts as the record it is), and its records are matched
(:func:`assay.gate.audit.balance`) against

- the rows the run committed: the snapshot whose summary carries the run's id, read as it was
  (time travel), for the contributor and the months that snapshot replaced: a later run that
  replaced the same months leaves an earlier run's audit unchanged;
- its quarantine file(s), ``dq_error/date=*/contributor=*/<run_id>.csv``;
- its held file, ``held/<table>/contributor=*/<run_id>.parquet``; and for a held row gone from
  it since, where it went (:func:`_since`): withdrawn by a later run sending its month again, or
  released by a decision, committed or quarantined.

A run that ended without a commit (``system_error``, ``config_error``) or refused a file already
gated (``duplicate_of``) had nothing to account for: it is balanced when it left no output. A
run still ``running`` (being run, or killed and not yet recovered), or one killed after its
commit with its files still staged, is ``unfinished``; a batch
that can no longer be read as it was (moved, changed, an ``s3://`` object) is ``unreadable``.
Both are not balanced: nothing proves they are.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.csv as pacsv

from assay.engine import DuckDBEngine
from assay.errors import ConfigError, PlatformError
from assay.gate import batch as batches
from assay.gate import holds
from assay.gate.audit import COMMITTED, HELD, QUARANTINED, Balance, Outputs, Since, balance
from assay.gate.gate import table_schema
from assay.gate.holds import HELD_BY
from assay.lake import storage
from assay.lake.iceberg import Warehouse
from assay.lake.readers import ReadOptions
from assay.platform.runs.staging import MANIFEST, STAGING
from assay.vocabulary import RunState

if TYPE_CHECKING:
    from assay.engine import Engine
    from assay.store import MetricStore
    from assay.store.records import RunRecord
    from assay.workspace import Workspace

BALANCED, UNBALANCED, UNFINISHED, UNREADABLE = "balanced", "unbalanced", "unfinished", "unreadable"
RUN_ID = "assay.run-id"


@dataclass(frozen=True)
class RunAudit:
    """One run's audit: ``state`` is ``balanced``, ``unbalanced``, ``unfinished`` or
    ``unreadable``; ``balance`` is None when nothing could be matched; ``note`` says why."""

    run_id: str
    table: str | None
    contributor: str | None
    run_state: str
    batch: str | None
    state: str
    balance: Balance | None
    note: str | None = None

    @property
    def balanced(self) -> bool:
        return self.state == BALANCED

    def to_dict(self) -> dict[str, Any]:
        counts = (
            self.balance.to_dict()
            if self.balance is not None
            else {"input_rows": None, "committed": None, "quarantined": None, "held": None}
            | {"missing": [], "withdrawn": [], "duplicated": [], "unknown": []}
        )
        return {
            "run_id": self.run_id,
            "table": self.table,
            "contributor": self.contributor,
            "run_state": self.run_state,
            "batch": self.batch,
            "state": self.state,
            **counts,
            "balanced": self.balanced,
            "note": self.note,
        }


def audit_run(
    workspace: Workspace,
    store: MetricStore,
    run_id: str,
    engine_factory: Callable[[], Engine] = DuckDBEngine,
) -> RunAudit:
    """The audit of the gate run ``run_id`` (a ConfigError when there is no such gate run).

    >>> import tempfile
    >>> from assay.store import MetricStore
    >>> from assay.workspace import Workspace
    >>> with MetricStore.open("sqlite://") as store:  # doctest: +ELLIPSIS
    ...     audit_run(Workspace(tempfile.mkdtemp()), store, "0b7c5a52-4d0e-4a59-9d43-2f1f1d1f7d6e")
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: no run 0b7c5a52-4d0e-4a59-9d43-2f1f1d1f7d6e in the store; ...
    """
    try:
        run = store.run(run_id)
    except ConfigError:  # not a UUID: no run ever had it
        run = None
    if run is None:
        raise ConfigError(
            f"no run {run_id} in the store; `assay gate audit --table NAME` audits every run of a table"
        )
    if run.kind != "gate":
        raise ConfigError(
            f"run {run_id} is a {run.kind} run, not a gate run: only a gate run has rows to audit"
        )
    return _audit(workspace, run, engine_factory)


def audit_table(
    workspace: Workspace,
    store: MetricStore,
    table: str,
    engine_factory: Callable[[], Engine] = DuckDBEngine,
) -> list[RunAudit]:
    """The audits of every gate run of ``table``, oldest first (a ConfigError when it has none)."""
    runs = store.runs(table, limit=1_000_000, kind="gate")
    if not runs:
        raise ConfigError(f"no gate run of table '{table}' in the store; `assay table list` names the tables")
    return [_audit(workspace, run, engine_factory) for run in reversed(runs)]


def _audit(workspace: Workspace, run: RunRecord, engine_factory: Callable[[], Engine]) -> RunAudit:
    summary: Mapping[str, Any] = run.summary or {}
    source = summary.get("source") or {}
    path = source.get("path") or next((i.get("path") for i in run.inputs), None)
    contributor = summary.get("contributor")

    def told(state: str, found: Balance | None, note: str | None = None) -> RunAudit:
        return RunAudit(run.id, run.dataset, contributor, run.state, path, state, found, note)

    if run.state == RunState.RUNNING.value:
        return told(
            UNFINISHED,
            None,
            "the run has not finished: it is running, or its process was killed; the next gate "
            "run on the table, or `assay recover`, finishes or abandons it",
        )
    nothing = run.state != RunState.COMPLETED.value or bool(summary.get("duplicate_of"))
    with workspace.warehouse() as warehouse:
        if nothing:
            outputs = _outputs(workspace, warehouse, run, None)
            found = Balance(
                None, outputs.committed.num_rows, outputs.quarantined.num_rows, outputs.held.num_rows
            )
            why = (
                f"a duplicate of run {summary['duplicate_of']}" if summary.get("duplicate_of") else run.state
            )
            why = f"{why}: nothing to account for, so nothing may be written"
            return told(BALANCED if found.balanced else UNBALANCED, found, why)
        if path is None or storage.is_url(path):
            return told(UNREADABLE, None, f"the batch {path} is not a local file: the audit reads it again")
        if workspace.storage.dq_error:
            return told(
                UNREADABLE,
                None,
                f"the quarantine files are under {workspace.storage.dq_error} (storage: in assay.yaml): "
                "the audit reads the workspace's own dq_error/ folder",
            )
        batch_path = Path(path)
        if not batch_path.is_file():
            return told(
                UNREADABLE, None, f"{path}: no such file here (a relative path is read from this folder)"
            )
        options = ReadOptions.of_recorded(summary.get("read") or {})
        snapshot = _snapshot(warehouse, run)
        schema = _schema(workspace, warehouse, run, batch_path)
        outputs = _outputs(workspace, warehouse, run, snapshot)
        since = _since(workspace, warehouse, run, contributor)  # reads the warehouse when asked
        engine = engine_factory()
        try:
            batch = batches.read(engine, batch_path, schema, options)
            if source.get("sha256") and batch.sha256 != source["sha256"]:
                return told(
                    UNREADABLE, None, f"{path}: the file changed since the run read it (its SHA-256 differs)"
                )

            def lines(rows: list[int]) -> list[int]:
                return batches.record_lines(engine, batch, rows, options)

            found = balance(engine, batch, outputs, lines, since)
        finally:
            engine.close()
    if found.balanced:
        left = [
            f"{len(rows)} {what}"
            for rows, what in (
                (found.withdrawn, "withdrawn by a later run sending their month again"),
                (found.released, "released by a decision"),
            )
            if rows
        ]
        return told(BALANCED, found, f"held rows since: {'; '.join(left)}" if left else None)
    if (workspace.root / STAGING / run.id / MANIFEST).exists():
        return told(
            UNFINISHED,
            found,
            "the run committed but was killed before it published its files (they are still staged): "
            "the next gate run on the table, or `assay recover`, publishes them",
        )
    return told(UNBALANCED, found)


def _since(
    workspace: Workspace, warehouse: Warehouse, run: RunRecord, contributor: str | None
) -> Since | None:
    """What the table and the quarantine hold of the run's held rows after it: the months later
    runs of the contributor sent again (which withdrew the rows held for them), the rows decisions
    committed (a snapshot ``decision-N`` of the contributor, ``assay.held-by`` this run when it
    says) and the files of the rows decisions quarantined (``decision-N-<run_id>*.csv``)."""
    table = run.dataset
    if table is None or contributor is None or not warehouse.exists(table):
        return None
    months: set[str] = set()
    decided: list[int] = []
    for info in warehouse.snapshots(table):
        by, props = info.properties.get(RUN_ID, ""), info.properties
        if (
            by == run.id
            or props.get("assay.contributor") != contributor
            or info.committed_at <= run.started_at
        ):
            continue
        if by.startswith("decision-"):
            if props.get(HELD_BY, run.id) == run.id:
                decided.append(info.snapshot_id)
        else:
            months.update(filter(None, props.get("assay.months", "").split(",")))
    contributor_column, order = warehouse.partition_columns(table)[:2]
    dq_error = workspace.root / "dq_error"
    rejected_files = sorted(
        {
            *dq_error.glob(f"date=*/contributor=*/decision-*-{run.id}.csv"),
            *dq_error.glob(f"date=*/contributor=*/decision-*-{run.id}-committed.csv"),
        }
    )

    def replaced(days: list[Any]) -> list[bool]:
        return [day is not None and _iso(day) in months for day in days]

    def released(days: list[Any]) -> tuple[pa.Table, pa.Table]:
        where = {contributor_column: contributor, order: days}
        accepted = [warehouse.read(table, where, snapshot=snapshot) for snapshot in decided]
        rejected = [_quarantine(path) for path in rejected_files]
        return (
            pa.concat_tables(accepted) if accepted else pa.table({}),
            pa.concat_tables(rejected, promote_options="permissive") if rejected else pa.table({}),
        )

    return Since(order, replaced, released)


def _iso(day: Any) -> str:
    return str(day.isoformat()) if isinstance(day, date | datetime) else str(day)


def _snapshot(warehouse: Warehouse, run: RunRecord) -> int | None:
    """The snapshot the run committed, found by its id in the snapshot's summary."""
    if run.dataset is None or not warehouse.exists(run.dataset):
        return None
    found = warehouse.find_snapshot(run.dataset, **{RUN_ID: run.id})
    return None if found is None else found.snapshot_id


def _schema(workspace: Workspace, warehouse: Warehouse, run: RunRecord, batch: Path) -> pa.Schema | None:
    """The schema the run typed the batch against: the table's (with the declared file's
    reading of blank cells, when the table's document names one), or, when the run left no
    table, the declared one, else None (inferred from the batch, as the run inferred it)."""
    from assay.gate.gate import GateOptions
    from assay.platform.runs.gate import settings

    assert run.dataset is not None
    document, config, _ = settings(workspace, run.dataset)
    declared = None
    if config is not None and config.schema_file and document is not None:
        declared = (document.parent / config.schema_file).resolve()
    options = GateOptions(batch, batch, "", None, workspace.root, table=run.dataset, schema=declared)
    try:
        return table_schema(options, warehouse, warehouse.exists(run.dataset))
    except ConfigError:  # the declared file is not the table's: the table's schema is the one used
        return warehouse.schema(run.dataset)


def _outputs(workspace: Workspace, warehouse: Warehouse, run: RunRecord, snapshot: int | None) -> Outputs:
    table = run.dataset or ""
    sources: dict[str, str] = {}
    if snapshot is None:
        snapshot = _snapshot(warehouse, run)
    committed = pa.table({})
    if snapshot is not None:
        info = next(s for s in warehouse.snapshots(table) if s.snapshot_id == snapshot)
        contributor_column, order = warehouse.partition_columns(table)[:2]
        months = [_day(m) for m in info.properties.get("assay.months", "").split(",") if m]
        where = {contributor_column: info.properties.get("assay.contributor"), order: months}
        committed = warehouse.read(table, where, snapshot=snapshot)
        sources[COMMITTED] = f"table {table}, snapshot {snapshot}"
    quarantine_files = sorted((workspace.root / "dq_error").glob(f"date=*/contributor=*/{run.id}.csv"))
    quarantined = pa.concat_tables([_quarantine(p) for p in quarantine_files]) if quarantine_files else None
    if quarantine_files:
        sources[QUARANTINED] = ", ".join(str(p) for p in quarantine_files)
    held_files = sorted(holds.held_folder(workspace, table, "*").parent.glob(f"*/{run.id}.parquet"))
    held = pa.concat_tables([holds.read(p).rows for p in held_files]) if held_files else pa.table({})
    if held_files:
        sources[HELD] = ", ".join(str(p) for p in held_files)
    empty = pa.table({"dq_line": pa.array([], pa.string())})
    return Outputs(committed, quarantined if quarantined is not None else empty, held, sources)


def _quarantine(path: Path) -> pa.Table:
    """A quarantine file's rows, every cell text as written: an empty cell NULL, a quoted empty
    one an empty string (:class:`assay.lake.quarantine.QuarantineFile` writes them so)."""
    try:
        with path.open(newline="") as handle:
            names = next(csv.reader(handle), [])
        return pacsv.read_csv(
            path,
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()),
                strings_can_be_null=True,
                quoted_strings_can_be_null=False,
            ),
        )
    except (OSError, pa.ArrowException) as error:
        raise PlatformError(f"{path}: cannot read the quarantine file: {error}") from None


def _day(text: str) -> date | datetime:
    return datetime.fromisoformat(text) if "T" in text or " " in text else date.fromisoformat(text)
