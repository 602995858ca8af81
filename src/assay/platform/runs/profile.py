"""A profile as a flow on the run driver (:mod:`assay.platform.runs.driver`): the platform's side
of the drift monitor.

The monitor (:mod:`assay.monitor`) measures, stores and judges a load with steps that take values
and return values; this flow hands them to the driver, one method a step:

- :meth:`ProfileFlow.read`: the dataset's settings (a broken file is the run's recorded
  ``config_error``) and the alerting of the run;
- :meth:`~ProfileFlow.measure`: the load in one query (tried again on a platform failure,
  ``--retries``), its file's checksum read beside it;
- :meth:`~ProfileFlow.settle`: in the commit's one store transaction holding the dataset, the
  load, its metrics and its profile, its judgement against the window, its judgements and
  decisions, with the run's completed record (whose alerting opens incidents for hard alerts and
  new decisions): a load is never seen without its profile, its judgement and its run, and two
  runs on one dataset judge each other's loads whole. So the load id, and the run's counts, are
  known only inside that transaction (the driver reads them from the settlement after its writes).

Without a store the load is only measured (nothing is kept, nothing judged).

>>> import pyarrow as pa, tempfile
>>> from datetime import date
>>> from assay.store import MetricStore
>>> with MetricStore.open("sqlite://") as store:
...     result = profile(pa.table({"venue": ["XLON"]}), dataset="trades", load_date=date(2026, 1, 1),
...                      store=store, workspace=tempfile.mkdtemp())
...     [run.state for run in store.runs("trades")], result.load_id is not None
(['completed'], True)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay import monitor, privacy
from assay.engine import Engine
from assay.errors import ConfigError
from assay.lake import checksum as checksums
from assay.lake import storage
from assay.lake.storage import origin
from assay.monitor.profiler import window_of
from assay.platform.alerts import Alerting, Routing
from assay.platform.baselines import profile_holds
from assay.platform.runs.driver import Driver, Flow, Retry, Settlement, required
from assay.platform.runs.run import Input
from assay.vocabulary import AlertLevel, RunState, Severity
from assay.workspace import Workspace

if TYPE_CHECKING:
    from assay.judge import drift
    from assay.lake.checksum import Checksum
    from assay.lake.readers import ReadOptions
    from assay.store import MetricStore


class ProfileFlow(Flow[monitor.ProfileResult, None, monitor.ProfileResult, monitor.ProfileResult]):
    """One load of ``dataset`` profiled as one run. ``config`` is the dataset's settings, or a
    function that reads them (so that a broken file is the run's recorded ``config_error``);
    ``window`` overrides the settings' window; ``engine`` is an engine's name (``"duckdb"``,
    ``"spark"``; default ``ASSAY_ENGINE``, else DuckDB), a ``SparkSession`` or an open engine
    (the caller's: not closed), ``engine_factory`` a function that opens one."""

    kind = "profile"

    def __init__(
        self,
        data: Any,
        *,
        dataset: str,
        load_date: date,
        store: MetricStore | None,
        config: monitor.DatasetConfig | Callable[[], monitor.DatasetConfig] | None = None,
        window: str | drift.Window | None = None,
        read: ReadOptions | None = None,
        engine: Engine | str | Any = None,
        engine_factory: Callable[[], Engine] | None = None,
    ) -> None:
        self.data = data
        self.dataset = self.name = dataset
        self.load_date = load_date
        self.store = store
        self.inputs = [Input(origin(data))] if isinstance(data, str | os.PathLike) else []
        self._config = config
        self._window = window
        self.read_options = read
        self._engine = engine
        self.engine_factory = engine_factory
        self.config = monitor.DatasetConfig()
        self.history: monitor.History | None = None
        self.checksum: Checksum | None = None

    def read(self, driver: Driver) -> None:
        """The dataset's settings, and the alerting that judges the run's summary at its commit."""
        run = driver.current
        run.phase = "reading the dataset's configuration"
        config = self._config() if callable(self._config) else self._config
        self.config = config or monitor.DatasetConfig()
        self.window = window_of(self._window, self.config)
        if driver.recording:  # hard alerts and new decisions open incidents
            assert self.store is not None
            self.history = monitor.History(self.store, self.name, self.load_date)
            at = datetime.combine(self.load_date, time(0), UTC)
            run.alerting = Alerting(Routing.of(driver.workspace.root, self.name), "profile", at=at)

    def measure(self, driver: Driver) -> monitor.ProfileResult:
        """The load in one query; its file's checksum is read beside the engine's work (or taken
        from the command that began reading it before its imports)."""
        driver.current.phase = "profiling the load"
        if storage.is_url(self.data):  # read into a local copy once: the checksum and the profile read it
            self.data = storage.stage(self.data)
        if driver.recording and self.inputs:
            self.checksum = checksums.later(Path(self.data))
        engine = self._open(driver)
        done = driver.attempt(
            "profile",
            lambda: monitor.profiler.measure(
                engine,
                self.data,
                dataset=self.name,
                load_date=self.load_date,
                config=self.config,
                history=self.history,
                read=self.read_options,
            ),
        )
        measured = required(done)
        # masked before it is kept, judged or shown: a classified column's new values are found
        # as hashes, and its minimum and maximum are never kept (docs/privacy.md)
        masker = privacy.masker(privacy.classes(self.config.classified), driver.workspace.root)
        measured.profile = privacy.mask_profile(measured.profile, masker)
        return measured

    def judge(self, driver: Driver, measured: monitor.ProfileResult) -> monitor.ProfileResult:
        """Nothing yet: the load is judged inside the commit's transaction (:meth:`settle`), whole
        against the loads committed before it."""
        return measured

    def settle(self, driver: Driver, persisted: None, result: monitor.ProfileResult) -> Settlement:
        """Persist, judge and route in the commit's transaction, holding the dataset."""
        self.result = result
        load = result.profile
        counts = {"rows": load.rows, "columns": len(load.columns), "alerts": len(result.alerts)}
        if not driver.recording:
            return Settlement(RunState.COMPLETED, counts=counts)
        store, history, run = self.store, self.history, driver.current
        assert store is not None and history is not None
        attempts = [a.to_dict() for a in driver.attempts]
        settlement = Settlement(RunState.COMPLETED)

        def writes() -> dict[str, Any]:
            sha256 = self.checksum.result() if self.checksum is not None else None
            run.inputs = [replace(item, sha256=sha256) for item in run.inputs]
            monitor.profiler.persist(store, result, sha256=sha256, run_id=run.id)
            findings = monitor.profiler.judge(history, result, self.window, self.config)
            monitor.profiler.route(store, result, findings)
            if result.load_id is not None:  # what raised a hard alert stays out of later baselines
                holds = profile_holds((a.kind, a.column, a.severity) for a in result.alerts)
                store.hold_out_of_baselines(result.load_id, holds, run_id=run.id, at=run.started_at)
            settlement.load_id = result.load_id
            settlement.counts = {**counts, "alerts": len(result.alerts)}
            return {**result.run_summary(), "attempts": attempts}

        settlement.writes = writes
        return settlement

    def cancel(self) -> None:
        """Stop reading the file's checksum: done already, or no longer needed."""
        if self.checksum is not None:
            self.checksum.cancel()

    def _open(self, driver: Driver) -> Engine:
        if isinstance(self._engine, Engine):
            return self._engine
        if self.engine_factory is not None:
            return driver.engine(self.engine_factory)
        from assay.engine.registry import engine_for, open_engine

        chosen, data = self._engine, self.data
        return driver.engine(lambda: open_engine(engine_for(chosen, data)))


def profile(
    data: Any,
    *,
    dataset: str,
    load_date: date,
    store: MetricStore | None,
    workspace: Path | str | None = None,
    retry: Retry | None = None,
    **options: Any,
) -> monitor.ProfileResult:
    """Profile one load as one run (:class:`ProfileFlow`); ``options`` are its ``config``,
    ``window``, ``read``, ``engine`` and ``engine_factory``; measuring is tried again on a
    platform failure as ``retry`` says."""
    flow = ProfileFlow(data, dataset=dataset, load_date=load_date, store=store, **options)
    try:
        return Driver(store=store, workspace=Workspace(workspace), retry=retry).run(flow)
    finally:
        flow.cancel()


def dataset_config(workspace: Workspace, dataset: str, config: Path | str | None = None) -> Any:
    """A dataset's settings for its profile: the file ``config`` names, else its document in the
    workspace (:meth:`Workspace.document_for`), else the defaults."""
    from assay.monitor import DatasetConfig
    from assay.platform.checks.settings import load_config

    if config is not None:
        return load_config(Path(config))
    document = workspace.document_for(dataset)  # the workspace's one rule
    return load_config(document) if document is not None else DatasetConfig()


def load_day(text: str, option: str) -> date:
    """A load's date as ``--load-date`` gives it; a ConfigError naming ``option`` otherwise.

    >>> load_day("2026-01-31", "--load-date")
    datetime.date(2026, 1, 31)
    >>> load_day("31/01", "load_date")
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: load_date: '31/01' is not a date such as 2026-01-31
    """
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"{option}: '{text}' is not a date such as 2026-01-31") from None


def findings(result: monitor.ProfileResult) -> list[Severity]:
    """A profile's alerts on ``--fail-on``'s scale: a hard alert is critical, a soft one a warning."""
    return [AlertLevel(a.severity).severity for a in result.alerts]
