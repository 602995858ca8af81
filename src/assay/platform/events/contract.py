"""The event contract (``kind: EventContract``): what one consumer needs of one event, field by field.

A consumer declares, for each payload field it reads, what it needs: ``present``, a ``type``,
``non_empty``, a ``range``, a set (``in``), a tolerated ``null_rate_drift``; each becomes a
:class:`Requirement` reading one stored metric of the field, the same metric for every contract
that asks the same question (each judging it with its own tolerance). Reading the files is
:mod:`assay.platform.events.document`'s; the contracts of one event together,
:mod:`assay.platform.events.event`'s.

>>> import yaml
>>> contract = Contract.model_validate(yaml.safe_load('''
... apiVersion: assay/v1
... kind: EventContract
... event: {name: trade_executed.v3, source: {path: "events/*.jsonl"}, event_time: event_ts}
... consumer: {team: risk-analytics, tier: 0}
... fields:
...   amount: {present: true, type: decimal, range: [0, 1.0e9]}
... '''))
>>> [(r.name, r.metric) for r in contract.requirements()]
[('amount.present', 'present'), ('amount.type', 'type:decimal'), ('amount.range', 'range:0.0:1000000000.0')]
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

KIND = "EventContract"
GRAINS = {"hour": 3600, "day": 86400}
"""A window's length in seconds, by grain."""
DEFAULT_DRIFT = "median(last(168))"
"""The baseline of a ``null_rate_drift`` that names none: the median of the last 168 windows
(a week of hours)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


# --- the model ------------------------------------------------------------------------------------


class EventSource(_Strict):
    """Where the event's records are: JSON-lines, JSON or Parquet files (a glob), relative to the
    contract's folder."""

    path: Annotated[str, Field(min_length=1)]


class Producer(_Strict):
    """Who emits the event: the team that hears of an Event Quality Score below its gate."""

    team: str | None = None
    contact: str | None = None


class Event(_Strict):
    name: Annotated[str, Field(min_length=1, max_length=200)]
    source: EventSource
    key: Annotated[str, Field(min_length=1)] | None = None
    event_time: Annotated[str, Field(min_length=1)]
    ingest_time: Annotated[str, Field(min_length=1)] | None = None
    # None: the payload's fields are the record's top-level fields
    payload: Annotated[str, Field(min_length=1)] | None = None
    producer: Producer | None = None
    description: str | None = None
    tier: Annotated[int, Field(ge=0, le=3)] | None = None
    tags: tuple[str, ...] = ()


class Consumer(_Strict):
    team: Annotated[str, Field(min_length=1, max_length=150)]
    contact: str | None = None
    tier: Annotated[int, Field(ge=0, le=3)] | None = None


class Window(_Strict):
    grain: Literal["hour", "day"] = "hour"
    # when `assay run --due` runs the event: each tick of this cron expression (read in
    # `timezone`) runs the last complete window before it; without it, the event is not scheduled
    schedule: str | None = None
    timezone: str = "UTC"

    @field_validator("schedule")
    @classmethod
    def _schedule(cls, value: str | None) -> str | None:
        from assay.platform.checks.document import check_schedule

        return check_schedule(value, '"5 * * * *" is five past every hour')

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        from assay.platform.checks.document import check_timezone

        return check_timezone(value)

    @property
    def seconds(self) -> int:
        return GRAINS[self.grain]


Rate = Annotated[float, Field(ge=0.0, le=1.0)]


class RateSpec(_Strict):
    """A requirement judged as a share of rows: it holds when the share is at least ``min_rate``."""

    min_rate: Rate | None = None


class TypeSpec(RateSpec):
    """``type: T``: the value casts to T (``number`` is ``decimal`` under another name)."""

    is_: Literal["string", "integer", "decimal", "number", "boolean", "timestamp"] = Field(alias="is")


class RangeSpec(RateSpec):
    between: tuple[float, float]

    @model_validator(mode="after")
    def _ordered(self) -> RangeSpec:
        if self.between[0] > self.between[1]:
            raise ValueError(f"the low bound {self.between[0]:g} is above the high {self.between[1]:g}")
        return self


Scalar = str | bool | int | float


class InSpec(RateSpec):
    values: Annotated[tuple[Scalar, ...], Field(min_length=1)]


class DriftSpec(_Strict):
    """The field's null rate may exceed its baseline (``vs``, over its stored history) by at
    most ``max_pp`` percentage points."""

    max_pp: Annotated[float, Field(ge=0.0, le=100.0)]
    vs: str = DEFAULT_DRIFT
    min_history: Annotated[int, Field(ge=1)] = 1

    @field_validator("vs")
    @classmethod
    def _baseline(cls, value: str) -> str:
        baseline_condition(value)
        return value


def _flag(value: Any) -> Any:
    """``true`` is the requirement with its defaults, ``false`` is none."""
    if value is True:
        return {}
    if value is False or value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"{value!r}: write true, false or {{min_rate: 0.99}}")
    return value


