"""Schema: a column that is gone or changed type is a hard alert, a new column a soft one; a CSV's
or JSON's column read as another type of its family (``long`` and ``double``, ``date`` and
``timestamp``) is inference, not a change, and a column with no value in a load has no type."""

from __future__ import annotations

from assay.engine.types import canonical
from assay.judge.drift.case import Case, Finding
from assay.measure.profile import ColumnProfile
from assay.store.profiles import UNKNOWN

# Types a reader infers from text, narrowest first: a file whose values all fit the narrower
# type is read as it (R writes 0, not 0.0; a day of dates without a time is read as dates).
_WIDENING = (("int", "long", "double"), ("date", "timestamp"))


class Schema:
    kind = "schema"
    statement = "a column gone or retyped is a hard alert, a new column a soft one, inferred types aside"
    per_column = False

    def judge(self, case: Case, column: ColumnProfile | None = None) -> list[Finding]:
        if case.past.schema is None:
            return []
        # a profile stored before the canonical vocabulary holds DuckDB's names: read canonically
        before = {name: canonical("duckdb", kept) for name, kept in case.past.schema}
        now = dict(case.today.profile.schema)
        on = case.settings.enabled
        removed = [c for c in before if c not in now and on("schema", c)]
        added = [c for c in now if c not in before and on("schema", c)]
        changed = [c for c in now if c in before and before[c] != now[c] and on("schema", c)]
        found = []
        for name in [c for c in changed if UNKNOWN in (before[c], now[c])]:
            changed.remove(name)
            if now[name] == UNKNOWN:
                message = f"column {name} has no value in this load: no type (last read as {before[name]})"
                found.append(Finding(name, self.kind, None, None, None, message))
        for name in [c for c in changed if c in case.today.inferred and _loose(before[c], case, c)]:
            changed.remove(name)
            message = (
                f"column {name} read from {before[name]} to {now[name]}, no schema change: a CSV's "
                "or JSON's types are inferred from each file's values"
            )
            found.append(Finding(name, self.kind, None, None, None, message))
        for name in removed:
            found.append(
                Finding(name, self.kind, None, None, "hard", f"column {name} ({before[name]}) is gone")
            )
        for name in changed:
            message = f"column {name} changed type from {before[name]} to {now[name]}"
            found.append(Finding(name, self.kind, None, None, "hard", message))
        for name in added:
            found.append(Finding(name, self.kind, None, None, "soft", f"column {name} ({now[name]}) is new"))
        return found


def _loose(before: str, case: Case, column: str) -> bool:
    """Whether a column read as another type of its family today is only inference: read wider,
    or narrower with every value still fitting the type it had (an integer beyond 2**53 does not
    fit a double)."""
    now = case.today.profile.column(column)
    family = next((f for f in _WIDENING if before in f and now.type in f), None)
    if family is None:
        return False
    if family.index(now.type) > family.index(before) or before != "double":
        return True
    extremes = [v for v in (now.minimum, now.maximum) if isinstance(v, int | float)]
    return all(abs(v) <= 2**53 for v in extremes)
