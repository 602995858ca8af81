"""Range: numbers against the window's extremes. Dates and timestamps move forward with the loads,
so they are judged as offsets from each load's own date (a daily file's event times lie within a
day or two of it; a value years away is the alert). A number with one value per load (a year, a
batch) says which load this is, not what it holds: it is not judged."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime

from assay.judge.drift.bands import range_band
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
        unit = None
        if column.kind.temporal and low is not None and high is not None:
            unit = 86400.0 if isinstance(column.minimum, datetime) else 1.0
            dates = [load.logical_date for load in case.past.loads]
            if any(d is None for d in dates):
                return []
            origins = [days(d) * unit for d in dates if d is not None]
            minimums = [None if v is None else v - o for v, o in zip(minimums, origins, strict=True)]
            maximums = [None if v is None else v - o for v, o in zip(maximums, origins, strict=True)]
            today = days(case.today.load_date) * unit
            low, high = low - today, high - today
        band = range_band(minimums, maximums, sensitivity=case.settings.sensitivity)
        if band is None or low is None or high is None:
            return []
        outside = low < band[0] or high > band[1]
        if unit is None:
            expected = f"within {band[0]:.6g} to {band[1]:.6g}"
        else:
            per = "days" if unit == 1.0 else "seconds"
            expected = f"{band[0]:.6g} to {band[1]:.6g} {per} from the load date"
        message = f"range {column.minimum} to {column.maximum}; expected {expected}"
        observed = high if high > band[1] else low
        detail = None if unit is None else {"relative_to_load_date": True, "unit_seconds": unit}
        return [
            Finding(
                column.name, self.kind, observed, band, "soft" if outside else None, message, detail=detail
            )
        ]


def days(day: date) -> float:
    """A date as days since 1970-01-01: the origin a date or timestamp range is kept relative to."""
    return float((day - date(1970, 1, 1)).days)


def _one_value_per_load(
    minimums: Sequence[float | None], maximums: Sequence[float | None], low: float | None, high: float | None
) -> bool:
    """Whether every load of the window, and today's, holds a single value of the column."""
    pairs = [(a, b) for a, b in zip(minimums, maximums, strict=True) if a is not None and b is not None]
    return bool(pairs) and low is not None and low == high and all(a == b for a, b in pairs)
