"""Incidents: a run's failures grouped so that the right person hears once.

Check and event runs judge their outcomes here themselves; gate, profile and DQDL runs through
:mod:`assay.platform.alerts`, which reads their summaries into the same outcomes.

A failure belongs to the incident of its key: dataset + quality dimension + expectation (+ the
group, for an expectation with ``divide_by_group: true``). At most one incident of a key is
unresolved at a time. An incident is ``open`` → ``acknowledged`` → ``resolved``, or ``muted``
until a time. Its owners hear of it when it opens, when its severity escalates, when its observed
value moves by more than ``incidents.move_share`` of the value they last heard, and when it
resolves; never on a repeat. It resolves by itself after :data:`PASSES_TO_RESOLVE` consecutive
passing evaluations; a failure within :data:`REOPEN_WITHIN` of its resolution reopens it.

Everything here runs inside the check run's commit (the transaction of its outcomes), so the
incidents, their events and the notifications they cause (the outbox) land with the outcomes or
not at all. Only evaluations later than the one an incident last counted change it: a re-run of
the same logical time, or a backfill of an earlier one, leaves incidents as they are.

A ``config_error`` outcome is sent to its route once per distinct error (same dataset,
expectation and message), a ``system_error`` once per source per :data:`SYSTEM_ERROR_EVERY`;
neither opens an incident (they are not statements about the data). Advisory expectations and
dry runs never notify.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, NoReturn

from assay.errors import ConfigError
from assay.platform.baselines import settle_incident
from assay.platform.routing import Facts
from assay.store.checks import group_key
from assay.store.incidents import IncidentRecord

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

    def facts(self, outcome: str, severity: str | None, expectation: str | None) -> Facts:
        return Facts(outcome, severity, self.dataset, expectation, self.tags, self.tier, self.flow)


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


def judge(
    store: Any,
    outcomes: Sequence[Mapping[str, Any]],
    context: Context,
    *,
    at: datetime,
    run_id: str,
    now: datetime,
) -> dict[str, int]:
    """Apply a run's outcomes to its dataset's incidents and put what they cause in the outbox
    (call inside the run's commit); counts of what happened, for the run's summary."""
    counts = {"opened": 0, "escalated": 0, "resolved": 0, "notifications": 0}
    latest = store.latest_incidents(context.dataset)
    for evaluation in evaluations(outcomes, context):
        found = latest.get(evaluation.key)
        kind = _apply(store, found, evaluation, context, at=at, run_id=run_id)
        if kind is None:
            continue
        incident, event, seq, why = kind
        counts[event] = counts.get(event, 0) + 1
        if incident.state == "muted" and event != "resolved":
            continue
        counts["notifications"] += notify_incident(
            store,
            incident,
            event,
            seq,
            context,
            run_id=run_id,
            now=now,
            why=why,
            groups=evaluation.groups if event != "resolved" else [],
            detail=evaluation.detail if event != "resolved" else None,
        )
    counts["notifications"] += _errors(store, outcomes, context, at=at, run_id=run_id, now=now)
    return counts


def _apply(
    store: Any,
    found: IncidentRecord | None,
    evaluation: Evaluation,
    context: Context,
    *,
    at: datetime,
    run_id: str,
) -> tuple[IncidentRecord, str, int, str | None] | None:
    """The incident's change for one evaluation, saved with its event: (incident, event, seq,
    why: ``severity`` or ``moved`` for an escalation) when the event notifies (opened,
    escalated, resolved), else None."""
    if found is not None and at <= found.evaluated_at:
        return None  # a re-run or a backfill: incidents count each logical time once, in order
    failed = evaluation.status == "failed"
    if found is None or found.state == "resolved":
        if not failed:
            return None
        detail = {"observed": evaluation.observed, "message": evaluation.message}
        if found is not None and found.resolved_at is not None and at - found.resolved_at <= REOPEN_WITHIN:
            found.state, found.passes, found.resolved_at, found.cause = "open", 0, None, None
            found.failures += 1
            _observe(found, evaluation, at)
            store.save_incident(found, new=False)
            seq = store.add_incident_event(found.id, "reopened", at, run_id=run_id, detail=detail)
            return found, "opened", seq, None
        incident = IncidentRecord(
            id=str(uuid.uuid4()),
            dataset=context.dataset,
            dimension=evaluation.dimension,
            expectation=evaluation.expectation,
            group=evaluation.group,
            state="open",
            severity=evaluation.severity,
            owner=evaluation.owner,
            opened_at=at,
            evaluated_at=at,
            failures=1,
        )
        _observe(incident, evaluation, at)
        store.save_incident(incident, new=True)
        seq = store.add_incident_event(incident.id, "opened", at, run_id=run_id, detail=detail)
        return incident, "opened", seq, None
    incident = found
    if incident.state == "muted" and incident.muted_until is not None and incident.muted_until <= at:
        incident.state, incident.muted_until = "open", None
        store.add_incident_event(incident.id, "unmuted", at, run_id=run_id)
    if not failed:
        incident.passes += 1
        incident.evaluated_at = at
        if incident.passes < PASSES_TO_RESOLVE:
            store.save_incident(incident, new=False)
            store.add_incident_event(incident.id, "passed", at, run_id=run_id)
            return None
        incident.state, incident.resolved_at, incident.cause = "resolved", at, None
        incident.muted_until = None
        store.save_incident(incident, new=False)
        seq = store.add_incident_event(
            incident.id, "resolved", at, run_id=run_id, by="assay", detail={"after_passes": incident.passes}
        )
        return incident, "resolved", seq, None
    incident.passes = 0
    incident.failures += 1
    previous = incident.notified_observed
    escalated = _RANK.get(evaluation.severity, 0) > _RANK.get(incident.severity, 0)
    if escalated:
        incident.severity = evaluation.severity
    _observe(incident, evaluation, at)
    moved = not escalated and _moved(previous, evaluation.observed, context.move_share)
    change: dict[str, Any] = {"observed": evaluation.observed, "severity": evaluation.severity}
    if escalated or moved:
        change["from"] = previous
        change["why"] = "severity" if escalated else "moved"
        store.save_incident(incident, new=False)
        seq = store.add_incident_event(incident.id, "escalated", at, run_id=run_id, detail=change)
        return incident, "escalated", seq, change["why"]
    store.save_incident(incident, new=False)
    store.add_incident_event(incident.id, "failed", at, run_id=run_id, detail=change)
    return None


def _observe(incident: IncidentRecord, evaluation: Evaluation, at: datetime) -> None:
    incident.evaluated_at = at
    incident.observed = evaluation.observed
    incident.expected = evaluation.expected
    incident.message = evaluation.message
    incident.owner = evaluation.owner or incident.owner


def _moved(before: float | None, now: float | None, share: float) -> bool:
    """Whether ``now`` is more than ``share`` of ``before`` away from it.

    >>> _moved(100.0, 151.0, 0.5), _moved(100.0, 140.0, 0.5), _moved(0.0, 0.2, 0.5), _moved(None, 3.0, 0.5)
    (True, False, True, False)
    """
    if before is None or now is None:
        return False
    return abs(now - before) > share * max(abs(before), 1e-9)


def notify_incident(
    store: Any,
    incident: IncidentRecord,
    event: str,
    seq: int,
    context: Context | None,
    *,
    run_id: str | None,
    now: datetime,
    message: str | None = None,
    why: str | None = None,
    groups: Sequence[Mapping[str, Any]] = (),
    detail: Mapping[str, Any] | None = None,
) -> int:
    """Put the notification of ``incident``'s ``event`` (opened, escalated, resolved) in the
    outbox; routed afresh with ``context``, or to where its last notification went without.
    ``why`` an escalation happened (``severity``, ``moved``) words it; the failing ``by:``
    ``groups`` and the flow's ``detail`` are added to the payload when there are any."""
    kind = {"opened": "incident_opened", "escalated": "incident_escalated", "resolved": "incident_resolved"}[
        event
    ]
    if context is not None:
        channels = context.route(context.facts("failed", incident.severity, incident.expectation))
        incident.channels = [[c, d] for c, d in channels]
    else:
        channels = [(str(c), d) for c, d in incident.channels]
    previous = incident.notified_observed
    if event != "resolved":
        incident.notified_observed = incident.observed
    store.save_incident(incident, new=False)
    if not channels:
        return 0
    payload = {
        "id": str(uuid.uuid5(NAMESPACE, f"incident/{incident.id}/{seq}")),
        "kind": kind,
        "dataset": incident.dataset,
        "expectation": incident.expectation,
        "group": incident.group,
        "severity": incident.severity,
        "outcome": ("passed" if message is None else None) if event == "resolved" else "failed",
        "observed": incident.observed,
        "expected": incident.expected,
        "message": message or _words(incident, event, why, previous),
        "run_id": run_id,
        "incident_id": incident.id,
    }
    if groups:
        payload["groups"] = [dict(g) for g in groups]
    if detail:
        payload["detail"] = dict(detail)
    day = _day(
        incident.resolved_at if event == "resolved" and incident.resolved_at else incident.evaluated_at
    )
    return int(store.enqueue(payload, channels, now=now, day=day))


