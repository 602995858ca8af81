"""Volume: the row count proposed within a band of its own recent average, the band learnt from
how far each mined load's count was from the average of the loads before it; compared with the
same weekday's loads (``history: same_weekday``) when that predicts the counts at least twice as
well, as it does when weekdays differ (a quiet Sunday is no incident)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise
from statistics import median

from assay.platform.proposals.candidate import Backtest, Candidate, described, expectation_id, number
from assay.platform.proposals.history import History
from assay.store.proposals import StoredLoad

PLAIN = 7  # avg(last(7)): a week of loads
SEASONAL = (3, 2)  # avg(last(k)) of the same weekday: three weeks, or two when that is all there is
RATIOS = 5  # the fewest ratios a band is learnt from
WIDTH = 4 * 1.4826  # the band: the ratios' median ± 4 robust deviations
FLOOR = 0.1  # and never narrower than ±10%
BETTER = 0.5  # the same weekday is chosen when its spread is at most half the plain one's
DAILY = 0.8  # the share of one-day gaps that makes loads daily (weekdays mean something)
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


class Volume:
    kind = "volume"
    statement = (
        "the row count stays within a band of its recent (or same-weekday) average learnt from N loads"
    )

    def mine(self, history: History) -> list[Candidate]:
        mined = [load for load in history.mined if load.row_count is not None]
        if len(mined) < history.min_loads:
            return []
        plain = _ratios(mined, PLAIN, seasonal=False)
        if len(plain) < RATIOS:
            return []
        seasonal_k, seasonal = 0, {}
        if _daily(mined):
            for k in SEASONAL:
                found = _ratios(mined, k, seasonal=True)
                if len(found) >= RATIOS:
                    seasonal_k, seasonal = k, found
                    break
        same = sorted(set(seasonal) & set(plain))
        spread_plain = _spread([plain[i] for i in same]) if same else _spread(list(plain.values()))
        spread_seasonal = _spread([seasonal[i] for i in same]) if same else None
        use_weekday = (
            spread_seasonal is not None and spread_plain > 0 and spread_seasonal <= BETTER * spread_plain
        )
        ratios = seasonal if use_weekday else plain
        k = seasonal_k if use_weekday else PLAIN
        low, high = _band(list(ratios.values()))
        backtest = _backtest(history.loads, k, use_weekday, low, high)
        pid = history.profile.id
        baseline = f"avg(last({k}))"
        expectation: dict[str, object] = {
            "id": expectation_id("volume"),
            "metric": f"{pid}.row_count",
            "expect": f"between {baseline} * {number(low)} and {baseline} * {number(high)}",
            "min_history": k,
        }
        if use_weekday:
            expectation["history"] = "same_weekday"
        compared = "the same weekday's" if use_weekday else "the previous"
        expectation["mode"] = "advisory"
        expectation["description"] = described(
            f"the row count stays between {number(low)} and {number(high)} times the average of "
            f"{compared} {k} loads",
            f"learnt from {len(ratios)} of {len(mined)} loads",
        )
        values = list(ratios.values())
        evidence = {
            "loads": len(mined),
            "baseline": "same_weekday" if use_weekday else "last",
            "k": k,
            "ratios": {
                "count": len(values),
                "median": median(values),
                "min": min(values),
                "max": max(values),
            },
            "spread": {"last": spread_plain, "same_weekday": spread_seasonal},
            "weekday_mean_rows": _weekday_means(mined),
            "band": [low, high],
        }
        return [
            Candidate(
                self.kind,
                "row_count",
                (),
                expectation,
                evidence,
                backtest,
                fingerprint=(k, use_weekday, low, high),
                requires={"profile": pid, "metrics": ["row_count"]},
            )
        ]


def _daily(loads: Sequence[StoredLoad]) -> bool:
    gaps = [(b.logical_date - a.logical_date).days for a, b in pairwise(loads)]
    return bool(gaps) and sum(1 for g in gaps if g == 1) >= DAILY * len(gaps)


def baseline(loads: Sequence[StoredLoad], index: int, k: int, *, seasonal: bool) -> float | None:
    """The average row count of the ``k`` loads before ``loads[index]`` (of its weekday when
    ``seasonal``), as ``avg(last(k))`` reads it; None with fewer than ``k`` of them."""
    day = loads[index].logical_date
    earlier = [
        load.row_count
        for load in reversed(loads[:index])
        if load.row_count is not None and (not seasonal or load.logical_date.weekday() == day.weekday())
    ][:k]
    return sum(earlier) / k if len(earlier) == k else None


def _ratios(loads: Sequence[StoredLoad], k: int, *, seasonal: bool) -> dict[int, float]:
    out = {}
    for i, load in enumerate(loads):
        average = baseline(loads, i, k, seasonal=seasonal)
        if average and load.row_count is not None:
            out[i] = load.row_count / average
    return out


def _spread(ratios: Sequence[float]) -> float:
    """How far counts stray from their baseline: the median absolute log ratio."""
    return median(abs(math.log(r)) for r in ratios if r > 0) if ratios else 0.0


def _band(ratios: Sequence[float]) -> tuple[float, float]:
    """The ratios' median ± 4 robust deviations (at least ±10%), rounded outwards to 0.05.

    >>> _band([1.0, 1.02, 0.98, 1.01, 0.99])
    (0.9, 1.1)
    """
    middle = median(ratios)
    deviation = median(abs(r - middle) for r in ratios) * WIDTH
    half = max(deviation, FLOOR * middle)
    low = math.floor((middle - half) * 20 + 1e-9) / 20
    high = math.ceil((middle + half) * 20 - 1e-9) / 20
    return round(max(low, 0.0), 2), round(high, 2)


def _backtest(loads: Sequence[StoredLoad], k: int, seasonal: bool, low: float, high: float) -> Backtest:
    """The expectation judged on every stored load that has ``k`` earlier (same-weekday) loads:
    it fails where the count is not strictly between the bounds (DQDL's ``between``)."""
    counted = [load for load in loads if load.row_count is not None]
    judged = failed = 0
    for i, load in enumerate(counted):
        average = baseline(counted, i, k, seasonal=seasonal)
        if average is None or load.row_count is None:
            continue
        judged += 1
        if not (average * low < load.row_count < average * high):
            failed += 1
    return Backtest(judged, failed)


def _weekday_means(loads: Sequence[StoredLoad]) -> dict[str, float]:
    by_day: dict[int, list[int]] = {}
    for load in loads:
        if load.row_count is not None:
            by_day.setdefault(load.logical_date.weekday(), []).append(load.row_count)
    return {WEEKDAYS[d]: round(sum(v) / len(v), 1) for d, v in sorted(by_day.items())}
