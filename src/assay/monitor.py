"""Profile every load, keep the profiles, judge today against a window of earlier loads.

>>> import pyarrow as pa
>>> from datetime import date
>>> from assay.store import MetricStore
>>> with MetricStore.open("sqlite://") as store:
...     for day in range(1, 8):
...         result = profile(pa.table({"venue": ["XLON", "XPAR"]}), dataset="trades",
...                          load_date=date(2026, 1, day), store=store)
...     result = profile(pa.table({"venue": ["XLON", "XNEW"]}), dataset="trades",
...                      load_date=date(2026, 1, 8), store=store)
>>> [(a.kind, a.column, a.values) for a in result.alerts]
[('new_value', 'venue', [{'value': 'XNEW', 'count': 1, 'decision': 'pending'}])]
"""

from __future__ import annotations

import calendar
import itertools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.engine import DataKind, Engine
from assay.engine.types import canonical
from assay.errors import ConfigError
from assay.gate.config import GateConfig
from assay.judge import anomaly, drift
from assay.judge.result import json_number
from assay.lake import checksum as checksums
from assay.lake.readers import ReadOptions, Registered, file_format, register
from assay.measure.profile import (
    ColumnProfile,
    LoadProfile,
    Metrics,
    counted_pairs,
    exact_columns,
    is_small,
)
from assay.measure.profile import profile as measure
from assay.store import MetricKey
from assay.store.profiles import UNKNOWN, Judgement, LoadInfo

if TYPE_CHECKING:
    from assay.platform.runs.run import Run
    from assay.store import MetricStore

KINDS = ("null_rate", "new_value", "volume", "range", "schema")
# Types a reader infers from text, narrowest first: a file whose values all fit the narrower
# type is read as it (R writes 0, not 0.0; a day of dates without a time is read as dates).
_WIDENING = (("int", "long", "double"), ("date", "timestamp"))
SENSITIVITY = (0.25, 4.0)  # the range a dataset's sensitivity may take


class DatasetConfig(BaseModel):
    """A dataset's monitoring configuration (YAML; ``<workspace>/checks/<dataset>.yaml`` by default).

    >>> document = {"categorical": ["venue_id"], "null_rate": {"conditioned": {"fill": "row_count"}}}
    >>> DatasetConfig.model_validate(document).window
    'last:20'
    >>> config = DatasetConfig.model_validate({"checks": {"range": False},
    ...                                        "columns": {"note": {"checks": {"null_rate": False}}}})
    >>> config.enabled("range"), config.enabled("null_rate", "note"), config.enabled("null_rate", "qty")
    (False, False, True)
    """

    model_config = ConfigDict(extra="forbid")

    dataset: str | None = None
    window: str = "last:20"
    sensitivity: float = Field(
        default=1.0,
        ge=SENSITIVITY[0],
        le=SENSITIVITY[1],
        description="divides the bands' sigma multipliers: 2 alerts at half the distance, 0.5 at twice",
    )
    categorical: list[str] = Field(
        default_factory=list, description="columns whose values are counted, beyond text and booleans"
    )
    not_categorical: list[str] = Field(
        default_factory=list, description="text or boolean columns that are never a category"
    )
    domain_columns: list[str] = Field(
        default_factory=list, description="the gate holds rows with an undecided new value here"
    )
    checks: DatasetChecks = Field(default_factory=lambda: DatasetChecks())
    columns: dict[str, ColumnConfig] = Field(default_factory=dict)
    null_rate: NullRateConfig = Field(default_factory=lambda: NullRateConfig())
    gate: GateConfig | None = Field(default=None, description="the gate's key, order and contributor columns")
    # Read from the dataset's check document when it has one (docs/checks.md): kept in the runs.
    owners: dict[str, str] | None = Field(default=None, description="the dataset's owners (team, contact)")
    tier: int | None = Field(default=None, ge=0, le=3, description="the dataset's tier, 0 the most important")

    @field_validator("window")
    @classmethod
    def _window(cls, value: str) -> str:
        drift.Window.parse(value)
        return value

    @model_validator(mode="after")
    def _overrides(self) -> DatasetConfig:
        both = sorted(set(self.categorical) & set(self.not_categorical))
        if both:
            raise ValueError(f"column(s) {', '.join(both)} cannot be both categorical and not_categorical")
        return self

    def enabled(self, kind: str, column: str | None = None) -> bool:
        """Whether judgement ``kind`` runs (for ``column``): a column's switch, else the dataset's."""
        name = "schema_" if kind == "schema" else kind  # ``schema`` would shadow BaseModel.schema
        own = self.columns.get(column) if column is not None else None
        switch = getattr(own.checks, name, None) if own is not None else None
        return bool(getattr(self.checks, name)) if switch is None else bool(switch)


