"""Per-load metrics and the peer detectors of ``bench/detection.py``, reimplemented from their
public documentation (no code of theirs is used or copied).

Every peer judges the same series: for each load, the metrics below computed with pyarrow from
the very table that was written to the load's file. A metric is keyed ``(name, column)``; the
column is ``""`` for ``row_count``. Names follow Elementary's column monitors.

- ``elementary`` / ``elementary-x``: Elementary's ``column_anomalies`` and ``volume_anomalies``
  (docs.elementary-data.com, "Data anomaly detection method", "anomaly_sensitivity",
  "training_period", "min_training_set_size", "exclude_detection_period_from_training"): the
  z-score of today's value against the mean and sample standard deviation of a 14-load training
  set; an anomaly when |z| > 3; no judgement before 14 loads of history; a training set with no
  spread scores 0 (no anomaly). ``elementary`` keeps the detection period (today) in its
  training set, as Elementary does by default; ``elementary-x`` leaves it out.
- ``deequ-online``: Deequ's ``OnlineNormalStrategy`` (defaults: lower and upper deviation factor
  3, ignoreStartPercentage 0.1, ignoreAnomalies true): a running mean and population variance
  updated with each value; a value is an anomaly when it lies more than 3 standard deviations from
  the running mean that includes it; an anomalous value is taken back out of the running figures.
  The running figures are kept across loads instead of being recomputed over the whole series on
  each run: the same result except on the first loads of a series.
- ``deequ-rate``: Deequ's ``RelativeRateOfChangeStrategy`` (order 1) with ``maxRateDecrease 0.5``
  and ``maxRateIncrease 2.0`` (the documented example bounds the size at twice the previous): an
  anomaly when today's value divided by the previous load's is outside [0.5, 2.0]; 0/0 is no
  anomaly, x/0 with x > 0 is one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

Key = tuple[str, str]
Metrics = dict[Key, float]


def metrics(table: pa.Table) -> Metrics:
    """The peers' metrics of one load.

    >>> found = metrics(pa.table({"x": [1.0, None, 0.0], "s": ["a", " ", None]}))
    >>> found[("row_count", "")], round(found[("null_percent", "x")], 3), found[("missing_count", "s")]
    (3.0, 33.333, 2.0)
    """
    rows = table.num_rows
    out: Metrics = {("row_count", ""): float(rows)}
    for name in table.column_names:
        column = table.column(name)
        kind = column.type
        nulls = column.null_count
        out[("null_count", name)] = float(nulls)
        if rows:
            out[("null_percent", name)] = 100.0 * nulls / rows
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            blank = pc.sum(pc.equal(pc.utf8_trim_whitespace(column), "")).as_py() or 0
            out[("missing_count", name)] = float(nulls + blank)
            if rows:
                out[("missing_percent", name)] = 100.0 * (nulls + blank) / rows
            _put(out, "average_length", name, pc.mean(pc.utf8_length(column)).as_py())
            _put(out, "min_length", name, pc.min(pc.utf8_length(column)).as_py())
            _put(out, "max_length", name, pc.max(pc.utf8_length(column)).as_py())
        elif pa.types.is_integer(kind) or pa.types.is_floating(kind):
            _put(out, "min", name, pc.min(column).as_py())
            _put(out, "max", name, pc.max(column).as_py())
            _put(out, "average", name, pc.mean(column).as_py())
            _put(out, "standard_deviation", name, pc.stddev(column, ddof=1).as_py())
            zeros = pc.sum(pc.equal(column, 0)).as_py() or 0
            out[("zero_count", name)] = float(zeros)
            if rows:
                out[("zero_percent", name)] = 100.0 * zeros / rows
        elif pa.types.is_timestamp(kind) or pa.types.is_date(kind):
            seconds = column.cast(pa.timestamp("s")) if pa.types.is_date(kind) else column
            numbers = seconds.cast(pa.timestamp("s")).cast(pa.int64())
            _put(out, "min", name, pc.min(numbers).as_py())
            _put(out, "max", name, pc.max(numbers).as_py())
        out[("distinct_count", name)] = float(pc.count_distinct(column).as_py())
    return out


def _put(out: Metrics, metric: str, column: str, value: Any) -> None:
    if value is not None and not (isinstance(value, float) and math.isnan(value)):
        out[(metric, column)] = float(value)


class Detector(Protocol):
    """A detector judges one load at a time and hands back its state for the next."""

    @property
    def name(self) -> str: ...

    def start(self) -> Any: ...

    def step(self, state: Any, today: Metrics) -> tuple[set[Key], Any]: ...


@dataclass(frozen=True)
class Elementary:
    """Elementary's z-score over a 14-load training set, threshold 3."""

    name: str
    exclude_detection: bool
    training: int = 14
    threshold: float = 3.0

    def start(self) -> tuple[Metrics, ...]:
        return ()

    def step(self, state: tuple[Metrics, ...], today: Metrics) -> tuple[set[Key], tuple[Metrics, ...]]:
        found: set[Key] = set()
        if len(state) >= self.training:
            past = state[-self.training :] if self.exclude_detection else state[-(self.training - 1) :]
            for key, value in today.items():
                series = [m[key] for m in past if key in m]
                if not self.exclude_detection:
                    series.append(value)
                if len(series) < 2:
                    continue
                mean = sum(series) / len(series)
                spread = math.sqrt(sum((v - mean) ** 2 for v in series) / (len(series) - 1))
                if spread > 0 and abs(value - mean) / spread > self.threshold:
                    found.add(key)
        return found, (*state[-self.training :], today)


