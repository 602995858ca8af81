"""A load held out of later baselines is accepted on the dataset's profile page (an author's
button, with the session's CSRF token) and through the API, audited; a viewer is not offered it
and may not do it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from assay.platform import flows
from assay.store import MetricStore
from assay.web.app import create_app
from web.conftest import Api, open_plane, users_of

HELD = "2024-01-07"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str], MetricStore]]:
    """Seven daily loads of ``tickets``; on the seventh, 15 of 50 statuses are blank: a hard alert,
    held out of later baselines."""
    root = tmp_path / "ws"
    with MetricStore.open(workspace=root) as store:
        for i in range(7):
            statuses = ["open", "closed"] * 25
            if i == 6:
                statuses[:15] = [""] * 15
            path = tmp_path / f"t{i}.csv"
            path.write_text("id,status\n" + "".join(f"{n},{s}\n" for n, s in enumerate(statuses)))
            day = date(2024, 1, 1) + timedelta(days=i)
            flows.profile(path, dataset="tickets", load_date=day, store=store, workspace=root)
    plane = open_plane(root)
    try:
        with TestClient(create_app(plane=plane), follow_redirects=False) as client:
            yield client, users_of(plane), plane.store
    finally:
        plane.close()


def _login(client: TestClient, token: str) -> None:
    form = client.get("/login")
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', form.text)
    assert csrf is not None
    client.post("/login", data={"token": token, "csrf_token": csrf.group(1), "next": "/"})


def test_an_author_accepts_a_held_load_on_the_profile_page(
    site: tuple[TestClient, dict[str, str], MetricStore],
) -> None:
    client, tokens, store = site
    _login(client, tokens["viewer"])
    page = client.get("/datasets/tickets/profile").text
    assert "Held out of baselines" in page and HELD in page and "New normal from here" not in page
    client.cookies.clear()
    _login(client, tokens["author"])
    page = client.get("/datasets/tickets/profile").text
    assert "New normal from here" in page
    form = {"load_date": HELD, "kind": "null_rate", "column": "status"}
    assert client.post("/datasets/tickets/baselines/accept", data=form).status_code == 403  # no CSRF token
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert csrf is not None
    done = client.post("/datasets/tickets/baselines/accept", data={**form, "csrf_token": csrf.group(1)})
    assert done.status_code == 303 and done.headers["location"] == "/datasets/tickets/profile"
    assert store.baseline_marks("tickets", states=("held",)) == []
    (mark,) = store.baseline_marks("tickets", states=("accepted",))
    assert (mark.hold.kind, mark.hold.instance, mark.decided_by) == ("null_rate", "status", "author")
    trail, _ = store.audit_trail(dataset="tickets")
    assert [(r.action, r.by) for r in trail] == [("baseline.accept", "author")]


def test_the_api_accepts_for_an_author_only_and_names_what_is_held(
    site: tuple[TestClient, dict[str, str], MetricStore],
) -> None:
    client, tokens, _store = site
    body = {"load_date": HELD, "new_normal": True}
    assert Api(client, tokens["viewer"]).post("/datasets/tickets/baselines/accept", body).status_code == 403
    author = Api(client, tokens["author"])
    wrong = author.post("/datasets/tickets/baselines/accept", {"load_date": "2024-01-06"})
    assert wrong.status_code == 400 and "held loads: 2024-01-07" in wrong.json()["error"]
    assert author.post("/datasets/tickets/baselines/accept", {"load_date": "Jan 7"}).status_code == 400
    done = author.post("/datasets/tickets/baselines/accept", body).json()
    assert done["new_normal"] and done["left_out_of_baselines"] == 6
    assert [m["kind"] for m in done["accepted"]] == ["null_rate"]
