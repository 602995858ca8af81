"""Routing: which channels hear of a notification, said by ``routes:`` in ``assay.yaml`` (and a
check document's ``notify:``), tried in order; the first route that matches decides unless it says
``continue: true``.

A route matches what a notification is about (:class:`Facts`): its kind (``incident_opened``,
``downstream_incident``, ...), outcome, severity, dataset, expectation, the dataset's tags and
tier, and the flow whose run caused it (``dqdl``, ``profile``,
``gate``, ``check``, ``event``), so that a gate's quarantines can go to the people who answer the
contributors while a check run's failures go to the dataset's owners. It lives apart from the
channels (:mod:`assay.platform.notify`) because incidents and check documents need it and the
channels need both of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


OUTCOMES = ("failed", "config_error", "system_error")
"""The outcomes a route's ``when.outcome`` can match: a notification is about one of them (an
incident's are ``failed``)."""
FLOWS = ("dqdl", "profile", "gate", "check", "event")
"""The flows a route's ``when.flow`` can match: the run that caused the notification."""
KINDS = (
    "incident_opened",
    "incident_escalated",
    "incident_resolved",
    "downstream_incident",
    "config_error",
    "system_error",
)
"""The kinds a route's ``when.kind`` can match: a ``downstream_incident`` tells a dataset's
owners of an incident upstream of it (docs/lineage.md); a digest is made of routed items."""


def _listed(value: Any) -> Any:
    return (value,) if isinstance(value, str | int) and not isinstance(value, bool) else value


class When(_Strict):
    """What a route matches; every given key must match (a list: any of its items)."""

    outcome: tuple[Literal["failed", "config_error", "system_error"], ...] | None = None
    severity: tuple[Literal["critical", "error", "warning"], ...] | None = None
    dataset: tuple[str, ...] | None = None  # globs: "silver.*"
    expectation: tuple[str, ...] | None = None  # globs
    tag: tuple[str, ...] | None = None  # the dataset has one of them
    tier: tuple[Annotated[int, Field(ge=0, le=3)], ...] | None = None
    flow: tuple[Literal["dqdl", "profile", "gate", "check", "event"], ...] | None = None
    kind: (
        tuple[
            Literal[
                "incident_opened",
                "incident_escalated",
                "incident_resolved",
                "downstream_incident",
                "config_error",
                "system_error",
            ],
            ...,
        ]
        | None
    ) = None

    @field_validator(
        "outcome", "severity", "dataset", "expectation", "tag", "tier", "flow", "kind", mode="before"
    )
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return _listed(value)

    def matches(self, facts: Facts) -> bool:
        from fnmatch import fnmatchcase

        def globbed(patterns: tuple[str, ...] | None, value: str | None) -> bool:
            return patterns is None or (value is not None and any(fnmatchcase(value, p) for p in patterns))

        return (
            (self.outcome is None or facts.outcome in self.outcome)
            and (self.severity is None or facts.severity in self.severity)
            and globbed(self.dataset, facts.dataset)
            and globbed(self.expectation, facts.expectation)
            and (self.tag is None or bool(set(self.tag) & set(facts.tags)))
            and (self.tier is None or facts.tier in self.tier)
            and (self.flow is None or facts.flow in self.flow)
            and (self.kind is None or facts.kind in self.kind)
        )


class Route(_Strict):
    """``{when: {...}, to: [channel, ...], digest: daily, continue: false}``: first match wins
    unless ``continue: true``; ``digest: daily`` gathers the route's notifications into one
    message per channel per day."""

    when: When = When()
    to: tuple[str, ...] = Field(min_length=1)
    digest: Literal["daily"] | None = None
    go_on: bool = Field(False, alias="continue")

    @field_validator("to", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return _listed(value)


@dataclass(frozen=True)
class Facts:
    """What routing knows of a notification."""

    outcome: str
    severity: str | None = None
    dataset: str | None = None
    expectation: str | None = None
    tags: tuple[str, ...] = ()
    tier: int | None = None
    flow: str | None = None  # the run's flow (:data:`FLOWS`); None matches no ``flow:``
    kind: str | None = None  # the notification's kind (:data:`KINDS`); None matches no ``kind:``


def route(routes: Sequence[Route], facts: Facts) -> list[tuple[str, str | None]]:
    """The channels ``facts`` go to, each with its digest (None: at once), in route order, each
    channel once; no route matching means no notification.

    >>> routes = [Route.model_validate(r) for r in [
    ...     {"when": {"outcome": "failed", "severity": "warning"}, "to": "owners", "digest": "daily"},
    ...     {"when": {"outcome": "failed"}, "to": ["owners", "team"]},
    ... ]]
    >>> route(routes, Facts("failed", "warning")), route(routes, Facts("failed", "critical"))
    ([('owners', 'daily')], [('owners', None), ('team', None)])
    >>> route(routes, Facts("config_error"))
    []
    >>> gates = [Route.model_validate({"when": {"flow": "gate"}, "to": "contributors"})]
    >>> route(gates, Facts("failed", flow="gate")), route(gates, Facts("failed", flow="check"))
    ([('contributors', None)], [])
    >>> told = [Route.model_validate({"when": {"kind": "downstream_incident"}, "to": "consumers"})]
    >>> route(told, Facts("failed", kind="downstream_incident")), route(told, Facts("failed"))
    ([('consumers', None)], [])
    """
    out: dict[str, str | None] = {}
    for rule in routes:
        if not rule.when.matches(facts):
            continue
        for channel in rule.to:
            out.setdefault(channel, rule.digest)
        if not rule.go_on:
            break
    return list(out.items())
