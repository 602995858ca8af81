"""The three flows, each inside one :class:`~assay.platform.runs.run.Run`: a DQDL evaluation, a gate
run and a profile. The CLI, the demo and the Python API call these; nothing else orchestrates.
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

import os
from collections.abc import Callable
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.judge.result import json_number
from assay.platform.alerts import Alerting, Routing
from assay.platform.runs.run import Input, Run
from assay.store.records import OutcomeRecord
from assay.vocabulary import Outcome
from assay.workspace import Workspace

if TYPE_CHECKING:
    from assay.engine.base import Engine
    from assay.gate.gate import GateOptions, GateResult
    from assay.judge.result import EvaluationResult
    from assay.lang.dqdl.ast import Ruleset
    from assay.monitor import ProfileResult
    from assay.store import MetricStore


def evaluate(
    ruleset: Ruleset | Callable[[], Ruleset],
    data: Any,
    *,
    dataset: str | None = None,
    store: MetricStore | None = None,
    workspace: Path | str | None = None,
    source: str | None = None,
    **options: Any,
) -> EvaluationResult:
    """Evaluate a ruleset as one run. With ``dataset`` and ``store`` the run is recorded: its
    load is pending until the run commits, and ``runs/<run_id>.json`` is written in the
    workspace; otherwise the run is ad hoc and leaves nothing behind. ``source`` (the ruleset's
    file) goes into the run summary. ``ruleset`` may be a function that reads it, so that a
    ruleset that cannot be read or parsed is the run's recorded ``config_error``."""
    from assay.judge.evaluation import Evaluation

    recorded = store if dataset else None
    space = Workspace(workspace)
    inputs = [Input(str(data))] if isinstance(data, str | os.PathLike) else []
    with Run(
        "dqdl",
        dataset=dataset,
        workspace=space,
        store=recorded,
        inputs=inputs,
        engine_factory=options.pop("engine_factory", None),
    ) as run:
        run.phase = "reading the ruleset"
        routing = Routing.of(space.root, dataset) if recorded is not None and dataset else None
        if callable(ruleset):
            ruleset = ruleset()
        run.phase = "evaluating the ruleset"
        evaluation = Evaluation(
            ruleset,
            data,
            dataset=dataset,
            store=recorded,
            engine=run.engine,
            run_id=run.id if recorded is not None else None,
            **options,
        )
        result = evaluation.run()
        if evaluation.primary.path is not None:
            run.inputs = [Input(str(evaluation.primary.path), evaluation.source_sha256)]
        counts = result.counts()
        run.counts = {"rules": len(result.rules), **{name.lower(): n for name, n in counts.items()}}
        if recorded is None:
            return result
        load = result.load_id
        result.run_id = run.id
        payload = result.to_dict()
        summary = {"run_id": run.id, "ruleset": source, "data": str(data) if inputs else None, **payload}
        if routing is not None:  # failing rules open incidents, as a check run's expectations do
            run.alerting = Alerting(routing, "dqdl", at=evaluation.now)
        run.commit(
            (lambda: recorded.settle_loads({load: "current"})) if load is not None else None,
            summary=summary,
            outcomes=[
                OutcomeRecord(
                    r.rule,
                    Outcome.from_glue(r.outcome).value,
                    r.message,
                    {k: json_number(v) for k, v in r.metrics.items()},
                    r.labels,
                )
                for r in result.rules
            ],
            load_id=load,
        )
        return result


def gate(
    options: GateOptions, *, store: MetricStore, engine_factory: Callable[[], Engine] | None = None
) -> GateResult:
    """Run the ingestion gate on one batch as one run (see :mod:`assay.platform.runs.gate`), on
    the engine ``engine_factory`` opens (:func:`assay.engine.registry.engine_factory`; DuckDB)."""
    from assay.platform.runs.gate import GateRun

    with Run(
        "gate",
        dataset=options.table,
        workspace=Workspace(options.workspace),
        store=store,
        inputs=[Input(str(options.batch))],
        engine_factory=engine_factory,
    ) as run:
        assert run.dataset is not None
        run.alerting = Alerting(Routing.of(run.workspace.root, run.dataset), "gate")
        return GateRun(options, run).run()


def profile(
    data: Any,
    *,
    dataset: str,
    load_date: date,
    store: MetricStore | None,
    workspace: Path | str | None = None,
    **options: Any,
) -> ProfileResult:
    """Profile one load as one run: the load, its profile, its judgement, its decisions and the
    run's completed record are one store transaction (see :func:`assay.monitor.profile`).
    ``config`` may be given as a function that reads it, so that a broken configuration is the
    run's recorded ``config_error``."""
    from assay import monitor

    inputs = [Input(str(data))] if isinstance(data, str | os.PathLike) else []
    with Run(
        "profile",
        dataset=dataset,
        workspace=Workspace(workspace),
        store=store,
        inputs=inputs,
        engine_factory=options.pop("engine_factory", None),
    ) as run:
        run.phase = "reading the dataset's configuration"
        if callable(options.get("config")):
            options["config"] = options["config"]()
        if store is not None:  # hard alerts and new decisions open incidents
            at = datetime.combine(load_date, time(0), UTC)
            run.alerting = Alerting(Routing.of(run.workspace.root, dataset), "profile", at=at)
        run.phase = "profiling the load"
        result = monitor.profile(
            data,
            dataset=dataset,
            load_date=load_date,
            store=store,
            engine=run.engine,
            run=run if store is not None else None,
            **options,
        )
        if store is not None:
            run.committed = True
            run.publish()
        return result
