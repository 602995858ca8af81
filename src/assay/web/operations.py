"""The control plane's operational pages as JSON: runs, incidents, new-value decisions, proposals,
gate runs with their quarantined rows, users and the audit trail; and the writes a person makes
there (acknowledge, resolve, mute; accept, reject; accept a held load back into baselines; add a
user), each through the same platform
function the CLI calls, which records it in the audit trail with who and when in the same
transaction (so an action from the CLI is in the trail too); a user's change is audited by the
store.
"""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from pathlib import Path
from typing import Any

from fastapi.responses import FileResponse, Response

from assay.errors import ConfigError
from assay.lake import storage
from assay.platform.privacy import classified
from assay.privacy import Masker, masker
from assay.web.paging import Page
from assay.web.plane import NotFound, Plane, check_filter, check_id, check_run_id
from assay.workspace import Workspace

INCIDENT_STATES = ("open", "acknowledged", "muted", "resolved")
MUTE_HOURS_MAX = 24 * 90


# --- runs ------------------------------------------------------------------------------------------


def runs_page(
    plane: Plane,
    *,
    dataset: str | None = None,
    kind: str | None = None,
    state: str | None = None,
    page: Page | None = None,
) -> dict[str, Any]:
    """A page of runs, newest first: state, durations, attempts, query counts and errors."""
    from assay.store import RUN_KINDS, RUN_STATES

    if kind is not None and kind not in RUN_KINDS:
        raise ConfigError(f"kind must be one of {', '.join(RUN_KINDS)}, not {kind!r}")
    if state is not None and state not in RUN_STATES:
        raise ConfigError(f"state must be one of {', '.join(RUN_STATES)}, not {state!r}")
    page = page or Page()
    rows, total = plane.store.run_page(
        dataset=check_filter(dataset), kind=kind, state=state, limit=page.limit, offset=page.offset
    )
    out = page.wrap([r.to_dict() for r in rows], total=total)
    out["filters"] = {"dataset": dataset, "kind": kind, "state": state}
    out["kinds"], out["states"] = list(RUN_KINDS), list(RUN_STATES)
    return out


def run_detail(plane: Plane, run_id: str) -> dict[str, Any]:
    """One run: its record, the stages it passed with their times, and its outcomes (a check
    run's, or a DQDL run's rules)."""
    check_run_id(run_id)
    record = plane.store.run(run_id)
    if record is None:
        raise NotFound(f"no run {run_id}")
    summary = dict(record.summary or {})
    checks = [p.to_dict() for p in plane.store.run_check_outcomes(run_id)]
    return {
        "id": record.id,
        "kind": record.kind,
        "dataset": record.dataset,
        "state": record.state,
        "started_at": record.started_at.isoformat(),
        "finished_at": None if record.finished_at is None else record.finished_at.isoformat(),
        "seconds": None
        if record.finished_at is None
        else round((record.finished_at - record.started_at).total_seconds(), 3),
        "error": record.error,
        "inputs": [dict(i) for i in record.inputs],
        "counts": dict(record.counts or {}),
        "stages": [{"stage": s, "at": at.isoformat()} for s, at in plane.store.stages(run_id)],
        "queries": summary.get("queries"),
        "attempts": summary.get("attempts") or [],
        "outcomes": checks
        or [{"rule": o.rule, "outcome": o.outcome, "message": o.message} for o in record.outcomes],
        "summary": {k: v for k, v in summary.items() if k not in ("outcomes", "rules", "groups")},
    }


# --- incidents -------------------------------------------------------------------------------------