def _words(
    incident: IncidentRecord, event: str, why: str | None = None, previous: float | None = None
) -> str:
    """The notification's message: an escalation says what changed, in the direction it moved.

    >>> from datetime import UTC, datetime
    >>> at = datetime(2026, 11, 2, tzinfo=UTC)
    >>> i = IncidentRecord("i", "d", "volume", "v", None, "open", "error", None, at, at, observed=1348.0,
    ...                    message="rows = 1,348, expected > 1,500")
    >>> _words(i, "escalated", "moved", 399.0)
    'v (volume) rose from 399 to 1,348 and still fails: rows = 1,348, expected > 1,500'
    >>> _words(i, "escalated", "severity", 1348.0)
    'v (volume) is now error: rows = 1,348, expected > 1,500'
    """
    what = f"{incident.expectation} ({incident.dimension})"
    if event == "resolved":
        return f"{what} passed {incident.passes} evaluations in a row: resolved"
    if event == "escalated":
        now = incident.observed
        if why == "moved" and previous is not None and now is not None:
            verb = "rose" if now > previous else "fell"
            moved = f"{verb} from {_number(previous)} to {_number(now)}"
            return f"{what} {moved} and still fails: {incident.message}"
        return f"{what} is now {incident.severity}: {incident.message}"
    return f"{what} failed: {incident.message}"


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4g}"


