"""The control plane on a PostgreSQL metric store (a real server the tests start): the same
reads and writes as on SQLite, each of the web's own queries run by PostgreSQL."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from fastapi.testclient import TestClient

from _invoke import assay
from assay.demo import trades
from assay.web.app import create_app
from assay.web.plane import Plane, Settings
from pgserver import postgres_server, postgres_url  # noqa: F401
from web.conftest import Api, users_of

DAYS = 7


def test_the_api_on_a_postgresql_store(tmp_path: Path, postgres_url: str) -> None:  # noqa: F811
    trades.generate(tmp_path, DAYS)
    for day in trades.days(DAYS):
        done = assay(
            "check", "run", str(tmp_path / "checks" / "trades.yaml"), "--at", str(day),
            "--now", trades.clock(day).isoformat(), "--workspace", str(tmp_path), "--store", postgres_url,
        )  # fmt: skip
        assert done == 0
    last = trades.clock(trades.days(DAYS)[-1])
    plane = Plane(Settings(tmp_path, store_url=postgres_url, now=datetime.fromisoformat(last.isoformat())))
    tokens = users_of(plane)
    with TestClient(create_app(plane=plane)) as client:
        api = Api(client, tokens["author"])
        [entry] = api.get("/catalog").json()["items"]
        assert entry["name"] == "payments.trades" and entry["last_run"]["kind"] == "check"
        assert entry["freshness"]["last_load"] == str(trades.days(DAYS)[-1])
        quality = api.get("/datasets/payments.trades/quality").json()
        every = {e["id"]: e for d in quality["dimensions"] for e in d["expectations"]}
        assert len(every["total-volume"]["strip"]) == DAYS
        series = api.get("/datasets/payments.trades/expectations/region-volume", group="region=EU").json()
        assert len(series["series"]) == DAYS and series["group"] == {"region": "EU"}
        runs = api.get("/runs", kind="check").json()
        assert runs["total"] == DAYS and runs["items"][0]["stages"][-1] == "notified"
        assert api.get("/gate/runs", contributor="BANK_A").json()["total"] == 0
        draft = {"expect": "id: some-rows\nmetric: daily.row_count\nexpect: '> 0'\n"}
        dry = api.post("/datasets/payments.trades/checks/dry-run", draft).json()
        assert dry["latest"]["outcome"] == "passed" and dry["backtest"]["loads"] == DAYS - 1
        review = api.post("/datasets/payments.trades/checks/preview", draft).json()
        assert (
            api.post("/datasets/payments.trades/checks", {**draft, "base": review["base"]}).status_code == 201
        )
        assert api.get("/audit").json()["items"][0]["action"] == "check.add"
    plane.close()
