"""Incidents, routing and the outbox, end to end: check runs of a small document day after day
(``assay check run`` as a user runs it), then delivery passes (``assay notify deliver``) to a
real local HTTP receiver and a real local SMTP server. Each test states what the receivers got:
one message per incident (not per run), on escalation, on resolve; errors to their own routes,
once; warnings in one digest per day; a channel that is down retried with the same id."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from _demo_workspace import cli_env
from _invoke import assay, completed
from _receivers import Mailbox, Receiver
from assay.store import MetricStore

DOCUMENT = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: shop.orders
  source: {path: "../data/*.csv"}
  owners: {team: shop-data}
  author: ana@example.com
  tags: [domain:shop]
  tier: 1
# the drift monitor judges each slice too (docs/checks.md): its volume and null-rate bands would
# open incidents of their own beside the document's volume and emails, which these tests follow
monitor: {checks: {volume: false, null_rate: false}}
profiles:
  - id: daily
    slice: {column: day}
    metrics: [row_count, {null_rate: [email]}]
expectations:
  - {id: volume, metric: daily.row_count, expect: "> 5", severity: error}
  - {id: emails, metric: daily.null_rate(email), expect: "<= 0.1", severity: EMAILS}
"""
CONTRACT = {
    "id", "kind", "dataset", "expectation", "group", "severity", "outcome", "observed", "expected",
    "message", "run_id", "incident_id", "sent_at",
}  # fmt: skip


class World:
    """A workspace with the document, its assay.yaml and a CSV per day."""

    def __init__(self, root: Path, receiver: Receiver, smtp_port: int, *, emails: str = "warning") -> None:
        self.root = root
        self.receiver = receiver
        (root / "checks").mkdir(parents=True)
        (root / "data").mkdir()
        self.document = root / "checks" / "orders.yaml"
        self.document.write_text(DOCUMENT.replace("EMAILS", emails))
        url = receiver.url
        (root / "assay.yaml").write_text(
            f"""channels:
  owners:   {{type: webhook, url: "{url}/owners"}}
  authors:  {{type: webhook, url: "{url}/authors"}}
  platform: {{type: slack, url: "{url}/platform"}}
  team:     {{type: email, to: ["dq@example.com"]}}
smtp: {{host: 127.0.0.1, port: {smtp_port}, starttls: false, from: "assay@example.com", user: null,
       password_env: ASSAY_SMTP_PASSWORD}}
routes:
  - {{when: {{outcome: config_error}}, to: [authors]}}
  - {{when: {{outcome: system_error}}, to: [platform]}}
  - {{when: {{outcome: failed, severity: [critical, error]}}, to: [owners, team]}}
  - {{when: {{outcome: failed, severity: warning}}, to: [owners], digest: daily}}
"""
        )

    def day(self, day: int, rows: int = 10, null_emails: int = 0) -> str:
        """Write day ``day`` of November 2026: ``rows`` orders, ``null_emails`` without e-mail."""
        at = f"2026-11-{day:02d}"
        lines = [f"{at},{'' if i < null_emails else i + 0.5}" for i in range(rows)]  # blank: NULL
        (self.root / "data" / f"{at}.csv").write_text("day,email\n" + "\n".join(lines) + "\n")
        return at

    def check(self, capsys: pytest.CaptureFixture[str], day: int, **data: int) -> dict[str, Any]:
        at = self.day(day, **data)
        code = assay(
            "check", "run", str(self.document), "--at", at, "--now", f"{at}T07:00:00Z",
            "--workspace", str(self.root), "--json", "-",
        )  # fmt: skip
        printed = capsys.readouterr().out
        assert code in (0, 1), printed
        result: dict[str, Any] = json.loads(printed)
        return result

    def deliver(self, capsys: pytest.CaptureFixture[str], now: str | None) -> dict[str, Any]:
        """One delivery pass at ``now`` (None: the wall clock, as without --now)."""
        when = ["--now", now] if now else []
        code = assay("notify", "deliver", *when, "--workspace", str(self.root), "--json")
        result: dict[str, Any] = json.loads(capsys.readouterr().out)
        assert code == (1 if result["failed"] else 0)
        return result

    def got(self, path: str) -> list[dict[str, Any]]:
        return [r["body"] for r in self.receiver.requests if r["path"] == path]

    def incidents(self) -> list[Any]:
        with MetricStore.open(workspace=self.root) as store:
            return store.incidents()


