"""The server-rendered pages: each one draws the JSON its API route returns (the same read model)
with a Jinja2 template; forms post back here, carry the session's CSRF token, and answer with a
redirect (or, for the check editor, the page with its result). htmx enhances some of them (a
filter that updates as you type, a dry run shown in place); every page works without scripts.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from assay.errors import ConfigError
from assay.web import authoring, catalog, datasets, operations
from assay.web.auth import (
    CSRF_FIELD,
    LOGIN_CSRF_COOKIE,
    SESSION_COOKIE,
    Forbidden,
    Principal,
    admit,
    check_csrf,
    identify,
    needs,
    plane_of,
    refuse,
)
from assay.web.paging import Page
from assay.web.plane import Plane, check_name

log = logging.getLogger("assay.web")

router = APIRouter(include_in_schema=False)
templates = Jinja2Templates(directory=Path(__file__).parent / "templates")
FLASH = "assay_flash"

NAV = (
    ("catalog", "/", "Catalog"),
    ("runs", "/runs", "Runs"),
    ("incidents", "/incidents", "Incidents"),
    ("decisions", "/decisions", "Decisions"),
    ("proposals", "/proposals", "Proposals"),
    ("gate", "/gate", "Gate"),
    ("audit", "/audit", "Changes"),
)


PlaneDep = Annotated[Plane, Depends(plane_of)]
Viewer = Annotated[Principal, Depends(needs("viewer"))]
Author = Annotated[Principal, Depends(needs("author"))]
Admin = Annotated[Principal, Depends(needs("admin"))]
Csrf = Annotated[str | None, Form(alias=CSRF_FIELD)]


def _when(value: Any) -> str:
    """An ISO-8601 time as a page shows it: ``2026-11-30 07:00 UTC``; a date stays a date."""
    if not value:
        return ""
    text = str(value)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text
    if len(text) <= 10:
        return text
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _number(value: Any, digits: int = 4) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:,.{digits}g}"
    return str(value)


def _duration(value: Any) -> str:
    """An age in seconds as people read one: ``45 s``, ``12 min``, ``9 h 22 min``, ``2 d 3 h``
    (to the unit below the largest; negative when the newest row is in the future).

    >>> _duration(33726.0), _duration(43200), _duration(-52674), _duration(200000), _duration(None)
    ('9 h 22 min', '12 h', '-14 h 38 min', '2 d 8 h', '—')
    >>> _duration(59.6), _duration(3599), _duration(86399)
    ('1 min', '1 h', '1 d')
    """
    if value is None:
        return "—"
    seconds = float(value)
    sign, left = ("-" if seconds < 0 else ""), abs(seconds)
    if left < 59.5:
        return f"{sign}{left:.0f} s"
    minutes = round(left / 60)
    if minutes < 60:
        return f"{sign}{minutes} min"
    if minutes < 24 * 60:
        whole, rest, unit, label = *divmod(minutes, 60), "h", "min"
    else:
        whole, rest, unit, label = *divmod(round(left / 3600), 24), "d", "h"
    return f"{sign}{whole} {unit}" + (f" {rest} {label}" if rest else "")


def _measured(value: Any, unit: str | None = None) -> str:
    """An observed value: a duration when the metric's unit is seconds, else a number."""
    return _duration(value) if unit == "seconds" else _number(value)


def _bound(value: Any, type_name: str) -> str:
    """A profile's minimum or maximum as a page shows it: the store keeps dates and timestamps as
    numbers (:func:`assay.measure.profile.as_number`); they are shown as a date, or a time to the
    second (with UTC for a ``timestamptz``)."""
    from assay.measure.profile import from_number

    if value is None:
        return _number(value)
    try:
        shown = from_number(float(value), type_name)
    except (OverflowError, ValueError):  # out of Python's range: the number as kept
        return _number(value)
    if isinstance(shown, datetime):
        return shown.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if shown.tzinfo else "")
    if isinstance(shown, date):
        return shown.isoformat()
    return _number(value)