def incidents_page(
    plane: Plane, *, state: str | None = None, dataset: str | None = None, page: Page | None = None
) -> dict[str, Any]:
    """A page of incidents, the most recently opened first (``state``: one state, or ``active``
    for every state but resolved)."""
    if state is not None and state not in (*INCIDENT_STATES, "active"):
        raise ConfigError(f"state must be one of {', '.join((*INCIDENT_STATES, 'active'))}, not {state!r}")
    page = page or Page()
    states = None if state is None else (INCIDENT_STATES[:3] if state == "active" else (state,))
    found = plane.store.incidents(dataset=check_filter(dataset), states=states, layers=True)
    out = page.wrap([incident_json(i) for i in page.cut(found)], total=len(found))
    out["filters"] = {"state": state, "dataset": dataset}
    out["states"] = [*INCIDENT_STATES, "active"]
    return out


def incident_detail(plane: Plane, incident_id: str) -> dict[str, Any]:
    from assay.platform.incidents import CAUSES
    from assay.platform.lineage.graph import downstream, upstream

    found = _incident(plane, incident_id)
    out = incident_json(found)
    out["causes"] = list(CAUSES)
    # the datasets it spans and its neighbours in the lineage graph (docs/lineage.md)
    out["layers"] = [layer.to_dict() for layer in plane.store.incident_layers(found.id)]
    out["upstream"] = upstream(plane.store, found.dataset)
    out["downstream"] = downstream(plane.store, found.dataset)
    return out


def learn_lineage(plane: Plane, event: Any) -> dict[str, Any]:
    """An OpenLineage event's edges into the graph, its datasets mapped through the workspace's
    check documents (:mod:`assay.platform.lineage.learned`)."""
    from assay.platform.lineage.learned import identities, learn

    known = identities(plane.check_documents().values(), plane.root)
    return learn(plane.store, event, known)


def incident_action(
    plane: Plane,
    incident_id: str,
    action: str,
    *,
    by: str,
    cause: str | None = None,
    note: str | None = None,
    hours: float | None = None,
) -> dict[str, Any]:
    """Acknowledge, resolve (with a cause) or mute (for ``hours``) an incident, as ``by``."""
    from assay.platform import incidents

    found = _incident(plane, incident_id)
    now = plane.clock()
    if action == "ack":
        incidents.acknowledge(plane.store, found.id, by=by, now=now)
    elif action == "resolve":
        if not cause:
            raise ConfigError(f"say why the incident is resolved: a cause ({', '.join(incidents.CAUSES)})")
        incidents.resolve(plane.store, found.id, by=by, cause=cause, note=note or None, now=now)
    elif action == "mute":
        if hours is None or not 0 < hours <= MUTE_HOURS_MAX:
            raise ConfigError(f"mute for 1 to {MUTE_HOURS_MAX} hours, not {hours}")
        until = max(now, found.evaluated_at) + timedelta(hours=hours)
        incidents.mute(plane.store, found.id, until=until, by=by, now=now)
    else:
        raise NotFound(f"no incident action {action!r}")
    return incident_detail(plane, found.id)


def incident_json(i: Any) -> dict[str, Any]:
    out = i.to_dict()
    out.pop("channels", None)
    out.pop("notified_observed", None)
    return dict(out)


def _incident(plane: Plane, incident_id: str) -> Any:
    from assay.web.plane import PREFIX

    if not PREFIX.match(incident_id):
        raise NotFound(f"no incident {incident_id!r}")
    matches = [i for i in plane.store.incidents() if i.id.startswith(incident_id)]
    if len(matches) != 1:
        raise NotFound(
            f"no incident {incident_id!r}" if not matches else f"incident id {incident_id!r} is ambiguous"
        )
    return plane.store.incident(matches[0].id)


# --- baselines -------------------------------------------------------------------------------------


def accept_baseline(
    plane: Plane,
    dataset: str,
    *,
    by: str,
    load_date: str,
    column: str | None = None,
    kind: str | None = None,
    new_normal: bool = False,
    note: str | None = None,
) -> dict[str, Any]:
    """Take a held load of ``dataset`` back into later baselines (``assay accept``), as ``by``."""
    from datetime import date

    from assay.platform.baselines import accept

    try:
        day = date.fromisoformat(load_date)
    except ValueError:
        raise ConfigError(f"load date {load_date!r} is not a date (YYYY-MM-DD)") from None
    done = accept(
        plane.store,
        check_filter(dataset) or dataset,
        on=day,
        column=column,
        kind=kind,
        new_normal=new_normal,
        by=by,
        note=note,
        now=plane.clock(),
    )
    return done.to_dict()


