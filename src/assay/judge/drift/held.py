"""What a category held, read by more than one judgement: today's values never seen before
(:func:`never_seen`) and the values every load of the window held that are gone today
(:func:`gone`). A value gone and a never-seen one arrived is a category replaced (new_value's
hard alert); a value gone alone is vanished_value's alert.

>>> from datetime import date
>>> from assay.measure.profile import LoadProfile
>>> from assay.judge.drift.case import Case, Past, Today
>>> from assay.store.profiles import LoadInfo
>>> loads = [LoadInfo(i, None, None, 9) for i in range(5)]  # type: ignore[arg-type]
>>> counts = {i: {"venue": {"XLON": 6, "XPAR": 3}} for i in range(5)}
>>> past = Past(loads=loads, counts=counts, seen={"venue": {"XLON": 0, "XPAR": 0}}, earlier=True)
>>> case = Case(Today(LoadProfile(9), date(2026, 1, 6)), past)
>>> [(g.value, g.rows, round(g.share, 2)) for g in gone(case, "venue", {"XLON": 9})]
[('XPAR', 3, 0.33)]
>>> never_seen(case, "venue", {"XLON": 8, "XNEW": 1})
{'XNEW': 1}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from assay.judge.drift.case import Case

MIN_LOADS = 5  # loads of the window that must all hold a value before its absence is judged
MIN_ROWS = 2  # the fewest rows a value must have had in each of them, unless the set never moves
HARD_SHARE = 0.05  # a value gone that held at least this share of the rows is a hard alert


@dataclass(frozen=True)
class Gone:
    """A value every load of the window held and today's load does not: its fewest rows in one
    load of the window and its mean share of the rows."""

    value: str
    rows: int
    share: float


def gone(case: Case, column: str, today: Mapping[str, int]) -> list[Gone]:
    """The values of ``column`` held by each of the window's loads that kept its values (at
    least :data:`MIN_LOADS`),
    each time in at least :data:`MIN_ROWS` rows, that ``today`` lacks; the fewest-rows bound is
    waived when every load of the window held the very same set (a panel's 46 cities, one row
    each). On nycflights13's first 120 days, a carrier or destination flying once a day that
    skipped a day (F9 on the blizzard, seasonal routes ending) raised 8 false alerts without it,
    none with it. Most rows first."""
    # the loads that kept the column's values: before a panel's values were learned, none
    loads = [counts for counts in case.held(column) if counts]
    if len(loads) < MIN_LOADS:
        return []
    always = set.intersection(*(set(counts) for counts in loads))
    fixed = always == set().union(*(set(counts) for counts in loads))
    found = []
    for value in always - {v for v, n in today.items() if n > 0}:
        if case.settings.blanks and not value.strip():
            continue  # a blank is a missing value, judged with the nulls
        rows = min(counts[value] for counts in loads)
        if rows >= MIN_ROWS or fixed:
            share = sum(counts[value] / sum(counts.values()) for counts in loads) / len(loads)
            found.append(Gone(value, rows, share))
    return sorted(found, key=lambda g: (-g.share, g.value))


def never_seen(case: Case, column: str, today: Mapping[str, int]) -> dict[str, int]:
    """Today's values of ``column`` that no earlier load held (blanks aside: they are missing)."""
    seen = case.past.seen.get(column, {})
    return {
        value: count
        for value, count in today.items()
        if value not in seen and not (case.settings.blanks and not value.strip())
    }
