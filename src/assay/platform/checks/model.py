"""The check document's model (``kind: DatasetChecks``): its fields as pydantic models, each
validated on its own (an id's letters, a cron schedule, a time zone, one source), and the values
read from them: a profile's declared metrics (:class:`MetricSpec`) and an expectation's metric
reference (:class:`Reference`).

What no single field can check (references between fields, conditions, DQDL rules, unique ids),
with every mistake's line and column, is :mod:`assay.platform.checks.document`'s, which reads a
document's YAML into these models.

>>> Profile(id="daily", metrics=("row_count", {"null_rate": ["email", "fee"]})).spec("null_rate(fee)")
MetricSpec(kind='null_rate', column='fee', where=None, over='slice', reconcile=None)
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from assay import privacy
from assay.errors import ConfigError
from assay.lang.dqdl.parser import MAX_WINDOW
from assay.names import check_name
from assay.platform.routing import Route

API_VERSION = "assay/v1"
KIND = "DatasetChecks"

MODES = ("enforce", "advisory")
"""``enforce`` counts in pass rates, gates and notifications; ``advisory`` is evaluated and kept only."""

COLUMN_METRICS = (
    "null_rate",
    "null_count",
    "blank_rate",
    "blank_count",
    "missing_rate",
    "distinct_count",
    "min",
    "max",
    "mean",
    "sum",
)
"""Metrics measured per column: ``{null_rate: [a, b]}`` (or one column as a string)."""

OVER = ("slice", "source")
"""What a ``freshness`` metric reads: the run's slice (the rows of its day, the default) or the
whole ``source``, so that a day whose rows never came is measured as stale, not skipped."""
METRIC_KINDS = ("row_count", "freshness", *COLUMN_METRICS, "count_where", "reconcile")
"""Every metric a profile can declare."""

SOURCE_KINDS = ("path", "iceberg", "duckdb", "postgres")
"""Where a dataset can live: files, a workspace Iceberg table, a DuckDB database, a PostgreSQL table."""

_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_DURATION = re.compile(r"^\s*(\d+)\s*(s|m|h|d|seconds?|minutes?|hours?|days?)?\s*$")
_SECONDS = {"s": 1, "second": 1, "m": 60, "minute": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DuckDBSource(_Strict):
    path: str
    table: str


class PostgresSource(_Strict):
    url: str
    table: str


class Source(_Strict):
    """Where the dataset lives: exactly one of ``path`` (a file or glob, relative to the document's
    folder), ``iceberg`` (a workspace table), ``duckdb`` or ``postgres``."""

    path: str | None = None
    iceberg: str | None = None
    duckdb: DuckDBSource | None = None
    postgres: PostgresSource | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Source:
        given = [
            name for name in ("path", "iceberg", "duckdb", "postgres") if getattr(self, name) is not None
        ]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of path, iceberg, duckdb or postgres"
                + (f" (found {', '.join(given)})" if given else "")
            )
        return self

    @property
    def kind(self) -> str:
        return next(
            name for name in ("path", "iceberg", "duckdb", "postgres") if getattr(self, name) is not None
        )

    def describe(self) -> str:
        if self.path is not None:
            return self.path
        if self.iceberg is not None:
            return f"iceberg:{self.iceberg}"
        if self.duckdb is not None:
            return f"duckdb:{self.duckdb.path}:{self.duckdb.table}"
        assert self.postgres is not None
        return f"postgres:{self.postgres.table}"


class Owners(_Strict):
    team: str | None = None
    contact: str | None = None


class Retry(_Strict):
    """How a system error is retried: ``attempts`` in all (1: no retry), ``backoff`` between them."""

    attempts: Annotated[int, Field(ge=1, le=20)] = 1
    backoff: float = 0.0

    @field_validator("backoff", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_seconds(value)
        return value


class Consumer(_Strict):
    """A declared downstream user of the dataset (a team, a dashboard, a model): with the reads
    assay records, what the dataset's importance is made of (docs/scores.md)."""

    team: Annotated[str, Field(min_length=1, max_length=200)]
    contact: str | None = None
    usage: str | None = None


