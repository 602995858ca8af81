"""DetectAnomalies' model: a robust trend band over the metric's own history.

Glue does not publish its model, so assay uses one that can be explained in four lines:

1. Take up to the last ``WINDOW`` (30) earlier values of the metric, oldest first. With fewer
   than ``MIN_HISTORY`` (3) there is nothing to learn from: the rule passes and says so.
2. Predict today's value: with 5 or more points, the Theil-Sen line through them (the median
   of the pairwise slopes, so one past outlier cannot tilt it) evaluated one step ahead, since a
   steadily growing table is not an anomaly; with fewer points, their median.
3. Measure the spread robustly: 1.4826 x the median absolute deviation of the points from the
   fit (a consistent estimate of the standard deviation that one past outlier cannot inflate).
4. The band is prediction ± max(3 x spread x sqrt(1 + 1/n), 1% of |prediction|, 1e-9). The
   sqrt term widens the band when little history exists; the 1% floor keeps a perfectly
   constant history (spread 0) from flagging every tiny wobble.

The value fails the rule when it lies outside the band.

The drift monitor's volume band is the same model with two additions (``contain`` and
``integer``, off for DQDL's DetectAnomalies): the band holds every residual of its own window
except a past incident (a residual more than 5 robust deviations out, when it is the only one:
two low Saturdays in twenty days are a weekly pattern, not two incidents), so it is never
narrower than the variation it was learned from; and a count's band is at least ±1 and
±√(prediction) (a count of events varies by its square root), rounded outwards to whole numbers
(a 1% floor of 31 rows is 0.31: "30 rows; expected 31 to 31" is no band for a count).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

WINDOW = 30
MIN_HISTORY = 3
TREND_MIN = 5
SIGMAS = 3.0
RELATIVE_FLOOR = 0.01
INCIDENT_SIGMAS = 5.0
INCIDENTS = 1  # at most one point of a window is left out of ``contain`` as a past incident


@dataclass(frozen=True)
class Band:
    low: float
    high: float
    expected: float
    points: int

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def band(
    history: list[float], *, sigmas: float = SIGMAS, contain: bool = False, integer: bool = False
) -> Band | None:
    """The band for the next value, from earlier values given most recent first.

    >>> b = band([100.0, 102.0, 98.0, 101.0, 99.0])
    >>> b.contains(100.0), b.contains(150.0)
    (True, False)
    >>> band([5.0, 5.0]) is None
    True
    >>> counts = band([31.0, 30.0, 31.0, 31.0, 31.0], contain=True, integer=True)
    >>> counts.low, counts.high
    (25.0, 37.0)
    """
    points = [v for v in history[:WINDOW] if v is not None and math.isfinite(v)]
    if len(points) < MIN_HISTORY:
        return None
    series = list(reversed(points))
    n = len(series)
    if n >= TREND_MIN:
        slope = statistics.median(
            (series[j] - series[i]) / (j - i) for i in range(n) for j in range(i + 1, n)
        )
        intercept = statistics.median(y - slope * x for x, y in enumerate(series))
        fitted = [intercept + slope * x for x in range(n)]
        expected = intercept + slope * n
    else:
        expected = statistics.median(series)
        fitted = [expected] * n
    residuals = [y - f for y, f in zip(series, fitted, strict=True)]
    centre = statistics.median(residuals)
    spread = 1.4826 * statistics.median(abs(r - centre) for r in residuals)
    half = max(sigmas * spread * math.sqrt(1 + 1 / n), RELATIVE_FLOOR * abs(expected), 1e-9)
    if contain:
        unit = max(spread, 1.0) if integer else spread  # a count varies by whole units
        usual = [abs(r) for r in residuals if abs(r - centre) <= INCIDENT_SIGMAS * unit]
        if n - len(usual) > INCIDENTS:
            usual = [abs(r) for r in residuals]  # too many to be incidents: the series' own variation
        half = max(half, max(usual, default=0.0))
    if integer:
        # a count of events varies by about its square root (Poisson): a narrower band flags the
        # count's own noise; and by at least one
        half = max(half, 1.0, math.sqrt(abs(expected)))
        return Band(float(math.floor(expected - half)), float(math.ceil(expected + half)), expected, n)
    return Band(expected - half, expected + half, expected, n)