def _day(at: datetime) -> date:
    return at.date()


def _errors(
    store: Any,
    outcomes: Sequence[Mapping[str, Any]],
    context: Context,
    *,
    at: datetime,
    run_id: str,
    now: datetime,
) -> int:
    """The run's config and system errors into the outbox, each once as the module says."""
    added = 0
    system_sent = False
    for item in outcomes:
        outcome = item.get("outcome")
        if item.get("mode") != "enforce" or outcome not in ("config_error", "system_error"):
            continue
        if outcome == "system_error" and system_sent:
            continue
        expectation = str(item["expectation"])
        message = str(item.get("message") or "")
        config = outcome == "config_error"
        group = group_key(item.get("group"))
        added += _enqueue_error(
            store,
            kind=str(outcome),
            dataset=context.dataset,
            source=context.source,
            expectation=expectation,
            message=message,
            payload={
                "id": str(uuid.uuid5(NAMESPACE, f"{outcome}/{run_id}/{expectation}/{group}")),
                "expectation": expectation if config else None,
                "group": item.get("group"),
                "severity": item.get("severity"),
                "message": message if config else f"{context.source}: {message}",
                "run_id": run_id,
            },
            route=context.route,
            facts=context.facts(str(outcome), item.get("severity"), expectation),
            day=_day(at),
            now=now,
        )
        system_sent = system_sent or outcome == "system_error"
    return added


def run_error(
    store: Any,
    *,
    kind: str,
    dataset: str,
    source: str,
    message: str,
    run_id: str,
    route: Callable[[Facts], list[tuple[str, str | None]]],
    tags: tuple[str, ...] = (),
    tier: int | None = None,
    flow: str | None = None,
    now: datetime,
) -> int:
    """A run that failed before judging anything (a config or system error of the whole run):
    its notification into the outbox, once as the module says; how many rows were added."""
    return _enqueue_error(
        store,
        kind=kind,
        dataset=dataset,
        source=source,
        expectation=None,
        message=message,
        payload={"id": str(uuid.uuid5(NAMESPACE, f"{kind}/{run_id}")), "message": message, "run_id": run_id},
        route=route,
        facts=Facts(kind, None, dataset, None, tags, tier, flow),
        day=now.date(),
        now=now,
    )


