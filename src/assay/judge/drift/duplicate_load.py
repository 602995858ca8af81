"""Duplicate load: a load whose content equals an earlier load's of the window is the earlier
file sent again (yesterday's extract re-delivered under today's date), one hard alert naming that
load's date.

"The same content" is read from the profile, not from the bytes, so that a file re-written (the
same rows as Parquet instead of CSV, another compression, quoted differently) is still the same:
the same columns and row count, and every metric both profiles measure of every column (its
null, blank and distinct counts, its minimum and maximum, the counted column pairs) equal, to a
relative 1e-9 (a number read from text and from Parquet may differ in the last bit). A metric
only one profile has comes from a type read differently (CSV text read as a timestamp, kept as
text in Parquet; an all-null column) and is left aside. A
byte-identical file (the same ``assay.lake.checksum``) has the same profile, so it is the same
content too. A dataset that repeats itself (two loads of the window with the same content: a
reference table that seldom changes) is not judged: repeating is its normal; so that this is
known, a load is judged once the window holds ``MIN_HISTORY`` (5) loads. A profile with no
minimum or maximum (text columns only) sees only counts, which two different loads share
easily: it is not judged either. An empty load is the volume judgement's."""

from __future__ import annotations

import math
from collections.abc import Mapping

from assay.judge.drift.bands import MIN_HISTORY
from assay.judge.drift.case import Case, Finding
from assay.measure.profile import ColumnProfile, Metrics

_TOLERANCE = 1e-9


class DuplicateLoad:
    kind = "duplicate_load"
    statement = "a load's content (its whole profile) differs from every earlier load's in the window"
    per_column = False

    def judge(self, case: Case, column: ColumnProfile | None = None) -> list[Finding]:
        if not case.settings.enabled(self.kind, None) or case.today.profile.rows == 0:
            return []
        today = case.measured
        # the loads as they arrived: a held column is still what the file held
        delivered = list(case.past.delivered)
        if len(delivered) < MIN_HISTORY or not any(
            name in ("Minimum", "Maximum") and value is not None for (_, _, name), value in today.items()
        ):
            return []
        same = [load for load, held in delivered if _same(today, held)]
        if not same:
            return []
        earlier = same[0]  # the window is most recent first
        metrics = [held for _, held in delivered]
        if any(_same(a, b) for i, a in enumerate(metrics) for b in metrics[i + 1 :]):
            return []
        when = earlier.logical_date or earlier.logical_time.date()
        message = (
            f"the same content as the load of {when.isoformat()} ({case.today.profile.rows:,} rows, "
            "every column's profile equal): that load's file sent again?"
        )
        detail = {"load_date": when.isoformat(), "load_id": earlier.id}
        rows = float(case.today.profile.rows)
        return [Finding(None, self.kind, rows, None, "hard", message, detail=detail)]


def _same(today: Mapping[tuple[str, str, str], float | None], earlier: Metrics) -> bool:
    """Whether two loads' profiles are the same content: the same columns (each has a null
    count), and every metric both hold equal. A metric only one holds is a type read
    differently (a timestamp kept as text in Parquet has no minimum; a column with no value has
    no type): it says nothing either way."""
    if {k for k in today if k[2] == "NullCount"} != {k for k in earlier if k[2] == "NullCount"}:
        return False
    for key in today.keys() & earlier.keys():
        value, other = today[key], earlier[key]
        if value is None or other is None:
            if value is not other:
                return False
        elif not math.isclose(value, other, rel_tol=_TOLERANCE, abs_tol=0.0):
            return False
    return True
