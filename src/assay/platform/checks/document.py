"""The check document (``kind: DatasetChecks``): what to measure on a dataset, and what makes it wrong.

A document is YAML, validated with pydantic, then checked as a whole: every metric reference
must name a metric its profile declares, every ``expect`` must be a DQDL condition, every DQDL
``rule`` must parse, ids must be unique. Every mistake is reported at once, each as
``file:line:col: message`` (:class:`DocumentError`, exit 2). Nothing here reads the data: that a
column exists is known only when a run sees the source's schema (a ``config_error`` outcome).

>>> document = parse_document('''
... apiVersion: assay/v1
... kind: DatasetChecks
... dataset: {name: shop.orders, source: {path: orders.csv}}
... profiles:
...   - id: daily
...     metrics: [row_count, {null_rate: [email]}]
... expectations:
...   - {id: volume, metric: daily.row_count, expect: "> 0"}
... ''')
>>> document.expectations[0].reference.key
'row_count'
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.errors import ConfigError
from assay.lang import yamlsafe
from assay.lang.dqdl.parser import MAX_WINDOW
from assay.names import check_name
from assay.platform.routing import Route
from assay.workspace import Workspace
from assay.workspace import is_check_document as is_check_document  # its home moved; callers keep it

API_VERSION = "assay/v1"
KIND = "DatasetChecks"

MODES = ("enforce", "advisory")
"""``enforce`` counts in pass rates, gates and notifications; ``advisory`` is evaluated and kept only."""

COLUMN_METRICS = ("null_rate", "null_count", "distinct_count", "min", "max", "mean", "sum")
"""Metrics measured per column: ``{null_rate: [a, b]}`` (or one column as a string)."""

METRIC_KINDS = ("row_count", "freshness", *COLUMN_METRICS, "count_where")
"""Every metric a profile can declare."""

SOURCE_KINDS = ("path", "iceberg", "duckdb", "postgres")
"""Where a dataset can live: files, a workspace Iceberg table, a DuckDB database, a PostgreSQL table."""

_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_DURATION = re.compile(r"^\s*(\d+)\s*(s|m|h|d|seconds?|minutes?|hours?|days?)?\s*$")
_SECONDS = {"s": 1, "second": 1, "m": 60, "minute": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}


# --- YAML with positions ------------------------------------------------------------------------


Path_ = tuple[str | int, ...]


def _load_with_marks(text: str, filename: str) -> tuple[Any, dict[Path_, tuple[int, int]]]:
    """The YAML document and the (line, column) of each path in it, both 1-based; read within
    the limits of :mod:`assay.lang.yamlsafe` (a :class:`~assay.lang.yamlsafe.YAMLProblem`)."""
    marks: dict[Path_, tuple[int, int]] = {}
    node = yamlsafe.compose(text, filename=filename)
    if node is None:
        return None, marks

    def walk(node: yaml.Node, path: Path_) -> None:
        marks.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                child = (*path, str(key.value))
                marks[child] = (value.start_mark.line + 1, value.start_mark.column + 1)
                marks[(*child, "__key__")] = (key.start_mark.line + 1, key.start_mark.column + 1)
                walk(value, child)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, (*path, i))

    walk(node, ())
    return yamlsafe.construct(node, filename=filename), marks


# --- the model ------------------------------------------------------------------------------------


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

    @field_validator("name")
    @classmethod
    def _a_name(cls, value: str) -> str:
        try:
            return check_name(value, "dataset name")
        except ConfigError as error:
            raise ValueError(error.message) from None


class Slice(_Strict):
    """A run measures the rows whose ``column`` falls on its logical date (``--at``)."""

    column: str


class CountWhere(_Strict):
    name: str
    condition: str
    sample_rows: Annotated[int, Field(ge=0, le=1000)] = 0


@dataclass(frozen=True)
class MetricSpec:
    """One declared metric: its kind, its column (for column metrics and freshness), and for
    ``count_where`` its name, condition and sample size. ``key`` is how expectations name it."""

    kind: str
    column: str | None = None
    where: CountWhere | None = None

    @property
    def key(self) -> str:
        if self.where is not None:
            return self.where.name
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


# --- loading and checking ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One mistake in a document, where it is."""

    file: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}"


class DocumentError(ConfigError):
    """A check document with mistakes; ``problems`` lists every one, in document order."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.line, p.column, p.message))
        super().__init__("\n".join(str(p) for p in self.problems))


def read_text(path: Path, noun: str) -> str:
    """A user's YAML file as text (UTF-8); a file that is missing, a folder, not UTF-8 or
    unreadable is a ConfigError that names it as ``noun`` ("check document", "contract file")."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such {noun}") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, not a {noun}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None


