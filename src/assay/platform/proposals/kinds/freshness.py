"""Freshness: the timestamp column that stays closest to each load's clock is proposed
``freshness(c) <= H hours``, H the longest lag seen (clock − latest value) plus a quarter,
rounded up to whole hours and written in the largest exact unit (``1 hour``, ``2 days``).

The clock is when the profile's scheduled run judges the load
(:mod:`assay.platform.proposals.clock`), never midnight after its day: a bound learned at
midnight failed on every 06:30 run. Loads no run judges (days the schedule skips) are left out;
a profile with no clock (no schedule, no runs, loads backfilled) gets no freshness proposal."""

from __future__ import annotations

import math
from statistics import median

from assay.engine import DataKind
from assay.platform.proposals.candidate import Backtest, Candidate, described, duration, expectation_id
from assay.platform.proposals.history import History, metric
from assay.store.proposals import StoredLoad

SLACK = 1.25  # the bound is the longest lag seen plus a quarter


class Freshness:
    kind = "freshness"
    statement = (
        "a load's latest timestamp is never older at its scheduled run than the longest lag of N loads, "
        "and a quarter"
    )

    def mine(self, history: History) -> list[Candidate]:
        best: tuple[float, str, list[StoredLoad], list[float]] | None = None
        for column in history.columns(DataKind.TIMESTAMP):
            span = [load for load in history.span(column) if history.arrival(load) is not None]
            if not span:
                continue
            lags = [lag(history, load, column) for load in span]
            if any(v is None for v in lags):
                continue
            values = [float(v) for v in lags if v is not None]
            typical = median(values)
            if best is None or typical < best[0]:
                best = (typical, column, span, values)
        if best is None:
            return []
        typical, column, span, seen = best
        hours = max(1, math.ceil(max(seen) * SLACK / 3600))
        judged = [load for load in history.judged(column) if history.arrival(load) is not None]
        failed = sum(1 for load in judged if (lag(history, load, column) or 0.0) > hours * 3600)
        pid = history.profile.id
        evidence = {
            "column": column,
            "loads": len(span),
            "arrival": history.describe_arrival(),
            "lag_seconds": {"median": typical, "max": max(seen), "min": min(seen)},
            "bound_hours": hours,
            "bound": duration(hours * 3600),
        }
        expectation = {
            "id": expectation_id("fresh", column),
            "metric": f"{pid}.freshness({column})",
            "expect": f"<= {evidence['bound']}",
            "mode": "advisory",
            "description": described(
                f"{column} is at most {evidence['bound']} old when its scheduled run judges it",
                f"at most {max(seen) / 3600:.1f} hours in {len(span)} loads, judged at {evidence['arrival']}",
            ),
        }
        return [
            Candidate(
                self.kind,
                column,
                (column,),
                expectation,
                evidence,
                Backtest(len(judged), failed),
                fingerprint=(column, hours),
                requires={"profile": pid, "metrics": [{"freshness": column}]},
            )
        ]


def lag(history: History, load: StoredLoad, column: str) -> float | None:
    """Seconds from the column's latest value to the load's clock (the stored ``Maximum`` of a
    timestamp is seconds since 1970); None when either is unknown."""
    latest = metric(load, column, "Maximum")
    clock = history.arrival(load)
    if latest is None or clock is None:
        return None
    return clock.timestamp() - latest