class DatasetChecks(BaseModel):
    """Which judgements run for the whole dataset (all do by default)."""

    model_config = ConfigDict(extra="forbid")

    null_rate: bool = True
    new_value: bool = True
    volume: bool = True
    range: bool = True
    schema_: bool = Field(default=True, alias="schema")


class ColumnChecks(BaseModel):
    """A column's own switches; unset ones follow the dataset's (volume is the dataset's only)."""

    model_config = ConfigDict(extra="forbid")

    null_rate: bool | None = None
    new_value: bool | None = None
    range: bool | None = None
    schema_: bool | None = Field(default=None, alias="schema")


class ColumnConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    checks: ColumnChecks = Field(default_factory=lambda: ColumnChecks())


class NullRateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    conditioned: dict[str, str] = Field(
        default_factory=dict,
        description="column -> activity: 'row_count' or a metric of the same load, e.g. Column.qty.Maximum",
    )
    blanks: bool = Field(
        default=True,
        description="judge nulls plus blank text (Column.<c>.BlankCount); false: nulls only",
    )


DatasetConfig.model_rebuild()


def load_config(path: Path) -> DatasetConfig:
    """Read a dataset configuration file; a mistake is a ConfigError naming the file and field."""
    # here: a dataset without a file (the common case of `assay profile`) never needs YAML
    from assay.lang import yamlsafe

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {' '.join(str(error).split())}") from None
    document = yamlsafe.load(text, filename=str(path)) or {}
    if isinstance(document, dict) and document.get("kind") == "DatasetChecks":
        # A check document is the dataset's home: the monitor reads its monitor: and gate:
        # sections, owners and tier (docs/checks.md).
        from assay.platform.checks.document import load_document

        config: DatasetConfig = load_document(path).monitor_config()
        return config
    try:
        return DatasetConfig.model_validate(document)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'document'}: {e['msg']}" for e in error.errors()
        )
        raise ConfigError(f"{path}: {problems}") from None


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
    owners: dict[str, str] | None = None  # from the dataset's check document
    tier: int | None = None
    inferred: frozenset[str] = frozenset()  # columns whose type the reader inferred from text

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