def load_document(path: Path | str) -> Document:
    """Read and check the document at ``path``; a :class:`DocumentError` lists every mistake."""
    path = Path(path)
    return parse_document(read_text(path, "check document"), filename=str(path))


def parse_document(text: str, *, filename: str = "<document>") -> Document:
    """Check document text; see :func:`load_document`."""
    try:
        raw, marks = _load_with_marks(text, filename)
    except yamlsafe.YAMLProblem as error:
        raise DocumentError([Problem(filename, error.line, error.column, error.reason)]) from None
    if not isinstance(raw, dict):
        raise DocumentError(
            [Problem(filename, 1, 1, "a check document is a YAML mapping (apiVersion, kind, ...)")]
        )
    problems: list[Problem] = []

    def where(path: Path_, key: bool = False) -> tuple[int, int]:
        trimmed = path
        while trimmed:
            found = marks.get((*trimmed, "__key__")) if key and trimmed == path else marks.get(trimmed)
            if found:
                return found
            trimmed = trimmed[:-1]
        return (1, 1)

    def report(path: Path_, message: str, *, key: bool = False) -> None:
        line, column = where(path, key)
        problems.append(Problem(filename, line, column, message))

    document: Document | None = None
    try:
        document = Document.model_validate(raw)
    except ValidationError as error:
        for item in error.errors():
            loc = tuple(part for part in item["loc"] if not (isinstance(part, str) and part in _UNION_TAGS))
            message = item["msg"].removeprefix("Value error, ")
            if item["type"] == "extra_forbidden":
                report(loc, f"unknown field '{loc[-1]}'", key=True)
            elif item["type"] == "missing":
                report(loc[:-1], f"missing field '{loc[-1]}'")
            elif item["type"] == "literal_error":
                report(loc, f"{'.'.join(map(str, loc))}: {message}")
            else:
                report(loc, f"{'.'.join(map(str, loc))}: {message}")
    _check_semantics(raw, report)
    if problems:
        raise DocumentError(_unique(problems))
    assert document is not None
    return document


_UNION_TAGS = {"str", "dict[str,any]", "int", "function-after[_seconds(), float]"}


def _unique(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[int, int, str]] = set()
    out = []
    for p in problems:
        if (p.line, p.column, p.message) not in seen:
            seen.add((p.line, p.column, p.message))
            out.append(p)
    return out


