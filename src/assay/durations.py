"""Durations as people read them: ``45 s``, ``12 min``, ``9 h 22 min``, ``2 d 3 h``.

A freshness metric is a number of seconds; a message, a console table and a web page show it as
a duration, never as ``33726.0`` (the web's pages, the check runs' messages and tables, and the
DQDL messages all call :func:`duration`). It imports nothing of assay: every layer may use it.

>>> duration(5400), duration(33726.0), duration(None)
('1 h 30 min', '9 h 22 min', '—')
"""

from __future__ import annotations

from typing import Any


def duration(value: Any) -> str:
    """An age in seconds, to the unit below the largest (negative when the newest row is in the
    future); ``—`` for no value.

    >>> duration(33726.0), duration(43200), duration(-52674), duration(200000), duration(None)
    ('9 h 22 min', '12 h', '-14 h 38 min', '2 d 8 h', '—')
    >>> duration(59.6), duration(3599), duration(86399)
    ('1 min', '1 h', '1 d')
    """
    if value is None:
        return "—"
    seconds = float(value)
    sign, left = ("-" if seconds < 0 else ""), abs(seconds)
    if left < 59.5:
        return f"{sign}{left:.0f} s"
    minutes = round(left / 60)
    if minutes < 60:
        return f"{sign}{minutes} min"
    if minutes < 24 * 60:
        whole, rest, unit, label = *divmod(minutes, 60), "h", "min"
    else:
        whole, rest, unit, label = *divmod(round(left / 3600), 24), "d", "h"
    return f"{sign}{whole} {unit}" + (f" {rest} {label}" if rest else "")
