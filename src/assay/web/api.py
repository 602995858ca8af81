"""The JSON API under ``/api/v1``: every page's data, and every write a page can make.

Reads need the ``viewer`` role, checks and decisions ``author``, users ``admin`` (docs/web.md,
"Access"). A caller with no valid credentials gets 401, one without the role 403. Names in URLs
are checked (:func:`~assay.web.plane.check_name`) and looked up, never used as paths.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, Response
from pydantic import BaseModel, Field

from assay.web import authoring, catalog, datasets, operations
from assay.web.auth import Principal, needs, plane_of
from assay.web.paging import Page
from assay.web.plane import Plane, check_name

router = APIRouter()


PlaneDep = Annotated[Plane, Depends(plane_of)]
Viewer = Annotated[Principal, Depends(needs("viewer"))]
Author = Annotated[Principal, Depends(needs("author", csrf_header=True))]
Admin = Annotated[Principal, Depends(needs("admin", csrf_header=True))]
PageNumber = Annotated[int, Query(ge=1, description="The page, from 1.")]
PerPage = Annotated[int, Query(ge=1, le=200, description="Items per page (at most 200).")]


def _page(page: int, per_page: int) -> Page:
    return Page.of(page, per_page)


# --- request bodies -------------------------------------------------------------------------------


class DraftBody(BaseModel):
    """A check's two documents as YAML text: ``measure`` (a list of metric entries the profile
    gains) and ``expect`` (one expectation)."""

    measure: str = Field(default="[]", max_length=20_000)
    expect: str = Field(..., max_length=20_000)
    profile: str | None = Field(default=None, max_length=200)
    source: str | None = Field(default=None, max_length=5_000, description="A new document's source (YAML).")
    replacing: str | None = Field(default=None, max_length=200, description="The expectation this edits.")

    def draft(self) -> authoring.Draft:
        return authoring.Draft(self.measure, self.expect, self.profile, self.source, self.replacing)


class SaveBody(DraftBody):
    base: str = Field(
        ..., min_length=64, max_length=64, description="The document's SHA-256 the diff was made on."
    )


class RunBody(BaseModel):
    at: str | None = Field(
        None, max_length=40, description="The logical date (default: the latest recorded)."
    )


class IncidentBody(BaseModel):
    cause: str | None = Field(default=None, max_length=40)
    note: str | None = Field(default=None, max_length=2_000)
    hours: float | None = Field(default=None, description="How long to mute.")


class DecisionBody(BaseModel):
    note: str | None = Field(default=None, max_length=2_000)


class BulkDecisionBody(BaseModel):
    dataset: str = Field(..., max_length=200)
    column: str | None = Field(default=None, max_length=500)
    status: str = Field(..., pattern="^(accepted|rejected)$")
    note: str | None = Field(default=None, max_length=2_000)


class AcceptBody(BaseModel):
    load_date: str = Field(max_length=40)
    column: str | None = Field(default=None, max_length=500)
    kind: str | None = Field(default=None, max_length=2000)
    new_normal: bool = False
    note: str | None = Field(default=None, max_length=2000)


class RejectBody(BaseModel):
    why: str = Field(..., min_length=1, max_length=2_000)


class UserBody(BaseModel):
    name: str = Field(..., max_length=100)
    role: str = Field(default="viewer", pattern="^(viewer|author|admin)$")


class UserChangeBody(BaseModel):
    role: str | None = Field(default=None, pattern="^(viewer|author|admin)$")
    disabled: bool | None = None


# --- who ------------------------------------------------------------------------------------------


@router.get("/me", tags=["access"])
def me(who: Viewer) -> dict[str, Any]:
    """The caller: name, role, and how they came (token or session)."""
    return {"user": who.user.to_dict(), "via": who.via}


# --- the catalog and datasets ---------------------------------------------------------------------


@router.get("/catalog", tags=["catalog"])
def get_catalog(
    plane: PlaneDep,
    who: Viewer,
    q: str | None = Query(None, max_length=200),
    kind: str | None = Query(None, max_length=20),
    tier: int | None = Query(None, ge=0, le=3),
    tag: str | None = Query(None, max_length=200),
    owner: str | None = Query(None, max_length=200),
    badge: str | None = Query(None, max_length=20),
    sort: str = Query("name", max_length=20),
    desc: bool = False,
    page: PageNumber = 1,
    per_page: PerPage = 50,
    min_score: float | None = Query(None, ge=0, le=100),
    max_score: float | None = Query(None, ge=0, le=100),
) -> dict[str, Any]:
    """Every dataset and event: score and its parts, tier, owners, badge, open incidents,
    freshness, last run; filtered (by words, kind, tier, tag, owner, badge, score range), sorted
    and paged by the store; with rollups by tag and schema."""
    return catalog.catalog(
        plane,
        q=q,
        kind=kind,
        tier=tier,
        tag=tag,
        owner=owner,
        badge=badge,
        sort=sort,
        descending=desc,
        page=_page(page, per_page),
        min_score=min_score,
        max_score=max_score,
    )


@router.get("/datasets/{name}", tags=["datasets"])
def get_dataset(plane: PlaneDep, who: Viewer, name: str) -> dict[str, Any]:
    """A dataset's overview: why its score is what it is, owners, schedule and freshness promise,
    certification checklist, open incidents, recent runs and changes."""
    check_name(name, "dataset")
    found = datasets.overview(plane, name)
    if who.via == "token":
        _record_read(plane, name, who)
    return found


@router.get("/datasets/{name}/quality", tags=["datasets"])
def get_quality(plane: PlaneDep, who: Viewer, name: str) -> dict[str, Any]:
    """Expectations grouped by quality dimension, each with its latest 15 outcomes."""
    return datasets.quality(plane, check_name(name, "dataset"))


@router.get("/datasets/{name}/profile", tags=["datasets"])
def get_profile(
    plane: PlaneDep, who: Viewer, name: str, page: PageNumber = 1, per_page: PerPage = 50
) -> dict[str, Any]:
    """The latest profile's column statistics, value sets and pending new-value decisions."""
    return datasets.profile(plane, check_name(name, "dataset"), page=_page(page, per_page))


