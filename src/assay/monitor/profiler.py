"""One load's profile as stage steps that take values and return values: :func:`measure` reads
the load and measures it in one query; :func:`persist` stores the load, its metrics and its
profile; :func:`judge` judges it against the window the history read model finds; :func:`route`
keeps the judgements and opens the decisions. The platform's profile run
(:mod:`assay.platform.runs.profile`) calls them inside one run, so that every profile that writes
to a store is recorded and opens its incidents; :func:`profile` only measures (the Python API
without a store, the benchmarks of the scan).

>>> import pyarrow as pa
>>> from datetime import date
>>> result = profile(pa.table({"venue": ["XLON", "XPAR", "XLON"]}), dataset="trades",
...                  load_date=date(2026, 1, 1))
>>> result.profile.rows, result.profile.columns[0].values, result.load_id
(3, {'XLON': 2, 'XPAR': 1}, None)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.engine import Column, DataKind, Engine
from assay.errors import ConfigError
from assay.judge import drift
from assay.judge.result import json_number
from assay.lake.readers import ReadOptions, Registered, file_format, register
from assay.measure.profile import (
    CAP,
    ColumnProfile,
    LoadProfile,
    Metrics,
    counted_pairs,
    exact_columns,
    is_small,
)
from assay.measure.profile import profile as measure_columns
from assay.monitor.history import History, distinct_counts
from assay.monitor.settings import DatasetConfig
from assay.store.profiles import UNKNOWN, Judgement

if TYPE_CHECKING:
    from assay.store import MetricStore


@dataclass
class Alert:
    """One alert, in the shape of the ``--alerts`` file."""

    dataset: str
    load_date: date
    column: str | None
    kind: str
    severity: str
    observed: float | None
    expected: tuple[float, float] | None
    window: drift.Window
    message: str
    values: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "dataset": self.dataset,
            "load_date": self.load_date.isoformat(),
            "column": self.column,
            "kind": self.kind,
            "severity": self.severity,
            "observed": json_number(self.observed),
            "expected": None
            if self.expected is None
            else {"low": json_number(self.expected[0]), "high": json_number(self.expected[1])},
            "window": self.window.to_dict(),
            "message": self.message,
        }
        if self.kind == "new_value":
            out["values"] = self.values or []
        return out


@dataclass
class ProfileResult:
    dataset: str
    load_date: date
    profile: LoadProfile
    alerts: list[Alert] = field(default_factory=list)
    judgements: list[Judgement] = field(default_factory=list)
    load_id: int | None = None
    replaced: int = 0
    decisions: list[int] = field(default_factory=list)
    history: int = 0  # loads in the window
    queries: int = 0
    floods: dict[str, tuple[int, int]] = field(default_factory=dict)  # category -> (new, distinct) today
    learning: frozenset[str] = frozenset()  # categories whose values recur only across loads, still learned
    owners: dict[str, str] | None = None  # from the dataset's check document
    tier: int | None = None
    inferred: frozenset[str] = frozenset()  # columns whose type the reader inferred from text
    source: Path | None = None  # the file the load was read from

    def run_summary(self) -> dict[str, Any]:
        """What the run record keeps of a profile: its size, its alerts and its decisions."""
        return {
            "dataset": self.dataset,
            "load_date": self.load_date.isoformat(),
            "rows": self.profile.rows,
            "columns": len(self.profile.columns),
            "window_loads": self.history,
            "alerts": [a.to_dict() for a in self.alerts],
            "decisions": self.decisions,
            "queries": self.queries,
            # what was judged, alert or not: an incident resolves on the judgements that pass
            "judged": sorted({(j.kind, j.column or "") for j in self.judgements}),
            **({"owners": self.owners} if self.owners else {}),
            **({"tier": self.tier} if self.tier is not None else {}),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "load_date": self.load_date.isoformat(),
            "rows": self.profile.rows,
            "replaced_earlier_profile": bool(self.replaced),
            "window_loads": self.history,
            "columns": [_column_dict(c) for c in self.profile.columns],
            "alerts": [a.to_dict() for a in self.alerts],
            "decisions": self.decisions,
        }


def _column_dict(c: ColumnProfile) -> dict[str, Any]:
    return {
        "name": c.name,
        "type": c.type,
        "nulls": c.nulls,
        "null_rate": c.null_rate,
        "blanks": c.blanks,
        "distinct": c.distinct,
        "distinct_exact": c.distinct_exact,
        "min": None if c.minimum is None else str(c.minimum),
        "max": None if c.maximum is None else str(c.maximum),
        "top": [{"value": v, "count": n, "share": s} for v, n, s in c.top()],
    }


def window_of(window: str | drift.Window | None, config: DatasetConfig) -> drift.Window:
    """The window a load is judged against: the one given, else the settings'."""
    return window if isinstance(window, drift.Window) else drift.Window.parse(window or config.window)


