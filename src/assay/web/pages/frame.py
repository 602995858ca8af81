"""What every page shares: the Jinja2 templates and their filters, the frame each page is drawn in
(the user, the navigation, the CSRF token, a message carried over a redirect), the error page, and
the roles a page asks for.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from assay.durations import duration
from assay.web.auth import CSRF_FIELD, Principal, identify, needs, plane_of
from assay.web.plane import Plane

# the templates are the web package's, beside the static files
templates = Jinja2Templates(directory=Path(__file__).parents[1] / "templates")
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


def _measured(value: Any, unit: str | None = None) -> str:
    """An observed value: a duration when the metric's unit is seconds, else a number."""
    return duration(value) if unit == "seconds" else _number(value)


def _bound(value: Any, type_name: str) -> str:
    """A profile's minimum or maximum as a page shows it: the store keeps dates and timestamps as
    numbers (:func:`assay.measure.values.as_number`); they are shown as a date, or a time to the
    second (with UTC for a ``timestamptz``)."""
    from assay.measure.values import from_number

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
        response.delete_cookie(FLASH, path="/", secure=secure_cookies(request), httponly=True, samesite="lax")
    return response


def secure_cookies(request: Request) -> bool:
    """Whether cookies go over HTTPS only (``--secure-cookies``): every cookie the site sets."""
    return bool(plane_of(request).settings.secure_cookies)


def back(request: Request, to: str, message: str | None = None) -> RedirectResponse:
    """Post/redirect/get, with a message for the next page."""
    response = RedirectResponse(to, status_code=303)
    if message:
        response.set_cookie(
            FLASH, message[:300], httponly=True, samesite="lax", secure=secure_cookies(request), path="/"
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


def safe_next(target: str | None) -> str:
    """Only a path of this site: never another host (an open redirect)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target