def profile(
    data: Any,
    *,
    dataset: str,
    load_date: date,
    store: MetricStore | None = None,
    window: str | drift.Window | None = None,
    config: DatasetConfig | None = None,
    engine: Engine | str | Any = None,
    run: Run | None = None,
    read: ReadOptions | None = None,
) -> ProfileResult:
    """Profile one load of ``dataset`` in one query, store it (replacing an earlier profile of the
    same date), and judge it against the window of earlier loads. Without a store, only measure.
    Inside a ``run`` (:func:`assay.platform.flows.profile`), the run's completed record is
    written in the same transaction as the load, its profile, its judgement and its decisions.
    ``engine`` is an open engine, an engine's name (``"duckdb"``, ``"spark"``; default
    ``ASSAY_ENGINE``, else DuckDB) or a ``SparkSession`` to run on."""
    config = config or DatasetConfig()
    chosen = window if isinstance(window, drift.Window) else drift.Window.parse(window or config.window)
    # The file's checksum is read beside the engine's work (assay.lake.checksum), or taken from
    # the command that began reading it before its imports.
    source = Path(data) if isinstance(data, str | os.PathLike) and store is not None else None
    checksum = checksums.later(source) if source is not None else None
    own = not isinstance(engine, Engine)
    try:
        if not isinstance(engine, Engine):  # a name ("duckdb", "spark"), a SparkSession or None
            from assay.engine.registry import engine_for, open_engine

            engine = open_engine(engine_for(engine, data))
        table = register(engine, "__load", data, read)
        # A column profiled as categorical before stays so, if today's load is not mostly new
        # values: a small load must not hide a new value because it has few rows per value. Only
        # while it is text or boolean: a number is a category only when the configuration says so
        # (a number column read as text for one load, "3.5 ", is not a category of numbers after).
        sticky = (
            sorted(
                {c.name for c in table.columns if c.kind in (DataKind.STRING, DataKind.BOOLEAN)}
                & store.categorical_columns(dataset) - {*config.categorical, *config.not_categorical}
            )
            if store
            else []
        )
        # Numbers and dates are counted exactly while their last load's count was within the cap;
        # column pairs are counted while the last load left their order open (counted_pairs).
        previous = _previous_metrics(store, dataset, load_date) if store else {}
        exact = exact_columns(
            table.columns,
            _distinct(previous) if store else None,
            small=is_small(engine, table.name, len(table.columns)),
        )
        pairs, mixed = counted_pairs(table.columns, previous)
        load = measure(
            engine,
            table.name,
            list(table.columns),
            [*config.categorical, *sticky],
            exact=exact,
            pairs=pairs,
            mixed=mixed,
        )
        _untyped(load, store, dataset, load_date)
        result = ProfileResult(
            dataset, load_date, load, queries=engine.queries, owners=config.owners, tier=config.tier
        )
        result.inferred = _inferred(table, read)
        if store is None:
            return result
        source_sha256 = checksum.result() if checksum else None
        result.floods = _categories(store, dataset, load_date, load, config)
        # The store part in one transaction, holding the dataset: a load is never seen without
        # its profile, and two runs on one dataset judge each other's loads whole.
        with store.transaction(lock=dataset):
            earlier = store.load_for_date(dataset, load_date)
            path = table.path
            result.load_id = store.create_load(
                dataset,
                logical_time=datetime.combine(load_date, time(0), UTC),
                logical_date=load_date,
                source_path=str(path) if path else None,
                source_sha256=source_sha256,
                row_count=load.rows,
                run_id=None if run is None else run.id,
            )
            store.save_metrics(result.load_id, load.metrics())
            store.save_profile(
                result.load_id,
                load.schema,
                {c.name: c.values for c in load.columns if c.values is not None},
            )
            result.replaced = store.supersede(dataset, load_date, keep=result.load_id) if earlier else 0
            _judge(store, result, chosen, config)
            if run is not None:
                run.inputs = [replace(item, sha256=source_sha256) for item in run.inputs]
                run.counts = {"rows": load.rows, "columns": len(load.columns), "alerts": len(result.alerts)}
                run.complete(summary=result.run_summary(), load_id=result.load_id)
        return result
    finally:
        if checksum is not None:
            checksum.cancel()  # done already, or no longer needed
        if own and isinstance(engine, Engine):
            engine.close()


def _untyped(load: LoadProfile, store: MetricStore | None, dataset: str, load_date: date) -> None:
    """A column with no value in a load carries no type evidence: a CSV reader makes a blank
    column text, and pandas writes a column of None as Parquet's null type (text too). Its type
    is ``unknown`` that load, it holds no value of a category, and its empty cells are missing
    values of the column's last known type: nulls, as a blank cell of a number is (a text
    column's blanks stay blanks: a text column that is blank one day is still text)."""
    empty = [c for c in load.columns if c.type == "string" and c.nulls + c.blanks == c.rows]
    if not empty:
        return
    known = store.known_types(dataset, load_date, [c.name for c in empty]) if store else {}
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
    store: MetricStore, dataset: str, load_date: date, load: LoadProfile, config: DatasetConfig
) -> dict[str, tuple[int, int]]:
    """Keep a value set only for the columns that are categories: their values repeat across
    loads. Text that reads as dates or timestamps never is, nor a column the configuration lists
    in ``not_categorical``; ``categorical`` always is. A column's first load teaches (nothing to
    compare with). After it, a column is no category when most of today's distinct values are new
    (more than 3) and most of the values it held before never came back: an id, a text
    timestamp, free text. A column whose values did repeat and that brings mostly new values
    today (more than 10) is still a category, but a flood is not a list of decisions: returned
    as ``{column: (new, distinct)}`` for one alert, and today's values are not kept."""
    floods: dict[str, tuple[int, int]] = {}
    for column in load.columns:
        values = column.values
        if values is None or column.name in config.categorical:
            continue
        if column.name in config.not_categorical or (
            values and all(_TIMESTAMP.fullmatch(v.strip()) for v in values)
        ):
            column.values, column.counts = None, values  # top values still shown
            continue
        known = store.value_set(dataset, column.name, before=load_date)
        fresh = sum(1 for value in values if value not in known)
        if not known or fresh <= max(3, len(values) / 2):
            continue
        recurring = sum(1 for v, (first, last) in known.items() if first != last or v in values)
        if recurring >= len(known) / 2:
            if fresh <= max(10, len(values) / 2):
                continue
            floods[column.name] = (fresh, len(values))
        column.values, column.counts = None, values
    return floods


