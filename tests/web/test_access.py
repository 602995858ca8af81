"""Who may try, how often, and what they are told: a client address that sends too many wrong
secrets (bearer tokens, the login form's token, login links) is locked out for a while and every
refusal is logged without the secret; every cookie is Secure under ``--secure-cookies``; /health
says nothing of the server's files; names with control or bidi characters are refused
(docs/web.md, "Access" and "Safety")."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from _demo_workspace import copy
from assay.web.app import create_app
from assay.web.plane import Plane, Settings
from web.asgi import ADDRESS, call
from web.conftest import NOW, users_of

OTHER = "198.51.100.9"


class Clock:
    """The lockout's clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Any, Plane, dict[str, str], Clock]]:
    """The demo's application with a lockout of 3 failures in 60 s, on a clock of the test's."""
    root = copy(tmp_path / "assay-demo")
    plane = Plane(Settings(root, now=NOW, login_failures=3, login_window=60))
    clock = Clock()
    plane.attempts.clock = clock
    tokens = users_of(plane)
    yield create_app(plane=plane), plane, tokens, clock
    plane.close()


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found is not None
    return found.group(1)


def _me(app: Any, token: str, address: str = ADDRESS) -> Any:
    return call(app, "GET", "/api/v1/me", headers={"authorization": f"Bearer {token}"}, address=address)


def test_wrong_bearer_tokens_lock_the_address_out_then_it_may_try_again(
    served: Any, caplog: pytest.LogCaptureFixture
) -> None:
    app, _plane, tokens, clock = served
    caplog.set_level(logging.WARNING, logger="assay.web")
    guesses = [f"assay_guess{i}" for i in range(3)]
    for guess in guesses:
        assert _me(app, guess).status == 401
        clock.now += 10
    locked = _me(app, tokens["viewer"])  # even a good token: a guess is never answered while locked
    assert locked.status == 429 and locked.headers["retry-after"] == "30"
    assert "try again in 30 seconds" in locked.json()["error"]
    assert _me(app, tokens["viewer"], address=OTHER).status == 200  # another address is not locked
    clock.now += 30
    assert _me(app, tokens["viewer"]).status == 200
    logged = [r.getMessage() for r in caplog.records]
    assert (
        sum(
            f"refused a bearer token from {ADDRESS} on GET /api/v1/me: not a valid token" in m for m in logged
        )
        == 3
    )
    assert any("locked out for 30 s" in m and ADDRESS in m for m in logged)
    assert not any(g in m for g in [*guesses, tokens["viewer"]] for m in logged)


def test_the_login_form_and_login_links_count_and_lock_too(
    served: Any, caplog: pytest.LogCaptureFixture
) -> None:
    app, plane, tokens, clock = served
    caplog.set_level(logging.WARNING, logger="assay.web")
    with TestClient(app, follow_redirects=False) as browser:
        page = browser.get("/login")
        for _ in range(2):
            page = browser.post("/login", data={"token": "assay_wrong", "csrf_token": _csrf(page.text)})
            assert page.status_code == 401  # the page again, with a new CSRF token
        link = browser.get("/login", params={"token": "never-made"})
        assert link.status_code == 400
        code = plane.store.login_code("viewer", by="tests")
        locked = browser.get("/login", params={"token": code})  # a good link, from a locked address
        assert locked.status_code == 429 and locked.headers["retry-after"] == "60"
        page = browser.get("/login")
        good = browser.post("/login", data={"token": tokens["viewer"], "csrf_token": _csrf(page.text)})
        assert good.status_code == 429
        clock.now += 61
        assert browser.get("/login", params={"token": code}).status_code == 303  # the link was not used
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "refused a login form's token from testclient on POST /login" in logged
    assert "refused a login link from testclient on GET /login" in logged
    assert "assay_wrong" not in logged and "never-made" not in logged and code not in logged