def measure(
    engine: Engine,
    data: Any,
    *,
    dataset: str,
    load_date: date,
    config: DatasetConfig,
    history: History | None = None,
    read: ReadOptions | None = None,
) -> ProfileResult:
    """Read one load into ``engine`` and measure every column in one query. With the dataset's
    ``history``, what earlier loads taught is used: the columns that were categories, which
    columns to count exactly, and which of today's categories are floods."""
    table = register(engine, "__load", data, read)
    # Numbers and dates are counted exactly while their last load's count was within the cap;
    # column pairs are counted while the last load left their order open (counted_pairs).
    previous = history.previous_metrics() if history else {}
    exact = exact_columns(
        table.columns,
        distinct_counts(previous) if history else None,
        small=is_small(engine, table.name, len(table.columns)),
    )
    pairs, mixed = counted_pairs(table.columns, previous)
    load = measure_columns(
        engine,
        table.name,
        list(table.columns),
        categories(history, table.columns, config, previous),
        exact=exact,
        pairs=pairs,
        mixed=mixed,
    )
    _untyped(load, history)
    result = ProfileResult(
        dataset, load_date, load, queries=engine.queries, owners=config.owners, tier=config.tier
    )
    result.inferred = _inferred(table, read)
    result.source = table.path
    if history is not None:
        result.floods, result.learning = _categories(history, load, config, previous)
    return result


def categories(
    history: History | None, columns: Sequence[Column], config: DatasetConfig, previous: Metrics
) -> list[str]:
    """The columns a load's scan keeps the values of whatever their count inside the load: the
    configuration's categories, and what earlier loads taught (``previous``: the metrics of the
    latest earlier load). A check run's slice is counted with the same list, from its profile's
    own history."""
    text = {c.name for c in columns if c.kind in (DataKind.STRING, DataKind.BOOLEAN)}
    text -= {*config.categorical, *config.not_categorical}
    # A column profiled as categorical before stays so, if today's load is not mostly new
    # values: a small load must not hide a new value because it has few rows per value. Only
    # while it is text or boolean: a number is a category only when the configuration says so
    # (a number column read as text for one load, "3.5 ", is not a category of numbers after).
    # A column tried as a panel whose values did not recur (ids: two loads of them) is not
    # sticky: it goes back to being counted by its size, and estimated beyond the cap.
    tried = history.categorical() if history else set()
    latest = history.latest() if history else None
    sticky = sorted(
        c for c in text & tried if not (history and latest and _failed(history.value_set(c), latest))
    )
    # A text column counted within the cap in the previous load may be a panel's dimension (46
    # cities, one row each a month): no value repeats inside a load, so the scan alone would
    # never keep its values. Its values are kept, and whether they recur across loads decides
    # after the scan (_categories): the few loads it takes teach, a set that does not recur is
    # dropped. It costs nothing more: a column within the cap is counted exactly anyway.
    panels = sorted((text - tried) & _within_cap(previous))
    return [*config.categorical, *sticky, *panels]


