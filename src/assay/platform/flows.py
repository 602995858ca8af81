"""The flows' front doors: a DQDL evaluation, a gate run and a profile, each a flow on the run
driver (:mod:`assay.platform.runs.driver`): one run each, recorded, retried, resumed and alerted
the same way. The CLI, the demo and the Python API call these.
Each recorded run judges its failures into incidents at its commit (:mod:`assay.platform.alerts`).

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

from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.platform.runs.driver import Driver, Retry
from assay.workspace import Workspace

if TYPE_CHECKING:
    from assay.engine.base import Engine
    from assay.gate.gate import GateOptions, GateResult
    from assay.judge.result import EvaluationResult
    from assay.monitor import ProfileResult
    from assay.store import MetricStore


def evaluate(ruleset: Any, data: Any, **options: Any) -> EvaluationResult:
    """Evaluate a ruleset as one run (:func:`assay.platform.runs.dqdl.evaluate`, which says
    every option); imported on call, so that a profile or a gate never loads the DQDL flow's
    row-level outcomes (and pyarrow with them)."""
    from assay.platform.runs.dqdl import evaluate as run

    return run(ruleset, data, **options)


def gate(
    options: GateOptions,
    *,
    store: MetricStore,
    engine_factory: Callable[[], Engine] | None = None,
    retry: Retry | None = None,
) -> GateResult:
    """Run the ingestion gate on one batch as one run (see :mod:`assay.platform.runs.gate`), on
    the engine ``engine_factory`` opens (:func:`assay.engine.registry.engine_factory`; DuckDB);
    reading and measuring the batch are tried again on a platform failure as ``retry`` says."""
    from assay.platform.runs.gate import GateRun

    driver = Driver(store=store, workspace=Workspace(options.workspace), retry=retry)
    return driver.run(GateRun(options, store, engine_factory))


def profile(
    data: Any,
    *,
    dataset: str,
    load_date: date,
    store: MetricStore | None,
    workspace: Path | str | None = None,
    retry: Retry | None = None,
    **options: Any,
) -> ProfileResult:
    """Profile one load as one run: the load, its profile, its judgement, its decisions and the
    run's completed record are one store transaction (:mod:`assay.platform.runs.profile`).
    ``config`` may be given as a function that reads it, so that a broken configuration is the
    run's recorded ``config_error``; ``options`` are also ``window``, ``read``, ``engine`` (a
    name, a ``SparkSession`` or an open engine) and ``engine_factory``. Every profile that writes
    to a store goes through here (``assay.monitor.profile`` only measures and judges)."""
    from assay.platform.runs import profile as flow

    return flow.profile(
        data, dataset=dataset, load_date=load_date, store=store, workspace=workspace, retry=retry, **options
    )


__all__ = ["Retry", "evaluate", "gate", "profile"]
