"""Judging: a run's evaluations applied to its dataset's incidents, and the notifications of
what changed (opened, escalated, resolved) put in the outbox, all inside the run's commit."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from assay.platform.incidents import layers
from assay.platform.incidents.errors import errors
from assay.platform.incidents.keys import (
    _RANK,
    NAMESPACE,
    PASSES_TO_RESOLVE,
    REOPEN_WITHIN,
    Context,
    Evaluation,
    evaluations,
)
from assay.store.incidents import IncidentRecord


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
    around = layers.Neighbourhood(store, context.dataset)
    for evaluation in evaluations(outcomes, context):
        found = latest.get(evaluation.key)
        if found is None or found.state == "resolved":
            shared = around.incident_of(evaluation)
            if shared is not None:  # another dataset's incident: this failure is one of its layers
                counts["notifications"] += _layer(
                    store, shared, evaluation, context, at=at, run_id=run_id, now=now
                )
                continue
        elif at > found.evaluated_at:
            layers.count(store, found, context.dataset, evaluation.status == "failed", at=at, run_id=run_id)
        kind = _apply(store, found, evaluation, context, at=at, run_id=run_id)
        if kind is None:
            continue
        incident, event, seq, why = kind
        counts[event] = counts.get(event, 0) + 1
        if event == "opened":  # its own layer, and the owners downstream of it told once
            layers.count(store, incident, context.dataset, True, at=at, run_id=run_id)
            counts["notifications"] += layers.tell(
                store, incident, around.below, context, run_id=run_id, now=now
            )
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
    counts["notifications"] += errors(store, outcomes, context, at=at, run_id=run_id, now=now)
    return counts


def _layer(
    store: Any,
    incident: IncidentRecord,
    evaluation: Evaluation,
    context: Context,
    *,
    at: datetime,
    run_id: str,
    now: datetime,
) -> int:
    """``context.dataset``'s evaluation as a layer of ``incident`` (opened on another dataset):
    a first failure joins it and tells the dataset's owners once; the pass that leaves every
    layer settled resolves it. Notifications added."""
    first = not any(la.dataset == context.dataset for la in store.incident_layers(incident.id))
    layer = layers.count(
        store, incident, context.dataset, evaluation.status == "failed", at=at, run_id=run_id
    )
    if first:
        detail = {"dataset": context.dataset, "observed": evaluation.observed, "message": evaluation.message}
        store.add_incident_event(incident.id, "layer_joined", at, run_id=run_id, detail=detail)
        return layers.tell(store, incident, [context.dataset], context, run_id=run_id, now=now)
    if layer is None or evaluation.status == "failed" or not layers.settled(store, incident):
        return 0
    incident.state, incident.resolved_at, incident.cause = "resolved", max(at, incident.evaluated_at), None
    incident.muted_until = None
    store.save_incident(incident, new=False)
    seq = store.add_incident_event(
        incident.id,
        "resolved",
        at,
        run_id=run_id,
        by="assay",
        detail={"after_passes": layer.passes, "layer": context.dataset},
    )
    return notify_incident(store, incident, "resolved", seq, None, run_id=run_id, now=now)


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
        if incident.passes < PASSES_TO_RESOLVE or not layers.settled(store, incident):
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
        channels = context.route(context.facts("failed", incident.severity, incident.expectation, kind))
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