@pytest.fixture
def world(tmp_path: Path, receiver: Receiver, mailbox: tuple[Mailbox, int]) -> World:
    return World(tmp_path / "ws", receiver, mailbox[1])


def test_one_message_per_incident_not_per_run_then_resolved_after_two_passes(
    world: World, mailbox: tuple[Mailbox, int], capsys: pytest.CaptureFixture[str]
) -> None:
    box, _ = mailbox
    for day in (1, 2):
        world.check(capsys, day)
    world.deliver(capsys, "2026-11-02T08:00:00Z")
    assert world.got("/owners") == []  # passing days: nothing for the owners
    # three failing days in a row: one incident, one message to each of its channels
    for day in (3, 4, 5):
        run = world.check(capsys, day, rows=2)
        assert [o["outcome"] for o in run["outcomes"] if o["expectation"] == "volume"] == ["failed"]
        world.deliver(capsys, f"2026-11-{day:02d}T08:00:00Z")
    [opened] = world.got("/owners")
    assert set(opened) == CONTRACT
    assert (opened["kind"], opened["dataset"], opened["expectation"], opened["severity"]) == (
        "incident_opened", "shop.orders", "volume", "error",
    )  # fmt: skip
    assert opened["outcome"] == "failed" and opened["observed"] == 2
    [request] = [r for r in world.receiver.requests if r["path"] == "/owners"]
    assert request["headers"]["Idempotency-Key"] == opened["id"]
    [mail] = box.messages
    assert mail["Message-ID"] == f"<{opened['id']}@assay>" and "incident opened" in mail["Subject"]
    # one passing day is not enough; the second resolves it, and the owners hear it once
    world.check(capsys, 6)
    world.deliver(capsys, "2026-11-06T08:00:00Z")
    assert len(world.got("/owners")) == 1
    world.check(capsys, 7)
    world.deliver(capsys, "2026-11-07T08:00:00Z")
    kinds = [b["kind"] for b in world.got("/owners")]
    assert kinds == ["incident_opened", "incident_resolved"]
    resolved = world.got("/owners")[1]
    assert resolved["incident_id"] == opened["incident_id"] and resolved["outcome"] == "passed"
    assert len(box.messages) == 2
    [incident] = world.incidents()
    assert (incident.state, incident.failures, incident.passes) == ("resolved", 3, 2)
    # a failure within 24 hours of the resolution reopens the same incident
    world.check(capsys, 8, rows=1)
    world.deliver(capsys, "2026-11-08T08:00:00Z")
    reopened = world.got("/owners")[2]
    assert (reopened["kind"], reopened["incident_id"]) == ("incident_opened", opened["incident_id"])
    # every delivery carried its own id, once
    ids = Counter(b["id"] for b in world.got("/owners"))
    assert len(ids) == 3 and set(ids.values()) == {1}