# --- decisions -------------------------------------------------------------------------------------


def decisions_page(
    plane: Plane,
    *,
    dataset: str | None = None,
    column: str | None = None,
    status: str | None = "pending",
    page: Page | None = None,
) -> dict[str, Any]:
    if status is not None and status not in ("pending", "accepted", "rejected"):
        raise ConfigError(f"status must be pending, accepted or rejected, not {status!r}")
    page = page or Page()
    ids, total = plane.store.decision_page(
        dataset=check_filter(dataset), column=column, status=status, limit=page.limit, offset=page.offset
    )
    out = page.wrap([decision_json(plane.store.decision(i)) for i in ids], total=total)
    out["filters"] = {"dataset": dataset, "column": column, "status": status}
    return out


def decide(
    plane: Plane,
    status: str,
    *,
    by: str,
    decision_id: int | None = None,
    dataset: str | None = None,
    column: str | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    """Accept or reject one decision, or every pending one of a dataset (and column), and release
    the rows held for them."""
    from assay.platform.decisions import decide as take

    taken = take(
        plane.workspace,
        plane.store,
        status,
        by=by,
        decision_id=None if decision_id is None else check_id(decision_id, "decision"),
        dataset=dataset,
        column=column,
        note=note or None,
    )
    return {"decisions": [decision_json(d) for d in taken.decisions], "released": taken.released}


def decision_json(d: Any) -> dict[str, Any]:
    from assay._render import decision_dict

    return dict(decision_dict(d))


# --- proposals -------------------------------------------------------------------------------------


def proposals_page(
    plane: Plane, *, state: str | None = "open", dataset: str | None = None, page: Page | None = None
) -> dict[str, Any]:
    page = page or Page()
    found = list(reversed(plane.store.proposals(dataset=check_filter(dataset), state=state)))
    out = page.wrap([p.to_dict() for p in page.cut(found)], total=len(found))
    out["filters"] = {"state": state, "dataset": dataset}
    return out


def proposal_detail(plane: Plane, proposal_id: str) -> dict[str, Any]:
    return dict(_proposal(plane, proposal_id).to_dict())


def proposal_action(
    plane: Plane, proposal_id: str, action: str, *, by: str, why: str | None = None
) -> dict[str, Any]:
    """Accept a proposal (its expectation is written into the document, advisory) or reject it
    with a reason."""
    from assay.platform.proposals.decide import accept, reject

    record = _proposal(plane, proposal_id)
    now = plane.clock()
    if action == "accept":
        done = accept(plane.store, record.id, by=by, workspace=plane.root, at=now)
        out = proposal_detail(plane, record.id)
        out["diff"] = done.diff
        return out
    if action == "reject":
        reject(plane.store, record.id, by=by, why=why or "", at=now)
        return proposal_detail(plane, record.id)
    raise NotFound(f"no proposal action {action!r}")


def _proposal(plane: Plane, proposal_id: str) -> Any:
    from assay.web.plane import PREFIX

    if not PREFIX.match(proposal_id):
        raise NotFound(f"no proposal {proposal_id!r}")
    try:
        return plane.store.proposal(proposal_id)
    except ConfigError as error:  # no proposal has that id, or several start with it
        raise NotFound(str(error)) from None


# --- the gate ---------------------------------------------------------------------------------------


def gate_page(
    plane: Plane, *, table: str | None = None, contributor: str | None = None, page: Page | None = None
) -> dict[str, Any]:
    """Gate runs, newest first, with each one's counts; and every contributor with its run count."""
    page = page or Page()
    rows, total = plane.store.run_page(
        dataset=check_filter(table, "table"),
        kind="gate",
        contributor=contributor,
        limit=page.limit,
        offset=page.offset,
    )
    out = page.wrap([_gate_line(plane, r) for r in rows], total=total)
    out["filters"] = {"table": table, "contributor": contributor}
    out["contributors"] = [
        {"table": t, "contributor": c, "runs": n} for t, c, n in plane.store.contributors()
    ]
    return out


def gate_run(plane: Plane, run_id: str, *, page: Page | None = None, who: Any = None) -> dict[str, Any]:
    """One gate run's summary and a page of its quarantined rows, each with its reasons: a
    classified column's values masked unless ``who`` may see them (docs/privacy.md)."""
    check_run_id(run_id)
    record = plane.store.run(run_id)
    if record is None or record.kind != "gate":
        raise NotFound(f"no gate run {run_id}")
    page = page or Page()
    summary = dict(record.summary or {})
    path = quarantine_file(plane, run_id, must=False)
    columns: list[str] = []
    rows: list[list[str]] = []
    total = 0
    if path is not None:
        columns, rows, total = _read_page(path, page)
        mask = _quarantine_masker(plane, record.dataset, run_id, who, len(rows))
        rows = [[mask.value(c, v) for c, v in zip(columns, row, strict=True)] for row in rows]
    out = {
        "run": {k: v for k, v in summary.items() if k not in ("groups",)},
        "id": record.id,
        "table": record.dataset,
        "state": record.state,
        "error": record.error,
        "counts": dict(record.counts or {}),
        "quarantine": {
            "file": None if path is None else plane.relative(path),
            "columns": columns,
            **page.wrap(rows, total=total),
        },
    }
    return out


def quarantine_file(plane: Plane, run_id: str, *, must: bool = True) -> Path | None:
    """The quarantine file a gate run wrote, found under the workspace's ``dq_error/`` by the
    run's id (never by a path from the request), and checked to lie inside the workspace."""
    check_run_id(run_id)
    root = plane.root.resolve()
    settings = Workspace(root).storage
    prefix = settings.dq_error
    if prefix is not None:
        # a local copy of the object the run wrote, through the endpoint of the one workspace
        # the plane serves
        storage.configure(settings)
        found = _quarantine_object(plane, run_id, prefix)
        if found is None and must:
            raise NotFound(f"gate run {run_id} quarantined no rows")
        return found
    for path in sorted((root / "dq_error").glob(f"date=*/contributor=*/{run_id}.csv")):
        resolved = path.resolve()
        if resolved.is_relative_to(root) and resolved.is_file():
            return resolved
    if must:
        raise NotFound(f"gate run {run_id} quarantined no rows")
    return None


def quarantine_download(plane: Plane, run_id: str, who: Any) -> Path | str:
    """The quarantine file of a gate run as ``who`` may download it: the file itself, or its text
    with the classified columns masked (docs/privacy.md)."""
    path = quarantine_file(plane, run_id)
    assert path is not None
    record = plane.store.run(run_id)
    with path.open(encoding="utf-8", newline="") as handle:
        lines = list(csv.reader(handle))
    mask = _quarantine_masker(plane, record.dataset if record else "", run_id, who, len(lines) - 1)
    if not mask:
        return path
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    header = lines[0] if lines else []
    writer.writerow(header)
    for row in lines[1:]:
        writer.writerow([mask.value(c, v) for c, v in zip(header, row, strict=False)])
    return out.getvalue()


def quarantine_response(found: Path | str, run_id: str) -> Response:
    """The download of :func:`quarantine_download`'s answer, for the page and the API alike."""
    name = f"quarantine-{run_id}.csv"
    if isinstance(found, Path):
        return FileResponse(found, media_type="text/csv", filename=name)
    return Response(
        found, media_type="text/csv", headers={"content-disposition": f'attachment; filename="{name}"'}
    )


def _quarantine_masker(plane: Plane, dataset: str, run_id: str, who: Any, rows: int) -> Masker:
    """Quarantine files keep the raw rows (they must be fixable): an admin sees them in clear,
    and each such view is audited; anyone else sees the classified columns, and the raw text of
    an unreadable line, masked."""
    classes = classified(Workspace(plane.root), dataset)
    if not classes:
        return Masker.none()
    if who is not None and who.may("admin"):
        plane.store.audit(
            who.name,
            "quarantine.view",
            run_id,
            dataset=dataset,
            detail={"classes": sorted(set(classes.values())), "rows": rows},
        )
        return Masker.none()
    return masker({**classes, "dq_raw_line": "raw"}, plane.root)


def _quarantine_object(plane: Plane, run_id: str, prefix: str) -> Path | None:
    """The run's quarantine object, as its summary names it, if it is the run's own file under
    the workspace's ``dq_error:`` prefix (never a URL from the request)."""
    record = plane.store.run(run_id)
    url = (record.summary or {}).get("quarantine_file") if record is not None else None
    if not (isinstance(url, str) and url.startswith(f"{prefix}/date=") and url.endswith(f"/{run_id}.csv")):
        return None
    return storage.stage(url, what="quarantine file")


def _gate_line(plane: Plane, run: Any) -> dict[str, Any]:
    summary = run.summary or {}
    counts = run.counts or {}
    return {
        **run.to_dict(),
        "table": run.dataset,
        "contributor": summary.get("contributor"),
        "source": (summary.get("source") or {}).get("path"),
        "total": summary.get("total", counts.get("total")),
        "committed": summary.get("passed", counts.get("committed")),
        "quarantined": summary.get("quarantined", counts.get("quarantined")),
        "held": summary.get("held", counts.get("held")),
        "parse_errors": summary.get("parse_errors"),
        "duplicate_of": summary.get("duplicate_of"),
    }


def _read_page(path: Path, page: Page) -> tuple[list[str], list[list[str]], int]:
    """A page of a quarantine file's rows, why each was quarantined first (its ``dq_`` columns:
    the line, the rules, the reasons, the raw text of an unreadable line), then its values."""
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, [])
        order = sorted(
            range(len(header)),
            key=lambda i: (
                not header[i].startswith("dq_"),
                _REASONS.index(header[i]) if header[i] in _REASONS else 0,
            ),
        )
        order = [i for i in order if header[i] != "dq_run_id"]  # the page is that run's
        rows: list[list[str]] = []
        total = 0
        for row in reader:
            if page.offset <= total < page.offset + page.limit:
                rows.append([row[i] if i < len(row) else "" for i in order])
            total += 1
    return [header[i] for i in order], rows, total


