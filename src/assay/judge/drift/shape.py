"""Shape: a number column's mean, standard deviation and quantiles against the bands of
:mod:`assay.judge.drift.shape_band`: soft beyond 6 robust spreads, hard beyond 12, hard when a
column that always varied turns constant. A column that exchanged its values with another is
one ``swap`` alert instead (:mod:`assay.judge.drift.numeric_swap`), not a shape alert."""

from __future__ import annotations

from assay.judge.drift.case import Case, Finding
from assay.judge.drift.numeric_swap import swaps
from assay.judge.drift.shape_band import judge_column
from assay.measure.profile import ColumnProfile


class Shape:
    kind = "shape"
    statement = (
        "a number's mean, standard deviation and quantiles stay within their bands: "
        "soft beyond 6 robust spreads, hard beyond 12, hard when it turns constant"
    )
    per_column = True

    def judge(self, case: Case, column: ColumnProfile | None = None) -> list[Finding]:
        assert column is not None
        found = judge_column(case, column)
        if found is None:
            return []
        other = swaps(case).get(column.name)
        soft = found.band.soft
        hard = found.band.hard
        where = f"expected {soft[0]:.6g} to {soft[1]:.6g} (hard beyond {hard[0]:.6g} to {hard[1]:.6g})"
        loads = len(case.past.loads)
        if found.constant:
            message = (
                f"constant: every value is {case.measured.get(('Column', column.name, 'Mean')):.6g}; "
                f"its standard deviation was {soft[0]:.6g} to {soft[1]:.6g} over {loads} loads"
            )
        else:
            message = f"{_name(found.metric)} {found.value:.6g}; {where}, from {loads} loads"
        severity = found.severity
        if other is not None:
            severity = None
            message += f"; exchanged with {other} (one swap alert)"
        detail = {
            "metric": found.metric,
            "hard": list(hard),
            "observed": dict(found.observed),
            "bands": {m: list(b.soft) for m, b in found.bands.items()},
        }
        return [Finding(column.name, self.kind, found.value, soft, severity, message, detail=detail)]


def _name(metric: str) -> str:
    """ "mean", "standard deviation", "quantile 5%"."""
    if metric.startswith("Quantile"):
        return f"quantile {int(metric[len('Quantile') :])}%"
    return "mean" if metric == "Mean" else "standard deviation"