@router.get("/datasets/{name}/expectations/{expectation}", tags=["datasets"])
def get_expectation(
    plane: PlaneDep,
    who: Viewer,
    name: str,
    expectation: str,
    group: str | None = Query(None, max_length=500, description="KEY=VALUE[,KEY=VALUE]; none: the total."),
) -> dict[str, Any]:
    """An expectation's series (observed, band, outcome), its groups and its evidence rows."""
    return datasets.expectation(
        plane, check_name(name, "dataset"), check_name(expectation, "expectation"), group=group
    )


@router.get("/datasets/{name}/audit", tags=["datasets"])
def get_dataset_audit(
    plane: PlaneDep, who: Viewer, name: str, page: PageNumber = 1, per_page: PerPage = 50
) -> dict[str, Any]:
    """Who changed what on this dataset, latest first."""
    return operations.audit_page(plane, dataset=check_name(name, "dataset"), page=_page(page, per_page))


# --- authoring ------------------------------------------------------------------------------------


@router.get("/check-types", tags=["checks"])
def get_check_types(who: Viewer) -> dict[str, Any]:
    """The check types a template exists for."""
    return {"types": authoring.check_types()}


@router.get("/datasets/{name}/checks/template", tags=["checks"])
def get_template(
    plane: PlaneDep,
    who: Viewer,
    name: str,
    type: str = Query("business_rule", max_length=40),
    column: str | None = Query(None, max_length=500),
    condition: str | None = Query(None, max_length=2_000),
    edit: str | None = Query(None, max_length=200, description="An expectation to edit instead."),
) -> dict[str, Any]:
    """Both documents of a check type, pre-filled for the dataset (or an expectation's, to edit)."""
    check_name(name, "dataset")
    if edit:
        return authoring.edit_template(plane, name, check_name(edit, "expectation"))
    params = {k: v for k, v in {"column": column, "condition": condition}.items() if v}
    return authoring.template(plane, name, type, params)