class FieldSpec(_Strict):
    """What a consumer needs of one payload field; ``min_rate`` is the default tolerance of its
    share requirements (``present``, ``type``, ``non_empty``, ``range``, ``in``)."""

    present: RateSpec | None = None
    type: TypeSpec | None = None
    non_empty: RateSpec | None = None
    range: RangeSpec | None = None
    in_: InSpec | None = Field(None, alias="in")
    null_rate_drift: DriftSpec | None = None
    min_rate: Rate | None = None
    description: str | None = None

    @field_validator("present", "non_empty", mode="before")
    @classmethod
    def _flags(cls, value: Any) -> Any:
        return _flag(value)

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: Any) -> Any:
        return {"is": value} if isinstance(value, str) else value

    @field_validator("range", mode="before")
    @classmethod
    def _range(cls, value: Any) -> Any:
        return {"between": value} if isinstance(value, list | tuple) else value

    @field_validator("in_", mode="before")
    @classmethod
    def _in(cls, value: Any) -> Any:
        return {"values": value} if isinstance(value, list | tuple) else value

    @model_validator(mode="after")
    def _something(self) -> FieldSpec:
        if not any(
            x is not None
            for x in (self.present, self.type, self.non_empty, self.range, self.in_, self.null_rate_drift)
        ):
            raise ValueError(
                "a field needs a requirement: present, type, non_empty, range, in or null_rate_drift"
            )
        return self


class Contract(_Strict):
    apiVersion: Literal["assay/v1"]
    kind: Literal["EventContract"]
    event: Event
    consumer: Consumer
    window: Window = Window()
    fields: Annotated[
        dict[Annotated[str, Field(min_length=1, max_length=200)], FieldSpec], Field(min_length=1)
    ]
    severity: Literal["critical", "error", "warning"] = "error"
    mode: Literal["enforce", "advisory"] = "enforce"
    description: str | None = None

    @property
    def id(self) -> str:
        """The contract's id among the event's contracts: its consumer's team."""
        return self.consumer.team

    @property
    def expectation(self) -> str:
        """The expectation its incidents are keyed by: one alert per contract."""
        return f"contract:{self.consumer.team}"

    def requirements(self) -> list[Requirement]:
        """Every (field, requirement) the contract declares, in document order."""
        out: list[Requirement] = []
        for name, spec in self.fields.items():
            default = 1.0 if spec.min_rate is None else spec.min_rate
            for kind, given in (
                ("present", spec.present),
                ("type", spec.type),
                ("non_empty", spec.non_empty),
                ("range", spec.range),
                ("in", spec.in_),
            ):
                if isinstance(given, RateSpec):
                    rate = default if given.min_rate is None else given.min_rate
                    out.append(Requirement(name, kind, _parameter(given), rate))
            if spec.null_rate_drift is not None:
                drift = spec.null_rate_drift
                out.append(Requirement(name, "null_rate_drift", drift.vs, None, drift))
        return out


def _parameter(spec: RateSpec) -> Any:
    if isinstance(spec, TypeSpec):
        return "decimal" if spec.is_ == "number" else spec.is_
    if isinstance(spec, RangeSpec):
        return spec.between
    if isinstance(spec, InSpec):
        return tuple(value_text(v) for v in spec.values)
    return None


def value_text(value: Scalar) -> str:
    """A set member as the payload's text of it is compared with: ``true``, ``1``, ``1.5``, ``USD``.

    >>> [value_text(v) for v in (True, 1, 1.5, "USD")]
    ['true', '1', '1.5', 'USD']
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class Requirement:
    """One (field, requirement) of a contract: ``kind`` is ``present``, ``type``, ``non_empty``,
    ``range``, ``in`` or ``null_rate_drift``; ``min_rate`` the share that must hold (share
    requirements); ``metric`` the name of the stored metric it reads (a Column metric of the field),
    the same for every contract that asks the same thing."""

    field: str
    kind: str
    parameter: Any
    min_rate: float | None
    drift: DriftSpec | None = None

    @property
    def metric(self) -> str:
        if self.kind == "type":
            return f"type:{self.parameter}"
        if self.kind == "range":
            low, high = self.parameter
            return f"range:{float(low)!r}:{float(high)!r}"
        if self.kind == "in":
            digest = hashlib.sha256(json.dumps(sorted(self.parameter)).encode()).hexdigest()[:12]
            return f"in:{digest}"
        if self.kind == "null_rate_drift":
            return "null_rate"
        return self.kind

    @property
    def name(self) -> str:
        """How outcomes name it: ``venue.non_empty``."""
        return f"{self.field}.{self.kind}"


def baseline_condition(text: str) -> Any:
    """The DQDL number expression of a drift's ``vs`` (``median(last(168))``), parsed as the one
    operand of an ``=`` condition; a ValueError says why it is not one."""
    from assay.lang.dqdl.ast import CondKind, Op
    from assay.lang.dqdl.errors import DQDLSyntaxError
    from assay.lang.dqdl.parser import parse_condition

    source = str(text).strip()
    if not source:
        raise ValueError("give a baseline such as median(last(168))")
    prefix = "= "
    try:
        condition = parse_condition(prefix + source, CondKind.NUMBER)
    except DQDLSyntaxError as error:
        column = max(1, error.column - len(prefix))
        raise ValueError(
            f"'{source}' is not a number expression over the history: {error.reason} (column {column})"
        ) from None
    if condition.op is not Op.EQ or len(condition.operands) != 1:
        raise ValueError(f"'{source}' is not one number expression over the history")
    return condition


__all__ = ["Contract", "Requirement", "baseline_condition", "value_text"]