def _enqueue_error(
    store: Any,
    *,
    kind: str,
    dataset: str,
    source: str,
    expectation: str | None,
    message: str,
    payload: Mapping[str, Any],
    route: Callable[[Facts], list[tuple[str, str | None]]],
    facts: Facts,
    day: date,
    now: datetime,
) -> int:
    """One config or system error into the outbox unless it was sent already: a config error
    once per (dataset, expectation, message), a system error once per source per
    :data:`SYSTEM_ERROR_EVERY`. ``payload`` gives the fields that differ from the defaults."""
    if kind == "config_error":
        digest = hashlib.sha256(message.encode()).hexdigest()[:16]
        key, since = f"config_error/{dataset}/{expectation or '*'}/{digest}", None
    else:
        key, since = f"system_error/{source}", now - SYSTEM_ERROR_EVERY
    if store.notified(key, since=since):
        return 0
    routed = route(facts)
    if not routed:
        return 0
    body = {
        "id": payload["id"],
        "kind": kind,
        "dataset": dataset,
        "expectation": None,
        "group": None,
        "severity": None,
        "outcome": kind,
        "observed": None,
        "expected": None,
        "incident_id": None,
        **payload,
    }
    return int(store.enqueue(body, routed, now=now, day=day, dedupe_key=key))


# --- what people do -------------------------------------------------------------------------------


def acknowledge(store: Any, incident_id: str, *, by: str, now: datetime) -> IncidentRecord:
    """Someone is on it: ``open`` → ``acknowledged`` (its owners are not told again). With its
    audit row (``incident.ack``), in the same transaction, whoever calls: the CLI or the web."""
    with store.transaction():
        incident = store.incident(incident_id)
        _require_unresolved(incident, "acknowledge")
        incident.state = "acknowledged"
        store.save_incident(incident, new=False)
        store.add_incident_event(incident.id, "acknowledged", now, by=by)
        store.audit(by, "incident.ack", incident.id, dataset=incident.dataset)
    return store.incident(incident_id)  # type: ignore[no-any-return]


def mute(store: Any, incident_id: str, *, until: datetime, by: str, now: datetime) -> IncidentRecord:
    """No notification of the incident until ``until`` (compared with the evaluations' logical
    times, which for a scheduled run are its tick); it still records every evaluation. With its
    audit row (``incident.mute``)."""
    with store.transaction():
        incident = store.incident(incident_id)
        _require_unresolved(incident, "mute")
        if until <= now:
            raise_config(f"--until {until.isoformat()} is not in the future")
        incident.state, incident.muted_until = "muted", until
        store.save_incident(incident, new=False)
        detail = {"until": until.isoformat()}
        store.add_incident_event(incident.id, "muted", now, by=by, detail=detail)
        store.audit(by, "incident.mute", incident.id, dataset=incident.dataset, detail=detail)
    return store.incident(incident_id)  # type: ignore[no-any-return]


def resolve(
    store: Any, incident_id: str, *, by: str, cause: str, note: str | None, now: datetime
) -> tuple[IncidentRecord, int]:
    """Resolve by hand with a cause (:data:`CAUSES`, which says what becomes of the loads it held
    out of later baselines). Its owners hear of it where they heard of it last; its audit row
    (``incident.resolve``) is written with it. Returns the incident and how many loads left the
    baselines."""
    if cause not in CAUSES:
        raise_config(f"unknown cause {cause!r}: expected one of {', '.join(CAUSES)}")
    with store.transaction():
        incident = store.incident(incident_id)
        _require_unresolved(incident, "resolve")
        left, accepted = settle_incident(store, incident, cause, by=by, now=now)
        incident.state, incident.resolved_at, incident.cause = (
            "resolved",
            max(now, incident.evaluated_at),
            cause,
        )
        incident.muted_until = None
        store.save_incident(incident, new=False)
        detail = {
            "cause": cause,
            "note": note,
            "left_out_of_baselines": left,
            "accepted_into_baselines": accepted,
        }
        seq = store.add_incident_event(incident.id, "resolved", now, by=by, detail=detail)
        store.audit(
            by,
            "incident.resolve",
            incident.id,
            dataset=incident.dataset,
            detail={"cause": cause, "note": note},
        )
        words = f"{incident.expectation} ({incident.dimension}) resolved by {by}: {cause.replace('_', ' ')}"
        notify_incident(
            store,
            incident,
            "resolved",
            seq,
            None,
            run_id=None,
            now=now,
            message=words + (f" ({note})" if note else ""),
        )
    return store.incident(incident_id), left


def _require_unresolved(incident: IncidentRecord, action: str) -> None:
    if incident.state == "resolved":
        raise_config(f"incident {incident.id} is resolved: there is nothing to {action}")


def raise_config(message: str) -> NoReturn:
    raise ConfigError(message)