def _month_length(day: date) -> int:
    return calendar.monthrange(day.year, day.month)[1]


def _previous_metrics(store: MetricStore, dataset: str, load_date: date) -> Metrics:
    """The stored metrics of the dataset's latest load before ``load_date`` (none: empty)."""
    earlier = store.window(dataset, load_date)
    if not earlier:
        return {}
    return store.load_metrics([earlier[0].id])[earlier[0].id]


def _distinct(metrics: Metrics) -> dict[str, float | None]:
    """Each column's distinct count among a load's metrics."""
    return {
        instance: value
        for (entity, instance, name), value in metrics.items()
        if entity == "Column" and name == "DistinctValuesCount"
    }


def _judge(store: MetricStore, result: ProfileResult, window: drift.Window, config: DatasetConfig) -> None:
    assert result.load_id is not None
    loads = store.window(result.dataset, result.load_date)
    chosen = [loads[i] for i in window.select([load.logical_date for load in loads], result.load_date)]
    result.history = len(chosen)
    metrics = store.load_metrics([load.id for load in chosen])
    judge = _Judge(result, window, chosen, metrics, config)
    previous = store.load_schema(loads[0].id) if loads else None
    if previous is not None:  # a column with no value in the last load: its last known type
        unknown = [name for name, kind in previous if kind == UNKNOWN]
        known = store.known_types(result.dataset, result.load_date, unknown)
        previous = [(name, known.get(name, kind)) for name, kind in previous]
    judge.schema(previous)
    if config.enabled("volume"):
        judge.volume()
    for column in result.profile.columns:
        if config.enabled("null_rate", column.name):
            judge.null_rate(column)
        if config.enabled("range", column.name):
            judge.range(column)
        if not config.enabled("new_value", column.name):
            continue
        if column.name in result.floods:
            judge.flood(column, *result.floods[column.name])
        elif column.values is not None and loads:
            seen = store.value_set(result.dataset, column.name, before=result.load_date)
            status = store.decision_status(result.dataset, column.name)
            judge.new_values(column, seen, status)
    store.save_judgements(result.load_id, result.judgements)
    # the rows a load date brings to a decision are counted once, however often it is profiled
    source = f"profile:{result.load_date.isoformat()}"
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
    for column_name, value, count in judge.waiting:
        result.decisions.append(
            store.open_decision(result.dataset, column_name, value, count, result.load_id, source=source)
        )
    store.settle_decisions(result.dataset, source, keep=result.decisions)


