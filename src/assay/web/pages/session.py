"""Logging in and out: the login form and its one-time links, the session cookie."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from assay.web.auth import LOGIN_CSRF_COOKIE, SESSION_COOKIE, Forbidden, admit, check_csrf, plane_of, refuse
from assay.web.pages.frame import Csrf, Viewer, render, safe_next, secure_cookies
from assay.web.plane import Plane

router = APIRouter(include_in_schema=False)


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
        return _logged_in(plane, user, safe_next(next))
    return _login_page(request, None, next, csrf=new_secret())


def _login_page(
    request: Request, error: str | None, target: str | None, *, csrf: str | None = None, status: int = 200
) -> Response:
    from assay.store.users import new_secret

    csrf = csrf or new_secret()
    response = render(
        request, "login.html", {"error": error, "next": safe_next(target), "login_csrf": csrf}, status=status
    )
    response.set_cookie(
        LOGIN_CSRF_COOKIE,
        csrf,
        httponly=True,
        samesite="strict",
        secure=secure_cookies(request),
        path="/login",
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
    return _logged_in(plane, user, safe_next(next))


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
    response.delete_cookie(
        SESSION_COOKIE, path="/", secure=secure_cookies(request), httponly=True, samesite="lax"
    )
    return response