@dataclass(frozen=True)
class OnlineNormal:
    """Deequ's OnlineNormalStrategy: running mean and variance, 3 deviations either side."""

    name: str = "deequ-online"
    factor: float = 3.0
    ignore_start: float = 0.1

    def start(self) -> dict[Key, tuple[int, float, float, int]]:
        return {}

    def step(
        self, state: dict[Key, tuple[int, float, float, int]], today: Metrics
    ) -> tuple[set[Key], dict[Key, tuple[int, float, float, int]]]:
        found: set[Key] = set()
        after = dict(state)
        for key, value in today.items():
            count, mean, squares, seen = state.get(key, (0, 0.0, 0.0, 0))
            count += 1
            delta = value - mean
            new_mean = mean + delta / count
            new_squares = squares + delta * (value - new_mean)
            deviation = math.sqrt(new_squares / count)
            outside = abs(value - new_mean) > self.factor * deviation
            flagged = outside and seen >= self.ignore_start * (seen + 1)
            if flagged:
                found.add(key)
                after[key] = (count - 1, mean, squares, seen + 1)  # ignoreAnomalies: taken back out
            else:
                after[key] = (count, new_mean, new_squares, seen + 1)
        return found, after


@dataclass(frozen=True)
class RateOfChange:
    """Deequ's RelativeRateOfChangeStrategy, order 1, today / previous load outside [0.5, 2.0]."""

    name: str = "deequ-rate"
    decrease: float = 0.5
    increase: float = 2.0

    def start(self) -> Metrics | None:
        return None

    def step(self, state: Metrics | None, today: Metrics) -> tuple[set[Key], Metrics]:
        found: set[Key] = set()
        previous = state or {}  # the first load has nothing to compare with
        for key, value in today.items():
            before = previous.get(key)
            if before is None:
                continue
            if before == 0:
                if value != 0:
                    found.add(key)
                continue
            ratio = value / before
            if not self.decrease <= ratio <= self.increase:
                found.add(key)
        return found, today


PEERS: tuple[Detector, ...] = (
    Elementary("elementary", exclude_detection=False),
    Elementary("elementary-x", exclude_detection=True),
    OnlineNormal(),
    RateOfChange(),
)


def run(detector: Detector, state: Any, loads: Sequence[Metrics]) -> tuple[list[set[Key]], Any]:
    """The anomalies of each of ``loads`` in turn, from ``state``, and the state after them."""
    found = []
    for today in loads:
        anomalies, state = detector.step(state, today)
        found.append(anomalies)
    return found, state