def _check_semantics(raw: dict[str, Any], report: Any) -> None:
    """What pydantic cannot see: metric entries, references, conditions, rules, unique ids. Reads
    the raw YAML defensively, so that one mistake never hides another."""
    from assay.platform.checks.conditions import ConditionError, parse_expect

    profiles: list[Any] = raw["profiles"] if isinstance(raw.get("profiles"), list) else []
    declared: dict[str, dict[str, MetricSpec]] = {}
    dimensions: dict[str, set[str]] = {}
    for i, profile in enumerate(profiles):
        if not isinstance(profile, dict):
            continue
        pid = profile.get("id")
        if isinstance(pid, str):
            if pid in declared:
                report(("profiles", i, "id"), f"duplicate profile id '{pid}'")
            declared.setdefault(pid, {})
            dims = profile.get("dimensions")
            dimensions[pid] = {d for d in dims if isinstance(d, str)} if isinstance(dims, list) else set()
        metrics = profile.get("metrics")
        if isinstance(metrics, list):
            for j, entry in enumerate(metrics):
                problem = _metric_problem(entry)
                if problem:
                    report(("profiles", i, "metrics", j), problem)
                    continue
                for found in _specs(entry):
                    if isinstance(pid, str):
                        if found.key in declared[pid]:
                            report(("profiles", i, "metrics", j), f"metric '{found.key}' is declared twice")
                        declared[pid][found.key] = found
    expectations: list[Any] = raw["expectations"] if isinstance(raw.get("expectations"), list) else []
    ids: set[str] = set()
    for i, item in enumerate(expectations):
        if not isinstance(item, dict):
            continue
        eid = item.get("id")
        if isinstance(eid, str):
            if eid in ids:
                report(("expectations", i, "id"), f"duplicate expectation id '{eid}'")
            ids.add(eid)
        metric = item.get("metric")
        spec: MetricSpec | None = None
        if isinstance(metric, str):
            try:
                ref = parse_reference(metric)
            except ValueError as error:
                report(("expectations", i, "metric"), str(error))
            else:
                if ref.profile not in declared:
                    known = ", ".join(sorted(declared)) or "none"
                    report(
                        ("expectations", i, "metric"), f"unknown profile '{ref.profile}' (profiles: {known})"
                    )
                elif ref.key not in declared[ref.profile]:
                    known = ", ".join(declared[ref.profile]) or "none"
                    report(
                        ("expectations", i, "metric"),
                        f"unknown metric '{ref.key}' in profile '{ref.profile}' (it declares: {known})",
                    )
                else:
                    spec = declared[ref.profile][ref.key]
                by = item.get("by")
                if isinstance(by, list) and ref.profile in dimensions:
                    for k, column in enumerate(by):
                        if isinstance(column, str) and column not in dimensions[ref.profile]:
                            report(
                                ("expectations", i, "by", k),
                                f"'{column}' is not a dimension of profile '{ref.profile}' "
                                f"(dimensions: {', '.join(sorted(dimensions[ref.profile])) or 'none'})",
                            )
        expect = item.get("expect")
        if isinstance(expect, str | int | float) and not isinstance(expect, bool):
            try:
                parse_expect(str(expect), duration=spec is not None and spec.kind == "freshness")
            except ConditionError as error:
                named = f" of '{eid}'" if isinstance(eid, str) else ""
                report(("expectations", i, "expect"), f"expect{named}: {error}")
        rule = item.get("rule")
        if isinstance(rule, str):
            from assay.platform.checks.rules import RuleError, parse_rule

            try:
                parse_rule(rule)
            except RuleError as error:
                report(("expectations", i, "rule"), f"rule: {error}")
        profile_name = item.get("profile")
        if isinstance(profile_name, str) and profile_name not in declared:
            report(("expectations", i, "profile"), f"unknown profile '{profile_name}'")
        if isinstance(rule, str) and profile_name is None and len(declared) > 1:
            report(("expectations", i), "a rule needs profile: when the document has several profiles")
        if isinstance(rule, str) and not declared:
            report(("expectations", i), "a rule needs a profile to be measured by; the document has none")


def _first_error(error: ValidationError) -> tuple[str, str]:
    """Where the first mistake pydantic found is (``a.b``, or ``""``) and what it is."""
    first = error.errors()[0]
    return ".".join(map(str, first["loc"])), str(first["msg"])


def _metric_problem(entry: Any) -> str | None:
    """Why a profile's metric entry is malformed, or None."""
    if isinstance(entry, str):
        if entry == "row_count":
            return None
        if entry in METRIC_KINDS:
            example = "column" if entry == "freshness" else "[column]"
            return f"metric '{entry}' needs its column(s): write {{{entry}: {example}}}"
        return f"unknown metric '{entry}' (metrics: {', '.join(METRIC_KINDS)})"
    if not isinstance(entry, dict) or len(entry) != 1:
        return "a metric is a name (row_count) or one mapping such as {null_rate: [email]}"
    kind, value = next(iter(entry.items()))
    if kind not in METRIC_KINDS:
        return f"unknown metric '{kind}' (metrics: {', '.join(METRIC_KINDS)})"
    if kind == "row_count":
        return "row_count takes no column: write it as a plain name"
    if kind == "freshness":
        return None if isinstance(value, str) and value else "freshness names one timestamp column"
    if kind == "count_where":
        if not isinstance(value, dict):
            return "count_where needs {name, condition, sample_rows}"
        try:
            CountWhere.model_validate(value)
        except ValidationError as error:
            field, message = _first_error(error)
            return f"count_where {field}: {message}" if field else f"count_where: {message}"
        if not _ID.match(str(value.get("name"))):
            return f"count_where name '{value.get('name')}' is not an id: use letters, digits, '_' and '-'"
        if str(value.get("name")) in METRIC_KINDS:
            return f"count_where name '{value.get('name')}' is a metric kind's name: choose another"
        return None
    columns = [value] if isinstance(value, str) else value
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) and c for c in columns):
        return f"{kind} needs a column or a list of columns"
    return None


def find_document(folder: Path, dataset: str) -> Path | None:
    """The check document in ``folder`` (``<workspace>/checks``) of ``dataset``: its document by
    the workspace's one rule (:meth:`assay.workspace.Workspace.document_for`), if that is a check
    document (``checks/<dataset>.yaml`` may be a plain monitor configuration)."""
    path = Workspace(folder.parent).document_for(dataset)
    return path if path is not None and is_check_document(path) else None
