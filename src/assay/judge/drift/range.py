"""Range: numbers against the window's extremes. Dates and timestamps move forward with the loads,
so they are judged as offsets from each load's own date, each end apart: the first value against
the window's first values, the last against its last values. An hourly file runs from midnight to
23:00 of its day every day, so both ends an hour late are the alert (the column shifted); one end
alone moves on clean days (an hour missing) and alerts only beyond the window's extremes widened
by their span, as a value years away does. Both ends moved by the same amount from the latest
load's is a shift too: the window's bands hold the offsets before and after a change of the
clocks, and an hour's shift hides inside them for a window's length. A number with one value
per load (a year, a batch) says which load this is, not what it holds: it is not judged."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from datetime import date, datetime

from assay.judge.drift.bands import offset_band, range_band
from assay.judge.drift.case import Case, Finding
from assay.measure.profile import ColumnProfile


class Range:
    kind = "range"
    statement = "numbers, and dates as offsets from the load date, stay within the window's extremes"
    per_column = True

    def judge(self, case: Case, column: ColumnProfile | None = None) -> list[Finding]:
        assert column is not None
        if not (column.kind.numeric or column.kind.temporal):
            return []
        low = case.measured.get(("Column", column.name, "Minimum"))
        high = case.measured.get(("Column", column.name, "Maximum"))
        minimums = case.series("Column", column.name, "Minimum")
        maximums = case.series("Column", column.name, "Maximum")
        if column.kind.numeric and _one_value_per_load(minimums, maximums, low, high):
            return []
        if column.kind.temporal:
            return self._offsets(case, column, low, high, minimums, maximums)
        band = range_band(minimums, maximums, sensitivity=case.settings.sensitivity)
        if band is None or low is None or high is None:
            return []
        outside = low < band[0] or high > band[1]
        message = (
            f"range {column.minimum} to {column.maximum}; expected within {band[0]:.6g} to {band[1]:.6g}"
        )
        observed = high if high > band[1] else low
        return [Finding(column.name, self.kind, observed, band, "soft" if outside else None, message)]

    def _offsets(
        self,
        case: Case,
        column: ColumnProfile,
        low: float | None,
        high: float | None,
        minimums: Sequence[float | None],
        maximums: Sequence[float | None],
    ) -> list[Finding]:
        """A date or timestamp column: its first and its last value, each as an offset from the
        load's date, against the band of the same end over the window (:func:`offset_band`)."""
        dates = [load.logical_date for load in case.past.loads]
        if low is None or high is None or any(d is None for d in dates):
            return []
        unit = 86400.0 if isinstance(column.minimum, datetime) else 1.0
        origins = [days(d) * unit for d in dates if d is not None]
        firsts = [None if v is None else v - o for v, o in zip(minimums, origins, strict=True)]
        lasts = [None if v is None else v - o for v, o in zip(maximums, origins, strict=True)]
        today = days(case.today.load_date) * unit
        first, last = low - today, high - today
        resolution = _RESOLUTION if unit != 1.0 else 0.0
        sensitivity = case.settings.sensitivity
        first_band = offset_band(firsts, resolution=resolution, sensitivity=sensitivity)
        last_band = offset_band(lasts, resolution=resolution, sensitivity=sensitivity)
        if first_band is None or last_band is None:
            return []
        # The column shifted (an hour's time zone, a day) when an end left its band and the
        # other end, moved back by as much, is within its own: both ends moved together, or the
        # other end's band is too wide to tell (a monthly file's last day). One end moving alone
        # happens on clean days (the first hour missing at every station, the day the clocks
        # change): it alerts only beyond the wide band of the window's extremes, as far-off
        # values do (a 1970-01-01, a year away).
        moved = (_side(first, first_band), _side(last, last_band))
        shifted = _shifted(first, first_band, last, last_band) or _shifted(last, last_band, first, first_band)
        # The window's bands hold every offset it saw: across a change of the clocks they hold
        # both, and an hour's shift lies inside them for the next 20 loads. Against the latest
        # load, the same shift is both ends moved by the same amount.
        step = _with_latest(first, last, firsts, lasts, resolution)
        wide = range_band(firsts, lasts, sensitivity=sensitivity)
        far = wide is not None and (first < wide[0] or last > wide[1])
        show = _days if unit == 1.0 else _hours
        message = (
            f"range {column.minimum} to {column.maximum}; expected the first value {show(first_band)} "
            f"and the last {show(last_band)} from the load date"
        )
        if shifted:
            later = (moved[0] or moved[1]) > 0
            message += f" (the column shifted {'later' if later else 'earlier'})"
        elif step is not None:
            way = "later" if step > 0 else "earlier"
            message += f" (the column shifted: {_amount(abs(step), unit)} {way} than the latest load)"
        detail = {
            "relative_to_load_date": True,
            "unit_seconds": unit,
            "first": list(first_band),
            "last": list(last_band),
        }
        band = (first_band[0], last_band[1])
        severity = "soft" if shifted or far or step is not None else None
        observed = first if moved[0] and not moved[1] else last
        return [Finding(column.name, self.kind, observed, band, severity, message, detail=detail)]


