"""One HTTP request sent to the application through ASGI itself, as a server sends it, with the
request body handed over in the chunks given: the tests see how many bytes the application
read before it answered (a body it refuses unread is never read), which a client that sends the
whole body at once cannot show.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio

ADDRESS = "203.0.113.7"  # a documentation address (RFC 5737): the client the tests speak as


@dataclass
class Answer:
    """What the application answered, and how much of the body it read."""

    status: int
    headers: dict[str, str]
    body: bytes
    read: int = 0
    cookies: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.body)


def call(
    app: Any,
    method: str,
    target: str,
    *,
    headers: dict[str, str] | None = None,
    chunks: Sequence[bytes] = (),
    length: int | None = None,
    address: str = ADDRESS,
) -> Answer:
    """Send ``method target`` (path and query, already encoded) with ``headers`` and the body in
    ``chunks``; ``length`` is the Content-Length sent (None: the body is chunked, no length)."""
    return anyio.run(_call, app, method, target, headers or {}, list(chunks), length, address)


async def _call(
    app: Any,
    method: str,
    target: str,
    headers: dict[str, str],
    chunks: list[bytes],
    length: int | None,
    address: str,
) -> Answer:
    url = urlsplit(target)
    sent = {k.lower(): v for k, v in headers.items()}
    if length is not None:
        sent["content-length"] = str(length)
    elif chunks:
        sent["transfer-encoding"] = "chunked"
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": unquote(url.path),
        "raw_path": url.path.encode("ascii"),
        "root_path": "",
        "query_string": url.query.encode("ascii"),
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in sent.items()],
        "client": (address, 50000),
        "server": ("testserver", 80),
    }
    pending = list(chunks)
    answer = Answer(0, {}, b"")

    async def receive() -> dict[str, Any]:
        if not pending:
            return {"type": "http.request", "body": b"", "more_body": False}
        chunk = pending.pop(0)
        answer.read += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": bool(pending)}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer.status = message["status"]
            for key, value in message.get("headers", []):
                name, text = key.decode("latin-1").lower(), value.decode("latin-1")
                if name == "set-cookie":
                    answer.cookies.append(text)
                answer.headers[name] = text
        elif message["type"] == "http.response.body":
            answer.body += message.get("body", b"")

    try:
        await app(scope, receive, send)
    except Exception as error:  # Starlette raises an unhandled error again once its 500 is sent
        answer.status = answer.status or 500
        answer.body = answer.body or repr(error).encode()
    return answer