def _expected(value: Any, unit: str | None = None) -> str:
    if not value:
        return "—"
    if isinstance(value, dict):
        parts = []
        if value.get("low") is not None:
            parts.append(f"> {_measured(value['low'], unit)}")
        if value.get("high") is not None:
            parts.append(f"< {_measured(value['high'], unit)}")
        values = value.get("values") or []
        if len(values) == 1:
            parts.append(f"= {_measured(values[0], unit)}")
        elif values:
            parts.append("in " + ", ".join(_measured(v, unit) for v in values))
        return " and ".join(parts) or "—"
    return str(value)


def _mark_of(item: dict[str, Any]) -> dict[str, Any]:
    """A dated outcome as a strip's cell."""
    from assay.web.datasets import MARKS

    return {**item, "mark": MARKS.get(item["outcome"], "?")}


templates.env.filters["when"] = _when
templates.env.filters["mark_of"] = _mark_of
templates.env.filters["number"] = _number
templates.env.filters["measured"] = _measured
templates.env.filters["bound"] = _bound
templates.env.filters["expected"] = _expected
templates.env.globals["quote"] = lambda text: quote(str(text), safe="")


def render(
    request: Request, name: str, context: dict[str, Any], *, who: Principal | None = None, status: int = 200
) -> HTMLResponse:
    """A page, with what every page shows: the user, the navigation, the CSRF token, a message."""
    flash = request.cookies.get(FLASH)
    response = templates.TemplateResponse(
        request,
        name,
        {
            **context,
            "who": who,
            "csrf": who.csrf if who is not None else None,
            "csrf_field": CSRF_FIELD,
            "nav": NAV,
            "flash": flash,
            "path": request.url.path,
            "now": plane_of(request).clock().isoformat(),
        },
        status_code=status,
    )
    if flash:
        response.delete_cookie(FLASH, path="/", secure=_secure(request), httponly=True, samesite="lax")
    return response


def _secure(request: Request) -> bool:
    """Whether cookies go over HTTPS only (``--secure-cookies``): every cookie the site sets."""
    return bool(plane_of(request).settings.secure_cookies)


def back(request: Request, to: str, message: str | None = None) -> RedirectResponse:
    """Post/redirect/get, with a message for the next page."""
    response = RedirectResponse(to, status_code=303)
    if message:
        response.set_cookie(
            FLASH, message[:300], httponly=True, samesite="lax", secure=_secure(request), path="/"
        )
    return response


def error_page(request: Request, status: int, message: str) -> Response:
    try:
        who = identify(request)
    except Exception:
        who = None
    return render(request, "error.html", {"status": status, "message": message}, who=who, status=status)


def login_url(request: Request) -> str:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return "/login?" + urlencode({"next": target})


