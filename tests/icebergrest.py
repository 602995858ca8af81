"""A real Iceberg REST catalog server for tests, on 127.0.0.1; a pytest plugin.

There is no Java on the test machines and no packaged Python REST catalog server, so this is a
small one: the part of the Iceberg REST catalog OpenAPI spec (``open-api/rest-catalog-open-api.yaml``
of apache/iceberg) that PyIceberg's ``RestCatalog`` calls for assay's tables, served by
``http.server`` in a thread and backed by PyIceberg's ``SqlCatalog`` (a SQLite file per warehouse):

- ``GET /v1/config?warehouse=W``: the ``prefix`` under which the catalog of warehouse ``W`` (a
  location, ``s3://bucket/prefix`` or ``file:///folder``) is served; every other path is under it;
- namespaces: list, create (409 when it exists), load, exists (``HEAD``);
- tables: list, create (``stage-create`` too: the metadata is returned, nothing is stored until the
  commit that asserts the table's creation), load, exists (``HEAD``);
- ``POST /v1/oauth/tokens``: OAuth2's client-credentials grant, :data:`CREDENTIAL` for :data:`TOKEN`;
- commit (``POST .../tables/{table}``): the request's requirements are checked against the table
  as the backing catalog holds it, and a requirement that fails (another writer moved the table,
  or created it first) is ``409 CommitFailedException``, as the spec says.

Requests are handled one at a time per warehouse (a lock), so the backing SQLite file is never
contended; two clients still conflict exactly as on any server, through the requirements. With
``token`` set the server wants ``Authorization: Bearer <token>`` and answers 401 otherwise.
(The spec marks the token endpoint deprecated in favour of an external OAuth2 server; PyIceberg's
``credential`` property still calls it.)

Use it from a test folder's ``conftest.py``::

    from icebergrest import iceberg_rest  # noqa: F401

    def test_something(iceberg_rest: RestServer) -> None:
        uri = iceberg_rest.uri  # http://127.0.0.1:PORT
"""

from __future__ import annotations

import json
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from pyiceberg.catalog.rest import CreateTableRequest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.table import CommitTableRequest

from assay.lake.catalogs import s3_properties

TOKEN = "assay-rest-test-token"
CREDENTIAL = "assay-client:assay-secret"  # client_id:client_secret, exchanged for TOKEN
ERRORS: dict[type[Exception], int] = {
    CommitFailedException: 409,
    TableAlreadyExistsError: 409,
    NamespaceAlreadyExistsError: 409,
    NoSuchTableError: 404,
    NoSuchNamespaceError: 404,
}


