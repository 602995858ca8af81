"""Notification channels against real local receivers: an HTTP server (webhook and Slack-shaped
channels) and an SMTP server (aiosmtpd) started by the tests; ``assay notify test`` as a user runs
it. The receiver answers from a script per path (``503, 503, 200``), so retries are real requests."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from _invoke import assay
from _receivers import Mailbox, Receiver
from assay.errors import ConfigError
from assay.platform.notify import FIRST_WAIT_S, Notification, deliver, load_config

CONTRACT = {
    "id", "kind", "dataset", "expectation", "group", "severity", "outcome", "observed", "expected",
    "message", "run_id", "incident_id", "sent_at",
}  # fmt: skip


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # nothing listens there once the probe is closed


def workspace(root: Path, receiver_url: str, smtp_port: int | None = None) -> Path:
    lines = [
        "channels:",
        f'  owners:   {{type: webhook, url: "{receiver_url}/owners"}}',
        f'  platform: {{type: slack, url: "{receiver_url}/platform"}}',
        '  team:     {type: email, to: ["dq@example.com", "oncall@example.com"]}',
        f'  down:     {{type: webhook, url: "http://127.0.0.1:{_closed_port()}/x"}}',
        f"smtp: {{host: 127.0.0.1, port: {smtp_port or 25}, starttls: false, from: assay@example.com,",
        "       user: null, password_env: ASSAY_SMTP_PASSWORD}",
    ]
    root.mkdir(parents=True, exist_ok=True)
    (root / "assay.yaml").write_text("\n".join(lines) + "\n")
    return root


FAILED = Notification(
    id="n-1", kind="incident_opened", dataset="payments.trades", expectation="region-volume",
    group={"region": "EU"}, severity="error", outcome="failed", observed=119.0,
    expected={"low": 171.7, "high": 318.9}, message="row_count = 119, expected between 171.7 and 318.9",
    run_id="r-1", incident_id="i-1",
)  # fmt: skip


def test_a_webhook_receives_the_payload_with_its_idempotency_key(
    tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    config = load_config(workspace(tmp_path, receiver.url))
    done = deliver("owners", config.channel("owners"), FAILED, smtp=config.smtp)
    assert (done.status, done.attempts) == ("sent", 1)
    [request] = receiver.requests
    assert request["path"] == "/owners" and set(request["body"]) == CONTRACT
    assert request["headers"]["Idempotency-Key"] == "n-1" == request["body"]["id"]
    assert request["body"]["group"] == {"region": "EU"} and request["body"]["observed"] == 119.0
    # the CLI's test message: kind "test", a fresh id, the same contract
    assert assay("notify", "test", "owners", "--workspace", str(tmp_path), "--json") == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["delivery"]["status"] == "sent"
    sent = receiver.requests[-1]["body"]
    assert sent == printed["notification"] and sent["kind"] == "test" and set(sent) == CONTRACT


def test_a_5xx_is_retried_with_backoff_and_the_same_id(tmp_path: Path, receiver: Receiver) -> None:
    config = load_config(workspace(tmp_path, receiver.url))
    receiver.script["/owners"] = [503, 502, 200]
    waits: list[float] = []
    done = deliver("owners", config.channel("owners"), FAILED, sleep=waits.append)
    assert (done.status, done.attempts) == ("sent", 3)
    assert done.answers == ["HTTP 503 Service Unavailable", "HTTP 502 Bad Gateway", "HTTP 200"]
    assert waits == [FIRST_WAIT_S, 2 * FIRST_WAIT_S]
    assert [r["headers"]["Idempotency-Key"] for r in receiver.requests] == ["n-1"] * 3
    assert len({r["body"]["id"] for r in receiver.requests}) == 1


def test_a_4xx_is_final(tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]) -> None:
    workspace(tmp_path, receiver.url)
    receiver.script["/owners"] = [404]
    assert assay("notify", "test", "owners", "--workspace", str(tmp_path)) == 1
    printed = capsys.readouterr().out
    assert "not delivered after 1 attempt(s)" in printed and "HTTP 404" in printed
    assert len(receiver.requests) == 1


def test_a_channel_that_is_down_fails_after_every_attempt(tmp_path: Path, receiver: Receiver) -> None:
    config = load_config(workspace(tmp_path, receiver.url))
    waits: list[float] = []
    done = deliver("down", config.channel("down"), FAILED, sleep=waits.append)
    assert (done.status, done.attempts, len(waits)) == ("failed", 4, 3)
    assert done.error is not None and "cannot reach http://127.0.0.1:" in done.error
    # the other channels are not held up by it
    assert deliver("owners", config.channel("owners"), FAILED).status == "sent"


def test_slack_gets_text_and_blocks_with_the_same_facts(tmp_path: Path, receiver: Receiver) -> None:
    config = load_config(workspace(tmp_path, receiver.url))
    assert deliver("platform", config.channel("platform"), FAILED).status == "sent"
    [request] = receiver.requests
    body = request["body"]
    assert set(body) == {"text", "blocks"} and request["headers"]["Idempotency-Key"] == "n-1"
    assert "incident opened: payments.trades region-volume" in body["text"]
    shown = json.dumps(body["blocks"])
    for fact in ("region-volume", "row_count = 119", "failed", "error", '\\"region\\": \\"EU\\"', "n-1"):
        assert fact in shown, fact


def test_email_goes_through_the_smtp_server(tmp_path: Path, mailbox: tuple[Mailbox, int]) -> None:
    box, port = mailbox
    config = load_config(workspace(tmp_path, "http://127.0.0.1:1", port))
    done = deliver("team", config.channel("team"), FAILED, smtp=config.smtp)
    assert done.status == "sent", done.error
    [message] = box.messages
    assert message["Subject"] == "[assay] incident opened: payments.trades region-volume"
    assert message["To"] == "dq@example.com, oncall@example.com" and message["From"] == "assay@example.com"
    assert message["Message-ID"] == "<n-1@assay>"
    parts = {part.get_content_type(): part for part in message.walk()}
    text = parts["text/plain"].get_payload(decode=True).decode()
    assert "row_count = 119" in text and "expectation: region-volume" in text
    attached = json.loads(parts["application/json"].get_payload(decode=True))
    assert set(attached) == CONTRACT and attached["id"] == "n-1"


def test_mistakes_in_assay_yaml_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "assay.yaml").write_text(
        "channels:\n  a: {type: pager, url: 'http://x'}\n  b: {type: webhook, url: 'ftp://x'}\n"
    )
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    assert "channels.a" in str(raised.value) and "'ftp://x' is not an http:// or https:// URL" in str(
        raised.value
    )
    (tmp_path / "assay.yaml").write_text("channels:\n  team: {type: email, to: [dq@example.com]}\n")
    with pytest.raises(ConfigError, match="an email channel needs the smtp server"):
        load_config(tmp_path)
    (tmp_path / "assay.yaml").write_text("channels: {}\n")
    assert assay("notify", "test", "owners", "--workspace", str(tmp_path)) == 2
    assert "no channel 'owners' in assay.yaml (channels: none)" in capsys.readouterr().err
