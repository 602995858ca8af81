"""The FastAPI application of ``assay serve``: the JSON API under ``/api/v1`` (its OpenAPI schema
at ``/api/v1/openapi.json``), the server-rendered pages, the static files, and ``/health``.

Errors are answered as the caller expects them: a user's mistake (:class:`ConfigError`) is a 400
(404 for a name that names nothing, 409 for a document changed under a review) with its message;
a platform failure (:class:`PlatformError`) is a 503 saying what failed; neither shows a
traceback. Every answer carries a strict Content-Security-Policy: the pages run only the
scripts served from ``/static``. Request bodies are guarded before any route reads them
(:mod:`assay.web.bodies`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from assay import __version__
from assay.errors import ConfigError, PlatformError
from assay.web.auth import Forbidden, TooManyAttempts, Unauthenticated
from assay.web.bodies import BodyGuard
from assay.web.plane import NotFound, Plane, Settings

HERE = Path(__file__).parent
STATIC = HERE / "static"
API = "/api/v1"

SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
}

log = logging.getLogger("assay.web")


def create_app(settings: Settings | None = None, *, plane: Plane | None = None) -> FastAPI:
    """The application serving ``settings.workspace`` (or an open ``plane``).

    >>> import tempfile
    >>> from pathlib import Path
    >>> app = create_app(Settings(Path(tempfile.mkdtemp())))
    >>> app.openapi_url
    '/api/v1/openapi.json'
    >>> app.state.plane.close()
    """
    from assay.web import api, pages

    if plane is None:
        assert settings is not None
        plane = Plane(settings)
    app = FastAPI(
        title="assay",
        version=__version__,
        description="The control plane of assay: datasets, their checks, runs, incidents, decisions, "
        "proposals and scores (docs/web.md).",
        openapi_url=f"{API}/openapi.json",
        docs_url=None,  # Swagger UI and ReDoc load their scripts from a CDN: the schema is served alone
        redoc_url=None,
    )
    app.state.plane = plane
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(api.router, prefix=API)
    app.include_router(pages.router)

    @app.get("/health", tags=["health"])
    def health() -> dict[str, Any]:
        """Whether the server is up and its store answers (no path: it answers anyone)."""
        plane.store.user_count()
        return {"status": "ok", "version": __version__}

    # added before the headers' middleware, so that one wraps it and its refusals get the headers
    app.add_middleware(BodyGuard, refuse=lambda request, error: refusal(request, error))

    @app.middleware("http")
    async def headers(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        if not request.url.path.startswith("/static/"):
            response.headers.setdefault("cache-control", "no-store")
        return response

    def wants_json(request: Request) -> bool:
        return request.url.path.startswith(API) or request.url.path == "/health"

    def answer(
        request: Request, status: int, message: str, headers: dict[str, str] | None = None
    ) -> Response:
        if wants_json(request):
            return JSONResponse({"error": message, "status": status}, status_code=status, headers=headers)
        page = pages.error_page(request, status, message)
        page.headers.update(headers or {})
        return page

    @app.exception_handler(TooManyAttempts)
    def too_many(request: Request, error: TooManyAttempts) -> Response:
        return answer(request, 429, str(error), {"retry-after": str(error.retry_after)})

    @app.exception_handler(Unauthenticated)
    def unauthenticated(request: Request, error: Unauthenticated) -> Response:
        if wants_json(request):
            return JSONResponse(
                {"error": str(error), "status": 401},
                status_code=401,
                headers={"www-authenticate": 'Bearer realm="assay"'},
            )
        return RedirectResponse(pages.login_url(request), status_code=303)

    @app.exception_handler(Forbidden)
    def forbidden(request: Request, error: Forbidden) -> Response:
        return answer(request, 403, str(error))

    @app.exception_handler(NotFound)
    def not_found(request: Request, error: NotFound) -> Response:
        return answer(request, 404, str(error))

    @app.exception_handler(ConfigError)
    def config_error(request: Request, error: ConfigError) -> Response:
        from assay.platform.sources import SourceRefused
        from assay.web.authoring import Conflict

        if isinstance(error, SourceRefused):
            log.warning("source refused on %s %s: %s", request.method, request.url.path, error)
            return answer(request, 403, str(error))
        return answer(request, 409 if isinstance(error, Conflict) else 400, str(error))

    @app.exception_handler(PlatformError)
    def platform_error(request: Request, error: PlatformError) -> Response:
        log.error("platform error on %s %s: %s", request.method, request.url.path, error)
        return answer(request, 503, f"the platform failed: {error}")

    @app.exception_handler(RequestValidationError)
    def invalid(request: Request, error: RequestValidationError) -> Response:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ())[1:]) or 'request'}: {e.get('msg')}"
            for e in error.errors()
        )
        return answer(request, 422 if wants_json(request) else 400, problems or "the request is not valid")

    @app.exception_handler(Exception)
    def unexpected(request: Request, error: Exception) -> Response:
        # a bug of the platform: its name and message, never a traceback (that goes to the log)
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return answer(request, 500, f"the platform failed: {type(error).__name__}: {error}")

    @app.exception_handler(StarletteHTTPException)
    def http_error(request: Request, error: StarletteHTTPException) -> Response:
        return answer(request, error.status_code, str(error.detail))

    def refusal(request: Request, error: Exception) -> Response:
        """The answer to a request the body guard refuses, as the application's own."""
        if isinstance(error, TooManyAttempts):
            return too_many(request, error)
        if isinstance(error, Unauthenticated):
            return unauthenticated(request, error)
        if isinstance(error, StarletteHTTPException):
            return http_error(request, error)
        if isinstance(error, PlatformError):  # the store could not say who is asking
            return platform_error(request, error)
        return unexpected(request, error)

    return app
