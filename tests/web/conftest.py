"""Fixtures of the web control plane's tests: the demo's workspace (copied: tests write to it),
the application on it at the demo's clock, and a user of each role with their token.

The API tests call the application in process (FastAPI's TestClient); the browser tests serve it
on a real port with uvicorn and drive a real headless Chromium (tests/web/test_browser.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from _demo_workspace import copy
from assay.demo.orders import CLOCK
from assay.web.app import create_app
from assay.web.plane import Plane, Settings

NOW = datetime.fromisoformat(CLOCK)
ROLES = ("viewer", "author", "admin")


def open_plane(root: Path, url: str | None = None) -> Plane:
    return Plane(Settings(root, store_url=url, now=NOW))


@contextlib.contextmanager
def with_new_values(tmp_path: Path, codes: int, kinds: int, role: str) -> Iterator[tuple[Api, str]]:
    """A copy of the demo's workspace with a dataset of its own, ``tickets``, profiled twice: its
    categorical columns ``code`` and ``kind`` gain ``codes`` and ``kinds`` never-seen values on the
    second load, that many pending decisions (the demo leaves one). Yields a client of ``role``
    on it and the dataset's name."""
    from _invoke import assay

    root = copy(tmp_path / "assay-demo")
    (root / "checks" / "tickets.yaml").write_text("categorical: [code, kind]\n")
    for day, extra in (("2026-11-28", 0), ("2026-11-29", 1)):
        lines = ["id,code,kind", *(f"{i},C{i % 3},K{i % 2}" for i in range(12))]
        lines += [f"{100 + i},N{i},K0" for i in range(codes * extra)]
        lines += [f"{200 + i},C0,J{i}" for i in range(kinds * extra)]
        load = root / f"tickets-{day}.csv"
        load.write_text("\n".join(lines) + "\n")
        assert (
            assay("profile", str(load), "--dataset", "tickets", "--load-date", day, "--workspace", str(root))
            == 0
        )
    plane = open_plane(root)
    try:
        with TestClient(create_app(plane=plane), follow_redirects=False) as client:
            yield Api(client, users_of(plane)[role]), "tickets"
    finally:
        plane.close()


def users_of(plane: Plane) -> dict[str, str]:
    """A user of each role (named after it), and their tokens."""
    return {role: plane.store.add_user(role, role, by="tests") for role in ROLES}


class Api:
    """The application's API in process, as one role (or anonymous)."""

    def __init__(self, client: TestClient, token: str | None) -> None:
        self.client = client
        self.headers = {"authorization": f"Bearer {token}"} if token else {}

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(f"/api/v1{path}", params=params, headers=self.headers)

    def post(self, path: str, body: Any = None, **params: Any) -> Any:
        return self.client.post(f"/api/v1{path}", json=body, params=params, headers=self.headers)

    def patch(self, path: str, body: Any = None) -> Any:
        return self.client.patch(f"/api/v1{path}", json=body, headers=self.headers)


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo's workspace, for one test module."""
    return copy(tmp_path_factory.mktemp("web") / "assay-demo")


@pytest.fixture(scope="module")
def plane(demo_root: Path) -> Iterator[Plane]:
    opened = open_plane(demo_root)
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def tokens(plane: Plane) -> dict[str, str]:
    return users_of(plane)


@pytest.fixture(scope="module")
def client(plane: Plane) -> Iterator[TestClient]:
    with TestClient(create_app(plane=plane), follow_redirects=False) as opened:
        yield opened


@pytest.fixture(scope="module")
def as_role(client: TestClient, tokens: dict[str, str]) -> dict[str | None, Api]:
    """The API as each role, and as nobody (``None``)."""
    found: dict[str | None, Api] = {role: Api(client, token) for role, token in tokens.items()}
    found[None] = Api(client, None)
    return found


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[tuple[Plane, TestClient, dict[str, str]]]:
    """A workspace of the test's own (a copy of the demo's), its application and its users: for a
    test that writes."""
    root = copy(tmp_path / "assay-demo")
    opened = open_plane(root)
    found = users_of(opened)
    with TestClient(create_app(plane=opened), follow_redirects=False) as opened_client:
        yield opened, opened_client, found
    opened.close()
