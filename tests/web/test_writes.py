"""The writes a person makes through the API and the pages, on a copy of the demo's workspace:
incidents worked, new values decided, proposals accepted and rejected, users managed; each one
recorded with who and when. And the page side of access: the login form, the one-time login
link, the session cookie and its CSRF token."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from web.conftest import Api, open_plane, users_of, with_new_values

DATASET = "payments.trades"


def _incident(api: Api, expectation: str) -> dict[str, Any]:
    found = api.get("/incidents", state="active").json()["items"]
    return next(i for i in found if i["expectation"] == expectation)


def test_an_incident_is_acknowledged_muted_and_resolved_with_a_cause(fresh: Any) -> None:
    _plane, client, tokens = fresh
    api = Api(client, tokens["author"])
    incident = _incident(api, "settle-after-exec")
    acked = api.post(f"/incidents/{incident['id'][:8]}/ack")
    assert acked.status_code == 200 and acked.json()["state"] == "acknowledged"
    muted = api.post(f"/incidents/{incident['id']}/mute", {"hours": 24}).json()
    assert muted["state"] == "muted" and muted["muted_until"] == "2026-12-02T06:00:00+00:00"  # clock + 24 h
    no_cause = api.post(f"/incidents/{incident['id']}/resolve", {})
    assert no_cause.status_code == 400 and "cause" in no_cause.json()["error"]
    wrong = api.post(f"/incidents/{incident['id']}/resolve", {"cause": "gremlins"})
    assert wrong.status_code == 400 and "gremlins" in wrong.json()["error"]
    resolved = api.post(
        f"/incidents/{incident['id']}/resolve", {"cause": "real_issue", "note": "fixed upstream"}
    )
    body = resolved.json()
    assert body["state"] == "resolved" and body["cause"] == "real_issue"
    kinds = [(e["kind"], e["by"]) for e in body["events"] if e["by"]]
    assert kinds == [("acknowledged", "author"), ("muted", "author"), ("resolved", "author")]
    again = api.post(f"/incidents/{incident['id']}/ack")
    assert again.status_code == 400 and "resolved" in again.json()["error"]
    assert api.post(f"/incidents/{incident['id']}/explode").status_code == 404
    trail = [
        (a["action"], a["by"]) for a in api.get("/audit").json()["items"] if a["target"] == incident["id"]
    ]
    assert trail == [("incident.resolve", "author"), ("incident.mute", "author"), ("incident.ack", "author")]


def test_a_new_value_is_accepted_and_the_audit_says_who(fresh: Any) -> None:
    plane, client, tokens = fresh
    api = Api(client, tokens["author"])
    [pending] = api.get("/decisions", dataset="vendor_trades").json()["items"]
    accepted = api.post(f"/decisions/{pending['id']}/accept", {"note": "a new venue"}).json()
    [d] = accepted["decisions"]
    assert (d["status"], d["decided_by"], d["note"]) == ("accepted", "author", "a new venue")
    assert plane.store.decision(pending["id"]).status == "accepted"
    again = api.post(f"/decisions/{pending['id']}/reject")
    assert again.status_code == 400 and "already accepted by author" in again.json()["error"]
    [row] = [a for a in api.get("/audit", dataset="vendor_trades").json()["items"]]
    assert (row["action"], row["by"], row["detail"]["value"]) == ("decision.accept", "author", d["value"])


def test_every_pending_value_of_a_column_is_decided_at_once(tmp_path: Path) -> None:
    with with_new_values(tmp_path, codes=30, kinds=4, role="author") as (api, dataset):
        done = api.post("/decisions", {"dataset": dataset, "column": "code", "status": "rejected"}).json()
        assert len(done["decisions"]) == 30 and {d["status"] for d in done["decisions"]} == {"rejected"}
        left = api.get("/decisions", dataset=dataset).json()
        assert left["total"] == 4 and {d["column"] for d in left["items"]} == {"kind"}
        assert api.post("/decisions", {"dataset": "../x", "status": "accepted"}).status_code == 404


def test_a_proposal_is_accepted_into_the_document_and_another_rejected(fresh: Any) -> None:
    plane, client, tokens = fresh
    api = Api(client, tokens["author"])
    open_ = api.get("/proposals").json()["items"]
    first, second = open_[0], open_[1]
    accepted = api.post(f"/proposals/{first['id']}/accept").json()
    assert accepted["state"] == "accepted" and accepted["decided_by"] == "author"
    document = yaml.safe_load((plane.root / "checks" / "trades.yaml").read_text())
    written = next(e for e in document["expectations"] if e["id"] == first["expectation"]["id"])
    assert written["mode"] == "advisory"
    no_why = api.post(f"/proposals/{second['id']}/reject", {"why": ""})
    assert no_why.status_code == 422
    rejected = api.post(f"/proposals/{second['id']}/reject", {"why": "we check it upstream"}).json()
    assert rejected["state"] == "rejected" and rejected["why"] == "we check it upstream"
    actions = [a["action"] for a in api.get("/audit", dataset=DATASET).json()["items"]]
    assert actions[:2] == ["proposal.reject", "proposal.accept"]
    assert api.get("/proposals/zzzzzzzz").status_code == 404


def test_an_admin_adds_users_changes_roles_and_disables_them(fresh: Any) -> None:
    _plane, client, tokens = fresh
    admin = Api(client, tokens["admin"])
    added = admin.post("/users", {"name": "bo@example.com", "role": "viewer"})
    assert added.status_code == 201
    token = added.json()["token"]
    bo = Api(client, token)
    assert bo.get("/me").json()["user"] == {
        "name": "bo@example.com",
        "role": "viewer",
        "created_at": bo.get("/me").json()["user"]["created_at"],
        "created_by": "admin",
        "disabled": False,
    }
    assert bo.post("/incidents/x/ack").status_code == 403
    assert admin.patch("/users/bo@example.com", {"role": "author"}).json()["user"]["role"] == "author"
    assert bo.get("/me").json()["user"]["role"] == "author"
    assert admin.patch("/users/bo@example.com", {"disabled": True}).json()["user"]["disabled"] is True
    assert bo.get("/me").status_code == 401
    taken = admin.post("/users", {"name": "bo@example.com", "role": "viewer"})
    assert taken.status_code == 400 and "exists already" in taken.json()["error"]
    assert admin.post("/users", {"name": "no spaces", "role": "viewer"}).status_code == 400
    assert admin.post("/users", {"name": "x", "role": "king"}).status_code == 422
    assert admin.patch("/users/admin", {"disabled": True}).status_code == 400  # not oneself
    users = {u["name"]: u for u in admin.get("/users").json()["users"]}
    assert set(users) == {"viewer", "author", "admin", "bo@example.com"}
    actions = [(a["action"], a["target"]) for a in admin.get("/audit").json()["items"][:3]]
    assert actions == [
        ("user.change", "bo@example.com"),
        ("user.change", "bo@example.com"),
        ("user.add", "bo@example.com"),
    ]


# --- the pages: login, sessions, CSRF ---------------------------------------------------------------


def _login(client: Any, token: str) -> None:
    form = client.get("/login")
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
    done = client.post("/login", data={"token": token, "csrf_token": csrf, "next": "/"})
    assert done.status_code == 303 and done.headers["location"] == "/"
    assert "assay_session" in client.cookies


def _csrf(page: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


def test_pages_need_a_login_and_the_login_form_works(fresh: Any) -> None:
    _plane, client, tokens = fresh
    refused = client.get("/datasets/payments.trades")
    assert (
        refused.status_code == 303
        and refused.headers["location"] == "/login?next=%2Fdatasets%2Fpayments.trades"
    )
    form = client.get("/login")
    bad = client.post("/login", data={"token": "assay_nope", "csrf_token": _csrf(form.text)})
    assert bad.status_code == 401 and "not valid" in bad.text
    no_csrf = client.post("/login", data={"token": tokens["viewer"]})
    assert no_csrf.status_code == 403
    _login(client, tokens["viewer"])
    page = client.get("/datasets/payments.trades")
    assert page.status_code == 200 and "payments.trades" in page.text
    assert "Add a check" not in page.text  # a viewer is not offered what it may not do
    elsewhere = client.post(
        "/login",
        data={
            "token": tokens["viewer"],
            "csrf_token": _csrf(client.get("/login").text),
            "next": "//evil.example/x",
        },
    )
    assert elsewhere.headers["location"] == "/"


def test_a_write_with_the_session_cookie_needs_its_csrf_token(fresh: Any) -> None:
    _plane, client, tokens = fresh
    _login(client, tokens["author"])
    incidents = client.get("/api/v1/incidents").json()["items"]
    target = incidents[0]["id"]
    # the API with the cookie and no token: refused, the incident untouched
    assert client.post(f"/api/v1/incidents/{target}/ack").status_code == 403
    page = client.get(f"/incidents/{target}")
    assert client.post(f"/incidents/{target}/ack", data={}).status_code == 403
    assert client.post(f"/incidents/{target}/ack", data={"csrf_token": "forged"}).status_code == 403
    assert client.get(f"/api/v1/incidents/{target}").json()["state"] == "open"
    done = client.post(f"/incidents/{target}/ack", data={"csrf_token": _csrf(page.text)})
    assert done.status_code == 303
    assert client.get(f"/api/v1/incidents/{target}").json()["state"] == "acknowledged"
    header = client.post(
        f"/api/v1/incidents/{target}/mute", json={"hours": 2}, headers={"x-csrf-token": _csrf(page.text)}
    )
    assert header.status_code == 200


def test_a_one_time_login_link_works_once(fresh: Any) -> None:
    plane, client, _tokens = fresh
    code = plane.store.login_code("admin", by="tests")
    first = client.get(f"/login?token={code}")
    assert first.status_code == 303 and "assay_session" in first.headers["set-cookie"]
    assert (
        "httponly" in first.headers["set-cookie"].lower()
        and "samesite=lax" in first.headers["set-cookie"].lower()
    )
    client.cookies.clear()
    second = client.get(f"/login?token={code}")
    assert second.status_code == 400 and "used already" in second.text


def test_a_viewer_is_refused_a_page_write(fresh: Any) -> None:
    _plane, client, tokens = fresh
    _login(client, tokens["viewer"])
    page = client.get("/decisions")
    assert ">Accept</button>" not in page.text
    decision = client.get("/api/v1/decisions", params={"dataset": "vendor_trades"}).json()["items"][0]
    refused = client.post(f"/decisions/{decision['id']}/accept", data={"csrf_token": _csrf(page.text)})
    assert refused.status_code == 403 and "needs the author role" in refused.text


def test_logout_ends_the_session(fresh: Any) -> None:
    _plane, client, tokens = fresh
    _login(client, tokens["viewer"])
    page = client.get("/")
    cookie = client.cookies["assay_session"]
    assert client.post("/logout", data={"csrf_token": _csrf(page.text)}).status_code == 303
    client.cookies.set("assay_session", cookie)  # an old cookie no longer opens a session
    assert client.get("/").status_code == 303


def test_pages_send_a_strict_content_security_policy(fresh: Any) -> None:
    _plane, client, tokens = fresh
    _login(client, tokens["viewer"])
    page = client.get("/")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    assert "style=" not in page.text and "<script>" not in page.text  # nothing inline to allow
    assert client.get("/static/../assay.db").status_code == 404
    assert client.get("/static/%2e%2e/%2e%2e/assay.db").status_code == 404


def test_a_dataset_whose_name_cannot_name_a_file_is_still_shown(fresh: Any) -> None:
    plane, client, tokens = fresh
    plane.store.ensure_dataset("sales / EU (raw)")
    api = Api(client, tokens["author"])
    assert api.get("/datasets/sales%20%2F%20EU%20(raw)").status_code == 404  # a slash never reaches a route
    plane.store.ensure_dataset("sales EU (raw)")
    found = api.get("/datasets/sales%20EU%20(raw)")
    assert found.status_code == 200 and found.json()["name"] == "sales EU (raw)"
    # but no document file is made from it
    draft = {"expect": "id: rows\nrule: RowCount > 0\n", "source": "{path: x.csv}"}
    refused = api.post("/datasets/sales%20EU%20(raw)/checks/preview", draft)
    assert refused.status_code == 400 and "cannot name a document file" in refused.json()["error"]


def test_a_classification_is_proposed_shown_and_accepted_on_the_web(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A column of e-mail addresses (docs/privacy.md "Suggested classifications"): its proposal's
    page says what accepting does and the threshold the proposal was mined with (kept in its
    evidence, here not the default 90 %), and accepting it through the API classifies the column."""
    from fastapi.testclient import TestClient

    from _invoke import assay
    from assay.platform.proposals import propose
    from assay.platform.proposals.kinds import classify

    monkeypatch.setattr(classify, "THRESHOLD", 0.85)
    from assay.web.app import create_app

    root = tmp_path / "ws"
    (root / "checks").mkdir(parents=True)
    (root / "checks" / "people.yaml").write_text(
        "apiVersion: assay/v1\nkind: DatasetChecks\n"
        'dataset: {name: crm.people, source: {path: "../people.csv"}}\n'
        "profiles:\n  - id: daily\n    metrics: [row_count]\n"
    )
    lines = ["id,contact,city", *(f"{i},p{i}@mail.example,city{i % 4}" for i in range(30))]
    (root / "people.csv").write_text("\n".join(lines) + "\n")
    profiled = assay(
        "profile", str(root / "people.csv"), "--dataset", "crm.people", "--load-date", "2026-11-30",
        "--workspace", str(root),
    )  # fmt: skip
    assert profiled == 0
    plane = open_plane(root)
    try:
        [proposal] = propose("crm.people", store=plane.store, workspace=root).proposals
        assert proposal.kind == "classify"
        tokens = users_of(plane)
        with TestClient(create_app(plane=plane), follow_redirects=False) as client:
            author = Api(client, tokens["author"])
            listed = client.get("/proposals", headers=author.headers)
            assert listed.status_code == 200 and "classify contact as pii" in listed.text
            shown = client.get(f"/proposals/{proposal.id}", headers=author.headers)
            assert shown.status_code == 200
            assert "Accept (classify)" in shown.text and "The classification" in shown.text
            assert "under 85 % of the sampled values on 0 of 1 stored load(s)" in shown.text
            assert "@mail.example" not in listed.text + shown.text  # the evidence holds no value
            viewer = Api(client, tokens["viewer"])
            assert viewer.post(f"/proposals/{proposal.id}/accept").status_code == 403
            accepted = author.post(f"/proposals/{proposal.id}/accept").json()
            assert accepted["state"] == "accepted"
    finally:
        plane.close()
    document = yaml.safe_load((root / "checks" / "people.yaml").read_text())
    assert document["dataset"]["classified"] == {"pii": ["contact"]}
