"""Range: numbers against the window's extremes. Dates and timestamps move forward with the loads,
so they are judged as offsets from each load's own date, each end apart: the first value against
the window's first values, the last against its last values. An hourly file runs from midnight to
23:00 of its day every day, so both ends an hour late are the alert (the column shifted); one end
alone moves on clean days (an hour missing) and alerts only beyond the window's extremes widened
by their span, as a value years away does. A number with one value per load (a year, a
batch) says which load this is, not what it holds: it is not judged."""

from __future__ import annotations

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
        detail = {
            "relative_to_load_date": True,
            "unit_seconds": unit,
            "first": list(first_band),
            "last": list(last_band),
        }
        band = (first_band[0], last_band[1])
        severity = "soft" if shifted or far else None
        observed = first if moved[0] and not moved[1] else last
        return [Finding(column.name, self.kind, observed, band, severity, message, detail=detail)]


def _shifted(end: float, band: tuple[float, float], other: float, other_band: tuple[float, float]) -> bool:
    """Whether ``end`` left its band and ``other``, moved back by as much as ``end`` moved from
    the middle of its band, lies within ``other_band``."""
    if _side(end, band) == 0:
        return False
    back = other - (end - (band[0] + band[1]) / 2)
    return other_band[0] <= back <= other_band[1]


def _side(value: float, band: tuple[float, float]) -> int:
    """-1 below the band, 1 above it, 0 within."""
    return -1 if value < band[0] else 1 if value > band[1] else 0


_RESOLUTION = 60.0  # seconds: a timestamp's ends are compared to the minute, not to the second


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
