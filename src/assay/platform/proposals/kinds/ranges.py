"""Ranges: a number column whose extremes were steady over the mined loads (its highest and
lowest values near the usual ones) is proposed ``ColumnValues "c" between L and H``, L and H
round numbers outside every value seen by a tenth of the span."""

from __future__ import annotations

import math
from itertools import pairwise
from statistics import median

from assay.engine import DataKind
from assay.platform.proposals.candidate import Backtest, Candidate, described, dqdl, expectation_id, number
from assay.platform.proposals.history import History, metric, plain_name

STEADY = 0.1  # an extreme further than this share of the span from its median one is a tail
MARGIN = 0.1  # the bounds lie this share of the span outside the values seen
GROWING = 0.8  # a maximum that rose in this share of the loads is a growing key, not a range


class Range:
    kind = "range"
    statement = (
        "a number column whose extremes were steady over N loads stays between round bounds outside them"
    )

    def mine(self, history: History) -> list[Candidate]:
        found = []
        for column in history.columns(DataKind.INTEGER, DataKind.DECIMAL, DataKind.FLOAT):
            span = history.span(column)
            if not span or not plain_name(column):
                continue
            lows = [metric(load, column, "Minimum") for load in span]
            highs = [metric(load, column, "Maximum") for load in span]
            if any(v is None for v in (*lows, *highs)):
                continue
            low_values = [float(v) for v in lows if v is not None]
            high_values = [float(v) for v in highs if v is not None]
            low, high = min(low_values), max(high_values)
            width = high - low
            if width <= 0 or all(a == b for a, b in zip(low_values, high_values, strict=True)):
                continue  # one value a load: a load key, not a measurement
            rises = sum(1 for a, b in pairwise(high_values) if b > a)
            if rises >= GROWING * (len(high_values) - 1):
                continue
            if (max(high_values) - median(high_values)) > STEADY * width or (
                median(low_values) - min(low_values)
            ) > STEADY * width:
                continue  # a heavy tail: the next load sets a new record
            bounds = _bounds(low, high)
            nulls = any((metric(load, column, "NullCount") or 0) > 0 for load in span)
            where = f' where "{column} IS NOT NULL"' if nulls else ""
            rule = dqdl(f'ColumnValues "{column}" between {number(bounds[0])} and {number(bounds[1])}{where}')
            judged = history.judged(column)
            failed = 0
            for load in judged:
                lo, hi = metric(load, column, "Minimum"), metric(load, column, "Maximum")
                if lo is not None and hi is not None and not (bounds[0] < lo and hi < bounds[1]):
                    failed += 1
                elif not nulls and (metric(load, column, "NullCount") or 0) > 0:
                    failed += 1  # a null fails ColumnValues (DQDL.md §3.7)
            evidence = {
                "column": column,
                "loads": len(span),
                "minimum": low,
                "maximum": high,
                "median_minimum": median(low_values),
                "median_maximum": median(high_values),
                "bounds": [bounds[0], bounds[1]],
                "nulls": nulls,
            }
            expectation = {
                "id": expectation_id("range", column),
                "rule": rule,
                "profile": history.profile.id,
                "mode": "advisory",
                "description": described(
                    f"{column} lies between {number(bounds[0])} and {number(bounds[1])}",
                    f"{number(low)} to {number(high)} in {len(span)} loads",
                ),
            }
            found.append(
                Candidate(
                    self.kind,
                    column,
                    (column,),
                    expectation,
                    evidence,
                    Backtest(len(judged), failed),
                    fingerprint=(bounds[0], bounds[1], nulls),
                )
            )
        return found


def _bounds(low: float, high: float) -> tuple[float, float]:
    """Round bounds a tenth of the span outside ``[low, high]``, strictly outside it (DQDL's
    ``between`` is exclusive); a column never negative gets a lower bound of 0 at the least
    (below 0 when it held 0).

    >>> _bounds(0.5, 12.0), _bounds(0.0, 100.0), _bounds(-3.0, 3.0)
    ((0.0, 14.0), (-10.0, 110.0), (-3.6, 3.6))
    """
    margin = MARGIN * (high - low)
    step = 10.0 ** math.floor(math.log10(margin))
    lower = math.floor((low - margin) / step) * step
    upper = math.ceil((high + margin) / step) * step
    if low >= 0 > lower:
        lower = 0.0 if low > 0 else -step
    return round(lower, 10), round(upper, 10)