class Problem(Exception):
    """An answer other than 200, with the spec's error body."""

    def __init__(self, code: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.code, self.kind, self.message = code, kind, message


@dataclass
class Backing:
    """The catalogs the server serves, one per warehouse location, each behind its own lock."""

    folder: Path
    catalogs: dict[str, tuple[SqlCatalog, threading.Lock]] = field(default_factory=dict)
    by_prefix: dict[str, str] = field(default_factory=dict)
    guard: threading.Lock = field(default_factory=threading.Lock)

    def prefix(self, warehouse: str) -> str:
        if not warehouse.startswith(("s3://", "file:///")):
            raise Problem(400, "BadRequestException", f"warehouse {warehouse!r} is not a location")
        with self.guard:
            if warehouse not in self.catalogs:
                key = uuid.uuid4().hex[:12]
                database = self.folder / f"{key}.db"
                catalog = SqlCatalog(
                    "rest", uri=f"sqlite:///{database}", warehouse=warehouse, **s3_properties()
                )
                self.catalogs[warehouse] = (catalog, threading.Lock())
                self.by_prefix[key] = warehouse
            return next(k for k, w in self.by_prefix.items() if w == warehouse)

    def catalog(self, prefix: str) -> tuple[SqlCatalog, threading.Lock]:
        warehouse = self.by_prefix.get(prefix)
        if warehouse is None:
            raise Problem(404, "NoSuchWarehouseException", f"no warehouse under prefix {prefix!r}")
        return self.catalogs[warehouse]


class _Named:
    """What ``SqlCatalog.commit_table`` asks of the table it commits to: its name."""

    def __init__(self, identifier: tuple[str, ...]) -> None:
        self.identifier = identifier

    def name(self) -> tuple[str, ...]:
        return self.identifier


def _table(table: Any) -> dict[str, Any]:
    return {
        "metadata-location": table.metadata_location,
        "metadata": json.loads(table.metadata.model_dump_json()),
        "config": {},
    }


class Handler(BaseHTTPRequestHandler):
    backing: Backing
    token: str | None

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the tests' output is their own."""

    def do_GET(self) -> None:
        self._answer("GET")

    def do_HEAD(self) -> None:
        self._answer("HEAD")

    def do_POST(self) -> None:
        self._answer("POST")

    def _answer(self, method: str) -> None:
        try:
            if urlsplit(self.path).path == "/v1/oauth/tokens":
                code, body = self._grant()
            elif self.token is not None and self.headers.get("Authorization") != f"Bearer {self.token}":
                raise Problem(401, "NotAuthorizedException", "a bearer token is required")
            else:
                code, body = self._route(method)
        except Problem as problem:
            code, body = problem.code, _error(problem.code, problem.kind, problem.message)
        except tuple(ERRORS) as error:
            code = ERRORS[type(error)]
            body = _error(code, type(error).__name__, str(error))
        except Exception as error:  # the spec's answer to a server's own failure
            code, body = 500, _error(500, type(error).__name__, str(error))
        payload = b"" if body is None else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(payload)

    def _route(self, method: str) -> tuple[int, Any]:
        url = urlsplit(self.path)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        if parts[:2] == ["v1", "config"]:
            (warehouse,) = parse_qs(url.query).get("warehouse") or [""]
            return 200, {"defaults": {}, "overrides": {"prefix": self.backing.prefix(warehouse)}}
        if len(parts) < 3 or parts[0] != "v1" or parts[2] != "namespaces":
            raise Problem(404, "NoSuchEndpoint", f"{method} {url.path} is not served here")
        catalog, lock = self.backing.catalog(parts[1])
        rest = parts[3:]
        body = self._body() if method == "POST" else None
        with lock:
            return self._catalog_call(catalog, method, rest, body)

    def _catalog_call(self, catalog: SqlCatalog, method: str, rest: list[str], body: Any) -> tuple[int, Any]:
        if not rest:
            if method == "GET":
                return 200, {"namespaces": [list(n) for n in catalog.list_namespaces()]}
            namespace = tuple(body["namespace"])
            catalog.create_namespace(namespace, body.get("properties") or {})
            return 200, {"namespace": list(namespace), "properties": body.get("properties") or {}}
        namespace = (rest[0],)
        if len(rest) == 1:
            properties = catalog.load_namespace_properties(namespace)
            return (
                (204, None) if method == "HEAD" else (200, {"namespace": [rest[0]], "properties": properties})
            )
        if rest[1:] == ["tables"]:
            if method == "GET":
                names = catalog.list_tables(namespace)
                return 200, {"identifiers": [{"namespace": list(n[:-1]), "name": n[-1]} for n in names]}
            return 200, self._create(catalog, namespace, body)
        if len(rest) == 3 and rest[1] == "tables":
            identifier = (rest[0], rest[2])
            if method == "HEAD":
                if not catalog.table_exists(identifier):
                    raise NoSuchTableError(f"no table {'.'.join(identifier)}")
                return 204, None
            if method == "GET":
                return 200, _table(catalog.load_table(identifier))
            request = CommitTableRequest.model_validate(body)
            # SqlCatalog.commit_table checks every requirement against the table it holds now
            # (AssertCreate, AssertTableUUID, AssertRefSnapshotId, ...) and swaps the metadata
            # location only if no one else did: a failed requirement is CommitFailedException
            done = catalog.commit_table(_Named(identifier), request.requirements, request.updates)  # type: ignore[arg-type]
            return 200, {
                "metadata-location": done.metadata_location,
                "metadata": json.loads(done.metadata.model_dump_json()),
            }
        raise Problem(404, "NoSuchEndpoint", f"{method} {'/'.join(rest)} is not served here")

    def _create(self, catalog: SqlCatalog, namespace: tuple[str, ...], body: Any) -> dict[str, Any]:
        request = CreateTableRequest.model_validate({"location": None, **body})  # optional in the spec
        identifier = (*namespace, request.name)
        if not catalog.namespace_exists(namespace):
            raise NoSuchNamespaceError(f"no namespace {namespace[0]}")
        if catalog.table_exists(identifier):
            raise TableAlreadyExistsError(f"table {'.'.join(identifier)} exists")
        arguments: dict[str, Any] = {
            "schema": request.table_schema,
            "location": request.location,
            "properties": request.properties,
        }
        if request.partition_spec is not None:
            arguments["partition_spec"] = request.partition_spec
        if request.write_order is not None:
            arguments["sort_order"] = request.write_order
        if request.stage_create:
            staged = catalog._create_staged_table(identifier, **arguments)
            return {
                "metadata-location": None,
                **{k: v for k, v in _table(staged).items() if k != "metadata-location"},
            }
        return _table(catalog.create_table(identifier, **arguments))

    def _grant(self) -> tuple[int, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        form = parse_qs(self.rfile.read(length).decode())
        given = f"{form.get('client_id', [''])[0]}:{form.get('client_secret', [''])[0]}"
        if form.get("grant_type") != ["client_credentials"] or given != CREDENTIAL:
            return 401, {"error": "invalid_client", "error_description": "unknown client credentials"}
        issued = "urn:ietf:params:oauth:token-type:access_token"
        return 200, {"access_token": self.token, "token_type": "bearer", "issued_token_type": issued}

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}")


def _error(code: int, kind: str, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code}}


@dataclass(frozen=True)
class RestServer:
    """A running REST catalog server: its URI, and the token it wants (None: none)."""

    uri: str
    token: str | None


def serve(folder: Path, token: str | None) -> tuple[ThreadingHTTPServer, RestServer]:
    """Start a server on a free port of 127.0.0.1 in a daemon thread."""
    handler = type("BoundHandler", (Handler,), {"backing": Backing(folder), "token": token})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return server, RestServer(uri=f"http://{host}:{port}", token=token)


@pytest.fixture(scope="session")
def iceberg_rest() -> Iterator[RestServer]:
    """A REST catalog server wanting a bearer token (:data:`TOKEN`), for the whole session."""
    with tempfile.TemporaryDirectory(prefix="assay-rest-") as folder:
        server, running = serve(Path(folder), TOKEN)
        try:
            yield running
        finally:
            server.shutdown()
            server.server_close()
