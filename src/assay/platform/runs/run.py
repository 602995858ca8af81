"""A run as a value: one lifecycle for ``assay dqdl run``, ``assay gate`` and ``assay profile``.

A :class:`Run` owns what one execution needs (the engine, the metric store, the workspace) and
records the execution with an honest state (:class:`assay.vocabulary.RunState`):

1. **start** — the run is recorded ``running``, with its inputs and the process that owns it;
2. **work** — the flow measures (its loads are ``pending``: no history reads them), and stages
   every file it will publish under ``<workspace>/staging/<run_id>/`` with a manifest;
3. **commit** — the commit point. For a run that writes a table it is the Iceberg snapshot
   (which carries the run id); otherwise it is one store transaction that settles the run's
   loads and decisions and marks the run ``completed``;
4. **publish** — the staged files are renamed into place and ``runs/<run_id>.json`` is written.

A failure before the commit leaves nothing visible but the run's own error record
(``config_error`` or ``system_error``, with the message). A process killed before its commit
leaves a ``running`` record whose owner is dead, which the next run on the dataset (or
``assay recover``) turns into a ``system_error`` and cleans up; a process killed after its commit
is finished by the next one (:mod:`assay.platform.runs.recover`).

>>> import tempfile
>>> from assay.store import MetricStore
>>> with MetricStore.open("sqlite://") as store:
...     with Run("dqdl", dataset="orders", workspace=Workspace(tempfile.mkdtemp()), store=store) as run:
...         _ = run.commit(summary={"rules": 0})
...     store.run(run.id).state
'completed'
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from assay.errors import AssayError, ConfigError, PlatformError
from assay.names import check_name
from assay.platform.runs.faults import checkpoint
from assay.platform.runs.recover import recover
from assay.platform.runs.staging import (
    MANIFEST,
    STAGING,
    Manifest,
    _relative,
    _write_durably,
    abandon,
    owner,
    owner_alive,
    publish,
    write_error_record,
)
from assay.store.records import OutcomeRecord, RunRecord
from assay.vocabulary import RunState
from assay.workspace import Workspace

if TYPE_CHECKING:
    from assay.engine import Engine
    from assay.platform.alerts import Alerting
    from assay.store import MetricStore

__all__ = [
    "MANIFEST",
    "STAGING",
    "Input",
    "Manifest",
    "Run",
    "abandon",
    "as_assay_error",
    "owner",
    "owner_alive",
    "publish",
    "write_error_record",
]


@dataclass(frozen=True)
class Input:
    """One thing a run read: a path (or a description of an in-memory table) and its checksum."""

    path: str
    sha256: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256}


class Run:
    """One run of a flow on one load; use it as a context manager around the flow's work."""

    def __init__(
        self,
        kind: str,
        *,
        dataset: str | None,
        workspace: Workspace,
        store: MetricStore | None,
        inputs: Sequence[Input] = (),
        engine_factory: Callable[[], Engine] | None = None,
        run_id: str | None = None,
        now: datetime | None = None,
    ) -> None:
        self.id = run_id or str(uuid.uuid4())
        self.now = now  # the run's clock (``--now``), for what it writes on others' behalf
        self.kind = kind
        # every flow's dataset name enters the store here: one rule for the CLI and the web
        self.dataset = None if dataset is None else check_name(dataset, "dataset")
        self.workspace = workspace
        self.store = store
        self.inputs = list(inputs)
        self.started_at = datetime.now(UTC)
        self.state = RunState.RUNNING
        self.error: str | None = None
        self.phase = "starting"
        self.committed = False  # the commit point has passed: a later failure must not undo it
        self.counts: dict[str, Any] = {}
        self.manifest = Manifest(self.id, kind, dataset)
        # the flow's incidents and notifications, judged inside the commit (platform/alerts.py)
        self.alerting: Alerting | None = None
        self._engine: Engine | None = None
        self._engine_factory = engine_factory

    # --- what the run owns -------------------------------------------------------------------

    @property
    def engine(self) -> Engine:
        """The run's engine, opened on first use and closed when the run ends."""
        if self._engine is None:
            if self._engine_factory is not None:
                self._engine = self._engine_factory()
            else:
                from assay.engine import DuckDBEngine

                self._engine = DuckDBEngine()
        return self._engine

    @property
    def staging(self) -> Path:
        """The folder where this run stages what it publishes at its commit."""
        return self.workspace.root / STAGING / self.id

    def stage(self, target: Path) -> Path:
        """A path in the staging folder to write ``target``'s content to; it is renamed to
        ``target`` when the run publishes (after its commit)."""
        self.staging.mkdir(parents=True, exist_ok=True)
        staged = self.staging / f"{len(self.manifest.moves):03d}-{target.name}"
        self.manifest.moves.append(
            (_relative(staged, self.workspace.root), _relative(target, self.workspace.root))
        )
        return staged

    def write_manifest(self) -> None:
        """Make the manifest durable (written whole, then renamed, then synced)."""
        self.staging.mkdir(parents=True, exist_ok=True)
        _write_durably(self.staging / MANIFEST, json.dumps(self.manifest.to_dict(), indent=1, default=str))

    # --- the lifecycle ------------------------------------------------------------------------

    def __enter__(self) -> Self:
        if self.store is not None:
            recover(self.store, self.workspace, dataset=self.dataset, exclude=self.id, now=self.now)
            self._record()
        checkpoint("after-start")
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        try:
            if error is None or isinstance(error, GeneratorExit):
                return
            failure = as_assay_error(error, self.phase)
            if not self.committed:
                self._fail(failure)
            elif "is committed" not in failure.message:
                where = f"the next run on {self.dataset} or " if self.dataset else ""
                failure = PlatformError(
                    f"run {self.id} is committed, but {failure.message}; {where}`assay recover` finishes it"
                )
            if failure is not error:
                raise failure from error
        finally:
            if self._engine is not None:
                self._engine.close()
                self._engine = None

    def commit(
        self,
        settle: Callable[[], Mapping[str, Any] | None] | None = None,
        *,
        summary: Mapping[str, Any] | None = None,
        outcomes: Sequence[OutcomeRecord] = (),
        load_id: int | Callable[[], int | None] | None = None,
        state: RunState = RunState.COMPLETED,
    ) -> dict[str, Any]:
        """The run's store commit: ``settle`` (the flow's store writes, returning changes to the
        summary) and the run's completed record in one transaction holding the dataset; then the
        staged files are published. Returns the summary as recorded.

        For a run without a store (an ad-hoc ``dqdl run``) only the publishing is done."""
        with nullcontext() if self.store is None else self.store.transaction(lock=self.dataset):
            payload = self.complete(settle, summary=summary, outcomes=outcomes, load_id=load_id, state=state)
        self.committed = True
        checkpoint("after-settle")
        self.publish()
        return payload

    def complete(
        self,
        settle: Callable[[], Mapping[str, Any] | None] | None = None,
        *,
        summary: Mapping[str, Any] | None = None,
        outcomes: Sequence[OutcomeRecord] = (),
        load_id: int | Callable[[], int | None] | None = None,
        state: RunState = RunState.COMPLETED,
    ) -> dict[str, Any]:
        """Settle and record the run as completed (or, for a check run whose every profile failed
        after its retries, as ``system_error`` with its outcomes), inside the caller's store transaction (a
        profile's, whose writes and judgement are one transaction already), with the incidents and
        notifications its :attr:`alerting` judges from the summary (the summary's ``incidents``).
        The run counts as committed only once that transaction has: the caller sets
        :attr:`committed` then."""
        self.phase = "committing"
        payload = dict(summary or {})
        self.manifest.summary = payload
        updates = settle() if settle is not None else None
        payload.update(updates or {})
        if callable(load_id):  # known only once ``settle`` has run (a profile's load)
            load_id = load_id()
        if self.store is not None and self.alerting is not None and state is RunState.COMPLETED:
            payload["incidents"] = self.alerting(self.store, payload, run_id=self.id)
        if self.store is not None:
            self.store.record_run(self.record(payload, outcomes, load_id, state=state))
        self.state = state
        return payload

    def publish(self) -> None:
        """Rename the staged files into place and write the run summary; idempotent."""
        self.phase = "publishing"
        publish(self.workspace, self.manifest)

    def record(
        self,
        summary: Mapping[str, Any] | None,
        outcomes: Sequence[OutcomeRecord] = (),
        load_id: int | None = None,
        *,
        state: RunState | None = None,
    ) -> RunRecord:
        """The run as the store keeps it, in its current state (or ``state``)."""
        state = state or self.state
        return RunRecord(
            id=self.id,
            kind=self.kind,
            dataset=self.dataset,
            load_id=load_id,
            state=state.value,
            started_at=self.started_at,
            finished_at=None if state == RunState.RUNNING else datetime.now(UTC),
            summary=dict(summary) if summary is not None else None,
            outcomes=list(outcomes),
            inputs=[item.to_dict() for item in self.inputs],
            counts=self.counts or None,
            error=self.error,
            owner=owner(),
        )

    def _record(self) -> None:
        assert self.store is not None
        self.store.record_run(self.record(None))

    def _fail(self, failure: AssayError) -> None:
        """Leave nothing of this run visible but its error record."""
        self.state = RunState.CONFIG_ERROR if isinstance(failure, ConfigError) else RunState.SYSTEM_ERROR
        self.error = failure.message
        if self.committed:
            return  # past the commit point: the next run finishes the publishing
        shutil.rmtree(self.staging, ignore_errors=True)
        if self.store is None:
            return
        try:
            with self.store.transaction(lock=self.dataset):
                abandon(self.store, self.id)
                self.store.record_run(self.record({"error": self.error}))
        except AssayError:
            pass  # the store itself failed: the next run finds this one running with no owner
        write_error_record(self.workspace, self.id, self.kind, self.state, self.error)


def as_assay_error(error: BaseException, phase: str) -> AssayError:
    """Any failure as the error assay reports: the user's mistakes stay ConfigErrors, and every
    failure of the machine (the disk, memory, the engine, a bug) is a PlatformError that says
    what failed."""
    if isinstance(error, AssayError):
        return error
    if isinstance(error, OSError):
        where = f" {error.filename}" if error.filename else ""
        return PlatformError(f"{phase}: I/O error on{where or ' the disk'}: {error.strerror or error}")
    if isinstance(error, MemoryError):
        return PlatformError(f"{phase}: out of memory")
    if isinstance(error, KeyboardInterrupt):
        return PlatformError(f"{phase}: interrupted")
    module = type(error).__module__.split(".")[0]
    if module == "duckdb":
        return PlatformError(f"{phase}: the DuckDB engine failed: {' '.join(str(error).split())}")
    return PlatformError(f"{phase}: {type(error).__name__}: {error}")
