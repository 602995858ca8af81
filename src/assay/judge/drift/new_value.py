"""New values: a value of a categorical column that no earlier load held is an alert and asks for
a decision, never a default (seed 002). A value an earlier load brought that still waits on its
decision is not alerted again: its rows are added to the decision. A rejected value is a hard
alert every time. A category flooded with mostly new values is one alert and no decisions.

A category replaced is one hard alert, its new values still each a decision: most of today's
values never seen, or a value every load of the window held gone while a never-seen one holds
at least half its rows (a city renamed; the distinct count unchanged). Values that two swapped
columns exchanged are the swap's (:mod:`~assay.judge.drift.category_swap`): no decision."""

from __future__ import annotations

from typing import Any

from assay.judge.drift.case import Case, Finding
from assay.judge.drift.category_swap import explained, swaps
from assay.judge.drift.held import gone, never_seen
from assay.measure.profile import ColumnProfile


class NewValue:
    kind = "new_value"
    statement = "a value no earlier load held opens a decision; a value rejected before is a hard alert"
    per_column = True

    def judge(self, case: Case, column: ColumnProfile | None = None) -> list[Finding]:
        assert column is not None
        partner = swaps(case).get(column.name)
        if partner is not None and column.name in case.today.floods:
            return [
                Finding(column.name, self.kind, 0.0, None, None, f"values exchanged with {partner}: see swap")
            ]
        if column.name in case.today.floods:
            new, distinct = case.today.floods[column.name]
            message = (
                f"{new} of {distinct} values never seen before: no decision opened for a flood; "
                "if the column is not a category, list it in not_categorical"
            )
            return [Finding(column.name, self.kind, float(new), None, "soft", message, values=[])]
        if column.values is None or not case.past.earlier or column.name in case.today.learning:
            return []  # not a category, or its first loads: they teach the column its values
        seen = case.past.seen.get(column.name, {})
        status = case.past.status.get(column.name, {})
        fresh: list[dict[str, Any]] = []
        waiting: list[tuple[str, int]] = []
        for value, count in sorted(column.values.items(), key=lambda item: (-item[1], item[0])):
            if case.settings.blanks and not value.strip():
                continue  # a blank is a missing value (judged with the nulls), not a new value
            if partner is not None and explained(case, column.name, value, partner):
                continue  # brought by the swap, which is one alert of its own
            decided = status.get(value)
            if decided == "accepted" or (value in seen and decided is None):
                continue
            if value in seen and decided == "pending":
                waiting.append((value, count))
                continue
            fresh.append({"value": value, "count": count, "decision": decided or "pending"})
        shown_waiting = ", ".join(f"{value} ({count} rows)" for value, count in waiting)
        pending = f"; still waiting on a decision: {shown_waiting}" if waiting else ""
        if not fresh:
            message = f"no new value{pending}"
            return [
                Finding(column.name, self.kind, 0.0, None, None, message, values=[], waiting=tuple(waiting))
            ]
        rejected = [f for f in fresh if f["decision"] == "rejected"]
        shown = ", ".join(f"{f['value']} ({f['count']} rows)" for f in fresh[:5])
        more = f" and {len(fresh) - 5} more" if len(fresh) > 5 else ""
        message = f"{len(fresh)} value(s) never seen before: {shown}{more}"
        if rejected:
            message += f"; {len(rejected)} of them rejected before"
        replaced = _replaced(case, column.name, column.values, fresh)
        if replaced:
            message = f"{replaced}; {message}"
        severity = "hard" if rejected or replaced else "soft"
        return [
            Finding(
                column.name,
                self.kind,
                float(len(fresh)),
                None,
                severity,
                message + pending,
                values=fresh,
                waiting=tuple(waiting),
            )
        ]


def _replaced(case: Case, column: str, today: dict[str, int], fresh: list[dict[str, Any]]) -> str | None:
    """Why the category counts as replaced (None: it does not). Most of today's distinct values
    never seen before, or a value every load of the window held gone while a never-seen value
    holds at least half the fewest rows it had."""
    if not case.past.seen.get(column):
        return None  # a column new to the dataset: every value is new, nothing was replaced
    new = never_seen(case, column, today)
    arrived = {f["value"]: f["count"] for f in fresh if f["value"] in new}
    present = sum(1 for value in today if value.strip() or not case.settings.blanks)
    if len(arrived) > present / 2:
        return f"category set replaced: {len(arrived)} of its {present} values today never seen before"
    left = gone(case, column, today)
    if not left or not arrived:
        return None
    value, rows = max(arrived.items(), key=lambda item: (item[1], item[0]))
    if rows * 2 < left[0].rows:
        return None
    return f"category replaced: {left[0].value} (held by every load of the window) is gone and {value} is new"