@router.post("/datasets/{name}/checks/dry-run", tags=["checks"])
def post_dry_run(
    plane: PlaneDep,
    who: Author,
    name: str,
    body: DraftBody,
    days: int = Query(authoring.BACKTEST_DAYS, ge=0, le=90, description="Earlier dates to replay."),
) -> dict[str, Any]:
    """What the check would have flagged on the latest load (rows shown) and over the stored
    history (backtest); nothing is recorded."""
    return authoring.dry_run(plane, check_name(name, "dataset"), body.draft(), days=days)


@router.post("/datasets/{name}/checks/preview", tags=["checks"])
def post_preview(plane: PlaneDep, who: Author, name: str, body: DraftBody) -> dict[str, Any]:
    """The diff a save would write, and the ``base`` to save it on."""
    return authoring.preview(plane, check_name(name, "dataset"), body.draft())


@router.post("/datasets/{name}/checks", tags=["checks"], status_code=201)
def post_check(plane: PlaneDep, who: Author, name: str, body: SaveBody) -> dict[str, Any]:
    """Write the check into the dataset's document (409 when it changed since the preview)."""
    return authoring.save(plane, check_name(name, "dataset"), body.draft(), base=body.base, by=who.name)


@router.post("/datasets/{name}/runs", tags=["checks"], status_code=201)
def post_run(plane: PlaneDep, who: Author, name: str, body: RunBody | None = None) -> dict[str, Any]:
    """Run the dataset's check document now (recorded), on the latest recorded date."""
    from assay.web.runs import run_now

    return run_now(plane, check_name(name, "dataset"), by=who.name, at=None if body is None else body.at)


# --- runs -----------------------------------------------------------------------------------------


@router.get("/runs", tags=["runs"])
def get_runs(
    plane: PlaneDep,
    who: Viewer,
    dataset: str | None = Query(None, max_length=200),
    kind: str | None = Query(None, max_length=20),
    state: str | None = Query(None, max_length=20),
    page: PageNumber = 1,
    per_page: PerPage = 50,
) -> dict[str, Any]:
    """Runs, newest first: state, attempts, durations, query counts, errors."""
    return operations.runs_page(plane, dataset=dataset, kind=kind, state=state, page=_page(page, per_page))


@router.get("/runs/{run_id}", tags=["runs"])
def get_run(plane: PlaneDep, who: Viewer, run_id: str) -> dict[str, Any]:
    """One run with its stages and outcomes."""
    return operations.run_detail(plane, run_id)


# --- incidents ------------------------------------------------------------------------------------


@router.get("/incidents", tags=["incidents"])
def get_incidents(
    plane: PlaneDep,
    who: Viewer,
    state: str | None = Query(None, max_length=20),
    dataset: str | None = Query(None, max_length=200),
    page: PageNumber = 1,
    per_page: PerPage = 50,
) -> dict[str, Any]:
    """Incidents, the most recently opened first (``state=active``: every state but resolved)."""
    return operations.incidents_page(plane, state=state, dataset=dataset, page=_page(page, per_page))


@router.get("/incidents/{incident_id}", tags=["incidents"])
def get_incident(plane: PlaneDep, who: Viewer, incident_id: str) -> dict[str, Any]:
    """One incident with its events (its id or a unique prefix)."""
    return operations.incident_detail(plane, incident_id)


@router.post("/incidents/{incident_id}/{action}", tags=["incidents"])
def post_incident(
    plane: PlaneDep, who: Author, incident_id: str, action: str, body: IncidentBody | None = None
) -> dict[str, Any]:
    """``ack``, ``resolve`` (with a ``cause``) or ``mute`` (for ``hours``) an incident."""
    body = body or IncidentBody()
    return operations.incident_action(
        plane, incident_id, action, by=who.name, cause=body.cause, note=body.note, hours=body.hours
    )


# --- lineage --------------------------------------------------------------------------------------


