"""Who is asking, and may they: users, roles, sessions and CSRF.

- The API takes ``Authorization: Bearer TOKEN`` (a user's token, from ``assay users add``).
- The pages use a login form and a session cookie (``assay_session``: HttpOnly, SameSite=Lax,
  Secure when ``--secure-cookies``), whose server-side session holds a CSRF token: every form
  carries it (``csrf_token``) and every write made with the cookie must send it back, as a form
  field or as the ``X-CSRF-Token`` header. A request carrying a bearer token needs none: a
  browser never adds one on its own.
- A one-time login link (``/login?token=CODE``) is consumed on first use.
- A client address that sent too many wrong secrets (:mod:`assay.web.attempts`) is refused
  (HTTP 429) until its window passes; every refusal is logged (logger ``assay.web``) with the
  address, the route and the user when known, never the secret.

Roles: ``viewer`` reads; ``author`` also adds and edits checks, runs dry runs and runs, decides
values and proposals, and works incidents; ``admin`` also manages users.
"""

from __future__ import annotations

import hmac
import logging
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
LOG_IN = "log in first: send Authorization: Bearer TOKEN, or use the login page"
_WHO = "assay_who"  # the request's state: the caller, once known (the body guard finds it first)

log = logging.getLogger("assay.web")


class Unauthenticated(Exception):
    """No valid credentials (HTTP 401; a page redirects to the login form)."""


class Forbidden(Exception):
    """Credentials, but not the role (or not the CSRF token) this needs (HTTP 403)."""


class TooManyAttempts(Exception):
    """The client sent too many wrong secrets lately (HTTP 429, ``Retry-After`` seconds)."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"too many failed attempts from this address: try again in {retry_after} seconds")
        self.retry_after = retry_after


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
    known = getattr(request.state, _WHO, False)  # False: not asked yet
    if known is None or isinstance(known, Principal):
        return known
    store = request.app.state.plane.store
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    found: Principal | None = None
    if scheme.lower() == "bearer" and token.strip():
        admit(request, "bearer token")
        user = store.user_by_token(token.strip())
        if user is None:
            refuse(request, "bearer token", "not a valid token")
            raise Unauthenticated("the bearer token is not valid (assay users token NAME gives a new one)")
        found = Principal(user, "token")
    elif session_id := request.cookies.get(SESSION_COOKIE):
        # a stale session cookie is no attempt: it is what logging out or 7 days leave behind
        session = store.session(session_id)
        if session is not None:
            found = Principal(session.user, "session", session.csrf, session_id)
    setattr(request.state, _WHO, found)
    return found


def address(request: Request) -> str:
    """The client's address (behind a proxy, the one uvicorn takes from ``X-Forwarded-For`` when
    the proxy is trusted: ``FORWARDED_ALLOW_IPS``, 127.0.0.1 by default)."""
    return request.client.host if request.client is not None else "unknown"


def admit(request: Request, secret: str) -> None:
    """Refuse (:class:`TooManyAttempts`) a ``secret`` sent from an address that is locked out,
    before it is looked up: a guess is never answered."""
    wait = request.app.state.plane.attempts.retry_after(address(request))
    if wait is not None:
        log.warning(
            "refused a %s from %s on %s %s: locked out for %d s more after too many failed attempts",
            secret,
            address(request),
            request.method,
            request.url.path,
            wait,
        )
        raise TooManyAttempts(wait)


def refuse(request: Request, secret: str, why: str) -> None:
    """Count a wrong ``secret`` against the client's address, and log it (never the secret)."""
    attempts = request.app.state.plane.attempts
    count = attempts.failed(address(request))
    log.warning(
        "refused a %s from %s on %s %s: %s (%d of %d failures allowed in %g s)",
        secret,
        address(request),
        request.method,
        request.url.path,
        why,
        count,
        attempts.failures,
        attempts.window,
    )


def require(request: Request, role: str = "viewer") -> Principal:
    """The caller, who must have ``role``; a write made with the session cookie must also carry
    the session's CSRF token (checked by :func:`check_csrf` once the form is read)."""
    assert role in ROLES
    who = identify(request)
    if who is None:
        raise Unauthenticated(LOG_IN)
    if not who.may(role):
        log.warning(
            "refused %s (%s) from %s on %s %s: needs the %s role",
            who.name,
            who.user.role,
            address(request),
            request.method,
            request.url.path,
            role,
        )
        raise Forbidden(f"{who.name} has the {who.user.role} role; this needs the {role} role")
    return who


def check_csrf(who: Principal, request: Request, sent: str | None) -> None:
    """Refuse a write made with the session cookie that does not carry its CSRF token."""
    if who.via != "session" or request.method not in UNSAFE:
        return
    token = sent or request.headers.get(CSRF_HEADER)
    if not token or who.csrf is None or not hmac.compare_digest(token, who.csrf):
        log.warning(
            "refused %s from %s on %s %s: no CSRF token, or a wrong one",
            who.name,
            address(request),
            request.method,
            request.url.path,
        )
        raise Forbidden("the form's CSRF token is missing or wrong: reload the page and try again")


class Needs:
    """A route's dependency: the caller, with ``role``. With ``csrf_header`` (the API, whose
    bodies are JSON), a write made with the session cookie must also carry ``X-CSRF-Token``; a
    page checks the form's token once it has read the form. The role is kept as data: the
    security tests read it off each route."""

    def __init__(self, role: str, *, csrf_header: bool = False) -> None:
        assert role in ROLES
        self.role = role
        self.csrf_header = csrf_header

    def __call__(self, request: Request) -> Principal:
        who = require(request, self.role)
        if self.csrf_header:
            check_csrf(who, request, None)
        return who


def needs(role: str, *, csrf_header: bool = False) -> Needs:
    """The dependency of a route only ``role`` (and the roles above it) may use."""
    return Needs(role, csrf_header=csrf_header)


def plane_of(request: Request) -> Plane:
    """The plane the application serves (a route's dependency)."""
    plane: Plane = request.app.state.plane
    return plane
