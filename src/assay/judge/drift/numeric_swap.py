"""Swap: two number columns that exchanged their values (a writer's columns in a different order,
``dewp`` where ``temp`` was). One hard alert naming both, instead of two shape alerts or none.

Today's values of each column lie within the other's soft shape band on every metric, and
either each is out of its own band (both alert on their own), or the two crossed: on every
location metric (the mean and the quantiles) whose order the two held in every load of the
window (at least four of them), today's order is reversed, by at least half the usual gap on
average.
Two columns that only ever differ by a little (a departure and its schedule) are no swap when
they cross on a quiet day: the gap must be as wide as usual, the other way round.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping

from assay.judge.drift.case import Case, Finding
from assay.judge.drift.shape_band import (
    METRICS,
    MIN_SHAPE_HISTORY,
    SHAPE_SOFT,
    ShapeBand,
    Verdict,
    judge_column,
    window_of,
)
from assay.measure.profile import ColumnProfile

LOCATION = tuple(m for m in METRICS if m != "StandardDeviation")
MIN_ORDERED = 4  # location metrics whose order held in every load, for a crossing to count


class NumericSwap:
    kind = "swap"
    statement = "two number columns do not exchange their values: each within the other's band, crossed"
    per_column = False

    def judge(self, case: Case, column: ColumnProfile | None = None) -> list[Finding]:
        pairs = swaps(case)
        found = []
        for name, other in sorted(pairs.items()):
            if name > other:
                continue  # each pair once, under its first name
            mine = judge_column(case, case.today.profile.column(name))
            theirs = judge_column(case, case.today.profile.column(other))
            assert mine is not None and theirs is not None  # swaps() paired them by these verdicts
            message = (
                f"columns {name} and {other} exchanged their values: {name}'s mean "
                f"{_mean(mine)} is within {other}'s usual {_usual(theirs)}, and {other}'s "
                f"{_mean(theirs)} within {name}'s usual {_usual(mine)}"
            )
            detail = {"columns": [name, other]}
            observed = mine.observed.get("Mean")
            found.append(Finding(name, self.kind, observed, None, "hard", message, detail=detail))
        return found


def swaps(case: Case) -> dict[str, str]:
    """The number columns that exchanged their values today, each mapped to the other, paired
    closest first. The ``shape`` judgement asks for every column and ``swap`` once a load: the
    case computes it once and keeps it (:meth:`Case.once`)."""
    return case.once("numeric_swaps", _swaps)


def _swaps(case: Case) -> dict[str, str]:
    verdicts: dict[str, Verdict] = {}
    for column in case.today.profile.columns:
        v = judge_column(case, column) if case.settings.enabled("swap", column.name) else None
        if v is not None:
            verdicts[column.name] = v
    names = sorted(verdicts)
    candidates = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            one, two = verdicts[a], verdicts[b]
            if not _crossed_means(one, two):
                continue
            ab, ba = _fits(one.observed, two.bands), _fits(two.observed, one.bands)
            if ab is None or ba is None:
                continue
            if (one.severity and two.severity) or _crossed(case, a, b, one.observed, two.observed):
                candidates.append((ab + ba, a, b))
    found: dict[str, str] = {}
    for _, a, b in sorted(candidates):
        if a not in found and b not in found:
            found[a], found[b] = b, a
    return found


def _crossed_means(one: Verdict, two: Verdict) -> bool:
    """Whether today's means are ordered against the windows' usual means (a quick first sieve:
    a swap of columns with different means crosses them)."""
    a, b = one.observed.get("Mean"), two.observed.get("Mean")
    usual_a, usual_b = one.bands.get("Mean"), two.bands.get("Mean")
    if a is None or b is None or usual_a is None or usual_b is None:
        return False
    return (a - b) * (usual_a.expected - usual_b.expected) < 0


def _fits(today: Mapping[str, float], bands: Mapping[str, ShapeBand]) -> float | None:
    """The largest distance of today's metrics from ``bands`` when every one is within the soft
    band (and at least the mean and the standard deviation are judged), else None."""
    judged = [
        bands[m].distance(today[m]) * bands[m].sensitivity for m in METRICS if m in today and m in bands
    ]
    if len(judged) < 2 or max(judged) > SHAPE_SOFT:
        return None
    return max(judged)


def _crossed(case: Case, a: str, b: str, today_a: Mapping[str, float], today_b: Mapping[str, float]) -> bool:
    """Whether ``a`` and ``b`` crossed today: every location metric whose order held in every
    load of the window (at least MIN_ORDERED of them) is reversed, by at least half its median
    gap on average over them (a gap varies with the day: a humid day brings the dew point up to
    the temperature)."""
    past_a, past_b = window_of(case, a), window_of(case, b)
    ratios = []
    for metric in LOCATION:
        gaps = [
            x - y
            for la, lb in zip(past_a, past_b, strict=True)
            if (x := la[metric]) is not None and (y := lb[metric]) is not None
        ]
        if len(gaps) < MIN_SHAPE_HISTORY or not (min(gaps) > 0 or max(gaps) < 0):
            continue
        if metric not in today_a or metric not in today_b:
            return False
        usual = statistics.median(gaps)
        ratios.append(-(today_a[metric] - today_b[metric]) / usual)  # > 0: reversed
    return len(ratios) >= MIN_ORDERED and min(ratios) > 0 and statistics.fmean(ratios) >= 0.5


def _mean(verdict: Verdict) -> str:
    value = verdict.observed.get("Mean")
    return "?" if value is None else f"{value:.6g}"


def _usual(verdict: Verdict) -> str:
    band = verdict.bands.get("Mean")
    return "?" if band is None else f"{band.soft[0]:.6g} to {band.soft[1]:.6g}"
