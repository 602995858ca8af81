"""A person's action writes exactly one audit row, whether it comes from the CLI or from the web:
the platform service that performs it writes the row (issue 29). On SQLite and on PostgreSQL
(a real server the tests start); the records acted on are made through the store."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from _invoke import assay
from assay.store import MetricStore
from assay.store.incidents import IncidentRecord
from assay.web.app import create_app
from assay.web.plane import Plane, Settings
from pgserver import postgres_server, postgres_url  # noqa: F401
from web.conftest import Api, users_of

AT = datetime(2026, 11, 30, 6, tzinfo=UTC)
DOCUMENT = """apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: shop.orders, source: {path: "../data/*.csv"}}
profiles:
  - {id: daily, metrics: [row_count]}
expectations:
  - {id: some-rows, metric: daily.row_count, expect: "> 0"}
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str | None, MetricStore]]:
    """A workspace with a check document, and its store (its file, or a PostgreSQL database)."""
    url = request.getfixturevalue("postgres_url") if request.param == "postgresql" else None
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "orders.yaml").write_text(DOCUMENT)
    with MetricStore.open(url, workspace=tmp_path) as store:
        yield tmp_path, url, store


def _incident(store: MetricStore) -> str:
    """An open incident of an expectation of its own (one unresolved incident per key)."""
    found = IncidentRecord(
        str(uuid.uuid4()), "shop.orders", "volume", uuid.uuid4().hex, None, "open", "error", None, AT, AT
    )
    store.save_incident(found, new=True)
    return found.id


def _proposal(store: MetricStore, n: int) -> str:
    pid = uuid.uuid4().hex
    expectation = {"id": f"proposed-{n}", "metric": "daily.row_count", "expect": f"> {n}"}
    store.save_proposal(
        "shop.orders", id=pid, kind="volume", target=f"t{n}", evidence_hash="h", expectation=expectation,
        requires=None, evidence={}, backtest=None, dry_run=None, at=AT,
    )  # fmt: skip
    return pid


def _rows(store: MetricStore, target: str) -> list[tuple[str, str]]:
    rows, _ = store.audit_trail(limit=1000)
    return [(r.action, r.by) for r in rows if r.target == target]


def test_each_action_from_the_cli_and_the_web_writes_one_audit_row(world: Any) -> None:
    root, url, store = world
    cli = ["--workspace", str(root), *(["--store", url] if url else [])]
    web: dict[str, str] = {}
    targets: list[tuple[str, str, str]] = []  # (target, action, by)

    # from the CLI, as --by
    acked, resolved, muted = _incident(store), _incident(store), _incident(store)
    assert assay("incidents", "ack", acked, "--by", "ana", *cli) == 0
    assert assay("incidents", "resolve", resolved, "--by", "ana", "--cause", "real_issue", *cli) == 0
    assert assay("incidents", "mute", muted, "--until", "2099-01-01", "--by", "ana", *cli) == 0
    decided = store.open_decision("shop.orders", "venue", "XNEW", 3, None)
    assert assay("decisions", "accept", str(decided), "--by", "ana", *cli) == 0
    refused = store.open_decision("shop.orders", "venue", "XOLD", 3, None)
    assert assay("decisions", "reject", str(refused), "--by", "ana", *cli) == 0
    taken, dropped = _proposal(store, 1), _proposal(store, 2)
    assert assay("proposals", "accept", taken, "--by", "ana", *cli) == 0
    assert assay("proposals", "reject", dropped, "--by", "ana", "--why", "noise", *cli) == 0
    targets += [
        (acked, "incident.ack", "ana"), (resolved, "incident.resolve", "ana"),
        (muted, "incident.mute", "ana"), (str(decided), "decision.accept", "ana"),
        (str(refused), "decision.reject", "ana"), (taken, "proposal.accept", "ana"),
        (dropped, "proposal.reject", "ana"),
    ]  # fmt: skip

    # from the web, as the signed-in user
    web_ids = {"ack": _incident(store), "resolve": _incident(store), "mute": _incident(store)}
    web_decided = store.open_decision("shop.orders", "venue", "XWEB", 3, None)
    web_taken, web_dropped = _proposal(store, 3), _proposal(store, 4)
    plane = Plane(Settings(root, store_url=url, now=AT))
    try:
        web = users_of(plane)
        with TestClient(create_app(plane=plane)) as client:
            api = Api(client, web["author"])
            assert api.post(f"/incidents/{web_ids['ack']}/ack").status_code == 200
            assert (
                api.post(f"/incidents/{web_ids['resolve']}/resolve", {"cause": "false_alarm"}).status_code
                == 200
            )
            assert api.post(f"/incidents/{web_ids['mute']}/mute", {"hours": 2}).status_code == 200
            assert api.post(f"/decisions/{web_decided}/reject").status_code == 200
            assert api.post(f"/proposals/{web_taken}/accept").status_code == 200
            assert api.post(f"/proposals/{web_dropped}/reject", {"why": "noise"}).status_code == 200
    finally:
        plane.close()
    targets += [
        (web_ids["ack"], "incident.ack", "author"), (web_ids["resolve"], "incident.resolve", "author"),
        (web_ids["mute"], "incident.mute", "author"), (str(web_decided), "decision.reject", "author"),
        (web_taken, "proposal.accept", "author"), (web_dropped, "proposal.reject", "author"),
    ]  # fmt: skip

    assert {t: _rows(store, t) for t, _, _ in targets} == {t: [(a, by)] for t, a, by in targets}
    [accepted] = [r for r in store.audit_trail(limit=1000)[0] if r.target == taken]
    assert accepted.dataset == "shop.orders" and accepted.detail["document"] == "checks/orders.yaml"
    assert "proposed-1" in accepted.detail["diff"]
