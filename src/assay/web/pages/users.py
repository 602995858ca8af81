"""The audit trail of who changed what, and the users an admin manages."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import Response

from assay.errors import ConfigError
from assay.web import operations
from assay.web.auth import check_csrf
from assay.web.pages.frame import Admin, Csrf, PlaneDep, Viewer, back, render
from assay.web.paging import Page
from assay.web.plane import check_name

router = APIRouter(include_in_schema=False)


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
