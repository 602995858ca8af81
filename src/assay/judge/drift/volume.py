"""Volume: the row count against the band of the window's counts; loads a month apart are compared
per day of their month (a daily file loaded monthly has 28 to 31 rows by the calendar, not by
accident). Below half the band, above twice it, or empty is a hard alert."""

from __future__ import annotations

import calendar
import itertools
from collections.abc import Sequence
from datetime import date

from assay.judge import anomaly
from assay.judge.drift.bands import volume_band
from assay.judge.drift.case import Case, Finding
from assay.measure.profile import ColumnProfile


class Volume:
    kind = "volume"
    statement = "the row count stays within the band of the window's counts, per day of a month when monthly"
    per_column = False

    def judge(self, case: Case, column: ColumnProfile | None = None) -> list[Finding]:
        if not case.settings.enabled(self.kind, None):
            return []
        rows = case.today.profile.rows
        day = case.today.load_date
        counts = case.series("Dataset", "*", "RowCount")
        dated = [
            (load.logical_date, v) for load, v in zip(case.past.loads, counts, strict=True) if v is not None
        ]
        past = [v for _, v in dated]
        monthly = _monthly([d for d, _ in dated], day)
        if monthly:
            past = [v * _month_length(day) / _month_length(d) for d, v in dated if d is not None]
        band = volume_band(past, sensitivity=case.settings.sensitivity)
        if band is None:
            message = f"learning: {len(past)} of {anomaly.MIN_HISTORY} loads"
            return [Finding(None, self.kind, rows, None, None, message)]
        severity = None
        if not band.contains(rows):
            severity = "hard" if rows == 0 or rows < band.low / 2 or rows > band.high * 2 else "soft"
        scaled = f", per day of a {_month_length(day)}-day month" if monthly else ""
        message = (
            f"{rows:,} rows; expected {max(0.0, band.low):,.0f} to {band.high:,.0f} "
            f"from {band.points} loads{scaled}"
        )
        detail = {"calendar": "month"} if monthly else None
        return [Finding(None, self.kind, rows, (band.low, band.high), severity, message, detail=detail)]


def _month_length(day: date) -> int:
    return calendar.monthrange(day.year, day.month)[1]


def _monthly(dates: Sequence[date | None], today: date) -> bool:
    """Whether the loads come once a month: every gap between consecutive dates 28 to 31 days."""
    known = [d for d in dates if d is not None]
    if len(known) < 2 or len(known) != len(dates):
        return False
    chain = [today, *known]  # most recent first
    return all(28 <= (a - b).days <= 31 for a, b in itertools.pairwise(chain))
