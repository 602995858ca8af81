"""The operational pages, each drawing :mod:`assay.web.operations`' read model: runs, incidents,
new-value decisions, proposals, the gate's runs and quarantine files, and an event's page."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import Response

from assay.web import operations
from assay.web.auth import check_csrf
from assay.web.pages.frame import Author, Csrf, PlaneDep, Viewer, back, render, safe_next
from assay.web.paging import Page
from assay.web.plane import check_name

router = APIRouter(include_in_schema=False)


@router.get("/runs")
def runs_page(
    request: Request,
    plane: PlaneDep,
    who: Viewer,
    dataset: str | None = Query(None, max_length=200),
    kind: str | None = Query(None, max_length=20),
    state: str | None = Query(None, max_length=20),
    page: int = Query(1, ge=1),
) -> Response:
    found = operations.runs_page(
        plane,
        dataset=dataset or None,
        kind=kind or None,
        state=state or None,
        page=Page.of(page, plane.settings.page_size),
    )
    return render(request, "runs.html", {"data": found, "section": "runs"}, who=who)


@router.get("/runs/{run_id}")
def run_detail_page(request: Request, plane: PlaneDep, who: Viewer, run_id: str) -> Response:
    return render(
        request, "run.html", {"data": operations.run_detail(plane, run_id), "section": "runs"}, who=who
    )


@router.get("/incidents")
def incidents_page(
    request: Request,
    plane: PlaneDep,
    who: Viewer,
    state: str | None = Query("active", max_length=20),
    dataset: str | None = Query(None, max_length=200),
    page: int = Query(1, ge=1),
) -> Response:
    found = operations.incidents_page(
        plane, state=state or None, dataset=dataset or None, page=Page.of(page, plane.settings.page_size)
    )
    return render(request, "incidents.html", {"data": found, "section": "incidents"}, who=who)


@router.get("/incidents/{incident_id}")
def incident_page(request: Request, plane: PlaneDep, who: Viewer, incident_id: str) -> Response:
    found = operations.incident_detail(plane, incident_id)
    return render(request, "incident.html", {"data": found, "section": "incidents"}, who=who)


@router.post("/incidents/{incident_id}/{action}")
def incident_action_page(
    request: Request,
    plane: PlaneDep,
    who: Author,
    incident_id: str,
    action: str,
    cause: Annotated[str | None, Form(max_length=40)] = None,
    note: Annotated[str | None, Form(max_length=2000)] = None,
    hours: Annotated[float | None, Form()] = None,
    csrf: Csrf = None,
) -> Response:
    check_csrf(who, request, csrf)
    found = operations.incident_action(
        plane, incident_id, action, by=who.name, cause=cause or None, note=note or None, hours=hours
    )
    words = {"ack": "acknowledged", "resolve": "resolved", "mute": "muted"}[action]
    return back(request, f"/incidents/{found['id']}", f"incident {found['id'][:8]} {words} by {who.name}")


@router.get("/decisions")
def decisions_page(
    request: Request,
    plane: PlaneDep,
    who: Viewer,
    dataset: str | None = Query(None, max_length=200),
    column: str | None = Query(None, max_length=500),
    status: str | None = Query("pending", max_length=20),
    page: int = Query(1, ge=1),
) -> Response:
    found = operations.decisions_page(
        plane,
        dataset=dataset or None,
        column=column or None,
        status=status or None,
        page=Page.of(page, plane.settings.page_size),
    )
    return render(request, "decisions.html", {"data": found, "section": "decisions"}, who=who)


@router.post("/decisions/{decision_id}/{action}")
def decision_page(
    request: Request,
    plane: PlaneDep,
    who: Author,
    decision_id: int,
    action: str,
    note: Annotated[str | None, Form(max_length=2000)] = None,
    to: Annotated[str | None, Form(max_length=2000)] = None,
    csrf: Csrf = None,
) -> Response:
    check_csrf(who, request, csrf)
    status = {"accept": "accepted", "reject": "rejected"}.get(action)
    if status is None:
        from assay.web.plane import NotFound

        raise NotFound(f"no decision action {action!r}")
    done = operations.decide(plane, status, by=who.name, decision_id=decision_id, note=note)
    d = done["decisions"][0]
    released = f"; {'; '.join(done['released'])}" if done["released"] else ""
    return back(
        request,
        safe_next(to or "/decisions"),
        f"{d['column']} = '{d['value']}' {d['status']} by {who.name}{released}",
    )


@router.post("/decisions")
def decisions_bulk_page(
    request: Request,
    plane: PlaneDep,
    who: Author,
    dataset: Annotated[str, Form(max_length=200)],
    status: Annotated[str, Form(pattern="^(accepted|rejected)$")],
    column: Annotated[str | None, Form(max_length=500)] = None,
    csrf: Csrf = None,
) -> Response:
    check_csrf(who, request, csrf)
    done = operations.decide(
        plane, status, by=who.name, dataset=check_name(dataset, "dataset"), column=column or None
    )
    return back(request, "/decisions", f"{len(done['decisions'])} decision(s) {status} by {who.name}")


@router.get("/proposals")
def proposals_page(
    request: Request,
    plane: PlaneDep,
    who: Viewer,
    state: str | None = Query("open", max_length=20),
    dataset: str | None = Query(None, max_length=200),
    page: int = Query(1, ge=1),
) -> Response:
    found = operations.proposals_page(
        plane, state=state or None, dataset=dataset or None, page=Page.of(page, plane.settings.page_size)
    )
    return render(request, "proposals.html", {"data": found, "section": "proposals"}, who=who)


@router.get("/proposals/{proposal_id}")
def proposal_page(request: Request, plane: PlaneDep, who: Viewer, proposal_id: str) -> Response:
    found = operations.proposal_detail(plane, proposal_id)
    return render(request, "proposal.html", {"data": found, "section": "proposals"}, who=who)


@router.post("/proposals/{proposal_id}/{action}")
def proposal_action_page(
    request: Request,
    plane: PlaneDep,
    who: Author,
    proposal_id: str,
    action: str,
    why: Annotated[str | None, Form(max_length=2000)] = None,
    csrf: Csrf = None,
) -> Response:
    check_csrf(who, request, csrf)
    found = operations.proposal_action(plane, proposal_id, action, by=who.name, why=why)
    return back(
        request, f"/proposals/{found['id']}", f"proposal {found['id'][:8]} {found['state']} by {who.name}"
    )


@router.get("/gate")
def gate_page(
    request: Request,
    plane: PlaneDep,
    who: Viewer,
    table: str | None = Query(None, max_length=200),
    contributor: str | None = Query(None, max_length=200),
    page: int = Query(1, ge=1),
) -> Response:
    found = operations.gate_page(
        plane,
        table=table or None,
        contributor=contributor or None,
        page=Page.of(page, plane.settings.page_size),
    )
    return render(request, "gate.html", {"data": found, "section": "gate"}, who=who)


@router.get("/gate/runs/{run_id}")
def gate_run_page(
    request: Request, plane: PlaneDep, who: Viewer, run_id: str, page: int = Query(1, ge=1)
) -> Response:
    found = operations.gate_run(plane, run_id, page=Page.of(page, plane.settings.page_size), who=who)
    return render(request, "gate_run.html", {"data": found, "section": "gate"}, who=who)


@router.get("/gate/runs/{run_id}/quarantine.csv")
def quarantine_download(plane: PlaneDep, who: Viewer, run_id: str) -> Response:
    return operations.quarantine_response(operations.quarantine_download(plane, run_id, who), run_id)


@router.get("/events/{name}")
def event_page(request: Request, plane: PlaneDep, who: Viewer, name: str) -> Response:
    from assay.web.events import event

    found = event(plane, check_name(name, "event"))
    return render(request, "event.html", {"data": found, "section": "catalog"}, who=who)