def _shifted(end: float, band: tuple[float, float], other: float, other_band: tuple[float, float]) -> bool:
    """Whether ``end`` left its band and ``other``, moved back by as much as ``end`` moved from
    the middle of its band, lies within ``other_band``."""
    if _side(end, band) == 0:
        return False
    back = other - (end - (band[0] + band[1]) / 2)
    return other_band[0] <= back <= other_band[1]


def _with_latest(
    first: float,
    last: float,
    firsts: Sequence[float | None],
    lasts: Sequence[float | None],
    resolution: float,
) -> float | None:
    """How far both ends moved together from the latest load's (``firsts[0]``, ``lasts[0]``),
    or None: each end moved beyond its usual step from one load to the next (three times the
    median of the window's steps, at least ``resolution``), and by the same amount (to within
    the two usual steps). A first or last reading missing moves one end; yesterday missing its
    last hour and today its first move both, by opposite amounts.

    >>> hour = 3600.0
    >>> days = [5 * hour] * 10, [28 * hour] * 10
    >>> _with_latest(6 * hour, 29 * hour, *days, 60.0), _with_latest(6 * hour, 28 * hour, *days, 60.0)
    (3600.0, None)
    """
    if not firsts or firsts[0] is None or lasts[0] is None:
        return None
    usual = [_usual_step(firsts), _usual_step(lasts)]
    moves = [first - firsts[0], last - lasts[0]]
    if any(abs(m) <= max(resolution, 3 * u) for m, u in zip(moves, usual, strict=True)):
        return None
    return moves[0] if abs(moves[0] - moves[1]) <= max(resolution, sum(usual)) else None


def _usual_step(offsets: Sequence[float | None]) -> float:
    """The median change of an end's offset from one load of the window to the next."""
    known = [v for v in offsets if v is not None]
    steps = [abs(a - b) for a, b in itertools.pairwise(known)]
    return statistics.median(steps) if steps else 0.0


def _side(value: float, band: tuple[float, float]) -> int:
    """-1 below the band, 1 above it, 0 within."""
    return -1 if value < band[0] else 1 if value > band[1] else 0


_RESOLUTION = 60.0  # seconds: a timestamp's ends are compared to the minute, not to the second


def _amount(offset: float, unit: float) -> str:
    """An offset (in days for a date, seconds for a timestamp) in words.

    >>> _amount(3600.0, 86400.0), _amount(172800.0, 86400.0), _amount(1.0, 1.0)
    ('1 hour', '2 days', '1 day')
    """
    if unit == 1.0:
        value, name = offset, "day"
    elif offset % 86400 == 0:
        value, name = offset / 86400, "day"
    else:
        value, name = offset / 3600, "hour"
    return f"{value:.4g} {name}{'' if value == 1 else 's'}"


def _days(band: tuple[float, float]) -> str:
    return f"{band[0]:.6g} to {band[1]:.6g} days"


def _hours(band: tuple[float, float]) -> str:
    return f"{band[0] / 3600:.4g} to {band[1] / 3600:.4g} hours"


def days(day: date) -> float:
    """A date as days since 1970-01-01: the origin a date or timestamp range is kept relative to."""
    return float((day - date(1970, 1, 1)).days)


def _one_value_per_load(
    minimums: Sequence[float | None], maximums: Sequence[float | None], low: float | None, high: float | None
) -> bool:
    """Whether every load of the window, and today's, holds a single value of the column."""
    pairs = [(a, b) for a, b in zip(minimums, maximums, strict=True) if a is not None and b is not None]
    return bool(pairs) and low is not None and low == high and all(a == b for a, b in pairs)