@router.post("/lineage", tags=["lineage"], status_code=201)
async def post_lineage(request: Request, plane: PlaneDep, who: Author) -> dict[str, Any]:
    """Record an OpenLineage RunEvent's edges (inputs → outputs) in the lineage graph, as Marquez
    receives events; a body that is not a valid RunEvent is a 400 naming what is wrong. The body
    is read here, not declared, so that every mistake is the event's 400 (docs/lineage.md)."""
    from assay.platform.lineage.learned import parse_event

    event = parse_event(await request.body())
    return await run_in_threadpool(operations.learn_lineage, plane, event)


# --- decisions ------------------------------------------------------------------------------------


@router.get("/decisions", tags=["decisions"])
def get_decisions(
    plane: PlaneDep,
    who: Viewer,
    dataset: str | None = Query(None, max_length=200),
    column: str | None = Query(None, max_length=500),
    status: str | None = Query("pending", max_length=20),
    page: PageNumber = 1,
    per_page: PerPage = 50,
) -> dict[str, Any]:
    """New-value decisions (pending ones by default), newest first."""
    return operations.decisions_page(
        plane, dataset=dataset, column=column, status=status or None, page=_page(page, per_page)
    )


@router.post("/decisions/{decision_id}/accept", tags=["decisions"])
def post_accept(
    plane: PlaneDep, who: Author, decision_id: int, body: DecisionBody | None = None
) -> dict[str, Any]:
    """Accept a new value: the rows held for it are committed."""
    return operations.decide(
        plane, "accepted", by=who.name, decision_id=decision_id, note=(body or DecisionBody()).note
    )


@router.post("/decisions/{decision_id}/reject", tags=["decisions"])
def post_reject(
    plane: PlaneDep, who: Author, decision_id: int, body: DecisionBody | None = None
) -> dict[str, Any]:
    """Reject a new value: the rows held for it are quarantined."""
    return operations.decide(
        plane, "rejected", by=who.name, decision_id=decision_id, note=(body or DecisionBody()).note
    )


@router.post("/decisions", tags=["decisions"])
def post_decisions(plane: PlaneDep, who: Author, body: BulkDecisionBody) -> dict[str, Any]:
    """Accept or reject every pending decision of a dataset (and column) at once."""
    return operations.decide(
        plane,
        body.status,
        by=who.name,
        dataset=check_name(body.dataset, "dataset"),
        column=body.column,
        note=body.note,
    )


@router.post("/datasets/{name}/baselines/accept", tags=["decisions"])
def post_accept_baseline(plane: PlaneDep, who: Author, name: str, body: AcceptBody) -> dict[str, Any]:
    """Take a load held out of later baselines back in (``assay accept``); with ``new_normal``,
    the loads before it leave the baselines of what it raised."""
    return operations.accept_baseline(
        plane,
        check_name(name, "dataset"),
        by=who.name,
        load_date=body.load_date,
        column=body.column,
        kind=body.kind,
        new_normal=body.new_normal,
        note=body.note,
    )


# --- proposals ------------------------------------------------------------------------------------


@router.get("/proposals", tags=["proposals"])
def get_proposals(
    plane: PlaneDep,
    who: Viewer,
    state: str | None = Query("open", max_length=20),
    dataset: str | None = Query(None, max_length=200),
    page: PageNumber = 1,
    per_page: PerPage = 50,
) -> dict[str, Any]:
    """Proposed checks (open ones by default), newest first, each with evidence, backtest and dry run."""
    return operations.proposals_page(plane, state=state or None, dataset=dataset, page=_page(page, per_page))


@router.get("/proposals/{proposal_id}", tags=["proposals"])
def get_proposal(plane: PlaneDep, who: Viewer, proposal_id: str) -> dict[str, Any]:
    return operations.proposal_detail(plane, proposal_id)


