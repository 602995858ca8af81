"""Freshness: the timestamp column that stays closest to each load's arrival is proposed
``freshness(c) <= H hours``, H the longest lag seen (arrival − latest value) plus a quarter,
rounded up to whole hours."""

from __future__ import annotations

import math
from statistics import median

from assay.engine import DataKind
from assay.platform.proposals.candidate import Backtest, Candidate, described, expectation_id
from assay.platform.proposals.history import History, metric
from assay.store.proposals import StoredLoad

SLACK = 1.25  # the bound is the longest lag seen plus a quarter


class Freshness:
    kind = "freshness"
    statement = (
        "a load's latest timestamp is never older at arrival than the longest lag of N loads, and a quarter"
    )

    def mine(self, history: History) -> list[Candidate]:
        best: tuple[float, str, list[StoredLoad], list[float]] | None = None
        for column in history.columns(DataKind.TIMESTAMP):
            span = history.span(column)
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
        judged = history.judged(column)
        failed = sum(1 for load in judged if (lag(history, load, column) or 0.0) > hours * 3600)
        pid = history.profile.id
        evidence = {
            "column": column,
            "loads": len(span),
            "arrival": history.describe_arrival(),
            "lag_seconds": {"median": typical, "max": max(seen), "min": min(seen)},
            "bound_hours": hours,
        }
        expectation = {
            "id": expectation_id("fresh", column),
            "metric": f"{pid}.freshness({column})",
            "expect": f"<= {hours} hours",
            "mode": "advisory",
            "description": described(
                f"{column} is at most {hours} hours old when the load arrives",
                f"at most {max(seen) / 3600:.1f} hours in {len(span)} loads, "
                f"arrival as {evidence['arrival']}",
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
    """Seconds from the column's latest value to the load's arrival (the stored ``Maximum`` of a
    timestamp is seconds since 1970)."""
    latest = metric(load, column, "Maximum")
    if latest is None:
        return None
    return history.arrival(load).timestamp() - latest
