"""The check editor: a template to start from, a dry run and a review of the draft drawn in place
(a mistake shown there, the author's text kept), and the save."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import Response

from assay.errors import ConfigError
from assay.web import authoring
from assay.web.auth import Principal, check_csrf
from assay.web.pages.frame import Author, Csrf, PlaneDep, Viewer, back, render
from assay.web.plane import Plane, check_name

log = logging.getLogger("assay.web")

router = APIRouter(include_in_schema=False)


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
