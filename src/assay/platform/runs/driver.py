"""THE driver: one outline for every run, whatever the flow.

A flow (dqdl, profile, gate, check, event) is a small class that hands the driver its steps as
methods that take values and return values; the driver runs them in one order and owns
everything around them:

===========  =========================================================  ==============================
step         the flow's method                                          what the driver does around it
===========  =========================================================  ==============================
start        ``kind``, ``dataset``, ``inputs``, ``counts``               creates the :class:`Run` (which
                                                                        recovers the dataset's dead
                                                                        runs), records ``running``;
                                                                        kill point ``after-start``
read         ``read(driver)``                                           phase ``reading``
measure      ``measure(driver) -> M``                                   phase ``measuring``; times it,
                                                                        counts its queries; offers
                                                                        :meth:`Driver.attempt`
persist      ``persist(driver, M) -> Persisted | None``                 one store transaction with the
                                                                        ``measured`` stage (its
                                                                        ``detail``); skipped on a dry
                                                                        run; kill point
                                                                        ``after-measure``
judge        ``judge(driver, M) -> J``                                  phase ``judging``; times it,
                                                                        counts its queries (0 is right)
route        ``settle(driver, persisted, J) -> Settlement``             with ``Settlement.commit``: the
                                                                        manifest (``Settlement.plan``)
                                                                        made durable; ``after-stage``;
                                                                        kill point ``before-commit``
commit       ``Settlement.commit`` (the flow's own commit point: the   the run counts as committed
             gate's Iceberg snapshot), then ``Settlement.writes``      past it (``after-commit``);
             (the flow's store writes)                                 then one transaction with the
                                                                        run's record and the
                                                                        ``judged`` stage;
                                                                        ``after-settle``
publish      ``after_commit(driver)`` (scores, kept after the commit)   staged files and
                                                                        ``runs/<id>.json``;
                                                                        ``after-publish``,
                                                                        ``after-summary``
===========  =========================================================  ==============================

No flow calls ``commit``, ``checkpoint`` or records a stage itself. A flow whose commit point is
outside the store (the gate's snapshot, which carries the run id) hands it over as
``Settlement.commit``; the store settles after it, from ``Settlement.plan`` (kept in the run's
manifest before the commit point), and a run killed between the two is finished by the next run
on its dataset or ``assay recover`` (:mod:`assay.platform.runs.recover`). A flow that learns its
load only inside its store transaction (a profile, judged whole while it holds the dataset) sets
``Settlement.load_id`` and ``Settlement.counts`` in its ``writes``. A failure anywhere before the
commit is the run's own error record: a :class:`~assay.errors.ConfigError` is ``config_error``,
anything else ``system_error`` (:meth:`Run.__exit__`); every engine the driver opened is closed.
A dry run does every step but persisting and committing, and writes nothing.

A flow's platform failures are retried through :meth:`Driver.attempt` (``Retry``: attempts and
exponential backoff), each attempt recorded in :attr:`Driver.attempts`.

>>> import tempfile
>>> from assay.store import MetricStore
>>> from assay.vocabulary import RunState
>>> class Count(Flow[int, int, bool, str]):
...     kind, dataset = "check", "orders"
...     def measure(self, driver): return driver.attempt("rows", lambda: 3)
...     def persist(self, driver, rows): return Persisted(rows)
...     def judge(self, driver, rows): return rows > 0
...     def settle(self, driver, persisted, ok):
...         self.result = "passed" if ok else "failed"
...         return Settlement(RunState.COMPLETED, summary={"outcome": self.result})
>>> with MetricStore.open("sqlite://") as store:
...     driver = Driver(store=store, workspace=Workspace(tempfile.mkdtemp()))
...     outcome = driver.run(Count())
...     run = store.run(driver.run_id)
...     outcome, run.state, [s for s, _ in store.stages(run.id)], [a.attempt for a in driver.attempts]
('passed', 'completed', ['running', 'measured', 'judged', 'notified'], [1])
"""