def test_a_viewer_refused_a_write_is_logged_by_name(served: Any, caplog: pytest.LogCaptureFixture) -> None:
    app, _plane, tokens, _clock = served
    caplog.set_level(logging.WARNING, logger="assay.web")
    answer = call(
        app, "POST", "/api/v1/incidents/abcd/ack", headers={"authorization": f"Bearer {tokens['viewer']}"}
    )
    assert answer.status == 403
    assert (
        f"refused viewer (viewer) from {ADDRESS} on POST /api/v1/incidents/abcd/ack: needs the author role"
        in (caplog.text)
    )


def test_every_cookie_is_secure_under_secure_cookies(tmp_path: Path) -> None:
    root = copy(tmp_path / "assay-demo")
    plane = Plane(Settings(root, now=NOW, secure_cookies=True))
    tokens = users_of(plane)
    try:
        with TestClient(
            create_app(plane=plane), follow_redirects=False, base_url="https://testserver"
        ) as browser:
            form = browser.get("/login")
            csrf = re.search(r'name="csrf_token" value="([^"]+)"', form.text)
            assert csrf is not None
            set_cookies = form.headers.get_list("set-cookie")
            logged_in = browser.post("/login", data={"token": tokens["author"], "csrf_token": csrf.group(1)})
            set_cookies += logged_in.headers.get_list("set-cookie")
            incident = browser.get("/api/v1/incidents", params={"state": "active"}).json()["items"][0]["id"]
            page = browser.get(f"/incidents/{incident}")
            page_csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
            assert page_csrf is not None
            acked = browser.post(f"/incidents/{incident}/ack", data={"csrf_token": page_csrf.group(1)})
            assert acked.status_code == 303
            set_cookies += acked.headers.get_list("set-cookie")
            shown = browser.get(acked.headers["location"])
            set_cookies += shown.headers.get_list("set-cookie")
    finally:
        plane.close()
    names = {c.split("=", 1)[0] for c in set_cookies}
    assert {"assay_login_csrf", "assay_session", "assay_flash"} <= names
    insecure = [c for c in set_cookies if "secure" not in c.lower().split("; ")]
    assert insecure == []


def test_health_shows_no_path(client: TestClient, demo_root: Path) -> None:
    answer = client.get("/health")
    assert answer.status_code == 200 and answer.json()["status"] == "ok"
    assert str(demo_root) not in answer.text and demo_root.name not in answer.text


REFUSED = "\x00\x07\x1b\x7f\x85\u202a\u202e\u2066\u2069"


@pytest.mark.parametrize("character", REFUSED, ids=[f"U+{ord(c):04X}" for c in REFUSED])
def test_control_and_bidi_characters_are_refused_in_dataset_names(
    client: TestClient, tokens: dict[str, str], character: str
) -> None:
    from urllib.parse import quote

    headers = {"authorization": f"Bearer {tokens['author']}"}
    name = f"orders{character}x"
    shown = f"U+{ord(character):04X}"
    for path in (f"/api/v1/datasets/{quote(name)}", f"/api/v1/datasets/{quote(name)}/checks/template"):
        answer = client.get(path, headers=headers)
        assert answer.status_code == 400 and shown in answer.json()["error"], path
    bulk = client.post("/api/v1/decisions", json={"dataset": name, "status": "accepted"}, headers=headers)
    assert bulk.status_code == 400 and shown in bulk.json()["error"]
    filtered = client.get("/api/v1/runs", params={"dataset": name}, headers=headers)
    assert filtered.status_code == 400 and shown in filtered.json()["error"]
    page = client.get(f"/datasets/{quote(name)}/quality", headers=headers)
    assert page.status_code == 400 and shown in page.text


def test_check_name_is_the_one_rule_for_names() -> None:
    from assay.errors import ConfigError
    from assay.names import check_name

    assert check_name("payments.trades", "dataset name") == "payments.trades"
    assert check_name("ventes_été", "dataset name") == "ventes_été"
    with pytest.raises(
        ConfigError,
        match=r"dataset name 'a\\u202eb' holds U\+202E \(a bidi control\) at position 2: remove it",
    ):
        check_name("a\u202eb", "dataset name")
    with pytest.raises(ConfigError, match=r"U\+0000 \(a control character\) at position 2"):
        check_name("a\x00b", "dataset name")
    with pytest.raises(ConfigError, match="empty"):
        check_name("", "dataset name")