class Dataset(_Strict):
    name: Annotated[str, Field(min_length=1, max_length=200)]
    source: Source
    owners: Owners = Owners()
    author: str | None = None
    tier: Annotated[int, Field(ge=0, le=3)] | None = None
    tags: tuple[str, ...] = ()
    description: str | None = None
    retry: Retry = Retry()
    # What each column means ({column: description}): the documentation a score's enrichment and
    # a certification count (docs/scores.md)
    columns: dict[str, Annotated[str, Field(min_length=1)]] = {}
    consumers: tuple[Consumer, ...] = ()
    # The datasets this one reads (docs/lineage.md): an incident on one of them tells this
    # dataset's owners, and the same failure here joins it as a layer
    upstream: tuple[Annotated[str, Field(min_length=1, max_length=200)], ...] = ()
    # Columns whose values never leave assay in clear, by class ({pii: [new_ic, email]}):
    # masked by a keyed hash in every output (docs/privacy.md)
    classified: dict[str, tuple[Annotated[str, Field(min_length=1)], ...]] = {}

    @field_validator("classified", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> Any:
        for name, columns in value.items() if isinstance(value, dict) else ():
            if not isinstance(columns, list | tuple):
                raise ValueError(f"{name}: a list of columns, such as [{columns}]")
        return value

    @field_validator("classified", mode="after")
    @classmethod
    def _classes(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        privacy.classes(value)
        return value

    @field_validator("name")
    @classmethod
    def _a_name(cls, value: str) -> str:
        try:
            return check_name(value, "dataset name")
        except ConfigError as error:
            raise ValueError(error.message) from None

    @field_validator("upstream", mode="before")
    @classmethod
    def _a_list(cls, value: Any) -> Any:
        # a lone name is not taken as a list of one: a list says the field is a set of datasets
        if not isinstance(value, list | tuple):
            raise ValueError("Input should be a valid list")
        return value

    @field_validator("upstream", mode="after")
    @classmethod
    def _names(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        if info.data.get("name") in value:
            raise ValueError(f"{info.data['name']} is the dataset itself, not one it reads")
        for name in value:
            try:
                check_name(name, "dataset name")
            except ConfigError as error:
                raise ValueError(error.message) from None
        twice = sorted({n for n in value if value.count(n) > 1})
        if twice:
            raise ValueError(f"{', '.join(twice)} is named twice")
        return value


class Slice(_Strict):
    """A run measures the rows whose ``column`` falls on its logical date (``--at``)."""

    column: str


class CountWhere(_Strict):
    name: str
    condition: str
    sample_rows: Annotated[int, Field(ge=0, le=1000)] = 0
    # The columns a sample row carries; by default the key (the gate's key, else the source's
    # first column) and the columns the condition names (docs/privacy.md)
    sample_columns: tuple[Annotated[str, Field(min_length=1)], ...] | None = None


RECONCILE_NUMBERS = ("only_in_source", "only_in_target", "changed", "null_keys", "duplicate_keys")
"""What a ``reconcile`` metric ``NAME`` measures besides its total of differences (``NAME``):
``NAME(only_in_source)``, ... (docs/reconcile.md)."""


class ReconcileMetric(_Strict):
    """``{reconcile: {name, target, key, columns, tolerance, samples}}``: the document's source
    compared with ``target`` by ``key`` (docs/reconcile.md)."""

    name: str
    target: Source
    key: tuple[str, ...]
    columns: tuple[str, ...] | None = None
    tolerance: dict[str, float] = Field(default_factory=dict)
    samples: Annotated[int, Field(ge=0, le=1000)] = 10

    @field_validator("key", "columns", mode="before")
    @classmethod
    def _a_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("key")
    @classmethod
    def _some(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("name the key column(s)")
        return value

    @field_validator("tolerance")
    @classmethod
    def _bounds(cls, value: dict[str, float]) -> dict[str, float]:
        for column, bound in value.items():
            if not bound >= 0:
                raise ValueError(f"{column}: a tolerance is a number >= 0")
        return value


@dataclass(frozen=True)
class MetricSpec:
    """One declared metric: its kind, its column (for column metrics and freshness), and for
    ``count_where`` its name, condition and sample size. ``key`` is how expectations name it."""

    kind: str
    column: str | None = None
    where: CountWhere | None = None
    over: str = "slice"  # freshness only (OVER): "source" reads every row of the source
    reconcile: ReconcileMetric | None = None  # reconcile only; column: one of RECONCILE_NUMBERS

    @property
    def key(self) -> str:
        if self.where is not None:
            return self.where.name
        if self.reconcile is not None:
            name = self.reconcile.name
            return name if self.column is None else f"{name}({self.column})"
        return self.kind if self.column is None else f"{self.kind}({self.column})"


def check_schedule(value: str | None, example: str) -> str | None:
    """``value`` if it is a cron expression (or None); else a ValueError that shows ``example``."""
    from croniter import croniter

    if value is not None and not croniter.is_valid(value):
        raise ValueError(
            f"'{value}' is not a cron expression: five fields, minute hour day-of-month month "
            f"day-of-week ({example})"
        )
    return value


def check_timezone(value: str) -> str:
    """``value`` if it names an IANA time zone; else a ValueError."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"'{value}' is not a time zone: use an IANA name such as Europe/Paris") from None
    return value


class Profile(_Strict):
    id: str
    slice: Slice | None = None
    filter: str | None = None
    dimensions: tuple[str, ...] = ()
    top_k: Annotated[int, Field(ge=1, le=10_000)] = 50
    schedule: str | None = None
    timezone: str = "UTC"
    # Days from a tick's date back to the slice it checks: 1 checks yesterday's slice.
    lag: Annotated[int, Field(ge=0, le=366)] = 0
    metrics: tuple[str | dict[str, Any], ...] = ()

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(f"'{value}' is not an id: use letters, digits, '_' and '-'")
        return value

    @field_validator("schedule")
    @classmethod
    def _schedule(cls, value: str | None) -> str | None:
        return check_schedule(value, '"30 6 * * *" is 06:30 every day')

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        return check_timezone(value)

    @model_validator(mode="after")
    def _lag(self) -> Profile:
        if self.lag and not self.schedule:
            raise ValueError("lag is the days from a schedule's tick back to its slice: add a schedule")
        return self

    def spec(self, key: str) -> MetricSpec | None:
        """The declared metric named ``key`` (``null_rate(fee)``), or None."""
        return next((spec for spec in self.specs() if spec.key == key), None)

    def specs(self) -> list[MetricSpec]:
        """The declared metrics, one per (kind, column); malformed entries are skipped (the
        document's validation reports them)."""
        out: list[MetricSpec] = []
        for entry in self.metrics:
            out.extend(_specs(entry))
        return out


class Expectation(_Strict):
    id: str
    metric: str | None = None
    expect: str | None = None
    rule: str | None = None
    profile: str | None = None
    by: tuple[str, ...] = ()
    min_history: Annotated[int, Field(ge=0, le=MAX_WINDOW)] = 0
    severity: Literal["critical", "error", "warning"] = "error"
    owner: str | None = None
    mode: Literal["enforce", "advisory"] = "enforce"
    description: str | None = None
    # The quality dimension its incidents are keyed by (docs/operations.md, "Incidents"); by
    # default its metric's or rule's (row_count: volume, null_rate: completeness, ...).
    dimension: Literal["freshness", "volume", "completeness", "uniqueness", "validity"] | None = None
    divide_by_group: bool = False  # one incident per failing group of `by:`, not one for all
    # The history ``last(k)`` reads: every earlier run (default), or only those of the run's
    # weekday (a Monday compared with Mondays: ``same_weekday``)
    history: Literal["same_weekday"] | None = None
    # Labels of the expectation; `certification` makes it count toward the dataset's badge
    # (docs/scores.md, "Certification"), as the templates `assay certify --enroll` writes do
    tags: tuple[str, ...] = ()

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(f"'{value}' is not an id: use letters, digits, '_' and '-'")
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> Expectation:
        if (self.metric is None) == (self.rule is None):
            raise ValueError("give either metric (with expect) or rule")
        if self.metric is not None and self.expect is None:
            raise ValueError("an expectation on a metric needs expect: a condition such as '> 0'")
        if self.rule is not None and self.expect is not None:
            raise ValueError("a rule carries its own condition: remove expect")
        if self.rule is not None and self.by:
            raise ValueError("by: applies to metric expectations, not to DQDL rules")
        if self.divide_by_group and not self.by:
            raise ValueError("divide_by_group: true needs by: (the groups to divide the incidents by)")
        if self.history is not None and self.metric is None:
            raise ValueError("history: applies to metric expectations, not to DQDL rules")
        return self

    @property
    def reference(self) -> Reference:
        """The metric this expectation reads (``PROFILE.METRIC(COLUMN)``), or for a DQDL rule
        its profile only."""
        if self.metric is None:
            return Reference(self.profile or "", "", None)
        return parse_reference(self.metric)


class CertificationSettings(_Strict):
    """The thresholds of a dataset's badge: checks count after ``advisory_days`` of outcomes, with
    a pass rate of at least ``min_pass_rate`` each; the score must reach ``min_score``; a badge
    whose criteria slip is ``at_risk`` for ``grace_days``, then revoked."""

    advisory_days: Annotated[int, Field(ge=1, le=365)] = 14
    min_pass_rate: Annotated[float, Field(ge=0, le=1)] = 0.95
    min_score: Annotated[float, Field(ge=0, le=100)] = 70.0
    grace_days: Annotated[int, Field(ge=0, le=365)] = 7
    columns_described: Annotated[float, Field(ge=0, le=1)] = 0.8


class Document(_Strict):
    apiVersion: Literal["assay/v1"]
    kind: Literal["DatasetChecks"]
    dataset: Dataset
    profiles: tuple[Profile, ...] = ()
    expectations: tuple[Expectation, ...] = ()
    # The other flows' settings for the same dataset, so that the document is the dataset's one
    # home: ``monitor:`` is the drift monitor's configuration (docs/monitor.md) and ``gate:`` the
    # gate's table settings (docs/gate.md); both are validated by their own flows' models.
    monitor: dict[str, Any] | None = None
    gate: dict[str, Any] | None = None
    # Routing rules of this dataset, tried before those of assay.yaml (same shape as its routes:)
    notify: tuple[Route, ...] = ()
    # What the dataset's certification badge asks of it (docs/scores.md, "Certification")
    certification: CertificationSettings = Field(default_factory=lambda: CertificationSettings())

    @field_validator("monitor")
    @classmethod
    def _monitor(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            from assay.monitor import DatasetConfig

            if "dataset" in value or "gate" in value:
                raise ValueError(
                    "monitor: takes the monitor's settings; dataset and gate: are the document's own"
                )
            try:
                DatasetConfig.model_validate(value)
            except ValidationError as error:
                where, message = _first_error(error)
                raise ValueError(f"{where}: {message}" if where else message) from None
            except ConfigError as error:
                raise ValueError(error.message) from None
        return value

    @field_validator("gate")
    @classmethod
    def _gate(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            from assay.gate.config import GateConfig

            try:
                GateConfig.model_validate(value)
            except ValidationError as error:
                where, message = _first_error(error)
                raise ValueError(f"{where}: {message}") from None
        return value

    def monitor_config(self) -> Any:
        """The drift monitor's configuration of this dataset (:class:`assay.monitor.DatasetConfig`):
        its ``monitor:`` section, the ``gate:`` section, and the dataset's owners and tier."""
        from assay.monitor import DatasetConfig

        owners = self.dataset.owners.model_dump(exclude_none=True) or None
        return DatasetConfig.model_validate(
            {
                **(self.monitor or {}),
                "dataset": self.dataset.name,
                "gate": self.gate,
                "owners": owners,
                "tier": self.dataset.tier,
                "classified": self.dataset.classified,
            }
        )

    def profile(self, profile_id: str) -> Profile:
        return next(p for p in self.profiles if p.id == profile_id)

    def expectation_profile(self, expectation: Expectation) -> Profile:
        """The profile an expectation is measured by."""
        if expectation.metric is not None:
            return self.profile(expectation.reference.profile)
        if expectation.profile is not None:
            return self.profile(expectation.profile)
        return self.profiles[0]


@dataclass(frozen=True)
class Reference:
    """``daily.null_rate(fee)``: profile ``daily``, metric key ``null_rate(fee)``."""

    profile: str
    metric: str
    column: str | None

    @property
    def key(self) -> str:
        return self.metric if self.column is None else f"{self.metric}({self.column})"


_REFERENCE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_-]*)\.([A-Za-z_][A-Za-z0-9_-]*)\s*(?:\((.+)\))?\s*$")


def parse_reference(text: str) -> Reference:
    """A metric reference, ``PROFILE.METRIC`` or ``PROFILE.METRIC(COLUMN)``.

    >>> parse_reference("daily.freshness(updated_at)")
    Reference(profile='daily', metric='freshness', column='updated_at')
    """
    match = _REFERENCE.match(text)
    if match is None:
        raise ValueError(
            f"'{text}' is not a metric reference: write PROFILE.METRIC or PROFILE.METRIC(COLUMN)"
        )
    column = match.group(3)
    return Reference(match.group(1), match.group(2), None if column is None else column.strip().strip('"'))


def parse_seconds(text: str) -> float:
    """``30s``, ``5 minutes``, ``2h``, ``1 day`` or a bare number of seconds.

    >>> parse_seconds("30s"), parse_seconds("2 hours")
    (30.0, 7200.0)
    """
    match = _DURATION.match(str(text))
    if match is None:
        raise ValueError(f"'{text}' is not a duration such as 30s, 5m, 2h or 1d")
    unit = (match.group(2) or "s").rstrip("s") or "s"
    return float(int(match.group(1)) * _SECONDS[unit])


def _specs(entry: Any) -> Iterator[MetricSpec]:
    if isinstance(entry, str):
        if entry == "row_count":
            yield MetricSpec("row_count")
        return
    if not isinstance(entry, Mapping) or len(entry) != 1:
        return
    kind, value = next(iter(entry.items()))
    if kind == "freshness" and isinstance(value, str):
        yield MetricSpec("freshness", value)
    elif kind == "freshness" and isinstance(value, Mapping) and isinstance(value.get("column"), str):
        yield MetricSpec("freshness", value["column"], over=str(value.get("over", "slice")))
    elif kind in COLUMN_METRICS:
        columns = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for column in columns:
            if isinstance(column, str):
                yield MetricSpec(kind, column)
    elif kind == "count_where" and isinstance(value, Mapping):
        try:
            yield MetricSpec("count_where", where=CountWhere.model_validate(value))
        except ValidationError:
            return
    elif kind == "reconcile" and isinstance(value, Mapping):
        try:
            found = ReconcileMetric.model_validate(value)
        except ValidationError:
            return
        yield MetricSpec("reconcile", reconcile=found)
        for number in RECONCILE_NUMBERS:
            yield MetricSpec("reconcile", number, reconcile=found)


def _first_error(error: ValidationError) -> tuple[str, str]:
    """Where the first mistake pydantic found is (``a.b``, or ``""``) and what it is."""
    first = error.errors()[0]
    return ".".join(map(str, first["loc"])), str(first["msg"])
