"""The catalog and a dataset's pages (overview, quality, profile, an expectation), and running its
checks now."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import Response

from assay.errors import ConfigError
from assay.web import catalog, datasets
from assay.web.auth import check_csrf
from assay.web.pages.frame import Author, Csrf, PlaneDep, Viewer, back, render
from assay.web.paging import Page
from assay.web.plane import check_name

router = APIRouter(include_in_schema=False)


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
    min_score: str | None = Query(None, max_length=6),
    max_score: str | None = Query(None, max_length=6),
) -> Response:
    low, high = _score_bound(min_score, "min_score"), _score_bound(max_score, "max_score")
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
        min_score=low,
        max_score=high,
    )
    # the pager's links keep every filter of this page
    kept = {k: v for k, v in request.query_params.items() if k != "page" and v}
    base = "/?" + urlencode(kept) if kept else "/"
    return render(
        request,
        "catalog.html",
        {"data": found, "sorts": catalog.SORTS, "section": "catalog", "pager_base": base},
        who=who,
    )


def _score_bound(value: str | None, what: str) -> float | None:
    """A score bound from the catalog's form: blank is none; else a number from 0 to 100."""
    if not value:
        return None
    try:
        bound = float(value)
    except ValueError:
        raise ConfigError(f"{what} must be a number from 0 to 100, not {value!r}") from None
    if not 0 <= bound <= 100:
        raise ConfigError(f"{what} must be a number from 0 to 100, not {value!r}")
    return bound


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


@router.post("/datasets/{name}/baselines/accept")
def accept_baseline_page(
    request: Request,
    plane: PlaneDep,
    who: Author,
    name: str,
    load_date: Annotated[str, Form(max_length=40)],
    column: Annotated[str | None, Form(max_length=500)] = None,
    kind: Annotated[str | None, Form(max_length=2000)] = None,
    new_normal: Annotated[bool, Form()] = False,
    csrf: Csrf = None,
) -> Response:
    """A held load back into later baselines (``assay accept``), as a new normal when asked."""
    from assay.web.operations import accept_baseline

    check_csrf(who, request, csrf)
    check_name(name, "dataset")
    done = accept_baseline(
        plane,
        name,
        by=who.name,
        load_date=load_date,
        column=column or None,
        kind=kind or None,
        new_normal=new_normal,
    )
    what = "as the new normal" if new_normal else "into its baselines"
    left = f"; {done['left_out_of_baselines']} earlier load(s) left them" if new_normal else ""
    return back(
        request,
        f"/datasets/{quote(name, safe='')}/profile",
        f"{name} {load_date}: {len(done['accepted'])} held metric(s) accepted {what} by {who.name}{left}",
    )