def persist(
    store: MetricStore, result: ProfileResult, *, sha256: str | None, run_id: str | None = None
) -> None:
    """Store the load, its metrics and its profile, replacing an earlier profile of the same
    date. Inside the caller's transaction holding the dataset: a load is never seen without its
    profile."""
    earlier = store.load_for_date(result.dataset, result.load_date)
    result.load_id = store.create_load(
        result.dataset,
        logical_time=datetime.combine(result.load_date, time(0), UTC),
        logical_date=result.load_date,
        source_path=str(result.source) if result.source else None,
        source_sha256=sha256,
        row_count=result.profile.rows,
        run_id=run_id,
    )
    store.save_metrics(result.load_id, result.profile.metrics())
    store.save_profile(
        result.load_id,
        result.profile.schema,
        {c.name: c.values for c in result.profile.columns if c.values is not None},
    )
    result.replaced = store.supersede(result.dataset, result.load_date, keep=result.load_id) if earlier else 0


def recorded(
    history: History,
    load: LoadProfile,
    *,
    dataset: str,
    load_date: date,
    config: DatasetConfig,
    inferred: frozenset[str] = frozenset(),
) -> ProfileResult:
    """A load another flow measured (a check run's slice, profiled inside its own statement),
    made what :func:`measure` makes of a load it read, so that :func:`judge` and :func:`route`
    take it alike: a column with no value has no type that day, and only the columns that are
    categories keep their value sets (today's floods and panels still learning said apart).
    ``inferred``: the columns whose types a reader inferred from text. ``history`` is the one of
    the load's own partition."""
    _untyped(load, history)
    result = ProfileResult(dataset, load_date, load, owners=config.owners, tier=config.tier)
    result.inferred = inferred
    result.floods, result.learning = _categories(history, load, config, history.previous_metrics())
    return result


def judge(
    history: History, result: ProfileResult, window: drift.Window, config: DatasetConfig
) -> list[drift.Finding]:
    """Judge the load against the window of earlier loads; its judgements and alerts are added to
    ``result``. Read inside the transaction that stored the load: two runs on one dataset judge
    each other's loads whole."""
    # every category's past is read (a swap reads its partner's, a flood's included); whether
    # its new values are judged is the judgement's switch
    categories = [c.name for c in result.profile.columns if c.values is not None or c.name in result.floods]
    past = history.past(window, categories)
    result.history = len(past.loads)
    today = drift.Today(result.profile, result.load_date, result.inferred, result.floods, result.learning)
    findings = drift.judge(drift.Case(today, past, config.drift()))
    for f in findings:
        low, high = f.expected if f.expected else (None, None)
        result.judgements.append(
            Judgement(f.column or "", f.kind, f.observed, low, high, f.severity, f.message, f.detail)
        )
        if f.severity is not None:
            result.alerts.append(
                Alert(
                    result.dataset,
                    result.load_date,
                    f.column,
                    f.kind,
                    f.severity,
                    f.observed,
                    f.expected,
                    window,
                    f.message,
                    f.values,
                )
            )
    return findings


def route(
    store: MetricStore, result: ProfileResult, findings: Sequence[drift.Finding], *, source: str | None = None
) -> None:
    """Keep the judgements, and open a decision for each new value waiting on one (the values an
    earlier load brought add today's rows to theirs); the decisions no longer needed by this
    load date are settled. ``source`` names where the rows came from (default
    ``profile:<load date>``; a check run's slice names its profile)."""
    assert result.load_id is not None
    store.save_judgements(result.load_id, result.judgements)
    # the rows a load date brings to a decision are counted once, however often it is profiled
    source = source or f"profile:{result.load_date.isoformat()}"
    for alert in result.alerts:
        if alert.kind == "new_value" and alert.column is not None:
            for item in alert.values or []:
                if item.get("decision") == "pending":
                    result.decisions.append(
                        store.open_decision(
                            result.dataset,
                            alert.column,
                            item["value"],
                            item["count"],
                            result.load_id,
                            source=source,
                        )
                    )
    for f in findings:
        for value, count in f.waiting:
            assert f.column is not None
            result.decisions.append(
                store.open_decision(result.dataset, f.column, value, count, result.load_id, source=source)
            )
    store.settle_decisions(result.dataset, source, keep=result.decisions)


