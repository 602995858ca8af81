"""Categorical swap: two categories that exchanged their values (``origin`` holds the
destinations and ``dest`` the three New York airports) are one hard alert naming both, not a
new-value decision for every value the exchange brought. The values a swap explains (today's
values of one column known only in the other) open no decision and raise no new_value,
vanished_value or flood alert; a value neither column ever held is still a new value.

>>> from datetime import date
>>> from assay.engine import DataKind
>>> from assay.judge.drift.case import Case, Past, Today
>>> from assay.measure.profile import ColumnProfile, LoadProfile
>>> def text(name, values):
...     return ColumnProfile(name, "string", DataKind.STRING, 4, 0, len(values), True, None, None, values)
>>> load = LoadProfile(4, [text("origin", {"BOS": 2, "ATL": 2}), text("dest", {"JFK": 3, "EWR": 1})])
>>> seen = {"origin": {"JFK": 0, "EWR": 0}, "dest": {"BOS": 0, "ATL": 0, "MIA": 0}}
>>> swaps(Case(Today(load, date(2026, 1, 2)), Past(seen=seen, earlier=True)))
{'origin': 'dest', 'dest': 'origin'}
"""

from __future__ import annotations

from collections.abc import Mapping

from assay.engine import DataKind
from assay.judge.drift.case import Case, Finding
from assay.measure.profile import ColumnProfile

EXCHANGED = 0.9  # the share of a column's rows whose values only the other column ever held


def swaps(case: Case) -> dict[str, str]:
    """The categories that exchanged values today, each mapped to its partner: at least
    :data:`EXCHANGED` of each one's non-blank rows hold values only the other column held before.
    Two columns with the same domain (home and away teams) cannot be told apart this way."""
    today = _categories(case)
    found: dict[str, str] = {}
    names = list(today)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if a in found or b in found:
                continue
            if _explained(case, today[a], a, b) and _explained(case, today[b], b, a):
                found[a], found[b] = b, a
    return found


def explained(case: Case, column: str, value: str, partner: str) -> bool:
    """Whether ``value`` of ``column`` is one the swap brought: only ``partner`` held it before."""
    return value in case.past.seen.get(partner, {}) and value not in case.past.seen.get(column, {})


def _explained(case: Case, values: Mapping[str, int], column: str, partner: str) -> bool:
    rows = {v: n for v, n in values.items() if v.strip()}
    total = sum(rows.values())
    moved = sum(n for v, n in rows.items() if explained(case, column, v, partner))
    return total > 0 and moved >= EXCHANGED * total


def _categories(case: Case) -> dict[str, Mapping[str, int]]:
    """Today's value counts of each text category with a known past (a flood's too)."""
    out: dict[str, Mapping[str, int]] = {}
    for c in case.today.profile.columns:
        values = c.values if c.values is not None else c.counts if c.name in case.today.floods else None
        if (
            values
            and c.kind is DataKind.STRING
            and c.name not in case.today.learning
            and case.past.seen.get(c.name)
            and case.settings.enabled("swap", c.name)
        ):
            out[c.name] = values
    return out


class CategorySwap:
    kind = "swap"
    statement = "two categories whose values are each the other's known values were exchanged: one hard alert"
    per_column = False

    def judge(self, case: Case, column: ColumnProfile | None = None) -> list[Finding]:
        """One hard finding per pair, on the column that comes first; a passing one on every
        other category (an incident on a swap resolves on it)."""
        if not case.past.earlier:
            return []
        found = swaps(case)
        position = {c.name: i for i, c in enumerate(case.today.profile.columns)}
        findings = []
        for name in _categories(case):
            partner = found.get(name)
            if partner is None:
                findings.append(Finding(name, self.kind, 0.0, None, None, "no values exchanged"))
            elif position[name] < position[partner]:
                message = (
                    f"columns {name} and {partner} exchanged their values: today's {name} holds the "
                    f"values {partner} held before, and {partner} those of {name}"
                )
                detail = {"columns": [name, partner]}
                findings.append(Finding(name, self.kind, 1.0, None, "hard", message, detail=detail))
        return findings
