"""The bands drift is judged against: a null rate's (plain, conditioned, zero or rare), the row
count's and a numeric range's, each learnt from the window of earlier loads (:class:`Window`).

The null-rate band respects evidence. Over the window, the pooled rate is p = Σ nulls / Σ rows.
Two things make today's rate differ from p: sampling (a load of n rows has variance p(1-p)/n,
so 3 nulls in 100 rows is weak evidence and 30,000 in a million is strong) and real load-to-load
variation τ², estimated from the window as the variance of the loads' rates minus what sampling
alone explains (method of moments, never below zero). Today's expected spread is
σ = sqrt(p(1-p)/n + τ²); the rate is a **soft** alert beyond 3σ and a **hard** one beyond 5σ.
The band holds its own history (:class:`_Scale`): never narrower than the loads it kept, nor
than one missing value. Only a column with no missing value in any load of the window has p = 0
and σ = 0: any missing value is a hard alert. Loads far from the rest of the window (a past
incident; at most one in ten) are left out of p and τ² (:func:`_trimmed`); a column missing only
in those gets the near-zero "rare" band.

When a column's null rate follows activity (more nulls on busy days), the plain band either
alerts on every busy day or is too wide to catch anything. The *conditioned* band predicts the
rate from an activity measure of the same load (the row count, or a metric the dataset names)
by weighted least squares over the window, and uses the residual variation as τ²; today's
expected rate is the prediction for today's activity. It needs at least 8 loads with varying
activity, else the plain band is used.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from assay.errors import ConfigError
from assay.judge import anomaly

MIN_HISTORY = 5  # loads before a null-rate or range band exists
MIN_CONDITIONED = 8  # loads before a conditioned band replaces the plain one
SOFT_SIGMAS = 3.0
HARD_SIGMAS = 5.0
RANGE_MARGIN = 1.0  # a numeric range may extend by its historical span before it alerts
MIN_RANGE_HISTORY = 10  # loads before a range band exists: extremes of five loads say little
INCIDENTS = 10  # at most one load in ten of a window is left out as a past incident


@dataclass(frozen=True)
class Window:
    """``last:N`` (the N most recent earlier loads) or ``weekday:N`` (the N most recent earlier
    loads on the same weekday: a Monday file differs from a Friday one).

    >>> Window.parse("weekday:8")
    Window(kind='weekday', size=8)
    """

    kind: str = "last"
    size: int = 20

    @classmethod
    def parse(cls, text: str) -> Window:
        match = re.fullmatch(r"(last|weekday):([1-9][0-9]{0,3})", text.strip())
        if not match:
            raise ConfigError(f"window '{text}' must be last:N or weekday:N (N from 1 to 9999)")
        return cls(match.group(1), int(match.group(2)))

    def select(self, dates: Sequence[date | None], day: date) -> list[int]:
        """Indexes of the loads (given most recent first) that are in the window for ``day``."""
        chosen = [i for i, d in enumerate(dates) if d is not None and d < day]
        if self.kind == "weekday":
            chosen = [i for i in chosen if dates[i] is not None and dates[i].weekday() == day.weekday()]  # type: ignore[union-attr]
        return chosen[: self.size]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "size": self.size}


@dataclass(frozen=True)
class Band:
    expected: float
    soft: tuple[float, float]
    hard: tuple[float, float]
    sigma: float
    model: str  # plain | conditioned | zero | rare
    loads: int = 0  # loads of the window the band was learned from
    missing_loads: int = 0  # of them, loads with at least one missing value
    left_out: int = 0  # of them, loads left out as past incidents

    def severity(self, value: float) -> str | None:
        """Above the soft band soft, above the hard band hard. Fewer missing values than usual is
        worth a look, not a page: below the hard band soft, and within it no alert."""
        slack = 1e-12  # a bound computed as a count of today's rows holds that count exactly
        if value > self.hard[1] + slack:
            return "hard"
        return "soft" if value > self.soft[1] + slack or value < self.hard[0] - slack else None

    def history(self) -> str:
        """What the window held, in words: "5 of 20 loads had missing values"."""
        text = f"{self.missing_loads} of {self.loads} loads had missing values"
        if self.left_out:
            text += f", {self.left_out} left out as past incidents"
        return text


def _clamp(low: float, high: float) -> tuple[float, float]:
    return max(0.0, low), min(1.0, high)


def null_rate_band(
    rows: Sequence[int],
    nulls: Sequence[int],
    today_rows: int,
    activity: Sequence[float] | None = None,
    today_activity: float | None = None,
    *,
    sensitivity: float = 1.0,
    known_zero: bool = True,
) -> Band | None:
    """The band for today's missing-value rate from the window's (rows, missing), most recent first.
    ``known_zero=False``: a rate that was zero in every load of the window is near zero, not known
    to be zero (the "rare" band), as a value's share in a number column is (a zero visibility, a
    temperature of exactly 0).

    >>> band = null_rate_band([1000] * 10, [0] * 10, 1000)
    >>> band.model, band.severity(0.0), band.severity(0.02)
    ('zero', None, 'hard')
    >>> noisy = null_rate_band([1000] * 10, [20, 25, 18, 22, 30, 21, 19, 24, 26, 23], 1000)
    >>> noisy.severity(0.023), noisy.severity(0.2)
    (None, 'hard')
    >>> sparse = null_rate_band([72] * 20, [0, 2, 0, 0, 1] * 4, 72)
    >>> sparse.model, sparse.history(), sparse.severity(2 / 72)
    ('plain', '8 of 20 loads had missing values', None)
    """
    pairs = [(n, x) for n, x in zip(rows, nulls, strict=True) if n]
    if len(pairs) < MIN_HISTORY or today_rows <= 0:
        return None
    scale = _Scale(sensitivity, today_rows)
    missing = sum(1 for _, x in pairs if x)
    if missing == 0 and known_zero:  # never missing in the window: any missing value is a hard alert
        return Band(0.0, (0.0, 0.0), (0.0, 0.0), 0.0, "zero", len(pairs), 0, 0)
    kept = _trimmed(pairs)
    counts = {"loads": len(pairs), "missing_loads": missing, "left_out": len(pairs) - len(kept)}
    total_rows = sum(n for n, _ in kept)
    total_nulls = sum(x for _, x in kept)
    if total_nulls == 0:
        # Missing only in loads left out as incidents: the rate is near zero, not known to be
        # zero. Rule of three: 3 / N is the 95% upper bound of a rate never seen in N rows.
        return scale.band(0.0, math.sqrt(3 / total_rows / today_rows), "rare", [0.0], **counts)
    if activity is not None and today_activity is not None and len(pairs) >= MIN_CONDITIONED:
        conditioned = _conditioned(rows, nulls, activity, today_rows, today_activity, scale, counts)
        if conditioned is not None:
            return conditioned
    pooled = total_nulls / total_rows
    rates = [x / n for n, x in kept]
    sampling = statistics.fmean(pooled * (1 - pooled) / n for n, _ in kept)
    tau2 = max(0.0, statistics.variance(rates) - sampling)
    sigma = math.sqrt(pooled * (1 - pooled) / today_rows + tau2)
    return scale.band(pooled, sigma, "plain", [r - pooled for r in rates], **counts)


@dataclass(frozen=True)
class _Scale:
    """How wide a band is: ``SOFT_SIGMAS`` and ``HARD_SIGMAS`` divided by the sensitivity; never
    narrower than the loads it was learned from: the soft band holds every deviation the window
    kept, and goes past the largest by the gap between the two largest (the next record of a
    heavy-tailed rate, such as cancellations in storms, is about that far; an independent series
    sets a new record of its last 20 loads one load in 21), at least one missing value (counts
    move by whole values); and never narrower than one missing value (soft) or two (hard) of
    today's rows."""

    sensitivity: float
    today_rows: int

    def band(
        self, expected: float, sigma: float, model: str, deviations: Sequence[float], **counts: int
    ) -> Band:
        soft_k, hard_k = SOFT_SIGMAS / self.sensitivity, HARD_SIGMAS / self.sensitivity
        ranked = sorted((abs(d) for d in deviations), reverse=True)
        gap = ranked[0] - ranked[1] if len(ranked) > 1 else 0.0
        sigma = max(sigma, (ranked[0] + max(gap, 1 / self.today_rows)) / soft_k)
        soft = max(soft_k * sigma, 1 / self.today_rows)
        hard = max(hard_k * sigma, 2 / self.today_rows)
        return Band(
            expected,
            _clamp(expected - soft, expected + soft),
            _clamp(expected - hard, expected + hard),
            sigma,
            model,
            **counts,
        )


