"""The ``reconcile`` metric kind of a check document: the dataset's source, as the run opened it,
compared with the metric's ``target``, each number kept as a metric of the load so that
expectations judge it (``expect: "= 0"``) and the run stores, scores and notifies it as any.

``{reconcile: {name: vs_source, ...}}`` measures ``vs_source`` (every difference: rows only in
either side and rows changed) and ``vs_source(only_in_source)``, ``vs_source(only_in_target)``,
``vs_source(changed)``, ``vs_source(null_keys)``, ``vs_source(duplicate_keys)``; its sample keys
are the run's evidence of ``vs_source``. Both tables are read whole: a profile's slice and filter
do not apply to a reconciliation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.engine import Engine
from assay.errors import ConfigError
from assay.lake.readers import Registered
from assay.platform.checks.measure import ProfileMeasurement
from assay.platform.checks.model import RECONCILE_NUMBERS, Profile, ReconcileMetric, Source
from assay.platform.reconcile.result import KINDS, Result
from assay.platform.reconcile.run import compare_sides
from assay.platform.reconcile.sides import EngineFactory, Side, engine_kind, engines, open_side
from assay.platform.reconcile.spec import Spec


def spec_of(metric: ReconcileMetric) -> Spec:
    return Spec.of(
        metric.key,
        columns=metric.columns,
        tolerances=[f"{column}={bound!r}" for column, bound in metric.tolerance.items()],
        samples=metric.samples,
    )


def reconcile_source(
    engine: Engine,
    source: Source,
    registered: Registered,
    metric: ReconcileMetric,
    *,
    base: Path,
    workspace: Path | None,
    factory: EngineFactory | None = None,
) -> Result:
    """Compare the run's ``registered`` source (on ``engine``) with ``metric.target``."""
    spec = spec_of(metric)
    with engines(factory) as opened:
        opened.lend(engine_kind(source) if source.postgres is not None else engine.dialect, engine)
        left = Side(engine, registered.name, source.describe(), tuple(registered.columns))
        right = open_side(metric.target, "target", opened, base=base, workspace=workspace)
        return compare_sides(left, right, spec, lambda _: None)


def samples(result: Result) -> list[dict[str, Any]]:
    """The sample keys as evidence rows: the kind of difference, the key's columns, and for a
    changed row the columns that differ."""
    rows: list[dict[str, Any]] = []
    for kind in KINDS:
        for sample in result.samples[kind]:
            row = {"difference": kind, **sample["key"]}
            if "columns" in sample:
                row["columns"] = ", ".join(sample["columns"])
            rows.append(row)
    return rows


def measure_into(
    out: ProfileMeasurement,
    engine: Engine,
    source: Source,
    registered: Registered,
    profile: Profile,
    *,
    base: Path,
    workspace: Path | None,
) -> None:
    """Each ``reconcile`` metric of ``profile`` measured into ``out``; a mistake in one (a key
    the target lacks) is that metric's error, as a bad column is any metric's."""
    for spec in profile.specs():
        metric = spec.reconcile
        if metric is None or spec.column is not None:
            continue
        keys = [metric.name, *(f"{metric.name}({n})" for n in RECONCILE_NUMBERS)]
        try:
            result = reconcile_source(engine, source, registered, metric, base=base, workspace=workspace)
        except ConfigError as error:
            for key in keys:
                out.errors[key] = f"reconcile {metric.name}: {error.message}"
            continue
        numbers = result.metrics()
        out.values[(metric.name, ())] = numbers["differences"]
        for number in RECONCILE_NUMBERS:
            out.values[(f"{metric.name}({number})", ())] = numbers[number]
        found = samples(result)
        out.samples[metric.name] = found
        for kind in KINDS:
            out.samples[f"{metric.name}({kind})"] = [row for row in found if row["difference"] == kind]
