"""Vanished values: a value of a category that every load of the window held is gone today (a
carrier that stopped flying, a city missing from a panel). New values see arrivals; this sees
departures, which the volume band absorbs when the value is one of many. Soft, hard when the
value held at least :data:`~assay.judge.drift.held.HARD_SHARE` of the rows. A value gone because
a never-seen one took its place is a category replaced (new_value's hard alert), and values gone
because two columns exchanged them are the swap's: neither is alerted again here."""

from __future__ import annotations

from assay.judge.drift.case import Case, Finding
from assay.judge.drift.category_swap import swaps
from assay.judge.drift.held import HARD_SHARE, gone, never_seen
from assay.measure.profile import ColumnProfile


class VanishedValue:
    kind = "vanished_value"
    statement = "a value every load of the window held is gone today: soft, hard for a large share of rows"
    per_column = True

    def judge(self, case: Case, column: ColumnProfile | None = None) -> list[Finding]:
        assert column is not None
        today = column.values
        if today is None or column.name in case.today.learning or not case.past.earlier:
            return []
        found = gone(case, column.name, today)
        if not found:
            return [Finding(column.name, self.kind, 0.0, None, None, "no value of every load is gone")]
        if column.name in swaps(case):
            return [Finding(column.name, self.kind, 0.0, None, None, "values exchanged: see swap")]
        if never_seen(case, column.name, today) and case.settings.enabled("new_value", column.name):
            return [Finding(column.name, self.kind, 0.0, None, None, "values replaced: see new_value")]
        shown = ", ".join(f"{g.value} ({g.share:.1%} of rows, at least {g.rows} a load)" for g in found[:5])
        more = f" and {len(found) - 5} more" if len(found) > 5 else ""
        severity = "hard" if found[0].share >= HARD_SHARE else "soft"
        message = (
            f"{len(found)} value(s) held by each of {len(case.past.loads)} loads are gone: {shown}{more}"
        )
        detail = {"gone": [g.value for g in found]}
        return [Finding(column.name, self.kind, float(len(found)), None, severity, message, detail=detail)]
