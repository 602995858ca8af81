"""What people do with an incident: acknowledge, mute, resolve by hand (from the CLI or the
web), each with its audit row in the same transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NoReturn

from assay.errors import ConfigError
from assay.platform.baselines import settle_incident
from assay.platform.incidents.judging import notify_incident
from assay.platform.incidents.keys import CAUSES
from assay.store.incidents import IncidentRecord


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
