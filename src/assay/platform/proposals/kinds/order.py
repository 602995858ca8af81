"""Row rules: two comparable columns (two timestamps, two dates, two numbers) whose order held on
every row of every mined load, and that the columns' ranges alone do not explain, are proposed
as a ``count_where`` of the rows that break it, expected to be 0 (``settled_at >= executed_at``).
Read from the profile's pair counts (``Multicolumn.a,b.LessCount``/``GreaterCount``)."""

from __future__ import annotations

from sqlglot import exp

from assay.platform.proposals.candidate import Backtest, Candidate, described, expectation_id
from assay.platform.proposals.history import History, metric, plain_name
from assay.store.proposals import StoredLoad

SAMPLE_ROWS = 5


class Order:
    kind = "order"
    statement = "two columns one of which was at least the other on every row of N loads stay so"

    def mine(self, history: History) -> list[Candidate]:
        found = []
        for first, second in _pairs(history):
            span = [load for load in history.span(first) if load in history.span(second)]
            if len(span) < history.min_loads:
                continue
            # "below": first <= second on every row (never first > second); "above": the reverse
            for direction in ("below", "above"):
                states = [_state(load, first, second, direction) for load in span]
                if not all(s in ("held", "implied") for s in states) or "held" not in states:
                    continue
                if all(_equal(load, first, second) for load in span):
                    continue
                low, high = (first, second) if direction == "below" else (second, first)
                found.append(self._candidate(history, span, low, high, first, second, direction, states))
        return found

    def _candidate(
        self,
        history: History,
        span: list[StoredLoad],
        low: str,
        high: str,
        first: str,
        second: str,
        direction: str,
        states: list[str],
    ) -> Candidate:
        # the rows that break "high >= low": low > high
        condition = exp.GT(this=exp.column(low), expression=exp.column(high)).sql(dialect="duckdb")
        name = f"{low}_after_{high}"
        pid = history.profile.id
        judged = [*span, history.latest]
        failed = 0
        for load in judged:
            state = _state(load, first, second, direction)
            failed += state == "broken"
        evaluated = sum(1 for load in judged if _state(load, first, second, direction) != "unknown")
        tested = sum(
            int(_count(load, first, second, "LessCount" if direction == "below" else "GreaterCount") or 0)
            for load in span
        )
        evidence = {
            "columns": [low, high],
            "held": f"{high} >= {low}",
            "loads": len(span),
            "rows_with_order": tested,
            "violations": 0,
            "loads_ordered_by_ranges": states.count("implied"),
            "condition": condition,
        }
        expectation = {
            "id": expectation_id("order", high, low),
            "metric": f"{pid}.{name}",
            "expect": "= 0",
            "mode": "advisory",
            "description": described(
                f"{high} is never before {low} (rows where {condition}: none)",
                f"held on every row of {len(span)} loads ({tested:,} rows with {high} > {low})",
            ),
        }
        return Candidate(
            self.kind,
            f"{high}>={low}",
            (high, low),
            expectation,
            evidence,
            Backtest(evaluated, failed),
            fingerprint=(high, low),
            requires={
                "profile": pid,
                "metrics": [
                    {"count_where": {"name": name, "condition": condition, "sample_rows": SAMPLE_ROWS}}
                ],
            },
        )


def _pairs(history: History) -> list[tuple[str, str]]:
    """The column pairs whose orders the loads counted (and the latest load has both columns of)."""
    out: list[tuple[str, str]] = []
    # the latest load's pairs first; then those it did not count (their ranges did not overlap)
    for load in (history.latest, *history.mined):
        for entity, instance, name in load.metrics:
            if entity != "Multicolumn" or name != "LessCount":
                continue
            first, _, second = instance.partition(",")
            known = first in history.latest.types and second in history.latest.types
            if known and plain_name(first) and plain_name(second) and (first, second) not in out:
                out.append((first, second))
    return out


def _count(load: StoredLoad, first: str, second: str, name: str) -> float | None:
    return load.metrics.get(("Multicolumn", f"{first},{second}", name))


def _state(load: StoredLoad, first: str, second: str, direction: str) -> str:
    """How ``first <= second`` (``below``) or ``first >= second`` (``above``) stood in a load:
    ``held`` (counted, never broken), ``implied`` (the ranges alone order them), ``broken``,
    or ``unknown`` (not counted, and the ranges overlap)."""
    key = ("Multicolumn", f"{first},{second}", "LessCount")
    breaking = "GreaterCount" if direction == "below" else "LessCount"
    if key in load.metrics:
        count = _count(load, first, second, breaking)
        if count is None:
            return "broken"  # stored without a value: its rows went both ways in an earlier load
        if count > 0:
            return "broken"
    lo_a, hi_a = metric(load, first, "Minimum"), metric(load, first, "Maximum")
    lo_b, hi_b = metric(load, second, "Minimum"), metric(load, second, "Maximum")
    implied = None not in (lo_a, hi_a, lo_b, hi_b) and (
        (direction == "below" and hi_a <= lo_b) or (direction == "above" and hi_b <= lo_a)  # type: ignore[operator]
    )
    if implied:
        return "implied"
    return "held" if key in load.metrics else "unknown"


def _equal(load: StoredLoad, first: str, second: str) -> bool:
    """Whether the two columns were equal wherever both had a value (no rule of order then)."""
    less, greater = _count(load, first, second, "LessCount"), _count(load, first, second, "GreaterCount")
    return less == 0 and greater == 0
