"""A dataset's past as the store keeps it, read for the monitor: the window of earlier loads a
load is judged against (:class:`History`, whose :meth:`History.past` is the value the drift
judgements read), and a metric's stored series with the bands each load was judged against
(:func:`history`, what ``assay history`` shows). Reads only: the profile run writes.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError
from assay.judge.drift import INCIDENTS, Past, Window
from assay.judge.drift.range import days
from assay.judge.drift.shape_band import METRICS as SHAPE_METRICS
from assay.judge.result import json_number
from assay.measure.profile import Metrics
from assay.store import MetricKey
from assay.store.baselines import matches
from assay.store.profiles import UNKNOWN, Judgement, LoadInfo

if TYPE_CHECKING:
    from assay.store import MetricStore


class History:
    """The earlier loads of ``dataset`` before ``load_date``, as one profile reads them: the
    loads of ``partition`` (``assay profile``'s are the dataset's own, ``""``; a check run's
    profile keeps its slices under the profile's id).

    >>> from assay.store import MetricStore
    >>> with MetricStore.open("sqlite://") as store:
    ...     History(store, "trades", date(2026, 1, 2)).past(Window.parse("last:5"), []).earlier
    False
    """

    def __init__(self, store: MetricStore, dataset: str, load_date: date, *, partition: str = "") -> None:
        self.store = store
        self.dataset = dataset
        self.load_date = load_date
        self.partition = partition

    def categorical(self) -> set[str]:
        """The columns an earlier load profiled as categories."""
        return set(self.store.categorical_columns(self.dataset))

    def latest(self) -> date | None:
        """The logical date of the latest earlier load (None: no earlier load)."""
        earlier = self.store.window(self.dataset, self.load_date, partition=self.partition)
        return earlier[0].logical_date if earlier else None

    def previous_metrics(self) -> Metrics:
        """The stored metrics of the latest earlier load (none: empty)."""
        earlier = self.store.window(self.dataset, self.load_date, partition=self.partition)
        if not earlier:
            return {}
        return self.store.load_metrics([earlier[0].id])[earlier[0].id]

    def known_types(self, columns: list[str]) -> dict[str, str]:
        """Each column's last type that an earlier load read from values."""
        return dict(self.store.known_types(self.dataset, self.load_date, columns, partition=self.partition))

    def value_set(self, column: str) -> Mapping[str, Any]:
        """Every value an earlier load of the column held, with its first and last load."""
        return self.store.value_set(self.dataset, column, before=self.load_date)

    def past(self, window: Window, categories: Iterable[str]) -> Past:
        """The window of earlier loads, their metrics and schema, and for each of ``categories``
        the values seen before and the decisions on them: what the drift judgements read."""
        loads = self.store.window(self.dataset, self.load_date, partition=self.partition)
        recent = [loads[i] for i in window.select([load.logical_date for load in loads], self.load_date)]
        arrived: dict[int, Metrics] = dict(self.store.load_metrics([load.id for load in recent]))
        chosen, metrics = self._clean(loads, window, recent, arrived)
        schema = self.store.load_schema(loads[0].id) if loads else None
        if schema is not None:  # a column with no value in the last load: its last known type
            unknown = [name for name, kind in schema if kind == UNKNOWN]
            known = self.known_types(unknown)
            schema = [(name, known.get(name, kind)) for name, kind in schema]
        columns = list(categories) if loads else []
        return Past(
            loads=chosen,
            metrics=metrics,
            schema=schema,
            seen={c: self.value_set(c) for c in columns},
            status={c: self.store.decision_status(self.dataset, c) for c in columns},
            earlier=bool(loads),
            counts=self.store.load_values([load.id for load in chosen], columns),
            delivered=[(load, arrived[load.id]) for load in recent],
        )

    def _clean(
        self, loads: list[LoadInfo], window: Window, recent: list[LoadInfo], arrived: dict[int, Metrics]
    ) -> tuple[list[LoadInfo], dict[int, Metrics]]:
        """The window's loads and their metrics, without what raised a failure and no person has
        accepted (:mod:`assay.store.baselines`): a load held out whole leaves the window, and a
        column (or the load's own counts) held out of a load is read from the next earlier load
        instead, so that each series keeps the window's size and a bad day never becomes the
        band of the next (a day with half of ``dep_time`` missing made the band 0-90%).

        An incident is rare (as in :func:`~assay.judge.drift.bands.null_rate_band`): of the
        loads held for one column that no person has decided on, the most recent one in
        ``INCIDENTS`` of the window stay out, and the older ones come back: a column that alerts
        that often without anyone acting (a pressure gauge that fails on a quarter of the days,
        storms, a level that has lasted) is alerting on its own variation, which its band must
        learn. Loads a person left out stay out, however many."""
        dates = [load.logical_date for load in loads]
        marks = self.store.out_of_baselines([load.id for load in loads])
        if not marks:  # the window as it arrived (``recent``, whose metrics are ``arrived``)
            return recent, arrived
        reach = [  # every load the window could read, in its order
            i
            for i in replace(window, size=len(loads)).select(dates, self.load_date)
            if all(pattern != _WHOLE for _, pattern in marks.get(loads[i].id, ()))
        ]
        base = reach[: window.size]
        # a person has not decided: beyond one load in INCIDENTS of the window held for a
        # column, the oldest are the column's usual variation and come back into its band
        room = max(1, len(base) // INCIDENTS)
        seen: Counter[tuple[str, str]] = Counter()
        usual: set[tuple[int, tuple[str, str]]] = set()
        for i in base:
            load = loads[i].id
            for scope in {p[:2] for s, p in marks.get(load, ()) if s == "held"}:
                seen[scope] += 1
                if seen[scope] > room:
                    usual.add((load, scope))
        out = {
            load: [p for s, p in found if not (s == "held" and (load, p[:2]) in usual)]
            for load, found in marks.items()
        }
        unread = [loads[i].id for i in base if loads[i].id not in arrived]  # beyond a held load
        metrics = {**arrived, **self.store.load_metrics(unread)} if unread else arrived
        kept: dict[int, Metrics] = {}
        short: dict[tuple[str, str], int] = {}  # a scope's loads held out of the window
        for i in base:
            load = loads[i].id
            kept[load] = {k: v for k, v in metrics[load].items() if not _covered(out.get(load, ()), k)}
            for scope in {k[:2] for k in metrics[load] if k not in kept[load]}:
                short[scope] = short.get(scope, 0) + 1
        rows = ("Dataset", "*", "RowCount")
        further = iter(reach[window.size :])
        while any(short.values()):
            # the next earlier loads, a window's worth at a time: a year of history is not read
            chunk = [loads[i].id for i in itertools.islice(further, window.size)]
            if not chunk:
                break
            metrics = dict(self.store.load_metrics(chunk))
            for load in chunk:
                patterns = out.get(load, ())
                for scope, missing in short.items():
                    found = {
                        k: v for k, v in metrics[load].items() if k[:2] == scope and not _covered(patterns, k)
                    }
                    if not missing or not found:
                        continue
                    # a rate over the load's rows needs its row count (the volume band reads it too)
                    if rows in metrics[load] and not _covered(patterns, rows):
                        found[rows] = metrics[load][rows]
                    kept[load] = {**kept.get(load, {}), **found}
                    short[scope] = missing - 1
        chosen = [loads[i] for i in reach if loads[i].id in kept]
        return chosen, kept


_WHOLE = ("*", "*", "*")


def _covered(patterns: Iterable[tuple[str, str, str]], key: tuple[str, str, str]) -> bool:
    return any(matches(pattern, key) for pattern in patterns)


def distinct_counts(metrics: Metrics) -> dict[str, float | None]:
    """Each column's distinct count among a load's metrics."""
    return {
        instance: value
        for (entity, instance, name), value in metrics.items()
        if entity == "Column" and name == "DistinctValuesCount"
    }


# The series each judgement is about. The null-rate band judges the missing rate (nulls plus
# blanks, or nulls only with ``null_rate: {blanks: false}``), not the stored NullRate: the band
# and its alert are shown beside the rate they judged.
MISSING_RATE = "MissingRate"
_JUDGED = {MISSING_RATE: "null_rate", "RowCount": "volume", "Minimum": "range", "Maximum": "range"}
_JUDGED.update(dict.fromkeys(SHAPE_METRICS, "shape"))  # one shape judgement holds every metric's band


def default_metric(column: str | None) -> str:
    """The series ``assay history`` shows without ``--metric``: a column's missing rate, else
    the row count."""
    return MISSING_RATE if column else "RowCount"


@dataclass(frozen=True)
class Point:
    """One load in a metric's history, with the band it was judged against. A profiled load has
    its ``load_date``; a ``dqdl run --dataset`` evaluation has none, only its ``load_time``."""

    load_date: date | None
    value: float | None
    low: float | None
    high: float | None
    severity: str | None
    message: str | None
    load_time: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "load_date": self.load_date.isoformat() if self.load_date else None,
            "load_time": self.load_time.isoformat() if self.load_time else None,
            "value": json_number(self.value),
            "low": json_number(self.low),
            "high": json_number(self.high),
            "severity": self.severity,
            "message": self.message,
        }


def history(
    store: MetricStore,
    dataset: str,
    *,
    column: str | None = None,
    metric: str | None = None,
    blanks: bool = True,
) -> list[Point]:
    """A metric's stored series over the dataset's current loads, oldest first, each with the
    band the load was judged against (for MissingRate, RowCount, Minimum and Maximum).

    A column's ``MissingRate`` (its default series) is the rate its null-rate band judged, as
    that judgement recorded it; a load judged without the band (switched off) shows its stored
    nulls plus blanks over its rows, or nulls only when ``blanks`` is false (the dataset's
    ``null_rate.blanks``). ``NullRate`` is the stored metric (nulls only), which no band judges.

    Profiled loads and ``dqdl run --dataset`` evaluations both count: an evaluation has no load
    date (its clock is its logical time), so it is found by the metric it stored.

    >>> from assay.store import MetricKey, MetricStore
    >>> with MetricStore.open("sqlite://") as store:
    ...     load = store.create_load("orders", logical_time=datetime(2026, 1, 1, 8, tzinfo=UTC))
    ...     store.save_metrics(load, {MetricKey.dataset("RowCount"): 3.0})
    ...     [(p.load_time.hour, p.value) for p in history(store, "orders")]
    [(8, 3.0)]
    """
    metric = metric or default_metric(column)
    entity, instance = ("Column", column) if column else ("Dataset", "*")
    if metric == MISSING_RATE and not column:
        raise ConfigError(f"{MISSING_RATE} is a column's: name one with --column")
    loads = list(reversed(store.window(dataset, date.max)))
    # Evaluations store no logical date, so the window of dated loads leaves them out.
    undated = [
        p
        for p in store.history(dataset, MetricKey(entity, instance, metric), before=_END_OF_TIME)
        if p.logical_date is None
    ]
    if not loads and not undated and not store.runs(dataset, limit=1):
        raise ConfigError(f"the store has no loads of dataset '{dataset}'")
    values = store.load_metrics([load.id for load in loads])
    if metric == MISSING_RATE:
        values = {load: _missing_rates(held, instance, blanks) for load, held in values.items()}
    if all((entity, instance, metric) not in values[load.id] for load in loads) and not undated:
        raise ConfigError(_no_metric(store, dataset, entity, instance, metric, loads))
    kind = _JUDGED.get(metric)
    judged: dict[int, Judgement] = {}
    if kind:
        for load, judgement in store.judgements(dataset, column=column or "", kind=kind):
            judged[load.id] = judgement
    points = []
    for load in loads:
        j = judged.get(load.id)
        value = values[load.id].get((entity, instance, metric))
        if j is not None and metric == MISSING_RATE and j.observed is not None:
            value = j.observed  # the rate the band judged, under the setting of its day
        low, high = (j.low, j.high) if j else (None, None)
        if j and j.kind == "shape" and j.detail:
            low, high = j.detail.get("bands", {}).get(metric, (None, None))
        relative = j.detail.get("unit_seconds") if j and j.detail else None
        if relative and load.logical_date is not None:  # a date band is kept relative to the load
            origin = days(load.logical_date) * float(relative)
            low = None if low is None else low + origin
            high = None if high is None else high + origin
        points.append(
            Point(
                load.logical_date,
                value,
                low,
                high,
                j.severity if j else None,
                j.message if j else None,
                load.logical_time,
            )
        )
    points += [Point(None, p.value, None, None, None, None, p.logical_time) for p in undated]
    # Oldest first across both kinds; a profiled load's time is the moment its date began.
    points.sort(key=lambda p: p.load_time or datetime.min.replace(tzinfo=UTC))
    return points


_END_OF_TIME = datetime.max.replace(tzinfo=UTC)


def _missing_rates(metrics: Metrics, column: str, blanks: bool) -> dict[tuple[str, str, str], float | None]:
    """A load's stored metrics with the column's missing rate added, from its counts."""
    rows = metrics.get(("Dataset", "*", "RowCount"))
    nulls = metrics.get(("Column", column, "NullCount"))
    if nulls is None:
        return dict(metrics)
    missing = nulls + ((metrics.get(("Column", column, "BlankCount")) or 0.0) if blanks else 0.0)
    return {**metrics, ("Column", column, MISSING_RATE): missing / rows if rows else None}


def _no_metric(
    store: MetricStore, dataset: str, entity: str, instance: str, metric: str, loads: list[LoadInfo]
) -> str:
    """Why there is no series: the metrics the dataset does have for that column (or the load)."""
    ids = [load.id for load in loads[-1:]] + [r.load_id for r in store.runs(dataset, limit=1) if r.load_id]
    found = sorted(
        {
            name
            for load in store.load_metrics(ids).values()
            for (e, i, name) in load
            if (e, i) == (entity, instance)
        }
    )
    if "NullCount" in found:  # derived from the counts, not stored
        found = sorted([*found, MISSING_RATE])
    where = f"for column '{instance}'" if entity == "Column" else "for the whole load"
    known = f"; it has {', '.join(found)}" if found else ""
    return f"dataset '{dataset}' has no metric {metric} {where}{known} (choose one with --metric)"
