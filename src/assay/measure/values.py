"""A profile's values as numbers and back, and text that reads as dates: a minimum or maximum is
stored as a number (dates as days since 1970-01-01, timestamps as seconds), and a text column
whose values all look like dates or times is no category."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

EPOCH = date(1970, 1, 1)

# A date before year 1 (ISO year 0000 is 1 BC), which Python's dates cannot hold: the engine
# gives it as text, ``0001-01-01 (BC)`` or ``0044-03-15 (BC) 12:00:00``.
_BC = re.compile(r"(\d{4,})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}):(\d{2}(?:\.\d+)?))?")
_CYCLE = 146_097  # the days of 400 Gregorian years


def as_number(value: Any) -> float | None:
    """A minimum or maximum as a number: dates as days since 1970, timestamps as seconds.

    >>> as_number(date(1969, 12, 31)), as_number("0001-01-01 (BC)"), as_number("0001-01-01 (BC) 12:00:00")
    (-1.0, -719528.0, -62167176000.0)
    """
    if value is None:
        return None
    if (
        isinstance(value, str)
        and "(BC)" in value
        and (bc := _BC.fullmatch(" ".join(value.replace("(BC)", "").split())))
    ):
        year, month, day = 1 - int(bc.group(1)), int(bc.group(2)), int(bc.group(3))  # 1 BC is year 0
        cycles = -year // 400 + 1
        days = (date(year + 400 * cycles, month, day) - EPOCH).days - _CYCLE * cycles
        if bc.group(4) is None:
            return float(days)
        return days * 86400.0 + int(bc.group(4)) * 3600 + int(bc.group(5)) * 60 + float(bc.group(6))
    if isinstance(value, datetime):
        return value.timestamp() if value.tzinfo else (value - datetime(1970, 1, 1)).total_seconds()
    if isinstance(value, date):
        return float((value - EPOCH).days)
    if isinstance(value, bool):
        return float(value)
    return float(value)


def from_number(value: float, type_name: str) -> date | datetime | float:
    """What :func:`as_number` made ``value`` from, for a column of canonical type ``type_name``:
    a date, a timestamp (in UTC for ``timestamptz``, naive for ``timestamp``), else the number.
    Raises OverflowError or ValueError for a number outside Python's dates."""
    if type_name == "date":
        return EPOCH + timedelta(days=value)
    if type_name == "timestamptz":
        return datetime.fromtimestamp(value, UTC)
    if type_name == "timestamp":
        return datetime(1970, 1, 1) + timedelta(seconds=value)
    return value


# Dates and times written as text: 1/2/21, 31.01.2024, 2024-01-31 10:00 UTC, 10:30.
_TEMPORAL = re.compile(
    r"\s*(\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}([ T]\d{1,2}:\d{2}(:\d{2})?\S*( ?[A-Za-z]{1,5}|[+-]\d{2}:?\d{2})?)?"
    r"|\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?( ?[AaPp][Mm])?)\s*"
)


def looks_temporal(values: Sequence[str]) -> bool:
    """Whether every one of ``values`` looks like a date or a time written as text.

    >>> looks_temporal(["1/2/21", "12/31/21"]), looks_temporal(["2024-01-31 10:00 UTC"])
    (True, True)
    >>> looks_temporal(["A1", "1/2/21"])
    False
    """
    return bool(values) and all(_TEMPORAL.fullmatch(v) for v in values)
