"""The values that go into the metric store and come out of it.

A :class:`MetricKey` names one measured number about a load the way AWS Glue Data Quality names
its metrics (``Dataset.*.RowCount``, ``Column.item.Completeness``,
``Multicolumn.a,b.ColumnCorrelation``); a :class:`HistoryPoint` is one past value of a metric;
a :class:`RunRecord` is one run with its :class:`OutcomeRecord` list.

>>> MetricKey.column("item", "Completeness").key
'Column.item.Completeness'
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from assay.errors import ConfigError
from assay.vocabulary import Outcome, RunState

ENTITIES = ("Dataset", "Column", "Multicolumn", "Group")
"""What a metric is about: the whole load, one column, several columns together, or (a check
document's dimensions) the rows of one group, whose instance is the group as canonical JSON."""

RUN_KINDS = ("dqdl", "gate", "profile", "check")
"""What a run executed: a DQDL ruleset, the ingestion gate, a profile, or a check document."""

LOAD_STATUSES = ("pending", "current", "rejected", "superseded")
"""A load waits for its run to settle (``pending``: no history reads it), stands (``current``), was
refused by a gate (``rejected``), or was replaced (``superseded``)."""

STAGES = ("running", "measured", "judged", "notified")
"""The stages of a check run, in order (docs/operations.md, "Durable stages")."""

RUN_STATES = tuple(state.value for state in RunState)
"""How a run stands: ``running``, then ``completed``, ``config_error`` or ``system_error``."""

OUTCOMES = tuple(outcome.value for outcome in Outcome)
"""The outcome of one rule (:class:`assay.vocabulary.Outcome`); Glue's strings stay at the DQDL edge."""


def _require(value: str, allowed: tuple[str, ...], what: str) -> None:
    if value not in allowed:
        raise ConfigError(f"unknown {what} {value!r}: expected one of {', '.join(allowed)}")


def require_aware(value: datetime, what: str) -> None:
    """Refuse a naive datetime: the store keeps instants, and a naive value names none.

    >>> from datetime import UTC
    >>> require_aware(datetime(2024, 5, 1, tzinfo=UTC), "logical_time")
    """
    if value.tzinfo is None or value.utcoffset() is None:
        raise ConfigError(f"{what} {value.isoformat()} has no time zone; pass an aware datetime (UTC)")


@dataclass(frozen=True)
class MetricKey:
    """The name of one metric of a load: ``entity``, ``instance`` and ``name``.

    ``instance`` is ``*`` for the whole dataset (or a rule's alias), a column name (dots allowed),
    or for ``Multicolumn`` the column names joined by commas. Build keys with the constructors:

    >>> MetricKey.dataset("RowCount").key
    'Dataset.*.RowCount'
    >>> MetricKey.multicolumn(["a", "b"], "ColumnCorrelation").key
    'Multicolumn.a,b.ColumnCorrelation'
    """

    entity: str
    instance: str
    name: str

    def __post_init__(self) -> None:
        _require(self.entity, ENTITIES, "metric entity")
        if not self.instance or not self.name:
            raise ConfigError(f"metric {self.key!r} needs both an instance and a name")

    @property
    def key(self) -> str:
        """The display key, as AWS Glue prints it: ``f"{entity}.{instance}.{name}"``.

        Not parseable back: instances and names may both contain dots.

        >>> MetricKey.column("address.city", "Completeness").key
        'Column.address.city.Completeness'
        """
        return f"{self.entity}.{self.instance}.{self.name}"

    @classmethod
    def dataset(cls, name: str, instance: str = "*") -> MetricKey:
        """A metric of the whole load; ``instance`` names a rule's alias when there is one.

        >>> MetricKey.dataset("RowCount")
        MetricKey(entity='Dataset', instance='*', name='RowCount')
        """
        return cls("Dataset", instance, name)

    @classmethod
    def column(cls, column: str, name: str) -> MetricKey:
        """A metric of one column.

        >>> MetricKey.column("item", "Completeness")
        MetricKey(entity='Column', instance='item', name='Completeness')
        """
        return cls("Column", column, name)

    @classmethod
    def multicolumn(cls, columns: Sequence[str], name: str) -> MetricKey:
        """A metric of several columns together; their names are joined by commas, in order.

        >>> MetricKey.multicolumn(("height", "weight"), "ColumnCorrelation").instance
        'height,weight'
        """
        if isinstance(columns, str):
            raise ConfigError(f"Multicolumn metric {name!r} takes a sequence of column names, not a string")
        if len(columns) < 2:
            raise ConfigError(f"Multicolumn metric {name!r} needs at least two columns, got {list(columns)}")
        if any("," in column for column in columns):
            raise ConfigError(
                f"Multicolumn metric {name!r}: column names {list(columns)} contain a comma, "
                "which separates the columns of a Multicolumn metric"
            )
        return cls("Multicolumn", ",".join(columns), name)


@dataclass(frozen=True)
class HistoryPoint:
    """One past value of a metric: the load it was measured on and the value (None: no value or NaN).

    >>> from datetime import UTC
    >>> HistoryPoint(7, datetime(2024, 5, 1, tzinfo=UTC), None, 120.0).value
    120.0
    """

    load_id: int
    logical_time: datetime
    logical_date: date | None
    value: float | None


@dataclass(frozen=True)
class OutcomeRecord:
    """The outcome of one rule in a run, as stored; its position is its place in the run's list.

    ``metrics`` maps display keys (``Dataset.*.RowCount``) to the values the rule judged; NaN and
    infinities are stored as None (JSON has neither). ``labels`` are the rule's DQDL labels.

    >>> OutcomeRecord("RowCount > 0", "passed", metrics={"Dataset.*.RowCount": 3.0}).outcome
    'passed'
    """

    rule: str
    outcome: str
    message: str | None = None
    metrics: Mapping[str, float | None] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _require(self.outcome, OUTCOMES, "rule outcome")


@dataclass(frozen=True)
class RunRecord:
    """One run of a check suite, gate or profile: its state, times, summary and rule outcomes.

    ``id`` is a UUID string; ``dataset`` is a dataset name; ``summary`` is any JSON object (NaN
    and infinities inside it are stored as None). ``outcomes`` is kept as a tuple, in order.
    ``inputs`` lists what the run read (``{"path": ..., "sha256": ...}``), ``counts`` its row or
    rule counts, ``error`` why it did not complete, and ``owner`` the process that runs it
    (``host:pid:start``), so that a later run can tell a killed run from a live one.

    >>> from datetime import UTC
    >>> run = RunRecord(
    ...     id="0b7c5a52-4d0e-4a59-9d43-2f1f1d1f7d6e", kind="dqdl", dataset="orders", load_id=None,
    ...     state="completed", started_at=datetime(2024, 5, 1, tzinfo=UTC),
    ...     outcomes=[OutcomeRecord("RowCount > 0", "passed")],
    ... )
    >>> run.outcomes
    (OutcomeRecord(rule='RowCount > 0', outcome='passed', message=None, metrics={}, labels={}),)
    """

    id: str
    kind: str
    dataset: str | None
    load_id: int | None
    state: str
    started_at: datetime
    finished_at: datetime | None = None
    summary: Mapping[str, Any] | None = None
    outcomes: Sequence[OutcomeRecord] = ()
    inputs: Sequence[Mapping[str, Any]] = ()
    counts: Mapping[str, Any] | None = None
    error: str | None = None
    owner: str | None = None

    def __post_init__(self) -> None:
        try:
            uuid.UUID(self.id)
        except ValueError:
            raise ConfigError(f"run id {self.id!r} is not a UUID") from None
        _require(self.kind, RUN_KINDS, "run kind")
        _require(self.state, RUN_STATES, "run state")
        require_aware(self.started_at, "run started_at")
        if self.finished_at is not None:
            require_aware(self.finished_at, "run finished_at")
        # A tuple, so that a record read back from the store equals the one that was written.
        object.__setattr__(self, "outcomes", tuple(self.outcomes))
        object.__setattr__(self, "inputs", tuple(dict(item) for item in self.inputs))


@dataclass
class Attempt:
    """One try of a retried step: which (a check's profile, an event's grain), its number, and
    the platform's error (None: it succeeded, or failed on the author's mistake)."""

    profile: str
    attempt: int
    error: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"profile": self.profile, "attempt": self.attempt, "error": self.error}