def profile(
    data: Any,
    *,
    dataset: str,
    load_date: date,
    config: DatasetConfig | None = None,
    engine: Engine | str | Any = None,
    read: ReadOptions | None = None,
    store: object = None,
    window: object = None,
) -> ProfileResult:
    """Measure one load of ``dataset`` in one query, without a store: nothing is kept, nothing
    judged. ``engine`` is an open engine (the caller's: not closed), an engine's name
    (``"duckdb"``, ``"spark"``; default ``ASSAY_ENGINE``, else DuckDB) or a ``SparkSession``.

    A profile that writes to a store is a recorded run, with its incidents:
    :func:`assay.platform.flows.profile`. ``store`` and ``window`` are refused here with a
    :class:`~assay.errors.ConfigError` that says so (this library sits below the platform)."""
    if store is not None or window is not None:
        given = "store=" if store is not None else "window="
        raise ConfigError(
            f"assay.monitor.profile only measures a load; {given} stores and judges it, which is a "
            "recorded run: call assay.platform.flows.profile(data, dataset=..., load_date=..., "
            'store=..., workspace=...) instead (docs/monitor.md, "In the code")'
        )
    own = not isinstance(engine, Engine)
    if not isinstance(engine, Engine):  # a name ("duckdb", "spark"), a SparkSession or None
        from assay.engine.registry import engine_for, open_engine

        engine = open_engine(engine_for(engine, data))
    try:
        return measure(
            engine, data, dataset=dataset, load_date=load_date, config=config or DatasetConfig(), read=read
        )
    finally:
        if own:
            engine.close()


def _untyped(load: LoadProfile, history: History | None) -> None:
    """A column with no value in a load carries no type evidence: a CSV reader makes a blank
    column text, and pandas writes a column of None as Parquet's null type (text too). Its type
    is ``unknown`` that load, it holds no value of a category, and its empty cells are missing
    values of the column's last known type: nulls, as a blank cell of a number is (a text
    column's blanks stay blanks: a text column that is blank one day is still text)."""
    empty = [c for c in load.columns if c.type == "string" and c.nulls + c.blanks == c.rows]
    if not empty:
        return
    known = history.known_types([c.name for c in empty]) if history else {}
    for column in empty:
        if known.get(column.name) == "string":
            continue
        column.type, column.kind = UNKNOWN, DataKind.OTHER
        column.nulls, column.blanks = column.rows, 0
        column.distinct, column.distinct_exact = 0, True
        column.values = column.counts = None
        column.temporal_text = False


def _inferred(table: Registered, read: ReadOptions | None) -> frozenset[str]:
    """The columns whose types the reader inferred from text (a CSV or JSON file, types not
    declared): a file whose values all fit a narrower type is read as it (``0`` is a long)."""
    if table.path is None or file_format(table.path) not in ("csv", "json", "jsonl"):
        return frozenset()
    declared = set(read.types.names) if read is not None and read.types is not None else set()
    return frozenset(c.name for c in table.columns if c.name not in declared)


_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}(:?\d{2})?)?")


