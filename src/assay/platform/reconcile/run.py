"""A reconciliation from end to end: open both sides, compare them where they are, count.

Two sides on one engine (files against files, two tables of one PostgreSQL server, two Spark
tables) are compared in one join (:mod:`.joined`); sides on different engines by checksums of
key ranges (:mod:`.checksums`), which fetch only the rows of the ranges that differ; with
``group_by``, by aggregates per group on each side (:mod:`.groups`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from assay.engine import EngineError
from assay.errors import PlatformError
from assay.platform.reconcile import checksums, groups, joined
from assay.platform.reconcile.plan import Plan, plan
from assay.platform.reconcile.result import Result
from assay.platform.reconcile.sides import EngineFactory, Side, engines, open_side
from assay.platform.reconcile.spec import Spec

Progress = Callable[[str], None]


def reconcile(
    source: str,
    target: str,
    spec: Spec,
    *,
    base: Path,
    workspace: Path | None,
    factory: EngineFactory | None = None,
    progress: Progress | None = None,
) -> Result:
    """Compare ``source`` with ``target`` (each named as :func:`.sides.location` reads it) by
    ``spec``'s key. A user's mistake is a ConfigError; an engine's failure a PlatformError.

    >>> reconcile("a.csv", "b.csv", Spec.of(["id"]), base=Path("."), workspace=None)  # doctest: +SKIP
    """
    say = progress or (lambda _: None)
    with engines(factory) as opened:
        say(f"opening {source}")
        left = open_side(source, "source", opened, base=base, workspace=workspace)
        say(f"opening {target}")
        right = open_side(target, "target", opened, base=base, workspace=workspace)
        return compare_sides(left, right, spec, say)


def compare_sides(left: Side, right: Side, spec: Spec, say: Progress) -> Result:
    """Compare two opened sides: in one join when they share an engine, else by checksums."""
    found = plan(spec, left.columns, right.columns)
    try:
        if spec.group_by is not None:
            say(f"comparing groups of {spec.group_by}")
            return groups.compare(left, right, found, spec)
        if left.engine is right.engine:
            say("comparing rows in one join")
            return _joined(left, right, found, spec)
        say("comparing checksums of key ranges")
        return checksums.compare(left, right, found, spec, say)
    except EngineError as error:
        raise PlatformError(
            f"reconcile {left.description} with {right.description}: {error.message}"
        ) from None


def _joined(left: Side, right: Side, found: Plan, spec: Spec) -> Result:
    engine = left.engine
    anomalies = {
        side.name.strip("_"): joined.anomalies(
            engine.rows(joined.anomaly_query(side.name, found, spec.samples), measuring=False),
            found,
            spec.samples,
        )
        for side in (left, right)
    }
    repeated = (anomalies["source"].duplicate_keys > 0, anomalies["target"].duplicate_keys > 0)
    diff = joined.diff_query(left.name, right.name, found, repeated)
    engine.register_query(joined.DIFF, diff, materialize=True)
    counts, by_column = joined.counts(engine, found)
    return Result(
        source=left.description,
        target=right.description,
        mode="rows",
        key=spec.key,
        columns=tuple(c.name for c in found.columns),
        tolerance=dict(spec.tolerances),
        rows={
            "source": joined.row_count(engine, left.name),
            "target": joined.row_count(engine, right.name),
        },
        counts=counts,
        changed_by_column=by_column,
        samples=joined.samples(engine, found, spec.samples),
        anomalies=anomalies,
    )


__all__ = ["compare_sides", "reconcile"]
