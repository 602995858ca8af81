"""An incident's key and what a run tells incidents: the quality dimension of an expectation,
the run's :class:`Context` and its :class:`Evaluation` of each key."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from assay.platform.routing import Facts
from assay.store.checks import group_key

DIMENSIONS = ("freshness", "volume", "completeness", "uniqueness", "validity")
CAUSES = ("real_issue", "expected_change", "false_alarm", "new_normal")
"""Why an incident resolved by hand, and what becomes of the loads its failures held out of later
baselines (:mod:`assay.platform.baselines`): ``false_alarm`` takes them back in, ``new_normal``
takes them in and restarts the baselines at its first failure, ``real_issue`` and
``expected_change`` keep them out for good."""
PASSES_TO_RESOLVE = 2
REOPEN_WITHIN = timedelta(hours=24)
SYSTEM_ERROR_EVERY = timedelta(minutes=15)
NAMESPACE = uuid.UUID("6f1c55a4-53c1-4f0e-9a3f-3c7f2b1d8e10")
"""Of the notification ids: the same event always has the same id (uuid5), so a receiver can
drop a repeat."""

_RANK = {"warning": 0, "error": 1, "critical": 2}
_METRIC_DIMENSIONS = {
    "row_count": "volume",
    "freshness": "freshness",
    "null_rate": "completeness",
    "null_count": "completeness",
    "blank_rate": "completeness",
    "blank_count": "completeness",
    "missing_rate": "completeness",
    "distinct_count": "uniqueness",
}
_RULE_DIMENSIONS = {
    "RowCount": "volume",
    "RowCountMatch": "volume",
    "DataFreshness": "freshness",
    "IsComplete": "completeness",
    "Completeness": "completeness",
    "IsUnique": "uniqueness",
    "Uniqueness": "uniqueness",
    "IsPrimaryKey": "uniqueness",
    "UniqueValueRatio": "uniqueness",
    "DistinctValuesCount": "uniqueness",
}


def dimension_of(metric: str | None, rule: str | None, declared: str | None = None) -> str:
    """An expectation's quality dimension: the one it declares, else its metric's or rule's.

    >>> dimension_of("daily.row_count", None), dimension_of("daily.null_rate(fee)", None)
    ('volume', 'completeness')
    >>> dimension_of(None, 'IsUnique "id"'), dimension_of(None, 'ColumnValues "x" > 0')
    ('uniqueness', 'validity')
    >>> dimension_of("daily.max(fee)", None, declared="volume")
    'volume'
    """
    if declared:
        return declared
    if metric is not None:
        name = metric.split(".", 1)[-1].split("(", 1)[0]
        return _METRIC_DIMENSIONS.get(name, "validity")
    word = (rule or "").strip().split(" ", 1)[0].split("(", 1)[0]
    return _RULE_DIMENSIONS.get(word, "validity")


@dataclass(frozen=True)
class Context:
    """What the check run tells incidents about its dataset and expectations."""

    dataset: str
    source: str
    tags: tuple[str, ...]
    tier: int | None
    dimensions: Mapping[str, str]  # expectation id → dimension
    divided: frozenset[str]  # expectations with divide_by_group: true
    route: Callable[[Facts], list[tuple[str, str | None]]]
    move_share: float = 0.5
    flow: str | None = None  # the run's flow, which a route may match (``when: {flow: gate}``)

    # The context of another dataset, for a notification to its owners (a downstream_incident):
    # its check document's routing; None where the flow cannot say (no such notification)
    others: Callable[[str], Context | None] | None = None

    def facts(
        self, outcome: str, severity: str | None, expectation: str | None, kind: str | None = None
    ) -> Facts:
        return Facts(outcome, severity, self.dataset, expectation, self.tags, self.tier, self.flow, kind)


@dataclass
class Evaluation:
    """One incident key's evaluation in one run: ``failed`` when any of its outcomes failed,
    ``passed`` when all passed (skipped and error outcomes count for neither)."""

    dimension: str
    expectation: str
    group: dict[str, Any] | None
    status: str
    severity: str
    owner: str | None
    observed: float | None
    expected: Any
    message: str | None
    groups: list[dict[str, Any]] = field(default_factory=list)  # the failing ``by:`` groups
    detail: dict[str, Any] | None = None  # what the flow adds to the notification

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.dimension, self.expectation, group_key(self.group))


def evaluations(outcomes: Sequence[Mapping[str, Any]], context: Context) -> list[Evaluation]:
    """The run's enforced outcomes, one evaluation per incident key."""
    keyed: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for item in outcomes:
        if item.get("mode") != "enforce" or item.get("outcome") not in ("passed", "failed"):
            continue
        expectation = str(item["expectation"])
        group = item.get("group") if expectation in context.divided else None
        dimension = context.dimensions.get(expectation, "validity")
        keyed.setdefault((dimension, expectation, group_key(group)), []).append(item)
    out = []
    for (dimension, expectation, _), items in keyed.items():
        failed = [i for i in items if i["outcome"] == "failed"]
        # the total's numbers when the total failed, else the first failing group's
        shown = next((i for i in failed if not i.get("group")), failed[0] if failed else items[0])
        groups = [dict(i["group"]) for i in failed if i.get("group")]
        message = _naming(shown.get("message"), shown.get("group"), groups)
        out.append(
            Evaluation(
                dimension=dimension,
                expectation=expectation,
                group=items[0].get("group") if expectation in context.divided else None,
                status="failed" if failed else "passed",
                severity=str(shown["severity"]),
                owner=shown.get("owner"),
                observed=shown.get("observed"),
                expected=shown.get("expected"),
                message=message,
                groups=groups,
                detail=shown.get("detail"),
            )
        )
    return out


def _naming(
    message: str | None, shown: Mapping[str, Any] | None, groups: Sequence[Mapping[str, Any]]
) -> str | None:
    """A ``by:`` failure's message naming its groups: the shown group's numbers first, then
    every failing group (at most five, then how many more).

    >>> _naming("daily.row_count = 399, expected > 400", {"region": "EU"}, [{"region": "EU"}])
    'region=EU: daily.row_count = 399, expected > 400'
    >>> _naming("m = 1", None, [{"region": "EU"}, {"region": "US"}])
    'm = 1 (2 groups failed: region=EU, region=US)'
    """
    if not groups:
        return message
    head = f"{_label(shown)}: {message}" if shown else message
    if len(groups) == 1 and shown:
        return head
    names = ", ".join(_label(g) for g in groups[:5]) + (
        f" and {len(groups) - 5} more" if len(groups) > 5 else ""
    )
    return f"{head} ({len(groups)} groups failed: {names})"


def _label(group: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in group.items())