def _safe_next(target: str | None) -> str:
    """Only a path of this site: never another host (an open redirect)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


# --- login ----------------------------------------------------------------------------------------


@router.get("/login")
def login_form(request: Request, next: str | None = None, token: str | None = None) -> Response:
    """The login form; with ``token``, a one-time login link (``assay serve`` printed it)."""
    from assay.store.users import new_secret

    plane = plane_of(request)
    if token:
        admit(request, "login link")
        user = plane.store.use_login_code(token)
        if user is None:
            refuse(request, "login link", "used already, expired or never made")
            return _login_page(request, "this login link was used already or has expired", next, status=400)
        return _logged_in(plane, user, _safe_next(next))
    return _login_page(request, None, next, csrf=new_secret())


def _login_page(
    request: Request, error: str | None, target: str | None, *, csrf: str | None = None, status: int = 200
) -> Response:
    from assay.store.users import new_secret

    csrf = csrf or new_secret()
    response = render(
        request, "login.html", {"error": error, "next": _safe_next(target), "login_csrf": csrf}, status=status
    )
    response.set_cookie(
        LOGIN_CSRF_COOKIE, csrf, httponly=True, samesite="strict", secure=_secure(request), path="/login"
    )
    return response


@router.post("/login")
def login(
    request: Request,
    token: Annotated[str, Form(max_length=200)],
    next: Annotated[str, Form(max_length=2000)] = "/",
    csrf: Csrf = None,
) -> Response:
    """Log in with a token (``assay users add`` printed it): the form is protected by a
    double-submit cookie, since there is no session yet."""
    import hmac

    plane = plane_of(request)
    expected = request.cookies.get(LOGIN_CSRF_COOKIE)
    if not csrf or not expected or not hmac.compare_digest(csrf, expected):
        raise Forbidden("the login form's CSRF token is missing or wrong: reload the page and try again")
    admit(request, "login form's token")
    user = plane.store.user_by_token(token.strip())
    if user is None:
        refuse(request, "login form's token", "not a valid token")
        return _login_page(request, "that token is not valid", next, status=401)
    return _logged_in(plane, user, _safe_next(next))


def _logged_in(plane: Plane, user: Any, target: str) -> Response:
    session_id, _csrf = plane.store.open_session(user)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        session_id,
        httponly=True,
        samesite="lax",
        secure=plane.settings.secure_cookies,
        path="/",
        max_age=7 * 86400,
    )
    response.delete_cookie(
        LOGIN_CSRF_COOKIE,
        path="/login",
        secure=plane.settings.secure_cookies,
        httponly=True,
        samesite="strict",
    )
    return response


@router.post("/logout")
def logout(request: Request, who: Viewer, csrf: Csrf = None) -> Response:
    check_csrf(who, request, csrf)
    if who.session_id:
        plane_of(request).store.close_session(who.session_id)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/", secure=_secure(request), httponly=True, samesite="lax")
    return response


# --- the catalog and a dataset --------------------------------------------------------------------


@router.get("/")
def catalog_page(
    request: Request,
    plane: PlaneDep,
    who: Viewer,
    q: str | None = Query(None, max_length=200),
    kind: str | None = Query(None, max_length=20),
    tier: str | None = Query(None, max_length=2),
    tag: str | None = Query(None, max_length=200),
    owner: str | None = Query(None, max_length=200),
    badge: str | None = Query(None, max_length=20),
    sort: str = Query("name", max_length=20),
    desc: bool = False,
    page: int = Query(1, ge=1),
) -> Response:
    found = catalog.catalog(
        plane,
        q=q or None,
        kind=kind or None,
        tier=int(tier) if tier and tier.isdigit() else None,
        tag=tag or None,
        owner=owner or None,
        badge=badge or None,
        sort=sort,
        descending=desc,
        page=Page.of(page, plane.settings.page_size),
    )
    return render(
        request, "catalog.html", {"data": found, "sorts": catalog.SORTS, "section": "catalog"}, who=who
    )


@router.get("/datasets/{name}")
def dataset_page(request: Request, plane: PlaneDep, who: Viewer, name: str) -> Response:
    found = datasets.overview(plane, check_name(name, "dataset"))
    return render(request, "dataset.html", {"data": found, "tab": "overview", "section": "catalog"}, who=who)


@router.get("/datasets/{name}/quality")
def quality_page(request: Request, plane: PlaneDep, who: Viewer, name: str) -> Response:
    found = datasets.quality(plane, check_name(name, "dataset"))
    return render(
        request,
        "quality.html",
        {"data": found, "name": name, "tab": "quality", "section": "catalog"},
        who=who,
    )


@router.get("/datasets/{name}/profile")
def profile_page(
    request: Request, plane: PlaneDep, who: Viewer, name: str, page: int = Query(1, ge=1)
) -> Response:
    found = datasets.profile(plane, check_name(name, "dataset"), page=Page.of(page, plane.settings.page_size))
    return render(
        request,
        "profile.html",
        {"data": found, "name": name, "tab": "profile", "section": "catalog"},
        who=who,
    )


@router.get("/datasets/{name}/expectations/{expectation}")
def expectation_page(
    request: Request,
    plane: PlaneDep,
    who: Viewer,
    name: str,
    expectation: str,
    group: str | None = Query(None, max_length=500),
) -> Response:
    found = datasets.expectation(
        plane, check_name(name, "dataset"), check_name(expectation, "expectation"), group=group or None
    )
    return render(
        request,
        "expectation.html",
        {"data": found, "name": name, "tab": "quality", "section": "catalog", "chosen": group or ""},
        who=who,
    )


# --- adding a check -------------------------------------------------------------------------------


@router.get("/datasets/{name}/checks/new")
def new_check_page(
    request: Request,
    plane: PlaneDep,
    who: Viewer,
    name: str,
    type: str = Query("business_rule", max_length=40),
    column: str | None = Query(None, max_length=500),
    condition: str | None = Query(None, max_length=2000),
    edit: str | None = Query(None, max_length=200),
) -> Response:
    check_name(name, "dataset")
    if edit:
        form = authoring.edit_template(plane, name, check_name(edit, "expectation"))
    else:
        params = {k: v for k, v in {"column": column, "condition": condition}.items() if v}
        form = authoring.template(plane, name, type, params)
        form["params"] = params
    return _editor(request, who, name, form)


def _editor(
    request: Request,
    who: Principal,
    name: str,
    form: dict[str, Any],
    *,
    dry: dict[str, Any] | None = None,
    review: dict[str, Any] | None = None,
    error: str | None = None,
    status: int = 200,
) -> Response:
    return render(
        request,
        "check_new.html",
        {
            "form": form,
            "name": name,
            "dry": dry,
            "review": review,
            "error": error,
            "tab": "new",
            "section": "catalog",
        },
        who=who,
        status=status,
    )


@dataclass
class EditorForm:
    """The check editor's form as the author left it (posted by the dry run, review and save
    buttons alike), and the session's CSRF token that came with it."""

    expect: str
    measure: str = "[]"
    profile: str | None = None
    source: str | None = None
    replacing: str | None = None
    kind: str | None = None
    base: str | None = None
    csrf: str | None = None

    @classmethod
    def posted(
        cls,
        expect: Annotated[str, Form(max_length=20_000)],
        measure: Annotated[str, Form(max_length=20_000)] = "[]",
        profile: Annotated[str | None, Form(max_length=200)] = None,
        source: Annotated[str | None, Form(max_length=5_000)] = None,
        replacing: Annotated[str | None, Form(max_length=200)] = None,
        kind: Annotated[str | None, Form(alias="type", max_length=40)] = None,
        base: Annotated[str | None, Form(min_length=64, max_length=64)] = None,
        csrf: Csrf = None,
    ) -> EditorForm:
        return cls(expect, measure, profile or None, source or None, replacing or None, kind, base, csrf)

    @property
    def draft(self) -> authoring.Draft:
        return authoring.Draft(self.measure, self.expect, self.profile, self.source, self.replacing)

    def shown(self, plane: Plane, name: str) -> dict[str, Any]:
        """The editor's state to draw again: the template's lists, the author's text as written."""
        if self.replacing:
            known = authoring.edit_template(plane, name, self.replacing)
        else:
            known = authoring.template(plane, name, self.kind or "custom")
        return {
            **known,
            "type": self.kind or known["type"],
            "measure": self.measure,
            "expect": self.expect,
            "profile": self.profile or known["profile"],
            "source": self.source,
            "replacing": self.replacing,
        }


