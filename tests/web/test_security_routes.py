"""Every route of the application, as every role, against hostile input: path traversal in each
path parameter and query value, an oversized body, a huge integer in each integer parameter,
and hostile ``source:`` drafts for the check editor. No answer is a 500, none shows a file from
outside the workspace, none is a 2xx for a role that may not use the route.

The routes are read from the application itself: the API's operations from its OpenAPI document,
the pages (left out of it) from ``app.routes``, and the role each needs from its dependency
(:class:`assay.web.auth.Needs`). A new route joins these tests by being a route.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from fastapi.routing import APIRoute

from assay.store.users import allows
from assay.web.app import create_app
from assay.web.auth import Needs
from assay.web.bodies import MAX_BODY
from assay.web.plane import Settings
from web.asgi import Answer, call

ROLES: tuple[str | None, ...] = (None, "viewer", "author", "admin")
SECRET = "assay-secret-7f3a9c"  # the content of a file beside the workspace, never to be shown
PASSWD = "root:x:0:"
HUGE = 10**30


def _traversals(secret: Path) -> list[str]:
    return [
        "../../../../etc/passwd",
        "..%2f..%2f..%2fetc%2fpasswd",
        "%2e%2e%2f%2e%2e%2fsecret.txt",
        "../secret.txt",
        "/etc/passwd",
        str(secret),
        "checks/../../secret.txt",
        "payments.trades\x00../../etc/passwd",
    ]


@dataclass(frozen=True)
class HostileSource:
    """A ``source:`` an author writes in the check editor for a dataset without a document, and
    the statuses it may be answered with; the answer never holds the secret file's content."""

    source: str
    statuses: frozenset[int]


HOSTILE_SOURCES: list[HostileSource] = [
    HostileSource("{path: [unclosed", frozenset({400})),
    HostileSource("- a list, not a mapping", frozenset({400})),
    # outside the workspace's data folders, or a server nobody declared: 403 naming the rule,
    # before anything is opened (docs/checks.md, "Where a source may be")
    HostileSource("{path: ../../secret.txt}", frozenset({403})),
    HostileSource("{path: /etc/passwd}", frozenset({403})),
    HostileSource('{path: "/etc/*"}', frozenset({403})),
    HostileSource('{path: "../../*.txt"}', frozenset({403})),
    HostileSource("{duckdb: {path: ../../secret.txt, table: t}}", frozenset({403})),
    HostileSource('{postgres: {url: "postgresql://x@127.0.0.1:1/db", table: public.t}}', frozenset({403})),
    HostileSource('{postgres: {url: "postgresql://x@10.0.0.1:5432/db", table: public.t}}', frozenset({403})),
]
"""The hook for hostile sources (docs/web.md, "Safety"): add a case, it runs on the dry run,
the preview and the save, through the API and the page."""