def _outside(deviation: float, sigma: float) -> bool:
    """Whether a deviation is more than HARD_SIGMAS robust deviations from the centre."""
    return abs(deviation) > HARD_SIGMAS * sigma if sigma > 0 else deviation != 0


def _trimmed(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The window without its past incidents: loads more than 5 robust deviations (1.4826 x MAD,
    plus the load's own sampling noise at the window's pooled rate) from the median rate. One
    bad day in the window must not widen the band for the next twenty. An incident is rare: when
    more than one load in ``INCIDENTS`` (10; one in a shorter window) would go, they are the
    column's own variation (a column missing on a quarter of the days), the window is kept whole
    and the band contains it."""
    rates = [x / n for n, x in pairs]
    centre = statistics.median(rates)
    pooled = sum(x for _, x in pairs) / sum(n for n, _ in pairs)
    spread = 1.4826 * statistics.median(abs(r - centre) for r in rates)
    kept = [
        (n, x)
        for (n, x), rate in zip(pairs, rates, strict=True)
        if not _outside(rate - centre, math.sqrt(spread**2 + pooled * (1 - pooled) / n))
    ]
    return kept if len(pairs) - len(kept) <= max(1, len(pairs) // INCIDENTS) else pairs


@dataclass(frozen=True)
class _Line:
    """A weighted least-squares line of the null rate on activity, with its residual variance."""

    intercept: float
    slope: float
    tau2: float
    mean: float  # of the activity, unweighted: for the line's own uncertainty at today's activity
    spread: float  # sum of squared deviations of the activity from ``mean``
    points: int

    def predict(self, activity: float) -> float:
        return min(1.0, max(0.0, self.intercept + self.slope * activity))


def _fit(points: Sequence[tuple[float, float, int]]) -> _Line | None:
    weight = sum(n for _, _, n in points)
    mean_a = sum(a * n for a, _, n in points) / weight
    mean_p = sum(p * n for _, p, n in points) / weight
    sxx = sum(n * (a - mean_a) ** 2 for a, _, n in points)
    if sxx <= 0:
        return None
    slope = sum(n * (a - mean_a) * (p - mean_p) for a, p, n in points) / sxx
    intercept = mean_p - slope * mean_a
    line = _Line(intercept, slope, 0.0, 0.0, 0.0, len(points))
    residuals = [p - line.predict(a) for a, p, _ in points]
    sampling = statistics.fmean(line.predict(a) * (1 - line.predict(a)) / n for a, _, n in points)
    tau2 = max(0.0, sum(r * r for r in residuals) / max(1, len(points) - 2) - sampling)
    plain_mean = statistics.fmean(a for a, _, _ in points)
    spread = sum((a - plain_mean) ** 2 for a, _, _ in points)
    return _Line(intercept, slope, tau2, plain_mean, spread, len(points))


def _conditioned(
    rows: Sequence[int],
    nulls: Sequence[int],
    activity: Sequence[float],
    today_rows: int,
    today_activity: float,
    scale: _Scale,
    counts: Mapping[str, int],
) -> Band | None:
    """The conditioned band. Like the plain one, it leaves out loads far from the rest (here: far
    from the line, by their residual), then fits again on the loads it kept."""
    points = [(a, x / n, n) for n, x, a in zip(rows, nulls, activity, strict=True) if n and a is not None]
    if len(points) < MIN_CONDITIONED:
        return None
    line = _fit(points)
    if line is None:
        return None
    residuals = [p - line.predict(a) for a, p, _ in points]
    centre = statistics.median(residuals)
    spread = 1.4826 * statistics.median(abs(r - centre) for r in residuals)
    kept = [
        (a, p, n)
        for (a, p, n), r in zip(points, residuals, strict=True)
        if not _outside(r - centre, math.sqrt(spread**2 + line.predict(a) * (1 - line.predict(a)) / n))
    ]
    if len(points) > len(kept) >= max(MIN_CONDITIONED, len(points) - max(1, len(points) // INCIDENTS)):
        line = _fit(kept) or line
    else:
        kept = points
    expected = line.predict(today_activity)
    # the uncertainty of the line itself, which grows away from the activity the window has seen
    leverage = 1 / line.points + (today_activity - line.mean) ** 2 / line.spread
    sigma = math.sqrt(expected * (1 - expected) / today_rows + line.tau2 * (1 + leverage))
    deviations = [p - line.predict(a) for a, p, _ in kept]
    return scale.band(expected, sigma, "conditioned", deviations, **counts)


def volume_band(row_counts: Sequence[float], *, sensitivity: float = 1.0) -> anomaly.Band | None:
    """The row-count band: the DetectAnomalies model (robust trend, 1% floor) over the window,
    holding the window's own variation (one past incident aside), at least ±1 and ±√(prediction)
    rows (a count's own noise), in whole rows.

    >>> band = volume_band([31, 30, 31, 31, 31, 30, 31])
    >>> band.low, band.high
    (25.0, 37.0)
    """
    return anomaly.band(list(row_counts), sigmas=anomaly.SIGMAS / sensitivity, contain=True, integer=True)


def range_band(
    minimums: Sequence[float | None], maximums: Sequence[float | None], *, sensitivity: float = 1.0
) -> tuple[float, float] | None:
    """The allowed range of a numeric column: the window's extremes, widened by their span
    or by 3 robust deviations (1.4826 x MAD) of the loads' own minimums (maximums), whichever is
    more. The range is there for values far outside anything seen (a unit change, a sentinel
    such as -999, a wind speed of 1,048), not for the next record of a measurement: a daily
    maximum that varies by five degrees breaks the window's record in any warm spell, and an
    independent series breaks its last-20 record one load in 21. The 3 is divided by the
    sensitivity.

    >>> range_band([0] * 10, [10] * 10)
    (-10.0, 20.0)
    >>> range_band([0] * 10, [10, 14, 8, 12, 10] * 2)
    (-14.0, 28.0)
    """
    lows = [v for v in minimums if v is not None]
    highs = [v for v in maximums if v is not None]
    if len(lows) < MIN_RANGE_HISTORY or len(highs) < MIN_RANGE_HISTORY:
        return None
    low, high = min(lows), max(highs)
    margin = RANGE_MARGIN * (high - low)
    k = SOFT_SIGMAS / sensitivity
    return low - max(margin, k * _mad(lows)), high + max(margin, k * _mad(highs))


def offset_band(
    offsets: Sequence[float | None], *, resolution: float, sensitivity: float = 1.0
) -> tuple[float, float] | None:
    """The allowed offset of one end (the first or the last value) of a date or timestamp column
    from the load's date: the window's own offsets of that end, widened by their span or by 3
    robust deviations, and by at least ``resolution`` (a minute for a timestamp, nothing for a
    date). An hourly file whose first reading is at midnight of its day on every load of the
    window has a band one minute wide: an hour's shift is out of it. Where the first reading
    moves (a day with no early flight), the band holds the moves the window saw, once more.

    >>> offset_band([0.0] * 10, resolution=60.0)
    (-60.0, 60.0)
    >>> offset_band([18000.0] * 9 + [21600.0], resolution=60.0)  # one day began an hour late
    (14400.0, 25200.0)
    """
    known = [v for v in offsets if v is not None]
    if len(known) < MIN_RANGE_HISTORY:
        return None
    low, high = min(known), max(known)
    margin = max(RANGE_MARGIN * (high - low), SOFT_SIGMAS / sensitivity * _mad(known), resolution)
    return low - margin, high + margin


def _mad(values: Sequence[float]) -> float:
    centre = statistics.median(values)
    return 1.4826 * statistics.median(abs(v - centre) for v in values)