_REASONS = ("dq_line", "dq_failed_rules", "dq_reasons", "dq_raw_line")


# --- users and the audit trail -----------------------------------------------------------------------


def users(plane: Plane) -> dict[str, Any]:
    return {"users": [u.to_dict() for u in plane.store.users()]}


def add_user(plane: Plane, name: str, role: str, *, by: str) -> dict[str, Any]:
    """Add a user; the answer holds their token, shown this once."""
    token = plane.store.add_user(name, role, by=by)
    return {"user": plane.store.user(name).to_dict(), "token": token}


def change_user(
    plane: Plane, name: str, *, by: str, role: str | None = None, disabled: bool | None = None
) -> dict[str, Any]:
    if name == by and (disabled or (role is not None and role != "admin")):
        raise ConfigError("an admin cannot disable themselves or take their own admin role away")
    return {"user": plane.store.set_user(name, by=by, role=role, disabled=disabled).to_dict()}


def audit_page(plane: Plane, *, dataset: str | None = None, page: Page | None = None) -> dict[str, Any]:
    page = page or Page()
    rows, total = plane.store.audit_trail(dataset=check_filter(dataset), limit=page.limit, offset=page.offset)
    out = page.wrap([r.to_dict() for r in rows], total=total)
    out["filters"] = {"dataset": dataset}
    return out