Editor = Annotated[EditorForm, Depends(EditorForm.posted)]


def _edit(request: Request, plane: Plane, who: Principal, name: str, form: EditorForm, step: str) -> Response:
    """A dry run or a review of the editor's form, drawn on the editor's page (a mistake in the
    draft is shown there, the author's text kept)."""
    check_csrf(who, request, form.csrf)
    check_name(name, "dataset")
    shown = form.shown(plane, name)
    try:
        if step == "dry":
            return _editor(request, who, name, shown, dry=authoring.dry_run(plane, name, form.draft))
        return _editor(request, who, name, shown, review=authoring.preview(plane, name, form.draft))
    except ConfigError as err:
        return _editor(request, who, name, shown, error=str(err), status=_status_of(request, err))


def _status_of(request: Request, error: ConfigError) -> int:
    """A draft's mistake is 400; a source the workspace does not allow is 403, and logged."""
    from assay.platform.sources import SourceRefused

    if isinstance(error, SourceRefused):
        log.warning("source refused on %s %s: %s", request.method, request.url.path, error)
        return 403
    return 400


@router.post("/datasets/{name}/checks/dry-run")
def dry_run_page(request: Request, plane: PlaneDep, who: Author, name: str, form: Editor) -> Response:
    return _edit(request, plane, who, name, form, "dry")


@router.post("/datasets/{name}/checks/preview")
def preview_page(request: Request, plane: PlaneDep, who: Author, name: str, form: Editor) -> Response:
    return _edit(request, plane, who, name, form, "review")