@dataclass(frozen=True)
class Endpoint:
    """One route: its method, path, the role it needs (None: anyone), its parameters by type."""

    method: str
    path: str
    role: str | None
    path_params: dict[str, str]
    query_params: dict[str, str]

    @property
    def id(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def writes(self) -> bool:
        return self.method in ("POST", "PUT", "PATCH", "DELETE")


def _role(route: APIRoute) -> str | None:
    pending = list(route.dependant.dependencies)
    while pending:
        dependency = pending.pop()
        if isinstance(dependency.call, Needs):
            return dependency.call.role
        pending.extend(dependency.dependencies)
    return None


def _type(field: Any) -> str:
    annotation = getattr(field.field_info, "annotation", None) or field.type_
    return (
        "integer"
        if annotation is int or str(annotation) in ("int | None", "typing.Optional[int]")
        else "string"
    )


def _routes(routes: list[Any], prefix: str) -> list[tuple[str, APIRoute]]:
    """Every route with its full path, inside included routers too (FastAPI keeps a router
    included with a prefix as one entry of ``app.routes``)."""
    found: list[tuple[str, APIRoute]] = []
    for route in routes:
        if isinstance(route, APIRoute):
            found.append((prefix + route.path, route))
        elif hasattr(route, "original_router"):
            found += _routes(route.original_router.routes, prefix + route.include_context.prefix)
    return found


def _endpoints() -> list[Endpoint]:
    """Every route: the API's from its OpenAPI document, the pages' from the routes."""
    app = create_app(Settings(Path(tempfile.mkdtemp())))
    try:
        routes = {
            (method, path): route for path, route in _routes(app.routes, "") for method in route.methods
        }
        found: list[Endpoint] = []
        for path, operations in app.openapi()["paths"].items():
            for method, operation in operations.items():
                route = routes.pop((method.upper(), path))  # every operation is a route of the app
                params = operation.get("parameters", [])
                kinds = {p["name"]: "integer" if "integer" in str(p["schema"]) else "string" for p in params}
                found.append(
                    Endpoint(
                        method.upper(),
                        path,
                        _role(route),
                        {p["name"]: kinds[p["name"]] for p in params if p["in"] == "path"},
                        {p["name"]: kinds[p["name"]] for p in params if p["in"] == "query"},
                    )
                )
        for (method, path), route in routes.items():  # the pages, left out of the schema
            found.append(
                Endpoint(
                    method,
                    path,
                    _role(route),
                    {f.alias: _type(f) for f in route.dependant.path_params},
                    {f.alias: _type(f) for f in route.dependant.query_params},
                )
            )
    finally:
        app.state.plane.close()
    return sorted(found, key=lambda e: (e.path, e.method))


ENDPOINTS = _endpoints()

BENIGN = {
    "name": "payments.trades",
    "run_id": "00000000-0000-4000-8000-000000000000",
    "user": "viewer",
    "action": "accept",
}
"""A path parameter's value when another parameter is the hostile one (a name not listed here
takes ``x``, an integer ``1``)."""


def _benign(name: str, kind: str) -> str:
    return "1" if kind == "integer" else BENIGN.get(name, "x")


def _target(endpoint: Endpoint, path_values: dict[str, str], query: dict[str, str] | None = None) -> str:
    path = endpoint.path
    for name, kind in endpoint.path_params.items():
        value = path_values.get(name, _benign(name, kind))
        path = path.replace("{" + name + "}", quote(value, safe="%"))
    return path + (f"?{urlencode(query)}" if query else "")


def _send(app: Any, endpoint: Endpoint, target: str, token: str | None) -> Answer:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    if endpoint.writes:
        headers["content-type"] = "application/json"
        return call(app, endpoint.method, target, headers=headers, chunks=[b"{}"], length=2)
    return call(app, endpoint.method, target, headers=headers)


def _message(answer: Answer) -> str:
    """The error an answer shows: its JSON's ``error``, or the alert of its page."""
    if answer.headers.get("content-type", "").startswith("application/json"):
        return str(answer.json().get("error") or "")
    found = re.search(r'role="alert">([^<]+)<', answer.text)
    return found.group(1) if found else ""


def _may(endpoint: Endpoint, role: str | None) -> bool:
    return endpoint.role is None or (role is not None and allows(role, endpoint.role))


def _judge(endpoint: Endpoint, role: str | None, answer: Answer, case: str) -> None:
    where = f"{endpoint.id} as {role or 'anonymous'}: {case}"
    assert answer.status < 500, f"{where}: {answer.status} {answer.text[:300]}"
    assert SECRET not in answer.text and PASSWD not in answer.text, f"{where}: a file outside the workspace"
    if not _may(endpoint, role):
        assert not 200 <= answer.status < 300, f"{where}: {answer.status} for a role that may not"


@pytest.fixture(scope="module")
def secret(demo_root: Path) -> Path:
    found = demo_root.parent / "secret.txt"
    found.write_text(f"{SECRET}\n")
    return found


@pytest.fixture(scope="module")
def app(client: Any, plane: Any) -> Any:
    # hostile ?token= values are wrong login links: the lockout (tests/web/test_access.py) would
    # answer every later case 429 and hide what the route itself answers
    plane.attempts.failures = 1_000_000
    return client.app


def _tokens(tokens: dict[str, str]) -> dict[str | None, str | None]:
    return {None: None, **{role: tokens[role] for role in ROLES if role}}


def test_the_routes_are_found() -> None:
    ids = {e.id for e in ENDPOINTS}
    assert {"POST /api/v1/decisions/{decision_id}/accept", "GET /runs", "POST /login", "GET /health"} <= ids
    assert len(ENDPOINTS) > 60
    assert {e.role for e in ENDPOINTS} == {None, "viewer", "author", "admin"}


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.id)
def test_path_traversal_in_every_parameter(
    app: Any, tokens: dict[str, str], secret: Path, endpoint: Endpoint
) -> None:
    hostile = _traversals(secret)
    for role, token in _tokens(tokens).items():
        for name in endpoint.path_params:
            for value in hostile:
                target = _target(endpoint, {name: value})
                _judge(endpoint, role, _send(app, endpoint, target, token), f"path {name}={value!r}")
        for name in endpoint.query_params:
            for value in hostile:
                target = _target(endpoint, {}, {name: value})
                _judge(endpoint, role, _send(app, endpoint, target, token), f"query {name}={value!r}")


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.id)
def test_an_oversized_body_is_refused_unread(app: Any, tokens: dict[str, str], endpoint: Endpoint) -> None:
    body = [b" " * MAX_BODY, b"  "]
    for role, token in _tokens(tokens).items():
        headers = {"content-type": "application/json"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        answer = call(
            app, endpoint.method, _target(endpoint, {}), headers=headers, chunks=body, length=MAX_BODY + 2
        )
        _judge(endpoint, role, answer, "an oversized body")
        assert answer.read == 0, f"{endpoint.id} as {role}: read {answer.read} bytes of a body over the limit"
        anonymous_write = role is None and endpoint.writes and endpoint.path != "/login"
        if anonymous_write:
            assert answer.status in (401, 303), f"{endpoint.id}: {answer.status}"
        else:
            assert answer.status == 413, f"{endpoint.id} as {role}: {answer.status}"


INTEGER_ENDPOINTS = [e for e in ENDPOINTS if "integer" in {*e.path_params.values(), *e.query_params.values()}]


@pytest.mark.parametrize("endpoint", INTEGER_ENDPOINTS, ids=lambda e: e.id)
def test_a_huge_integer_is_a_4xx_with_a_message(app: Any, tokens: dict[str, str], endpoint: Endpoint) -> None:
    for role, token in _tokens(tokens).items():
        cases = [
            (f"path {n}", _target(endpoint, {n: str(HUGE)}))
            for n, k in endpoint.path_params.items()
            if k == "integer"
        ] + [
            (f"query {n}", _target(endpoint, {}, {n: str(HUGE)}))
            for n, k in endpoint.query_params.items()
            if k == "integer"
        ]
        for case, target in cases:
            answer = _send(app, endpoint, target, token)
            _judge(endpoint, role, answer, f"{case}={HUGE}")
            if _may(endpoint, role):
                assert answer.status in (400, 404, 422), f"{endpoint.id} as {role}, {case}: {answer.status}"
                assert _message(answer), f"{endpoint.id} as {role}, {case}: no message"


EDITOR = [
    e for e in ENDPOINTS if e.path.endswith(("/checks/dry-run", "/checks/preview", "/checks", "/checks/save"))
]


@pytest.mark.parametrize("case", HOSTILE_SOURCES, ids=lambda c: c.source)
def test_a_hostile_source_in_the_editor(app: Any, tokens: dict[str, str], case: HostileSource) -> None:
    expect = "{id: rows, metric: daily.row_count, expect: '> 0'}"
    unwritten = hashlib.sha256(b"").hexdigest()  # the base of a document not written yet
    draft = {"expect": expect, "measure": "[row_count]", "source": case.source, "base": unwritten}
    assert {e.id for e in EDITOR} >= {
        "POST /api/v1/datasets/{name}/checks/dry-run",
        "POST /datasets/{name}/checks/save",
    }
    for endpoint in EDITOR:
        target = _target(endpoint, {"name": "orders"})  # a dataset without a document
        headers = {"authorization": f"Bearer {tokens['author']}"}
        if endpoint.path.startswith("/api/"):
            body = json.dumps(draft).encode()
            headers["content-type"] = "application/json"
        else:
            body = urlencode(draft).encode()
            headers["content-type"] = "application/x-www-form-urlencoded"
        answer = call(app, "POST", target, headers=headers, chunks=[body], length=len(body))
        _judge(endpoint, "author", answer, f"source {case.source!r}")
        assert answer.status in case.statuses, f"{endpoint.id}: {answer.status} {answer.text[:300]}"
