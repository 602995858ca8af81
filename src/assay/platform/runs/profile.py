"""A profile as one run: the platform's side of the drift monitor.

The monitor (:mod:`assay.monitor`) measures, stores and judges a load with steps that take values
and return values; this flow puts them inside a :class:`~assay.platform.runs.run.Run`, in the
order every flow follows, one method a step: :meth:`ProfileFlow.read` (the dataset's settings,
the alerting of the run), :meth:`~ProfileFlow.measure` (one query), then in one store transaction
holding the dataset :meth:`~ProfileFlow.persist` (the load, its metrics, its profile),
:meth:`~ProfileFlow.judge` (against the window), :meth:`~ProfileFlow.route` (judgements,
decisions, the run's counts) and :meth:`~ProfileFlow.commit` (the run's completed record, whose
alerting opens incidents for hard alerts and new decisions), then publishing.

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

from assay import monitor
from assay.lake import checksum as checksums
from assay.monitor.profiler import window_of
from assay.platform.alerts import Alerting, Routing
from assay.platform.runs.run import Input, Run
from assay.workspace import Workspace

if TYPE_CHECKING:
    from assay.judge.drift import Finding
    from assay.lake.checksum import Checksum
    from assay.lake.readers import ReadOptions
    from assay.store import MetricStore


class ProfileFlow:
    """One load of ``dataset`` profiled inside ``run``. ``config`` is the dataset's settings, or a
    function that reads them (so that a broken file is the run's recorded ``config_error``);
    ``window`` overrides the settings' window."""

    def __init__(
        self,
        run: Run,
        data: Any,
        *,
        dataset: str,
        load_date: date,
        config: monitor.DatasetConfig | Callable[[], monitor.DatasetConfig] | None = None,
        window: str | None = None,
        read: ReadOptions | None = None,
    ) -> None:
        self.run = run
        self.store: MetricStore | None = run.store
        self.data = data
        self.dataset = dataset
        self.load_date = load_date
        self._config = config
        self._window = window
        self.read_options = read
        self.config = monitor.DatasetConfig()
        self.history: monitor.History | None = None
        if self.store is not None:
            self.history = monitor.History(self.store, dataset, load_date)
        self.result: monitor.ProfileResult | None = None
        self.findings: list[Finding] = []
        self.checksum: Checksum | None = None

    def run_steps(self) -> monitor.ProfileResult:
        """Every step in order; without a store the load is only measured (nothing is kept)."""
        try:
            self.read()
            result = self.measure()
            if self.store is not None:
                self.commit()
            return result
        finally:
            if self.checksum is not None:
                self.checksum.cancel()  # done already, or no longer needed

    def read(self) -> None:
        """The dataset's settings, and the alerting that judges the run's summary at its commit."""
        self.run.phase = "reading the dataset's configuration"
        config = self._config() if callable(self._config) else self._config
        self.config = config or monitor.DatasetConfig()
        self.window = window_of(self._window, self.config)
        if self.store is not None:  # hard alerts and new decisions open incidents
            at = datetime.combine(self.load_date, time(0), UTC)
            self.run.alerting = Alerting(Routing.of(self.run.workspace.root, self.dataset), "profile", at=at)

    def measure(self) -> monitor.ProfileResult:
        """The load in one query; its file's checksum is read beside the engine's work (or taken
        from the command that began reading it before its imports)."""
        self.run.phase = "profiling the load"
        if self.store is not None and isinstance(self.data, str | os.PathLike):
            self.checksum = checksums.later(Path(self.data))
        self.result = monitor.profiler.measure(
            self.run.engine,
            self.data,
            dataset=self.dataset,
            load_date=self.load_date,
            config=self.config,
            history=self.history,
            read=self.read_options,
        )
        return self.result

    def persist(self) -> None:
        """The load, its metrics and its profile, replacing an earlier profile of the same date."""
        assert self.store is not None and self.result is not None
        sha256 = self.checksum.result() if self.checksum is not None else None
        self.run.inputs = [replace(item, sha256=sha256) for item in self.run.inputs]
        monitor.profiler.persist(self.store, self.result, sha256=sha256, run_id=self.run.id)

    def judge(self) -> None:
        """The load against the window of earlier loads."""
        assert self.history is not None and self.result is not None
        self.findings = monitor.profiler.judge(self.history, self.result, self.window, self.config)

    def route(self) -> None:
        """The judgements kept, the decisions opened, the run's counts."""
        assert self.store is not None and self.result is not None
        monitor.profiler.route(self.store, self.result, self.findings)
        load = self.result.profile
        self.run.counts = {"rows": load.rows, "columns": len(load.columns), "alerts": len(self.result.alerts)}

    def commit(self) -> None:
        """Persist, judge and route in one transaction holding the dataset, with the run's
        completed record: a load is never seen without its profile, its judgement and its run,
        and two runs on one dataset judge each other's loads whole. Then publish."""
        assert self.store is not None and self.result is not None
        with self.store.transaction(lock=self.dataset):
            self.persist()
            self.judge()
            self.route()
            self.run.complete(summary=self.result.run_summary(), load_id=self.result.load_id)
        self.run.committed = True
        self.run.publish()


def profile(
    data: Any,
    *,
    dataset: str,
    load_date: date,
    store: MetricStore | None,
    workspace: Path | str | None = None,
    engine_factory: Callable[[], Any] | None = None,
    **options: Any,
) -> monitor.ProfileResult:
    """Profile one load as one run (:class:`ProfileFlow`); ``options`` are its ``config``,
    ``window`` and ``read``."""
    inputs = [Input(str(data))] if isinstance(data, str | os.PathLike) else []
    with Run(
        "profile",
        dataset=dataset,
        workspace=Workspace(workspace),
        store=store,
        inputs=inputs,
        engine_factory=engine_factory,
    ) as run:
        return ProfileFlow(run, data, dataset=dataset, load_date=load_date, **options).run_steps()