def test_a_failure_long_after_the_resolution_opens_a_new_incident(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    world.check(capsys, 1, rows=2)
    world.check(capsys, 2)
    world.check(capsys, 3)  # resolved on the 3rd
    world.check(capsys, 5, rows=2)  # 48 hours later
    first, second = sorted(world.incidents(), key=lambda i: i.opened_at)
    assert first.state == "resolved" and second.state == "open" and first.id != second.id
    world.deliver(capsys, "2026-11-05T08:00:00Z")
    assert [b["kind"] for b in world.got("/owners")] == [
        "incident_opened",
        "incident_resolved",
        "incident_opened",
    ]


def test_a_config_error_goes_to_the_author_once_per_distinct_error(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    # `refs` reads null_rate(ref), and the files have no column ref: a config error every day
    text = world.document.read_text().replace("{null_rate: [email]}", "{null_rate: [email, ref]}")
    text += '  - {id: refs, metric: daily.null_rate(ref), expect: "<= 0.1", severity: error}\n'
    world.document.write_text(text)
    for day in (1, 2, 3):
        run = world.check(capsys, day)
        [refs] = [o for o in run["outcomes"] if o["expectation"] == "refs"]
        assert refs["outcome"] == "config_error"
    world.deliver(capsys, "2026-11-03T08:00:00Z")
    [sent] = world.got("/authors")
    assert (sent["kind"], sent["expectation"], sent["outcome"]) == ("config_error", "refs", "config_error")
    assert world.got("/owners") == [] and world.got("/platform") == []  # not a statement about the data
    assert world.incidents() == []
    # a different mistake of the same expectation is a new error: sent once more
    world.document.write_text(
        world.document.read_text()
        .replace("null_rate: [email, ref]", "null_rate: [email, reference]")
        .replace("daily.null_rate(ref)", "daily.null_rate(reference)")
    )
    world.check(capsys, 4)
    world.check(capsys, 5)
    world.deliver(capsys, "2026-11-05T08:00:00Z")
    assert [b["message"] for b in world.got("/authors")][1].count("reference") >= 1
    assert len(world.got("/authors")) == 2


def test_warnings_go_into_one_digest_per_channel_per_day(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    config = world.root / "assay.yaml"  # the warnings' digest also to the Slack channel
    config.write_text(
        config.read_text().replace("to: [owners], digest: daily", "to: [owners, platform], digest: daily")
    )
    world.check(capsys, 1, null_emails=3)  # 30 % without e-mail: the warning `emails` fails
    world.check(capsys, 1, null_emails=3)  # the same day again changes no incident
    pass_ = world.deliver(capsys, "2026-11-01T12:00:00Z")
    assert pass_["digests"] == 0 and world.got("/owners") == []  # the day is not over
    with MetricStore.open(workspace=world.root) as store:
        assert [r.status for r in store.outbox() if r.channel == "owners"] == ["held"]
    pass_ = world.deliver(capsys, "2026-11-02T00:05:00Z")
    assert pass_["digests"] == 2  # one per channel: owners and platform
    [digest] = world.got("/owners")
    assert digest["kind"] == "digest" and [i["kind"] for i in digest["items"]] == ["incident_opened"]
    assert digest["items"][0]["expectation"] == "emails" and "2026-11-01" in digest["message"]
    # Slack's digest lists the day's notifications in words
    [slack] = world.got("/platform")
    listed = [b["text"]["text"] for b in slack["blocks"] if b.get("text", {}).get("text", "").startswith("•")]
    assert listed and "incident_opened shop.orders emails" in listed[0]
    # the next pass makes no second digest of the same day
    assert world.deliver(capsys, "2026-11-02T01:00:00Z")["digests"] == 0
    assert len(world.got("/owners")) == 1
    # a backfill of that day held after its digest went: a digest of its own, not lost
    with MetricStore.open(workspace=world.root) as store:
        late = {
            "id": "00000000-0000-4000-8000-00000000late"[:36],
            "kind": "incident_opened",
            "expectation": "late",
        }
        from datetime import UTC, date, datetime

        store.enqueue(
            late, [("owners", "daily")], now=datetime(2026, 11, 2, 2, tzinfo=UTC), day=date(2026, 11, 1)
        )
    assert world.deliver(capsys, "2026-11-02T03:00:00Z")["digests"] == 1
    last = world.got("/owners")[-1]
    assert last["kind"] == "digest" and [i["expectation"] for i in last["items"]] == ["late"]
    assert last["id"] != digest["id"]


def test_escalation_and_a_moving_value_are_told_and_a_repeat_is_not(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    world.check(capsys, 1, null_emails=2)  # 20 %: a warning, held for the digest
    world.check(capsys, 2, null_emails=2)  # the same value: a repeat, nothing new
    world.document.write_text(world.document.read_text().replace("severity: warning", "severity: critical"))
    world.check(capsys, 3, null_emails=2)  # now critical: escalated, at once to owners and team
    world.check(capsys, 4, null_emails=2)  # a repeat
    world.check(capsys, 5, null_emails=4)  # 20 % → 40 %: moved by more than half
    world.check(capsys, 6, null_emails=5)  # 40 % → 50 %: moved by a quarter only
    world.deliver(capsys, "2026-11-07T08:00:00Z")
    got = world.got("/owners")
    immediate = [(b["kind"], b["severity"], b["observed"]) for b in got if b["kind"] != "digest"]
    assert immediate == [("incident_escalated", "critical", 0.2), ("incident_escalated", "critical", 0.4)]
    [digest] = [b for b in got if b["kind"] == "digest"]
    assert [(i["kind"], i["severity"]) for i in digest["items"]] == [("incident_opened", "warning")]
    [incident] = world.incidents()
    assert incident.failures == 6 and incident.severity == "critical"
    with MetricStore.open(workspace=world.root) as store:
        events = [e["kind"] for e in store.incident(incident.id).events]
    assert events == ["opened", "failed", "escalated", "failed", "escalated", "failed"]


def test_a_channel_down_for_a_while_is_retried_with_the_same_id_and_holds_up_no_other(
    world: World, mailbox: tuple[Mailbox, int], capsys: pytest.CaptureFixture[str]
) -> None:
    box, _ = mailbox
    world.receiver.script["/owners"] = [503, 503, 200]
    world.check(capsys, 1, rows=2)
    first = world.deliver(capsys, "2026-11-01T08:00:00Z")
    assert [(d["channel"], d["status"]) for d in first["deliveries"]] == [
        ("owners", "retrying"),
        ("team", "sent"),
    ]
    assert first["channels_down"] == ["owners"] and len(box.messages) == 1
    # not due yet: the backoff is 30 s after the first failure, 60 s after the second
    assert world.deliver(capsys, "2026-11-01T08:00:10Z")["deliveries"] == []
    assert world.deliver(capsys, "2026-11-01T08:00:31Z")["deliveries"][0]["status"] == "retrying"
    assert world.deliver(capsys, "2026-11-01T08:01:00Z")["deliveries"] == []
    last = world.deliver(capsys, "2026-11-01T08:01:32Z")
    assert [(d["channel"], d["status"], d["attempts"]) for d in last["deliveries"]] == [("owners", "sent", 3)]
    keys = [r["headers"]["Idempotency-Key"] for r in world.receiver.requests if r["path"] == "/owners"]
    assert len(keys) == 3 and len(set(keys)) == 1
    code = assay("notify", "outbox", "--workspace", str(world.root), "--json")
    outbox = json.loads(capsys.readouterr().out)["notifications"]
    assert code == 0 and {(n["channel"], n["status"], n["attempts"]) for n in outbox} == {
        ("owners", "sent", 3), ("team", "sent", 1),
    }  # fmt: skip
    assert set(outbox[0]) >= {"id", "kind", "channel", "status", "attempts", "created_at", "sent_at"}


def test_a_refusing_channel_fails_for_good_and_says_why(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    world.receiver.script["/owners"] = [410]
    world.check(capsys, 1, rows=2)
    done = world.deliver(capsys, "2026-11-01T08:00:00Z")
    [owners] = [d for d in done["deliveries"] if d["channel"] == "owners"]
    assert owners["status"] == "failed" and "HTTP 410" in owners["error"]
    assert world.deliver(capsys, "2026-11-02T08:00:00Z")["deliveries"] == []  # never retried


def test_acknowledge_mute_and_resolve_by_hand(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.check(capsys, 1)
    world.check(capsys, 2)
    world.check(capsys, 3, rows=2)
    [incident] = world.incidents()
    short = incident.id[:8]
    assert assay("incidents", "ack", short, "--by", "ana", "--workspace", str(world.root), "--json") == 0
    assert json.loads(capsys.readouterr().out)["incident"]["state"] == "acknowledged"
    assert (
        assay("incidents", "resolve", short, "--by", "ana", "--cause", "oops", "--workspace", str(world.root))
        == 2
    )
    assert "unknown cause 'oops'" in capsys.readouterr().err
    code = assay(
        "incidents", "resolve", short, "--by", "ana", "--cause", "false_alarm", "--note", "a test load",
        "--workspace", str(world.root), "--json",
    )  # fmt: skip
    shown = json.loads(capsys.readouterr().out)["incident"]
    assert code == 0 and (shown["state"], shown["cause"]) == ("resolved", "false_alarm")
    assert [e["kind"] for e in shown["events"]] == ["opened", "acknowledged", "resolved"]
    resolved = shown["events"][-1]["detail"]
    assert (resolved["left_out_of_baselines"], resolved["accepted_into_baselines"]) == (0, 1)
    # the owners heard of the opening and of the resolution (done now, by the wall clock), with
    # the cause in words
    world.deliver(capsys, None)
    messages = [b["message"] for b in world.got("/owners")]
    assert len(messages) == 2 and "resolved by ana: false alarm (a test load)" in messages[1]
    # the failing load was held out of the history later judgements read; a false alarm was a
    # normal load after all: it is back in
    with MetricStore.open(workspace=world.root) as store:
        from datetime import UTC, datetime

        series = store.metric_series(
            "shop.orders", partition="daily", names={"row_count"}, before=datetime(2026, 11, 4, tzinfo=UTC)
        )
    assert [v for _, v in series[("Dataset", "*", "row_count")]] == [2.0, 10.0, 10.0]
    # nothing left to resolve
    assert (
        assay(
            "incidents",
            "resolve",
            short,
            "--by",
            "ana",
            "--cause",
            "real_issue",
            "--workspace",
            str(world.root),
        )
        == 2
    )
    assert "is resolved" in capsys.readouterr().err


def test_a_new_normal_restarts_the_baselines_at_the_incidents_first_failure(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    for day in (1, 2, 3):
        world.check(capsys, day)
    world.check(capsys, 4, rows=3)  # fails: the table got smaller, and that is the new normal
    world.check(capsys, 5, rows=3)
    [incident] = world.incidents()
    code = assay(
        "incidents", "resolve", incident.id, "--by", "ana", "--cause", "new_normal",
        "--workspace", str(world.root), "--json",
    )  # fmt: skip
    shown = json.loads(capsys.readouterr().out)["incident"]
    assert code == 0 and shown["events"][-1]["detail"]["left_out_of_baselines"] == 3  # days 1 to 3
    from datetime import UTC, datetime

    with MetricStore.open(workspace=world.root) as store:
        series = store.metric_series(
            "shop.orders", partition="daily", names={"row_count"}, before=datetime(2026, 11, 6, tzinfo=UTC)
        )
    assert [v for _, v in series[("Dataset", "*", "row_count")]] == [3.0, 3.0]  # the history starts again


def test_a_muted_incident_counts_and_tells_no_one_until_its_time(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    world.check(capsys, 1, null_emails=2)
    [incident] = world.incidents()
    code = assay(
        "incidents",
        "mute",
        incident.id,
        "--until",
        "2099-01-01",
        "--by",
        "ana",
        "--workspace",
        str(world.root),
    )
    assert code == 0
    capsys.readouterr()
    world.document.write_text(world.document.read_text().replace("severity: warning", "severity: critical"))
    world.check(capsys, 2, null_emails=5)  # escalated, but muted
    world.check(capsys, 3)
    world.check(capsys, 4)  # resolved: a resolution is always told
    world.deliver(capsys, "2026-11-05T08:00:00Z")
    kinds = [b["kind"] for b in world.got("/owners")]
    assert "incident_escalated" not in kinds and kinds.count("incident_resolved") == 1
    with MetricStore.open(workspace=world.root) as store:
        events = [e["kind"] for e in store.incident(incident.id).events]
    assert events == ["opened", "muted", "escalated", "passed", "resolved"]


def test_advisory_expectations_and_dry_runs_never_notify(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    world.document.write_text(
        world.document.read_text().replace("severity: error}", "severity: error, mode: advisory}")
    )
    world.check(capsys, 1, rows=2)  # volume and refs fail or err, both advisory now
    world.document.write_text(DOCUMENT.replace("EMAILS", "warning"))
    at = world.day(2, rows=2)
    code = assay(
        "check",
        "run",
        str(world.document),
        "--at",
        at,
        "--dry-run",
        "--workspace",
        str(world.root),
        "--json",
        "-",
    )
    assert code in (0, 1) and json.loads(capsys.readouterr().out)["dry_run"] is True
    world.deliver(capsys, "2026-11-03T08:00:00Z")
    assert world.receiver.requests == [] and world.incidents() == []


def test_routes_match_dataset_tag_tier_and_expectation_and_continue() -> None:
    from assay.platform.notify import Facts, Route, route

    routes = [
        Route.model_validate(r)
        for r in [
            {"when": {"tag": "domain:shop", "tier": [0, 1]}, "to": "shop", "continue": True},
            {"when": {"dataset": "shop.*", "expectation": "vol*"}, "to": ["owners"]},
            {"when": {"outcome": "failed"}, "to": "fallback"},
        ]
    ]
    shop = Facts("failed", "error", "shop.orders", "volume", ("domain:shop",), 1)
    assert route(routes, shop) == [("shop", None), ("owners", None)]
    other = Facts("failed", "error", "shop.orders", "emails", ("domain:shop",), 3)
    assert route(routes, other) == [("fallback", None)]


def test_a_route_to_an_undeclared_channel_is_a_clear_mistake(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    config = world.root / "assay.yaml"
    config.write_text(config.read_text() + "  - {when: {outcome: failed}, to: [pager]}\n")
    world.day(1)
    code = assay("check", "run", str(world.document), "--at", "2026-11-01", "--workspace", str(world.root))
    assert code == 2 and "undeclared channel(s) pager" in capsys.readouterr().err


# --- killed at every stage boundary --------------------------------------------------------------

CHECK_POINTS = ("after-start", "after-measure", "before-commit", "after-settle", "after-summary")


def _killed(world: World, *args: str, crash: str) -> subprocess.CompletedProcess[str]:
    """``assay ARGS...`` killed at ``crash``: a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "assay", *args, "--workspace", str(world.root)],
        capture_output=True, text=True, env=cli_env(ASSAY_CRASH_AT=crash), timeout=120, check=False,
    )  # fmt: skip


def _cli(world: World, *args: str) -> subprocess.CompletedProcess[str]:
    """``assay ARGS...`` not killed (the run again, the next delivery pass): in this process."""
    return completed(*args, "--workspace", str(world.root))


@pytest.mark.parametrize("point", CHECK_POINTS)
def test_a_run_killed_at_each_stage_boundary_sends_each_notification_once_and_invents_none(
    point: str, world: World, mailbox: tuple[Mailbox, int], capsys: pytest.CaptureFixture[str]
) -> None:
    box, _ = mailbox
    world.check(capsys, 1)
    world.check(capsys, 2)
    at = world.day(3, rows=2)
    run = ["check", "run", str(world.document), "--at", at, "--now", f"{at}T07:00:00Z"]
    killed = _killed(world, *run, crash=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    if point not in ("after-settle", "after-summary"):  # killed before its commit: nothing to send
        with MetricStore.open(workspace=world.root) as store:
            assert store.outbox() == [] and store.incidents() == []
        again = _cli(world, *run)
        assert again.returncode in (0, 1), again.stderr
    # the delivery pass is killed after sending, before recording: the next pass sends again
    assert (
        _killed(world, "notify", "deliver", "--now", f"{at}T08:00:00Z", crash="after-send").returncode
        == -signal.SIGKILL
    )
    done = _cli(world, "notify", "deliver", "--now", f"{at}T08:10:00Z")
    assert done.returncode == 0, done.stderr
    owners = world.got("/owners")
    assert {b["kind"] for b in owners} == {"incident_opened"} and len({b["id"] for b in owners}) == 1
    assert box.messages[0]["Message-ID"] == f"<{owners[0]['id']}@assay>"
    # a run killed before its commit is recovered by the next one as a system error, which is told
    # to its route (the platform) as a run that failed as a whole is: once
    platform = {r["headers"]["Idempotency-Key"] for r in world.receiver.requests if r["path"] == "/platform"}
    assert len(platform) == (0 if point in ("after-settle", "after-summary") else 1)
    # the first notification sent, killed before it was recorded, sent again: the same id twice
    sent = [(r["path"], r["headers"]["Idempotency-Key"]) for r in world.receiver.requests]
    sent += [("team", m["Message-ID"]) for m in box.messages]
    assert len(sent) == len(set(sent)) + 1
    with MetricStore.open(workspace=world.root) as store:
        assert {r.status for r in store.outbox()} == {"sent"}
        [incident] = store.incidents()
        assert incident.failures == 1
        # each run's stages as far as it got: the killed one's stop where it was killed
        stages = {r["state"]: r["stages"] for r in store.check_runs("shop.orders") if r["at"] == at}
        # one current load of the day: the killed run's metrics are not history (and the day's,
        # which failed, is held out of later baselines)
        from datetime import UTC, datetime

        from assay.store import MetricKey

        stored = store.history(
            "shop.orders",
            MetricKey.dataset("row_count"),
            partition="daily",
            before=datetime(2026, 11, 4, tzinfo=UTC),
        )
        series = store.metric_series(
            "shop.orders", partition="daily", names={"row_count"}, before=datetime(2026, 11, 4, tzinfo=UTC)
        )
    assert [p.value for p in stored] == [2.0, 10.0, 10.0]
    assert [v for _, v in series[("Dataset", "*", "row_count")]] == [10.0, 10.0]
    everything = ["running", "measured", "judged", "notified"]
    if point in ("after-settle", "after-summary"):  # committed: it is the day's run, delivered later
        assert stages == {"completed": everything}
    else:
        # killed right after its start record: before its first stage; then its recovery's
        # system error was delivered
        reached = {"after-start": []}.get(point, ["running", "measured"])
        assert stages == {"system_error": [*reached, "notified"], "completed": everything}


def test_two_delivery_passes_at_once_on_postgresql_send_each_notification_once(
    tmp_path: Path,
    receiver: Receiver,
    postgres_url: str,
) -> None:
    # 400 notifications in a PostgreSQL store's outbox, two `assay notify deliver` side by side:
    # each row is claimed by one of them (UPDATE … RETURNING under row locks), never both
    from datetime import UTC, datetime

    (tmp_path / "assay.yaml").write_text(
        f'channels: {{owners: {{type: webhook, url: "{receiver.url}/owners"}}}}\n'
    )
    now = datetime(2026, 11, 30, 8, tzinfo=UTC)
    with MetricStore.open(postgres_url, workspace=tmp_path) as store, store.transaction():
        for i in range(400):
            store.enqueue(
                {"id": f"00000000-0000-4000-8000-{i:012d}", "kind": "incident_opened"},
                [("owners", None)],
                now=now,
            )
    env = cli_env()
    passes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "assay",
                "notify",
                "deliver",
                "--now",
                "2026-11-30T08:00:00Z",
                "--json",
                "--workspace",
                str(tmp_path),
                "--store",
                postgres_url,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    sent = []
    for process in passes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        sent.append(json.loads(out)["sent"])
    keys = Counter(r["headers"]["Idempotency-Key"] for r in receiver.requests)
    assert sum(sent) == 400 and len(keys) == 400 and set(keys.values()) == {1}
    with MetricStore.open(postgres_url, workspace=tmp_path) as store:
        assert {r.status for r in store.outbox()} == {"sent"}