class _Judge:
    def __init__(
        self,
        result: ProfileResult,
        window: drift.Window,
        loads: list[LoadInfo],
        metrics: Mapping[int, Mapping[tuple[str, str, str], float | None]],
        config: DatasetConfig,
    ) -> None:
        self.result = result
        self.window = window
        self.loads = loads
        self.metrics = metrics
        self.config = config
        self.waiting: list[tuple[str, str, int]] = []  # (column, value, rows) of pending values seen before
        self.today = result.profile.metrics()  # today's load as stored metrics

    def _series(self, entity: str, instance: str, name: str) -> list[float | None]:
        return [self.metrics[load.id].get((entity, instance, name)) for load in self.loads]

    def _record(
        self,
        column: str | None,
        kind: str,
        observed: float | None,
        expected: tuple[float, float] | None,
        severity: str | None,
        message: str,
        values: list[dict[str, Any]] | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        low, high = expected if expected else (None, None)
        self.result.judgements.append(
            Judgement(column or "", kind, observed, low, high, severity, message, detail)
        )
        if severity is not None:
            self.result.alerts.append(
                Alert(
                    self.result.dataset,
                    self.result.load_date,
                    column,
                    kind,
                    severity,
                    observed,
                    expected,
                    self.window,
                    message,
                    values,
                )
            )

    def schema(self, previous: Sequence[tuple[str, str]] | None) -> None:
        if previous is None:
            return
        # a profile stored before the canonical vocabulary holds DuckDB's names: read canonically
        before = {name: canonical("duckdb", kept) for name, kept in previous}
        now = dict(self.result.profile.schema)
        removed = [c for c in before if c not in now]
        added = [c for c in now if c not in before]
        changed = [c for c in now if c in before and before[c] != now[c]]
        on = self.config.enabled
        removed, added = [c for c in removed if on("schema", c)], [c for c in added if on("schema", c)]
        changed = [c for c in changed if on("schema", c)]
        for name in [c for c in changed if UNKNOWN in (before[c], now[c])]:
            changed.remove(name)
            if now[name] == UNKNOWN:
                self._record(
                    name, "schema", None, None, None,
                    f"column {name} has no value in this load: no type (last read as {before[name]})",
                )  # fmt: skip
        for name in [c for c in changed if c in self.result.inferred and self._loose(before[c], c)]:
            changed.remove(name)
            self._record(
                name, "schema", None, None, None,
                f"column {name} read from {before[name]} to {now[name]}, no schema change: a CSV's "
                "or JSON's types are inferred from each file's values",
            )  # fmt: skip
        for name in removed:
            self._record(name, "schema", None, None, "hard", f"column {name} ({before[name]}) is gone")
        for name in changed:
            self._record(
                name,
                "schema",
                None,
                None,
                "hard",
                f"column {name} changed type from {before[name]} to {now[name]}",
            )
        for name in added:
            self._record(name, "schema", None, None, "soft", f"column {name} ({now[name]}) is new")

    def _loose(self, before: str, column: str) -> bool:
        """Whether a column read as another type of its family today (``long`` and ``double``,
        ``date`` and ``timestamp``) is only inference: read wider, or narrower with every value
        still fitting the type it had (an integer beyond 2**53 does not fit a double)."""
        now = self.result.profile.column(column)
        family = next((f for f in _WIDENING if before in f and now.type in f), None)
        if family is None:
            return False
        if family.index(now.type) > family.index(before) or before != "double":
            return True
        extremes = [v for v in (now.minimum, now.maximum) if isinstance(v, int | float)]
        return all(abs(v) <= 2**53 for v in extremes)

    def volume(self) -> None:
        """The row count against its band. Loads a month apart are compared per day of their
        month: a daily file loaded monthly has 28 to 31 rows by the calendar, not by accident."""
        rows = self.result.profile.rows
        counts = self._series("Dataset", "*", "RowCount")
        dated = [(load.logical_date, v) for load, v in zip(self.loads, counts, strict=True) if v is not None]
        past = [v for _, v in dated]
        monthly = _monthly([d for d, _ in dated], self.result.load_date)
        if monthly:
            days = _month_length(self.result.load_date)
            past = [v * days / _month_length(d) for d, v in dated if d is not None]
        band = drift.volume_band(past, sensitivity=self.config.sensitivity)
        if band is None:
            self._record(
                None,
                "volume",
                rows,
                None,
                None,
                f"learning: {len(past)} of {anomaly.MIN_HISTORY} loads",
            )
            return
        severity = None
        if not band.contains(rows):
            severity = "hard" if rows == 0 or rows < band.low / 2 or rows > band.high * 2 else "soft"
        scaled = f", per day of a {_month_length(self.result.load_date)}-day month" if monthly else ""
        message = (
            f"{rows:,} rows; expected {max(0.0, band.low):,.0f} to {band.high:,.0f} "
            f"from {band.points} loads{scaled}"
        )
        detail = {"calendar": "month"} if monthly else None
        self._record(None, "volume", rows, (band.low, band.high), severity, message, detail=detail)

    def null_rate(self, column: ColumnProfile) -> None:
        """Missing values against their band: nulls plus blank text (``BlankCount``, when the
        profile records it; absent counts as none), or nulls only (``null_rate.blanks: false``)."""
        rows = self._series("Dataset", "*", "RowCount")
        nulls = self._series("Column", column.name, "NullCount")
        blanks = self._series("Column", column.name, "BlankCount")
        with_blanks = self.config.null_rate.blanks
        present = [
            i for i, (r, n) in enumerate(zip(rows, nulls, strict=True)) if r is not None and n is not None
        ]
        pairs = [
            (int(rows[i] or 0), int(nulls[i] or 0) + (int(blanks[i] or 0) if with_blanks else 0))
            for i in present
        ]
        activity_name = self.config.null_rate.conditioned.get(column.name)
        activity = today = None
        if activity_name:
            # over the same loads as the counts: a column added later has a shorter history
            series, today = self._activity(activity_name)
            activity = [series[i] for i in present]
            if today is None or any(a is None for a in activity):
                activity = today = None
        blank_today = int(self.today.get(_key(column.name, "BlankCount")) or 0) if with_blanks else 0
        missing = column.nulls + blank_today
        band = drift.null_rate_band(
            [r for r, _ in pairs],
            [n for _, n in pairs],
            column.rows,
            None if activity is None else [float(a) for a in activity if a is not None],
            today,
            sensitivity=self.config.sensitivity,
        )
        observed = missing / column.rows if column.rows else 0.0
        if band is None:
            self._record(
                column.name,
                "null_rate",
                observed,
                None,
                None,
                f"learning: {len(pairs)} of {drift.MIN_HISTORY} loads",
            )
            return
        severity = band.severity(observed)
        what = _missing(column.nulls, blank_today, with_blanks and (blank_today > 0 or any(blanks)))
        if band.model == "zero":
            none = "no missing value" if with_blanks else "no null"
            message = f"{what} ({observed:.2%}) in a column that had {none} in {band.loads} loads"
        elif band.model == "rare":
            message = f"{what} ({observed:.2%}); expected almost none: {band.history()}"
        else:
            message = (
                f"missing rate {observed:.2%} ({what} in {column.rows} rows); expected {band.expected:.2%}, "
                f"{band.soft[0]:.2%} to {band.soft[1]:.2%} ({band.model} band; {band.history()})"
            )
        self._record(
            column.name,
            "null_rate",
            observed,
            band.soft,
            severity,
            message,
            detail={
                "model": band.model,
                "hard": list(band.hard),
                "nulls": column.nulls,
                "blanks": blank_today,
                "loads": band.loads,
                "missing_loads": band.missing_loads,
                "left_out": band.left_out,
            },
        )

    def _activity(self, name: str) -> tuple[list[float | None], float | None]:
        """The activity series over the window (one entry per load) and today's activity."""
        if name == "row_count":
            return self._series("Dataset", "*", "RowCount"), float(self.result.profile.rows)
        parts = name.split(".")
        if len(parts) < 3 or parts[0] not in ("Dataset", "Column"):
            raise ConfigError(
                f"null_rate.conditioned: activity '{name}' must be row_count "
                "or a metric of the load such as Column.qty.Maximum"
            )
        entity, instance, metric = parts[0], ".".join(parts[1:-1]), parts[-1]
        wanted = (entity, instance, metric)
        value = next((v for k, v in self.today.items() if (k.entity, k.instance, k.name) == wanted), None)
        return self._series(entity, instance, metric), value

    def range(self, column: ColumnProfile) -> None:
        """Numbers against the window's extremes. Dates and timestamps move forward with the
        loads, so they are judged as offsets from each load's own date (a daily file's event
        times lie within a day or two of it; a value years away is the alert)."""
        if not (column.kind.numeric or column.kind.temporal):
            return
        low = self.today.get(_key(column.name, "Minimum"))
        high = self.today.get(_key(column.name, "Maximum"))
        minimums = self._series("Column", column.name, "Minimum")
        maximums = self._series("Column", column.name, "Maximum")
        if column.kind.numeric and _one_value_per_load(minimums, maximums, low, high):
            return  # a load key (year, month, batch): it says which load this is, not what it holds
        unit = None
        if column.kind.temporal and low is not None and high is not None:
            unit = 86400.0 if isinstance(column.minimum, datetime) else 1.0
            dates = [load.logical_date for load in self.loads]
            if any(d is None for d in dates):
                return
            origins = [_days(d) * unit for d in dates if d is not None]
            minimums = [None if v is None else v - o for v, o in zip(minimums, origins, strict=True)]
            maximums = [None if v is None else v - o for v, o in zip(maximums, origins, strict=True)]
            today = _days(self.result.load_date) * unit
            low, high = low - today, high - today
        band = drift.range_band(minimums, maximums, sensitivity=self.config.sensitivity)
        if band is None or low is None or high is None:
            return
        outside = low < band[0] or high > band[1]
        if unit is None:
            expected = f"within {band[0]:.6g} to {band[1]:.6g}"
        else:
            per = "days" if unit == 1.0 else "seconds"
            expected = f"{band[0]:.6g} to {band[1]:.6g} {per} from the load date"
        message = f"range {column.minimum} to {column.maximum}; expected {expected}"
        observed = high if high > band[1] else low
        self._record(
            column.name,
            "range",
            observed,
            band,
            "soft" if outside else None,
            message,
            detail=None if unit is None else {"relative_to_load_date": True, "unit_seconds": unit},
        )

    def flood(self, column: ColumnProfile, fresh: int, distinct: int) -> None:
        """A category whose values repeated brings mostly new ones: one alert, no decisions."""
        message = (
            f"{fresh} of {distinct} values never seen before: no decision opened for a flood; "
            "if the column is not a category, list it in not_categorical"
        )
        self._record(column.name, "new_value", float(fresh), None, "soft", message, values=[])

    def new_values(self, column: ColumnProfile, seen: Mapping[str, Any], status: Mapping[str, str]) -> None:
        """A value no earlier load held is an alert, and opens a decision. A value that an earlier
        load brought and that still waits on its decision is not alerted again: its rows are
        added to the decision (``waiting``). A rejected value is a hard alert every time."""
        assert column.values is not None
        fresh = []
        for value, count in sorted(column.values.items(), key=lambda item: (-item[1], item[0])):
            if self.config.null_rate.blanks and not value.strip():
                continue  # a blank is a missing value (judged with the nulls), not a new value
            decided = status.get(value)
            if decided == "accepted" or (value in seen and decided is None):
                continue
            if value in seen and decided == "pending":
                self.waiting.append((column.name, value, count))
                continue
            fresh.append({"value": value, "count": count, "decision": decided or "pending"})
        waiting = [f"{value} ({count} rows)" for name, value, count in self.waiting if name == column.name]
        pending = f"; still waiting on a decision: {', '.join(waiting)}" if waiting else ""
        if not fresh:
            self._record(column.name, "new_value", 0.0, None, None, f"no new value{pending}", values=[])
            return
        rejected = [f for f in fresh if f["decision"] == "rejected"]
        severity = "hard" if rejected else "soft"
        shown = ", ".join(f"{f['value']} ({f['count']} rows)" for f in fresh[:5])
        more = f" and {len(fresh) - 5} more" if len(fresh) > 5 else ""
        message = f"{len(fresh)} value(s) never seen before: {shown}{more}"
        if rejected:
            message += f"; {len(rejected)} of them rejected before"
        self._record(
            column.name, "new_value", float(len(fresh)), None, severity, message + pending, values=fresh
        )


def _missing(nulls: int, blanks: int, apart: bool) -> str:
    """ "19 nulls", or with blanks "12 missing (0 nulls, 12 blanks)"."""
    null = f"{nulls} null{'' if nulls == 1 else 's'}"
    if not apart:
        return null
    return f"{nulls + blanks} missing ({null}, {blanks} blank{'' if blanks == 1 else 's'})"


def _one_value_per_load(
    minimums: Sequence[float | None], maximums: Sequence[float | None], low: float | None, high: float | None
) -> bool:
    """Whether every load of the window, and today's, holds a single value of the column."""
    pairs = [(a, b) for a, b in zip(minimums, maximums, strict=True) if a is not None and b is not None]
    return bool(pairs) and low is not None and low == high and all(a == b for a, b in pairs)


def _monthly(dates: Sequence[date | None], today: date) -> bool:
    """Whether the loads come once a month: every gap between consecutive dates 28 to 31 days."""
    known = [d for d in dates if d is not None]
    if len(known) < 2 or len(known) != len(dates):
        return False
    chain = [today, *known]  # most recent first
    return all(28 <= (a - b).days <= 31 for a, b in itertools.pairwise(chain))


def _days(day: date) -> float:
    return float((day - date(1970, 1, 1)).days)


def _key(column: str, name: str) -> MetricKey:
    return MetricKey.column(column, name)


# --- history ---------------------------------------------------------------------------------

# The series each judgement is about. The null-rate band judges the missing rate (nulls plus
# blanks, or nulls only with ``null_rate: {blanks: false}``), not the stored NullRate: the band
# and its alert are shown beside the rate they judged.
MISSING_RATE = "MissingRate"
_JUDGED = {MISSING_RATE: "null_rate", "RowCount": "volume", "Minimum": "range", "Maximum": "range"}


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
        relative = j.detail.get("unit_seconds") if j and j.detail else None
        if relative and load.logical_date is not None:  # a date band is kept relative to the load
            origin = _days(load.logical_date) * float(relative)
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