from __future__ import annotations

import shutil
import time as clock
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from assay.engine import EngineError
from assay.errors import AssayError, ConfigError, PlatformError
from assay.lake import storage
from assay.platform import lineage
from assay.platform.runs.faults import checkpoint, fallible
from assay.platform.runs.limits import SPILL_FOLDER, engine_limits, spill_folder
from assay.platform.runs.run import Input, Run
from assay.store.records import Attempt, OutcomeRecord
from assay.vocabulary import RunState
from assay.workspace import Workspace

if TYPE_CHECKING:
    from assay.engine import Engine, Limits
    from assay.lake.iceberg import Warehouse
    from assay.store import MetricStore

M = TypeVar("M")
P = TypeVar("P")
J = TypeVar("J")
R = TypeVar("R")
T = TypeVar("T")


@dataclass(frozen=True)
class Retry:
    """How a platform failure is retried: ``attempts`` tries in all, waiting ``backoff`` seconds
    doubled after each failure (0.5, 1, 2...)."""

    attempts: int = 1
    backoff: float = 0.0
    sleep: Callable[[float], None] = clock.sleep

    @classmethod
    def after(cls, retries: int, backoff: float) -> Retry:
        """The commands' ``--retries`` (tries after the first) and ``--backoff``.

        >>> Retry.after(2, 0.5).attempts
        3
        """
        return cls(retries + 1, backoff)


@dataclass(frozen=True)
class Failed:
    """A retried step that did not succeed, as a value: ``kind`` ``system`` (the platform failed
    on every attempt) or ``config`` (the author's mistake: not retried)."""

    kind: str
    message: str
    attempts: int

    def error(self) -> AssayError:
        """The failure as the error of a run that fails as a whole with it."""
        return ConfigError(self.message) if self.kind == "config" else PlatformError(self.message)


def required(done: T | Failed) -> T:
    """A step the driver tried (:meth:`Driver.attempt`) that the run cannot go on without: its
    value, or the run fails as a whole with what stopped every attempt."""
    if isinstance(done, Failed):
        raise done.error()
    return done


@dataclass(frozen=True)
class Persisted(Generic[P]):
    """What a flow's persist step wrote (``value``: its pending loads, say), and the ``detail``
    kept with the run's ``measured`` stage (what a later run resumes from)."""

    value: P
    detail: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Snapshot:
    """A flow's commit point in the Iceberg warehouse: ``rows`` (or Parquet ``files``) committed
    to ``table`` in one snapshot whose ``properties`` carry the run id, replacing the rows that
    match ``replace``, unless a snapshot with the ``unless`` properties is there already (a run
    beside this one committed the same file). ``landed`` is told the new snapshot's id, or the
    twin's run id (then nothing was committed); ``discard`` removes the files nothing refers to."""

    warehouse: Warehouse
    table: str
    rows: Any
    files: Sequence[Path]
    replace: Mapping[str, Any]
    properties: Mapping[str, str]
    unless: Mapping[str, str]
    landed: Callable[[int | None, str | None], None]
    discard: Callable[[], None]


@dataclass
class Settlement:
    """What the run's commit records: its ``state`` and ``summary`` (``runs/<id>.json``), the
    flow's store ``writes`` (run inside the commit's transaction, returning changes to the
    summary), its outcome records, load and counts; ``error`` for a run whose every attempt failed."""

    state: RunState = RunState.COMPLETED
    summary: dict[str, Any] = field(default_factory=dict)
    writes: Callable[[], Mapping[str, Any] | None] | None = None
    outcomes: Sequence[OutcomeRecord] = ()
    load_id: int | None = None
    counts: dict[str, Any] | None = None
    error: str | None = None
    inputs: Sequence[Input] | None = None  # what the run read, when it knows more at the end (a checksum)
    # the flow's own commit point, outside the store: the snapshot the driver commits (prepared
    # once the driver has passed ``before-commit``)
    commit: Callable[[], Snapshot] | None = None
    # what the store settles from, kept in the run's manifest (recovery settles a run killed past
    # its commit point from it)
    plan: dict[str, Any] | None = None


