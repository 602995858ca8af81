"""The bands of a number column's shape: its mean, standard deviation and quantiles, learnt from the
window (:mod:`assay.measure.shape` measures them). A unit change, a shift, a flood of a default
value or a column stuck at one value keeps the range the ``range`` judgement watches; it moves
the shape.

Each metric's band is robust and follows the data: the centre is the median of the window's
values, the spread 1.4826 x their MAD (so a column that drifts with the season, a daily
temperature, has a band as wide as its drift) together with the sampling error of today's
estimate (the mean's ``sd / sqrt(n)``; a quantile's ``sqrt(q(1-q)) / phi(z_q) x sd / sqrt(n)``),
never narrower than a fifth of the column's usual standard deviation for a quantile (a quantile
of whole numbers or of a few routes jumps between values) and a tenth for the mean. The standard
deviation is judged as its logarithm (a ratio: /1000 and x1.5 alike), never tighter than a
factor of 1.1. Every band holds the window's own loads (:func:`_contain`). A metric is out
beyond :data:`SHAPE_SOFT` spreads (soft) or :data:`SHAPE_HARD` (hard): far out, because real
days move these (fog, a storm, a warm spell; ``docs/detection.md`` measures it), and one column
has seven of them. The standard deviation alerts alone (a shrinking one only far below its
band); a location (mean, quantile) only when a second location is out too, as severe as the
second or the spread, whichever is more (:func:`verdict`). A column with no spread
today that had one in every load of the window is a hard alert (constant). A column with no
spread in most loads (rain: none on dry days) is not judged, nor one with fewer than
:data:`MIN_VALUES` values today, nor a quantile held at one value in most loads (pinned). Two
columns that exchanged their values are one ``swap`` alert instead
(:mod:`assay.judge.drift.numeric_swap`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from assay.judge.drift.case import Case
from assay.measure.profile import ColumnProfile
from assay.measure.shape import QUANTILE_NAMES, QUANTILES

SHAPE_SOFT = 6.0
SHAPE_HARD = 12.0
MIN_SHAPE_HISTORY = 15  # loads before a shape band exists: a shape varies more than a count
MIN_VALUES = 10  # values today before a shape is judged: the spread of three gusts says little
QUANTILE_FLOOR = 0.2  # of the usual standard deviation: the narrowest a quantile's spread gets
MEAN_FLOOR = 0.1  # and a mean's: a move of a tenth of a deviation is no news in any column
LOG_FLOOR = math.log(1.1)  # the narrowest the standard deviation's spread gets, as a ratio
SHRINK = 2.0  # how many times below its soft band a shrunk standard deviation must lie to alert
METRICS = ("Mean", "StandardDeviation", *QUANTILE_NAMES)
"""The metrics judged, in the order a finding names them."""

_ERROR = {
    name: math.sqrt(q * (1 - q)) / NormalDist().pdf(NormalDist().inv_cdf(q))
    for name, q in zip(QUANTILE_NAMES, QUANTILES, strict=True)
}  # a quantile's standard error in standard deviations over sqrt(n), for a normal column


@dataclass(frozen=True)
class ShapeBand:
    """One metric's band: ``expected`` its centre, ``spread`` its robust deviation, both on the
    log scale when ``log`` (the standard deviation)."""

    metric: str
    expected: float
    spread: float
    log: bool = False
    sensitivity: float = 1.0

    def distance(self, value: float) -> float:
        """How many spreads ``value`` lies from the centre."""
        x = _log(value) if self.log else value
        return abs(x - self.expected) / self.spread

    def bounds(self, k: float) -> tuple[float, float]:
        low, high = self.expected - k * self.spread, self.expected + k * self.spread
        return (math.exp(low), math.exp(high)) if self.log else (low, high)

    @property
    def soft(self) -> tuple[float, float]:
        return self.bounds(SHAPE_SOFT / self.sensitivity)

    @property
    def hard(self) -> tuple[float, float]:
        return self.bounds(SHAPE_HARD / self.sensitivity)

    def severity(self, value: float) -> str | None:
        """Soft beyond :data:`SHAPE_SOFT` spreads, hard beyond :data:`SHAPE_HARD`; a standard
        deviation that shrank soft only when it is also :data:`SHRINK` times below the soft
        band. A spread that shrinks is news far out (a column divided by 1,000, nearly
        constant); a little below the window's lowest, it is a drier month of a rainfall (1.4
        times below) or fewer cities reporting in a panel (1.02): on the bench's clean loads
        (``docs/detection.md``) the only shape alerts on ``seattle`` and ``txhousing``."""
        d = self.distance(value) * self.sensitivity
        if d > SHAPE_HARD:
            return "hard"
        if self.log and _log(value) < self.expected:
            return "soft" if d > SHAPE_SOFT and value * SHRINK < self.soft[0] else None
        return "soft" if d > SHAPE_SOFT else None


def _log(value: float) -> float:
    return math.log(value) if value > 0 else -math.inf


def shape_bands(
    window: Sequence[Mapping[str, float | None]], count: int, *, sensitivity: float = 1.0
) -> dict[str, ShapeBand]:
    """The bands of one column's shape metrics from the window's values (one mapping a load,
    metric name to value), for today's ``count`` non-null values. A metric with fewer than
    :data:`MIN_SHAPE_HISTORY` values has none; nor has the standard deviation of a column that
    had no spread in some load of the window (rain: none on dry days).

    >>> loads = [{"Mean": 10.0 + i % 3, "StandardDeviation": 2.0 + i % 2 / 4} for i in range(20)]
    >>> bands = shape_bands(loads, 100)
    >>> bands["Mean"].severity(11.5), bands["Mean"].severity(23.0), bands["Mean"].severity(40.0)
    (None, 'soft', 'hard')
    >>> bands["StandardDeviation"].severity(2.1), bands["StandardDeviation"].severity(0.002)
    (None, 'hard')
    """
    deviations = [v for load in window if (v := load.get("StandardDeviation")) is not None]
    if len(deviations) < MIN_SHAPE_HISTORY or count <= 0:
        return {}
    usual = statistics.median(deviations)
    sampling = usual / math.sqrt(count)
    bands: dict[str, ShapeBand] = {}
    for metric in METRICS:
        values = [v for load in window if (v := load.get(metric)) is not None]
        if len(values) < MIN_SHAPE_HISTORY:
            continue
        if metric == "StandardDeviation":
            if min(values) <= 0:
                continue
            logs = [math.log(v) for v in values]
            error = 1 / math.sqrt(2 * max(1, count - 1))
            spread = _contain(logs, max(math.hypot(_mad(logs), error), LOG_FLOOR), sensitivity)
            bands[metric] = ShapeBand(metric, statistics.median(logs), spread, True, sensitivity)
            continue
        if metric != "Mean" and _mad(values) == 0:
            # Pinned: most loads hold this quantile at one value (no rain, visibility at its cap,
            # the longest route). Its move is news of an event in the column (the first rain in
            # weeks), not of its shape; the mean, the spread and the range see a column whose
            # every value moved.
            continue
        floor = (MEAN_FLOOR if metric == "Mean" else QUANTILE_FLOOR) * usual
        error = sampling * _ERROR.get(metric, 1.0)
        spread = _contain(values, max(math.hypot(_mad(values), error), floor), sensitivity)
        if spread > 0:
            bands[metric] = ShapeBand(metric, statistics.median(values), spread, False, sensitivity)
    return bands


def _contain(values: Sequence[float], spread: float, sensitivity: float) -> float:
    """``spread``, widened so that the soft band holds every load of the window and goes past the
    farthest by the gap between the two farthest (as the null-rate band does): a column whose
    quantiles jump on some days (visibility in fog, rain on wet days, wind directions) had those
    days in its window, and an independent series sets a new record of its last 20 loads one
    load in 21. The hard band, twice as far, is where a value no load came near lies."""
    centre = statistics.median(values)
    ranked = sorted((abs(v - centre) for v in values), reverse=True)
    gap = ranked[0] - ranked[1] if len(ranked) > 1 else 0.0
    return max(spread, (ranked[0] + gap) * sensitivity / SHAPE_SOFT)


def _mad(values: Sequence[float]) -> float:
    centre = statistics.median(values)
    return 1.4826 * statistics.median(abs(v - centre) for v in values)


@dataclass(frozen=True)
class Verdict:
    """A column's shape judged against bands: the metric farthest out, its value and band, the
    alert, and every metric's value (``observed``) and soft band (``bands``)."""

    metric: str
    value: float
    band: ShapeBand
    severity: str | None
    observed: Mapping[str, float]
    bands: Mapping[str, ShapeBand]
    constant: bool = False

    @property
    def worst(self) -> float:
        """The largest distance, in spreads, of any metric from its band's centre."""
        return self.band.distance(self.value) * self.band.sensitivity


