"""Who is asking, and may they: users, roles, sessions and CSRF.

- The API takes ``Authorization: Bearer TOKEN`` (a user's token, from ``assay users add``).
- The pages use a login form and a session cookie (``assay_session``: HttpOnly, SameSite=Lax,
  Secure when ``--secure-cookies``), whose server-side session holds a CSRF token: every form
  carries it (``csrf_token``) and every write made with the cookie must send it back, as a form
  field or as the ``X-CSRF-Token`` header. A request carrying a bearer token needs none: a
  browser never adds one on its own.
- A one-time login link (``/login?token=CODE``) is consumed on first use.

Roles: ``viewer`` reads; ``author`` also adds and edits checks, runs dry runs and runs, decides
values and proposals, and works incidents; ``admin`` also manages users.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fastapi import Request

from assay.store.users import ROLES, User, allows

if TYPE_CHECKING:
    from assay.web.plane import Plane

SESSION_COOKIE = "assay_session"
LOGIN_CSRF_COOKIE = "assay_login_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Unauthenticated(Exception):
    """No valid credentials (HTTP 401; a page redirects to the login form)."""


class Forbidden(Exception):
    """Credentials, but not the role (or not the CSRF token) this needs (HTTP 403)."""


@dataclass(frozen=True)
class Principal:
    """The caller: the user, how they came (``token`` or ``session``), and the session's CSRF
    token when they came with the cookie."""

    user: User
    via: str
    csrf: str | None = None
    session_id: str | None = None

    @property
    def name(self) -> str:
        return self.user.name

    def may(self, role: str) -> bool:
        return allows(self.user.role, role)


def identify(request: Request) -> Principal | None:
    """The caller of ``request``, or None: a bearer token first, then the session cookie."""
    store = request.app.state.plane.store
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        user = store.user_by_token(token.strip())
        if user is None:
            raise Unauthenticated("the bearer token is not valid (assay users token NAME gives a new one)")
        return Principal(user, "token")
    session_id = request.cookies.get(SESSION_COOKIE)
    if session_id:
        session = store.session(session_id)
        if session is not None:
            return Principal(session.user, "session", session.csrf, session_id)
    return None


def require(request: Request, role: str = "viewer") -> Principal:
    """The caller, who must have ``role``; a write made with the session cookie must also carry
    the session's CSRF token (checked by :func:`check_csrf` once the form is read)."""
    assert role in ROLES
    who = identify(request)
    if who is None:
        raise Unauthenticated("log in first: send Authorization: Bearer TOKEN, or use the login page")
    if not who.may(role):
        raise Forbidden(f"{who.name} has the {who.user.role} role; this needs the {role} role")
    return who


def check_csrf(who: Principal, request: Request, sent: str | None) -> None:
    """Refuse a write made with the session cookie that does not carry its CSRF token."""
    if who.via != "session" or request.method not in UNSAFE:
        return
    token = sent or request.headers.get(CSRF_HEADER)
    if not token or who.csrf is None or not hmac.compare_digest(token, who.csrf):
        raise Forbidden("the form's CSRF token is missing or wrong: reload the page and try again")


def needs(role: str, *, csrf_header: bool = False) -> Callable[[Request], Principal]:
    """A route's dependency: the caller, with ``role``. With ``csrf_header`` (the API, whose
    bodies are JSON), a write made with the session cookie must also carry ``X-CSRF-Token``; a
    page checks the form's token once it has read the form."""

    def caller(request: Request) -> Principal:
        who = require(request, role)
        if csrf_header:
            check_csrf(who, request, None)
        return who

    return caller


def plane_of(request: Request) -> Plane:
    """The plane the application serves (a route's dependency)."""
    plane: Plane = request.app.state.plane
    return plane