class Flow(Generic[M, P, J, R]):
    """A flow's steps; the defaults read nothing, persist nothing and keep nothing after the
    commit. ``result`` is what :meth:`Driver.run` returns (set by the steps)."""

    kind: str
    dataset: str | None
    inputs: Sequence[Input] = ()
    counts: Mapping[str, Any] = MappingProxyType({})  # recorded from the start
    result: R

    def read(self, driver: Driver) -> None:
        return None

    def measure(self, driver: Driver) -> M:
        raise NotImplementedError

    def persist(self, driver: Driver, measured: M) -> Persisted[P] | None:
        return None

    def judge(self, driver: Driver, measured: M) -> J:
        raise NotImplementedError

    def settle(self, driver: Driver, persisted: P | None, judged: J) -> Settlement:
        raise NotImplementedError

    def after_commit(self, driver: Driver) -> None:
        return None


class Driver:
    """Runs a flow as one run (see the module's outline); one driver per run. ``store`` None or
    ``dry_run``: the run is measured and judged and nothing is written."""

    def __init__(
        self,
        *,
        store: MetricStore | None,
        workspace: Workspace,
        dry_run: bool = False,
        retry: Retry | None = None,
        run_id: str | None = None,
        now: datetime | None = None,
    ) -> None:
        self.store = store
        self.workspace = workspace
        self.dry_run = dry_run
        self.recording = store is not None and not dry_run
        self.retry = retry or Retry()
        self.run_id = run_id  # chosen by the caller (a scheduler's tick names its run before it starts)
        self.now = now
        self.attempts: list[Attempt] = []
        self.seconds: dict[str, float] = {}  # wall time of measure, persist, judge
        self.queries: dict[str, int] = {"measure": 0, "judge": 0}
        self.engines: list[Engine] = []
        self.bounds: dict[str, str] = {}  # the engine's limits in force (engine: of assay.yaml)
        self._limits: Limits | None = None
        self._made_root = False
        self.recorded: dict[str, Any] = {}  # the summary as the commit recorded it
        self._run: Run | None = None
        self._flow: Flow[Any, Any, Any, Any] | None = None

    @property
    def current(self) -> Run:
        """The run being driven (from the start step on)."""
        assert self._run is not None, "the run starts in Driver.run()"
        return self._run

    # --- what the driver offers the steps ------------------------------------------------------

    def engine(self, factory: Callable[[], Engine]) -> Engine:
        """An engine opened for this run, within the workspace's limits (``engine:`` of
        ``assay.yaml``, spilling into the workspace): its queries are counted, and it is closed
        (its spilled files removed) when the run ends."""
        limits = self._limits or engine_limits(self.workspace.root, self.current.id)
        try:
            opened = factory()
        except EngineError as error:
            raise PlatformError(f"opening the engine: {error.message}") from None
        self.engines.append(opened)
        # a dry run in a workspace that does not exist yet leaves none behind (see _unspill)
        self._made_root = self._made_root or not self.workspace.root.exists()
        try:
            self.bounds = opened.bound(limits) or self.bounds
        except EngineError as error:  # a size DuckDB refuses although it has the form of one
            raise ConfigError(f"{self.workspace.root / 'assay.yaml'}: engine: {error.message}") from None
        return opened

    def attempt(self, label: str, step: Callable[[], T]) -> T | Failed:
        """``step`` tried up to ``retry.attempts`` times while the platform fails (a
        :class:`PlatformError`), each attempt recorded under ``label``; the author's mistake
        (:class:`ConfigError`) is not retried. What could not be done is returned as
        :class:`Failed`, so that the rest of the run goes on."""
        step = fallible(label, step)  # the retry tests' failing attempts (ASSAY_FAIL_ATTEMPTS)
        failure = "the platform failed"
        tries = max(self.retry.attempts, 1)
        for number in range(1, tries + 1):
            try:
                done = step()
            except PlatformError as error:
                failure = error.message
                self.attempts.append(Attempt(label, number, failure))
                if number < tries:
                    self.retry.sleep(self.retry.backoff * (2 ** (number - 1)))
                continue
            except ConfigError as error:
                self.attempts.append(Attempt(label, number, None))
                return Failed("config", error.message, number)
            self.attempts.append(Attempt(label, number, None))
            return done
        return Failed("system", failure, tries)

    def tries(self, label: str) -> int:
        """How many attempts ``label`` took so far."""
        return sum(1 for a in self.attempts if a.profile == label)

    # --- the outline -----------------------------------------------------------------------------

    def run(self, flow: Flow[Any, Any, Any, R]) -> R:
        """Drive ``flow`` through the outline once; returns its ``result``. Its OpenLineage
        events, when lineage is configured, go out around it (docs/openlineage.md)."""
        with lineage.watch(self, flow):
            return self._drive(flow)

    def _drive(self, flow: Flow[Any, Any, Any, R]) -> R:
        self._flow = flow
        storage.configure(self.workspace.storage)  # the endpoint its s3:// inputs and files use
        run = self._run = Run(
            flow.kind,
            dataset=flow.dataset,
            workspace=self.workspace,
            store=self.store if self.recording else None,
            inputs=flow.inputs,
            run_id=self.run_id,
            now=self.now,
        )
        self.run_id = run.id
        run.counts = dict(flow.counts)  # recorded from the start: a run that fails keeps them
        try:
            with run:
                self._stage("running")
                # read before anything else: a wrong setting is the run's config_error, not a
                # failed measurement of each profile
                self._limits = engine_limits(self.workspace.root, run.id)
                run.phase = "reading"
                flow.read(self)
                run.phase = "measuring"
                with self._timed("measure"):
                    measured = flow.measure(self)
                persisted = None
                with self._timed("persist"):
                    if self.recording:
                        persisted = self._persist(measured)
                checkpoint("after-measure")  # pending loads and their metrics written
                run.phase = "judging"
                with self._timed("judge"):
                    judged = flow.judge(self, measured)
                settlement = flow.settle(self, persisted, judged)
                if self.recording:  # every flow's summary says where its time went (a flow's own wins)
                    settlement.summary.setdefault("seconds", dict(self.seconds))
                    settlement.summary.setdefault("queries", dict(self.queries))
                    if self.bounds:
                        settlement.summary.setdefault("engine", dict(self.bounds))
                if settlement.plan is not None:
                    run.manifest.settle = settlement.plan
                own = settlement.commit if self.recording else None
                if own is not None:
                    # what the store settles from is durable before the commit point
                    run.manifest.summary = dict(settlement.summary)
                    run.write_manifest()
                    checkpoint("after-stage")  # staged files and the manifest written
                checkpoint("before-commit")  # judged; nothing of it recorded yet
                if own is not None and self._snapshot(own()):
                    run.committed = True  # a later failure leaves it for recovery to finish
                    checkpoint("after-commit")  # committed; the store does not know yet
                self._commit(settlement)
        finally:
            for opened in self.engines:
                opened.close()
            # the local copies of s3:// inputs: a worker runs thousands of runs in one process
            storage.release()
            self._unspill()
        if self.recording and run.state is RunState.COMPLETED:
            flow.after_commit(self)
        if self.recording and self.store is not None and run.dataset:
            self._refresh_entry(run.dataset)
        return flow.result

    def _refresh_entry(self, dataset: str) -> None:
        """Keep the dataset's catalog entry (its score) as this run left it. The run's writes
        marked it stale in their own transactions: a kill before this leaves it stale, and the
        catalog's next read computes it (docs/scores.md, "Kept scores")."""
        from assay.platform.entries import refresh_named

        refresh_named(self.store, self.workspace.root, [dataset], now=self.now or datetime.now(UTC))

    def _persist(self, measured: Any) -> Any:
        assert self.store is not None and self._flow is not None
        run = self.current
        run.phase = "storing the metrics"
        with self.store.transaction(lock=run.dataset):
            persisted = self._flow.persist(self, measured)
            if persisted is None:
                return None
            # with the metrics, what was measured: both land, or neither
            self.store.add_stage(run.id, "measured", detail=persisted.detail)
        return persisted.value

    def _snapshot(self, snapshot: Snapshot) -> bool:
        """Commit the flow's snapshot; False when a twin committed the same file first."""
        # imported here: a run that writes no table (a check, a profile) never loads PyIceberg
        from assay.lake.iceberg import PreconditionFailed

        try:
            info = snapshot.warehouse.commit(
                snapshot.table,
                snapshot.rows,
                files=snapshot.files,
                replace=snapshot.replace,
                properties=snapshot.properties,
                unless=snapshot.unless,
            )
        except PreconditionFailed as twin:
            snapshot.discard()
            snapshot.landed(None, twin.found.properties.get("assay.run-id", str(twin.found.snapshot_id)))
            return False
        except PlatformError:
            snapshot.discard()  # the warehouse says nothing was committed: no snapshot refers to them
            raise
        snapshot.landed(info.snapshot_id, None)
        return True

    def _commit(self, settlement: Settlement) -> None:
        run = self.current
        if settlement.error is not None:
            run.error = settlement.error
        if settlement.inputs is not None:
            run.inputs = list(settlement.inputs)
        if not self.recording:
            run.state = settlement.state
            return
        if settlement.counts is not None:
            run.counts = settlement.counts
        store = self.store
        assert store is not None
        writes = settlement.writes

        def settle() -> Mapping[str, Any] | None:
            updates = writes() if writes is not None else None
            if settlement.counts is not None:  # known at last inside the transaction (a profile's)
                run.counts = settlement.counts
            # judged with its outcomes and what they caused; notified at once when they caused nothing
            store.add_stage(run.id, "judged")
            store.note_notified(run.id)
            return updates

        self.recorded = run.commit(
            settle,
            summary=settlement.summary,
            outcomes=settlement.outcomes,
            load_id=lambda: settlement.load_id,
            state=settlement.state,
        )

    def _unspill(self) -> None:
        """Remove what the run's engine spilled (closing DuckDB deletes its files, not the
        folder), and ``tmp/duckdb`` and ``tmp`` once no other run spills there; and the workspace
        folder itself when opening the engine created it and nothing else was written there."""
        if self._run is None:
            return
        root = self.workspace.root
        shutil.rmtree(spill_folder(root, self._run.id), ignore_errors=True)
        folders = [root.joinpath(*SPILL_FOLDER[:depth]) for depth in range(len(SPILL_FOLDER), 0, -1)]
        for folder in [*folders, *([root] if self._made_root else [])]:
            try:
                folder.rmdir()
            except OSError:  # absent, or another run's folder (or a file the run wrote) is in it
                return

    def _stage(self, name: str) -> None:
        if self.recording:
            assert self.store is not None
            self.store.add_stage(self.current.id, name)

    @contextmanager
    def _timed(self, step: str) -> Iterator[None]:
        started = clock.perf_counter()
        before = self._counted()
        try:
            yield
        finally:
            self.seconds[step] = clock.perf_counter() - started
            if step in self.queries:
                self.queries[step] = self._counted() - before

    def _counted(self) -> int:
        return sum(e.queries for e in self.engines)


__all__ = ["Attempt", "Driver", "Failed", "Flow", "Persisted", "Retry", "Settlement", "Snapshot", "required"]