def _categories(
    history: History, load: LoadProfile, config: DatasetConfig, previous: Metrics
) -> tuple[dict[str, tuple[int, int]], frozenset[str]]:
    """Keep a value set only for the columns that are categories: their values repeat across
    loads. Text that reads as dates or timestamps never is, nor a column the configuration lists
    in ``not_categorical``; ``categorical`` always is. A column's first load teaches (nothing to
    compare with). After it, a column is no category when most of today's distinct values are new
    (more than 3) and most of the values it held before never came back: an id, a text
    timestamp, free text. A column whose values did repeat and that brings mostly new values
    today (more than 10) is still a category, but a flood is not a list of decisions: returned
    as ``{column: (new, distinct)}`` for one alert, and today's values are not kept.

    A column whose values do not repeat inside the load, today nor in the previous load (more
    than ``max(10, rows / 2)`` distinct: a panel's 46 cities, one row each) is a category only by
    recurrence across loads (:func:`_recurs`); while it is learning (fewer than two loads of its
    values), its values are kept and not judged, returned as the second value. (A category that
    repeated inside its previous load stays one in a small load, by the rules above.)"""
    floods: dict[str, tuple[int, int]] = {}
    learning: set[str] = set()
    for column in load.columns:
        values = column.values
        if values is None or column.name in config.categorical:
            continue
        if column.name in config.not_categorical or (
            values and all(_TIMESTAMP.fullmatch(v.strip()) for v in values)
        ):
            column.values, column.counts = None, values  # top values still shown
            continue
        known = history.value_set(column.name)
        # a panel's dimension is kept while its values recur; a flood is one still
        keep = True
        if _spread(len(values), column.rows - column.nulls) and _panel(column.name, previous):
            recurs = _recurs(known)
            if recurs is None:
                learning.add(column.name)
                continue
            keep = recurs
        fresh = sum(1 for value in values if value not in known)
        if keep and (not known or fresh <= max(3, len(values) / 2)):
            continue
        recurring = sum(1 for v, (first, last) in known.items() if first != last or v in values)
        if recurring >= len(known) / 2 and fresh > max(3, len(values) / 2):
            if keep and fresh <= max(10, len(values) / 2):
                continue
            if fresh > max(10, len(values) / 2):
                floods[column.name] = (fresh, len(values))
        column.values, column.counts = None, values
    return floods, frozenset(learning)


PANEL_RECURRENCE = 0.9  # the share of a panel's known values its latest kept load held again


def _recurs(known: Mapping[str, tuple[date | None, date | None]]) -> bool | None:
    """Whether a column's known values recur load after load, as a panel's dimension does: at
    least :data:`PANEL_RECURRENCE` of every value it ever held was in the latest load that kept
    its values and in an earlier one. None while that cannot be told (fewer than two loads of
    its values). An id's or a free text's values do not come back: 800 tail numbers a day out
    of 1,100 over two days (73 %), against 46 cities of 46 every month.

    >>> d1, d2 = date(2026, 1, 1), date(2026, 2, 1)
    >>> _recurs({}), _recurs({"A": (d1, d1)}), _recurs({"A": (d1, d2), "B": (d1, d2)})
    (None, None, True)
    >>> _recurs({"A": (d1, d2), "B": (d1, d1), "C": (d2, d2)})
    False
    """
    dates = [last for _, last in known.values() if last is not None]
    if not dates:
        return None
    latest = max(dates)
    if all(first == latest for first, _ in known.values()):
        return None
    again = sum(1 for first, last in known.values() if last == latest and first != latest)
    return again >= PANEL_RECURRENCE * len(known)


def _failed(known: Mapping[str, tuple[date | None, date | None]], latest: date) -> bool:
    """Whether a column's values (``known``) do not recur and the latest earlier load (of date
    ``latest``) did not keep them: an id tried as a panel's dimension. A category whose values
    the latest load kept is judged by :func:`_categories` again."""
    dates = [last for _, last in known.values() if last is not None]
    return _recurs(known) is False and max(dates) < latest


def _panel(column: str, metrics: Metrics) -> bool:
    """Whether a load's values of ``column`` hardly repeated inside it (see :func:`_spread`)."""
    rows = (metrics.get(("Dataset", "*", "RowCount")) or 0) - (
        metrics.get(("Column", column, "NullCount")) or 0
    )
    return _spread(metrics.get(("Column", column, "DistinctValuesCount")), rows)


def _spread(distinct: float | None, present: float) -> bool:
    """Whether a load's values of a column hardly repeat: more than ``max(10, present / 2)``
    distinct (None, not measured: as if so)."""
    return distinct is None or distinct > max(10, present // 2)


def _within_cap(metrics: Metrics) -> set[str]:
    """The columns a load counted with at most :data:`~assay.measure.profile.CAP` distinct values."""
    return {
        name for name, count in distinct_counts(metrics).items() if count is not None and 0 < count <= CAP
    }
