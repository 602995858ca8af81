"""Two sides compared by aggregates per group, for tables too large to compare row by row: each
side computes, on its own engine, its row count and the sum of each numeric compared column per
value of the group column; only those per-group numbers cross to assay.

A group is only in the source, only in the target, or changed (its count, or a sum beyond the
column's tolerance times the larger count, differs); ``changed_by_column`` counts the groups
whose sum of that column differs, and ``count`` those whose row count does.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlglot import exp

from assay.platform.reconcile.plan import Plan
from assay.platform.reconcile.result import KINDS, Anomalies, Moved, Result, json_value
from assay.platform.reconcile.sides import Side
from assay.platform.reconcile.spec import Spec

_COUNT = "count"


def _aggregates(side: Side, group: str, found: Plan) -> tuple[dict[Any, dict[str, Any]], int]:
    numeric = [c for c in found.columns if c.kind.numeric]
    query = (
        exp.select(
            exp.alias_(exp.column(group, quoted=True), "__group", quoted=True),
            exp.alias_(exp.Count(this=exp.Star()), _COUNT, quoted=True),
            *(
                exp.alias_(exp.Sum(this=exp.column(c.name, quoted=True)), c.name, quoted=True)
                for c in numeric
            ),
        )
        .from_(exp.to_identifier(side.name, quoted=True))
        .group_by(exp.column(group, quoted=True))
    )
    table = side.engine.query(query)
    return {row.pop("__group"): row for row in table.to_pylist()}, table.nbytes


def compare(left: Side, right: Side, found: Plan, spec: Spec) -> Result:
    """Compare the per-group aggregates of ``spec.group_by`` (see the module's docstring)."""
    assert spec.group_by is not None
    group = spec.group_by
    (source, s_bytes), (target, t_bytes) = (_aggregates(s, group, found) for s in (left, right))
    numeric = [c for c in found.columns if c.kind.numeric]
    counts = {kind: 0 for kind in KINDS}
    by_column = {_COUNT: 0, **{c.name: 0 for c in numeric}}
    samples: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    ordered = sorted(set(source) | set(target), key=lambda g: (g is None, str(g)))
    for value in ordered:
        key = {group: json_value(value)}
        if value not in target or value not in source:
            kind = KINDS[0] if value not in target else KINDS[1]
            counts[kind] += 1
            if len(samples[kind]) < spec.samples:
                samples[kind].append({"key": key})
            continue
        s, t = source[value], target[value]
        apart = [_COUNT] if s[_COUNT] != t[_COUNT] else []
        for column in numeric:
            a, b = s[column.name], t[column.name]
            if a is None or b is None:
                if (a is None) != (b is None):
                    apart.append(column.name)
                continue
            bound = (column.tolerance or Decimal(0)) * max(s[_COUNT], t[_COUNT])
            if abs(Decimal(str(a)) - Decimal(str(b))) > bound:
                apart.append(column.name)
        if apart:
            counts[KINDS[2]] += 1
            for name in apart:
                by_column[name] += 1
            if len(samples[KINDS[2]]) < spec.samples:
                samples[KINDS[2]].append({"key": key, "columns": apart})
    return Result(
        source=left.description,
        target=right.description,
        mode="groups",
        key=(group,),
        columns=tuple(c.name for c in numeric),
        tolerance=dict(spec.tolerances),
        rows={
            "source": sum(int(r[_COUNT]) for r in source.values()),
            "target": sum(int(r[_COUNT]) for r in target.values()),
        },
        counts=counts,
        changed_by_column=by_column,
        samples=samples,
        anomalies={"source": Anomalies(), "target": Anomalies()},
        moved=None
        if left.engine is right.engine
        else {
            "source": Moved(len(source), 0, s_bytes),
            "target": Moved(len(target), 0, t_bytes),
        },
        group_by=group,
    )
