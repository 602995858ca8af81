"""One alert per contract, with per-field attribution: check runs of an event's contracts, then
delivery passes (``assay notify deliver``) to a real local HTTP receiver. A failing contract is
one incident, so its consumer hears once of all its broken fields; a passing contract is
silent; a repeat is silent; the routes of ``assay.yaml`` send each contract where it belongs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from _invoke import assay
from _receivers import Receiver
from assay.demo.events import Breakage, feed
from assay.store import MetricStore

BROKEN_FROM = datetime(2026, 11, 11, tzinfo=UTC)
HEAD = """apiVersion: assay/v1
kind: EventContract
event: {name: trade_executed.v3, source: {path: "../events/*.jsonl"}, key: event_id,
        event_time: event_ts, ingest_time: ingested_at, payload: payload}
"""
CONTRACTS = "---\n".join(
    HEAD + body
    for body in (
        """consumer: {team: risk-analytics, tier: 0}
fields:
  venue: {non_empty: true}
  currency: {present: true, in: [USD, EUR, GBP, JPY]}
  amount: {type: decimal, range: [0, 1.0e9]}
""",
        """consumer: {team: surveillance, tier: 1}
fields:
  venue: {non_empty: {min_rate: 0.7}}
""",
        """consumer: {team: ops, tier: 2}
severity: warning
fields:
  venue: {non_empty: true}
  trade_id: {present: true}
""",
    )
)
ROUTES = """channels:
  risk:   {{type: webhook, url: "{url}/risk"}}
  owners: {{type: webhook, url: "{url}/owners"}}
routes:
  - {{when: {{expectation: "contract:risk-*"}}, to: [risk]}}
  - {{when: {{outcome: failed}}, to: [owners]}}
"""


@pytest.fixture
def world(tmp_path: Path, receiver: Receiver) -> Path:
    root = tmp_path / "ws"
    broken = [
        Breakage(BROKEN_FROM, first=0.1, last=0.1, hours=1),
        Breakage(BROKEN_FROM, field="currency", first=0.1, last=0.1, hours=1, value=None),
    ]
    feed(root / "events", start=BROKEN_FROM.date() - timedelta(days=1), days=2, per_hour=40, breakages=broken)
    (root / "checks").mkdir()
    (root / "checks" / "events.yaml").write_text(CONTRACTS)
    (root / "assay.yaml").write_text(ROUTES.format(url=receiver.url))
    return root


def _run(root: Path, at: datetime, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = assay(
        "check", "run", str(root / "checks" / "events.yaml"), "--at", at.isoformat(),
        "--now", (at + timedelta(hours=1, minutes=5)).isoformat(), "--workspace", str(root), "--json", "-",
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0, printed
    result: dict[str, Any] = json.loads(printed)
    return result


def _deliver(root: Path, at: datetime, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    now = (at + timedelta(hours=1, minutes=10)).isoformat()
    assert assay("notify", "deliver", "--now", now, "--workspace", str(root), "--json") == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def test_one_notification_per_failing_contract_naming_every_broken_field(
    world: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    for hours in (3, 2, 1):  # healthy windows: the baselines
        at = BROKEN_FROM - timedelta(hours=hours)
        result = _run(world, at, capsys)
        assert {c["consumer"]: c["outcome"] for c in result["contracts"]}["surveillance"] == "passed"
        assert {c["outcome"] for c in result["contracts"]} == {"passed"}
    _deliver(world, BROKEN_FROM - timedelta(hours=1), capsys)
    assert receiver.requests == []  # passing contracts: nothing to tell

    result = _run(world, BROKEN_FROM, capsys)
    outcomes = {c["consumer"]: c for c in result["contracts"]}
    assert {team: c["outcome"] for team, c in outcomes.items()} == {
        "risk-analytics": "failed",
        "surveillance": "passed",
        "ops": "failed",
    }
    assert result["incidents"] == {"opened": 2, "escalated": 0, "resolved": 0, "notifications": 2}
    _deliver(world, BROKEN_FROM, capsys)
    got = {r["path"]: r["body"] for r in receiver.requests}
    assert len(receiver.requests) == 2 and set(got) == {"/risk", "/owners"}
    risk, ops = got["/risk"], got["/owners"]
    assert (risk["kind"], risk["dataset"], risk["outcome"]) == (
        "incident_opened",
        "trade_executed.v3",
        "failed",
    )
    assert (ops["kind"], ops["expectation"], ops["severity"]) == (
        "incident_opened",
        "contract:ops",
        "warning",
    )
    for body, team in ((risk, "risk-analytics"), (ops, "ops")):
        broken = outcomes[team]["broken"]
        assert body["observed"] == len(broken) and body["expected"] == {"broken": broken}
        for item in broken:  # every broken field, with its observed rate and its baseline
            assert f"{item['field']}.{item['requirement']} = " in body["message"]
            assert f"baseline {item['baseline'] * 100:.4g}%" in body["message"]
    assert [(b["field"], b["requirement"]) for b in outcomes["risk-analytics"]["broken"]] == [
        ("venue", "non_empty"),
        ("currency", "present"),
    ]
    assert [b["field"] for b in outcomes["ops"]["broken"]] == ["venue"]

    # the next window fails the same way: the same incidents, nobody is told again
    receiver.requests.clear()
    again = _run(world, BROKEN_FROM + timedelta(hours=1), capsys)
    assert {c["consumer"]: c["outcome"] for c in again["contracts"]}["ops"] == "failed"
    _deliver(world, BROKEN_FROM + timedelta(hours=1), capsys)
    assert receiver.requests == []
    with MetricStore.open(workspace=world) as store:
        incidents = {i.expectation: i for i in store.incidents()}
        # the per-field outcomes are kept one by one; the incidents are one per contract
        [last] = [r for r in store.check_runs("trade_executed.v3") if r["run_id"] == again["run_id"]]
    assert set(incidents) == {"contract:risk-analytics", "contract:ops"}
    assert incidents["contract:ops"].failures == 2 and incidents["contract:ops"].dimension == "validity"
    assert len(last["outcomes"]) == len(again["outcomes"]) == 8
    assert incidents["contract:risk-analytics"].owner == "risk-analytics"  # no producer declared