@router.post("/datasets/{name}/checks/save")
def save_page(request: Request, plane: PlaneDep, who: Author, name: str, form: Editor) -> Response:
    check_csrf(who, request, form.csrf)
    check_name(name, "dataset")
    try:
        if form.base is None:
            raise ConfigError("review the change before saving it")
        saved = authoring.save(plane, name, form.draft, base=form.base, by=who.name)
    except ConfigError as err:
        shown = form.shown(plane, name)
        return _editor(request, who, name, shown, error=str(err), status=_status_of(request, err))
    return back(
        request,
        f"/datasets/{quote(name, safe='')}/quality",
        f"saved {saved['expectation']} in {saved['document']}",
    )


@router.post("/datasets/{name}/run")
def run_page(
    request: Request,
    plane: PlaneDep,
    who: Author,
    name: str,
    at: Annotated[str | None, Form(max_length=40)] = None,
    csrf: Csrf = None,
) -> Response:
    from assay.web.runs import run_now

    check_csrf(who, request, csrf)
    check_name(name, "dataset")
    done = run_now(plane, name, by=who.name, at=at or None)
    s = done["summary"]
    return back(
        request,
        f"/datasets/{quote(name, safe='')}/quality",
        f"ran {name} at {done['at']}: {done['state']}; {s['passed']} passed, {s['failed']} failed, "
        f"{s['config_error']} config error, {s['system_error']} system error, {s['skipped']} skipped",
    )


# --- runs, incidents, decisions, proposals, the gate ----------------------------------------------


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
        _safe_next(to or "/decisions"),
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
    found = operations.gate_run(plane, run_id, page=Page.of(page, plane.settings.page_size))
    return render(request, "gate_run.html", {"data": found, "section": "gate"}, who=who)


@router.get("/gate/runs/{run_id}/quarantine.csv")
def quarantine_download(plane: PlaneDep, who: Viewer, run_id: str) -> FileResponse:
    path = operations.quarantine_file(plane, run_id)
    assert path is not None
    return FileResponse(path, media_type="text/csv", filename=f"quarantine-{run_id}.csv")


@router.get("/events/{name}")
def event_page(request: Request, plane: PlaneDep, who: Viewer, name: str) -> Response:
    from assay.web.events import event

    found = event(plane, check_name(name, "event"))
    return render(request, "event.html", {"data": found, "section": "catalog"}, who=who)


# --- the audit trail and users --------------------------------------------------------------------


@router.get("/audit")
def audit_page(
    request: Request,
    plane: PlaneDep,
    who: Viewer,
    dataset: str | None = Query(None, max_length=200),
    page: int = Query(1, ge=1),
) -> Response:
    found = operations.audit_page(
        plane, dataset=dataset or None, page=Page.of(page, plane.settings.page_size)
    )
    return render(request, "audit.html", {"data": found, "section": "audit"}, who=who)


@router.get("/users")
def users_page(request: Request, plane: PlaneDep, who: Admin) -> Response:
    return render(request, "users.html", {"data": operations.users(plane), "section": "users"}, who=who)


@router.post("/users")
def add_user_page(
    request: Request,
    plane: PlaneDep,
    who: Admin,
    name: Annotated[str, Form(max_length=100)],
    role: Annotated[str, Form(pattern="^(viewer|author|admin)$")] = "viewer",
    csrf: Csrf = None,
) -> Response:
    check_csrf(who, request, csrf)
    try:
        added = operations.add_user(plane, name.strip(), role, by=who.name)
    except ConfigError as err:
        return render(
            request,
            "users.html",
            {"data": operations.users(plane), "error": str(err), "section": "users"},
            who=who,
            status=400,
        )
    return render(
        request,
        "users.html",
        {"data": operations.users(plane), "added": added, "section": "users"},
        who=who,
        status=201,
    )


@router.post("/users/{user}")
def change_user_page(
    request: Request,
    plane: PlaneDep,
    who: Admin,
    user: str,
    role: Annotated[str | None, Form(pattern="^(viewer|author|admin)$")] = None,
    disabled: Annotated[str | None, Form(pattern="^(yes|no)$")] = None,
    csrf: Csrf = None,
) -> Response:
    check_csrf(who, request, csrf)
    flag = None if disabled is None else disabled == "yes"
    operations.change_user(plane, check_name(user, "user"), by=who.name, role=role, disabled=flag)
    return back(request, "/users", f"{user} changed by {who.name}")
