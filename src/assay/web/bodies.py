"""Request bodies, guarded before the application reads them: the caller of a write is known
first, and a body over :data:`MAX_BODY` is refused before it is read whole.

FastAPI reads and parses a route's body before it runs the route's dependencies, so the role
check alone would come after a 150 MB upload was read and parsed. This pure ASGI middleware runs
before that: a write (POST, PUT, PATCH, DELETE) to any path but the login form's, from a caller
with no valid credentials, is refused as the application refuses it (401, or the login page for
a page), with none of its body read; a body whose ``Content-Length`` is over the limit is a 413
at once; a body sent in chunks (or longer than it said) is counted as it arrives and refused at
the chunk that passes the limit.

Why 1 MiB: the largest body the application takes is the check editor's, at most 45,000
characters of YAML (``expect`` and ``measure`` 20,000 each, ``source`` 5,000), about 270 KiB
even with every character escaped in JSON; 1 MiB leaves room and still bounds what an
unauthenticated or hostile client can make the server hold.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import Request
from fastapi.responses import Response
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.web.auth import LOG_IN, UNSAFE, Unauthenticated, identify

MAX_BODY = 1024 * 1024
"""The most bytes a request body may hold (docs/web.md, "Safety")."""

PUBLIC_WRITES = frozenset({"/login"})
"""The only paths a caller without credentials may write to."""


class BodyTooLarge(HTTPException):
    """A request body over the limit (HTTP 413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is over the limit of {limit} bytes")


Refusal = Callable[[Request, Exception], Response]


class BodyGuard:
    """The ASGI middleware; ``refuse`` answers an exception as the application would (a 401 or
    the login page, a 429, a 413)."""

    def __init__(self, app: ASGIApp, refuse: Refusal, limit: int = MAX_BODY) -> None:
        self.app = app
        self.refuse = refuse
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        length = _length(headers)
        if not length and "transfer-encoding" not in headers:
            await self.app(scope, receive, send)  # no body to guard
            return
        request = Request(scope)
        try:
            writes = scope["method"] in UNSAFE and scope["path"] not in PUBLIC_WRITES
            if writes and identify(request) is None:  # a wrong token or a locked-out address raises
                raise Unauthenticated(LOG_IN)
            if length is not None and length > self.limit:
                raise BodyTooLarge(self.limit)
        except Exception as refused:
            await self.refuse(request, refused)(scope, receive, send)
            return
        await self._counted(scope, receive, send, request)

    async def _counted(self, scope: Scope, receive: Receive, send: Send, request: Request) -> None:
        read = 0
        started = False

        async def counting() -> Message:
            nonlocal read
            message = await receive()
            if message["type"] == "http.request":
                read += len(message.get("body", b""))
                if read > self.limit:
                    raise BodyTooLarge(self.limit)
            return message

        async def watching(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting, watching)
        except BodyTooLarge as refused:  # read outside a route (which answers it itself)
            if started:
                raise
            await self.refuse(request, refused)(scope, receive, send)


def _length(headers: Headers) -> int | None:
    try:
        return int(headers["content-length"])
    except (KeyError, ValueError):
        return None