def today_of(case: Case, column: str) -> dict[str, float]:
    """Today's shape metrics of ``column`` (those it has)."""
    out = {}
    for metric in METRICS:
        value = case.measured.get(("Column", column, metric))
        if value is not None:
            out[metric] = value
    return out


def window_of(case: Case, column: str) -> list[dict[str, float | None]]:
    """The window's shape metrics of ``column``, one mapping a load (most recent first)."""
    series = {metric: case.series("Column", column, metric) for metric in METRICS}
    return [{m: series[m][i] for m in METRICS} for i in range(len(case.past.loads))]


def verdict(today: Mapping[str, float], bands: Mapping[str, ShapeBand], usual_spread: bool) -> Verdict | None:
    """Today's metrics against ``bands``; ``usual_spread``: every load of the window had some
    spread, so none today is a constant column."""
    if not bands or not today:
        return None
    deviation = today.get("StandardDeviation")
    if deviation == 0 and usual_spread and "StandardDeviation" in bands:
        band = bands["StandardDeviation"]
        return Verdict("StandardDeviation", 0.0, band, "hard", today, bands, constant=True)
    judged = sorted(
        ((m, today[m], bands[m]) for m in METRICS if m in today and m in bands),
        key=lambda item: item[2].distance(item[1]),
        reverse=True,
    )
    if not judged:
        return None
    metric, value, band = judged[0]
    # A location (the mean, a quantile) alerts when a second one agrees: one quantile alone
    # moves on real days (a wind direction turning past north, the first rain in weeks), a unit
    # change, a shift or a flood moves several. The spread alerts alone: it is a ratio. The
    # alert is the more severe of the two (a spread that shrank is severe only far out, while
    # the locations of a column divided by 1,000 agree).
    locations = [item for item in judged if item[0] != "StandardDeviation"]
    spread = [item for item in judged if item[0] == "StandardDeviation"]
    candidates = [*locations[1:2], *spread]
    severity = max((b.severity(v) for _, v, b in candidates), key=_RANK.__getitem__, default=None)
    return Verdict(metric, value, band, severity, today, bands)


_RANK = {None: 0, "soft": 1, "hard": 2}


def judge_column(case: Case, column: ColumnProfile) -> Verdict | None:
    """``column``'s shape today against its own window, or None when it has no band yet (or is
    no number, has fewer than MIN_VALUES values today, or held one value in most loads: a day
    of the month, a year, rain on dry days)."""
    if not column.kind.numeric or column.rows - column.nulls < MIN_VALUES:
        return None
    window = window_of(case, column.name)
    deviations = [load["StandardDeviation"] for load in window if load["StandardDeviation"] is not None]
    if not deviations or statistics.median(deviations) == 0:
        return None
    bands = shape_bands(window, column.rows - column.nulls, sensitivity=case.settings.sensitivity)
    return verdict(today_of(case, column.name), bands, min(deviations) > 0)