@router.post("/proposals/{proposal_id}/accept", tags=["proposals"])
def post_proposal_accept(plane: PlaneDep, who: Author, proposal_id: str) -> dict[str, Any]:
    """Accept: the expectation is written into the dataset's document, advisory."""
    return operations.proposal_action(plane, proposal_id, "accept", by=who.name)


@router.post("/proposals/{proposal_id}/reject", tags=["proposals"])
def post_proposal_reject(plane: PlaneDep, who: Author, proposal_id: str, body: RejectBody) -> dict[str, Any]:
    """Reject, saying why: it is not proposed again until its evidence changes."""
    return operations.proposal_action(plane, proposal_id, "reject", by=who.name, why=body.why)


# --- the gate -------------------------------------------------------------------------------------


@router.get("/gate/runs", tags=["gate"])
def get_gate_runs(
    plane: PlaneDep,
    who: Viewer,
    table: str | None = Query(None, max_length=200),
    contributor: str | None = Query(None, max_length=200),
    page: PageNumber = 1,
    per_page: PerPage = 50,
) -> dict[str, Any]:
    """Gate runs per contributor, newest first, with their counts."""
    return operations.gate_page(plane, table=table, contributor=contributor, page=_page(page, per_page))


@router.get("/gate/runs/{run_id}", tags=["gate"])
def get_gate_run(
    plane: PlaneDep, who: Viewer, run_id: str, page: PageNumber = 1, per_page: PerPage = 50
) -> dict[str, Any]:
    """A gate run's summary and a page of its quarantined rows with their reasons."""
    return operations.gate_run(plane, run_id, page=_page(page, per_page), who=who)


@router.get("/gate/runs/{run_id}/quarantine.csv", tags=["gate"], response_class=FileResponse)
def get_quarantine(plane: PlaneDep, who: Viewer, run_id: str) -> Response:
    """The run's quarantined rows as CSV (classified columns masked but for an admin)."""
    return operations.quarantine_response(operations.quarantine_download(plane, run_id, who), run_id)


# --- events ---------------------------------------------------------------------------------------


@router.get("/events/{name}", tags=["events"])
def get_event(plane: PlaneDep, who: Viewer, name: str) -> dict[str, Any]:
    """An event's Event Quality Score with its seven dimensions, and its contracts."""
    from assay.web.events import event

    return event(plane, check_name(name, "event"))


# --- users and the audit trail --------------------------------------------------------------------


@router.get("/users", tags=["access"])
def get_users(plane: PlaneDep, who: Admin) -> dict[str, Any]:
    return operations.users(plane)


@router.post("/users", tags=["access"], status_code=201)
def post_user(plane: PlaneDep, who: Admin, body: UserBody) -> dict[str, Any]:
    """Add a user; the answer holds their token, shown this once."""
    return operations.add_user(plane, body.name, body.role, by=who.name)


@router.patch("/users/{user}", tags=["access"])
def patch_user(plane: PlaneDep, who: Admin, user: str, body: UserChangeBody) -> dict[str, Any]:
    """Change a user's role, or disable them (their sessions end)."""
    return operations.change_user(
        plane, check_name(user, "user"), by=who.name, role=body.role, disabled=body.disabled
    )


@router.get("/audit", tags=["access"])
def get_audit(
    plane: PlaneDep,
    who: Viewer,
    dataset: str | None = Query(None, max_length=200),
    page: PageNumber = 1,
    per_page: PerPage = 50,
) -> dict[str, Any]:
    """Every write made through the web, the API and ``assay users``, latest first."""
    return operations.audit_page(plane, dataset=dataset, page=_page(page, per_page))


def _record_read(plane: Plane, dataset: str, who: Principal) -> None:
    """An API client reading a dataset is one of its readers (its importance, docs/scores.md):
    recorded once per client, dataset and UTC day."""
    now = datetime.now(UTC)
    start = datetime.combine(now.date(), datetime.min.time(), UTC)
    seen = plane.store.reads_between(dataset, start - timedelta(microseconds=1), now)
    if any(kind == "api" and by == who.name for kind, by in seen):
        return
    plane.store.record_read(dataset, "api", by=who.name, at=now)
