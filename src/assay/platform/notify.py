"""Notification channels: declared once in ``<workspace>/assay.yaml``, referred to by name.

::

    channels:
      owners:   {type: webhook, url: "http://127.0.0.1:9000/owners"}
      platform: {type: slack, url: "http://127.0.0.1:9000/platform"}   # a Slack incoming webhook
      team:     {type: email, to: ["dq@example.com"]}
    smtp: {host: 127.0.0.1, port: 8025, starttls: false, from: "assay@example.com", user: null,
           password_env: ASSAY_SMTP_PASSWORD}

A ``webhook`` receives the notification's payload (:class:`Notification`) as JSON; a ``slack``
channel receives Slack's incoming-webhook shape (``text`` and ``blocks``) carrying the same
facts; an ``email`` channel a message through the ``smtp`` server. Every delivery carries the
notification's id (the ``Idempotency-Key`` header of both HTTP kinds, the ``Message-ID`` of an
email), and the same notification always has the same id, so a receiver can drop repeats.
Delivery is retried with backoff on connection errors, timeouts and 5xx answers; a 4xx answer
is final (the channel refuses the message: retrying would not change its mind).
"""

from __future__ import annotations

import json
import os
import smtplib
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from assay.errors import ConfigError
from assay.lang import yamlsafe
from assay.platform.routing import KINDS as ROUTED_KINDS
from assay.platform.routing import Facts as Facts  # routing's names, where callers first found them
from assay.platform.routing import Route as Route
from assay.platform.routing import route as route

CONFIG_FILE = "assay.yaml"
KINDS = (*ROUTED_KINDS, "digest", "test")
"""The payload's ``kind``: the seven of the contract, and ``test``, sent only by
``assay notify test``."""
ATTEMPTS = 4
FIRST_WAIT_S = 0.5
TIMEOUT_S = 10.0


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class _Http(_Strict):
    url: str

    @field_validator("url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"'{value}' is not an http:// or https:// URL")
        return value


class Webhook(_Http):
    type: Literal["webhook"]


class Slack(_Http):
    type: Literal["slack"]


class Email(_Strict):
    type: Literal["email"]
    to: tuple[str, ...] = Field(min_length=1)

    @field_validator("to")
    @classmethod
    def _addresses(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [a for a in value if "@" not in a or any(c.isspace() for c in a)]
        if bad:
            raise ValueError(f"not an e-mail address: {', '.join(bad)}")
        return value


Channel = Annotated[Webhook | Slack | Email, Field(discriminator="type")]


class Smtp(_Strict):
    host: str
    port: int = 25
    starttls: bool = False
    sender: str = Field(alias="from")
    user: str | None = None
    password_env: str | None = None


class IncidentSettings(_Strict):
    """``incidents:`` of ``assay.yaml``: when an open incident's observed value has moved by more
    than ``move_share`` of the value last notified, its owners hear of it again."""

    move_share: Annotated[float, Field(gt=0)] = 0.5


class Config(_Strict):
    """The notification part of ``assay.yaml`` (other keys of the file are other parts')."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    channels: dict[str, Channel] = Field(default_factory=dict)
    smtp: Smtp | None = None
    routes: tuple[Route, ...] = ()
    incidents: IncidentSettings = IncidentSettings()

    def undeclared(self, routes: Sequence[Route]) -> list[str]:
        """The channels ``routes`` send to that ``channels:`` does not declare."""
        return sorted({c for r in routes for c in r.to} - set(self.channels))

    def refuse_undeclared(self, routes: Sequence[Route], *, what: str, config: Path) -> None:
        """A ConfigError when ``routes`` (a document's ``notify:``, called ``what``) send to a
        channel ``config`` (the workspace's assay.yaml) does not declare: a run refuses them
        before anything is measured, and ``assay check validate`` does the same."""
        unknown = self.undeclared(routes)
        if unknown:
            declared = ", ".join(sorted(self.channels)) or "none"
            raise ConfigError(
                f"{what} send to undeclared channel(s) {', '.join(unknown)} "
                f"(channels of {config}: {declared})"
            )

    def channel(self, name: str) -> Webhook | Slack | Email:
        found = self.channels.get(name)
        if found is None:
            declared = ", ".join(sorted(self.channels)) or "none"
            raise ConfigError(f"no channel '{name}' in {CONFIG_FILE} (channels: {declared})")
        return found


def load_config(workspace_root: Path) -> Config:
    """The channels of ``<workspace>/assay.yaml`` (none when the file does not exist); every
    mistake of the file in one ConfigError, each with the key it is about."""
    path = workspace_root / CONFIG_FILE
    if not path.exists():
        return Config()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot be read: {str(error).splitlines()[0]}") from None
    raw = yamlsafe.load(text, filename=str(path)) or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping (channels, smtp, routes)")
    try:
        config = Config.model_validate(raw)
    except ValidationError as error:
        lines = [
            f"{path}: {'.'.join(str(p) for p in e['loc'])}: {e['msg'].removeprefix('Value error, ')}"
            for e in error.errors()
        ]
        raise ConfigError("\n".join(lines)) from None
    unknown = config.undeclared(config.routes)
    if unknown:
        declared = ", ".join(sorted(config.channels)) or "none"
        raise ConfigError(
            f"{path}: routes send to undeclared channel(s) {', '.join(unknown)} (channels: {declared})"
        )
    if config.smtp is None and any(isinstance(c, Email) for c in config.channels.values()):
        raise ConfigError(f"{path}: an email channel needs the smtp server (smtp: {{host: ..., from: ...}})")
    return config


def notify_run_error(
    store: Any,
    workspace_root: Path,
    *,
    kind: str,
    dataset: str,
    message: str,
    run_id: str,
    now: datetime,
    document: Any = None,
    source: str | None = None,
    flow: str | None = None,
) -> int:
    """A run that failed as a whole, nothing judged (a config or system error of the run, or a
    run whose process was killed before its commit, recovered as a ``system_error``): its
    notification into the outbox through :func:`assay.platform.incidents.run_error`, once as that
    module says, routed by the dataset's check document (``document``, else the workspace's
    document of ``dataset``, if any) and assay.yaml. Without a readable assay.yaml there is no
    route, and the run's record is the account. Returns how many notifications were added."""
    from assay.platform.incidents import run_error

    try:
        config = load_config(workspace_root)
    except ConfigError:
        return 0
    if document is None:
        document = document_of(workspace_root, dataset)
    routes = (*(document.notify if document is not None else ()), *config.routes)
    described = document.dataset.source.describe() if document is not None else dataset
    return run_error(
        store,
        kind=kind,
        dataset=dataset,
        source=source or described,
        message=message,
        run_id=run_id,
        route=lambda facts: route(routes, facts),
        tags=document.dataset.tags if document is not None else (),
        tier=document.dataset.tier if document is not None else None,
        flow=flow,
        now=now,
    )


def document_of(workspace_root: Path, dataset: str) -> Any:
    """The workspace's check document of ``dataset``, or None (none, or one that does not
    validate: its routes cannot be trusted, assay.yaml's still apply)."""
    from assay.errors import AssayError
    from assay.platform.checks.document import find_document, load_document

    path = find_document(workspace_root / "checks", dataset)
    if path is None:
        return None
    try:
        return load_document(path)
    except AssayError:
        return None


@dataclass(frozen=True)
class Notification:
    """The payload every channel carries; its fields are a contract (docs/operations.md)."""

    id: str
    kind: str
    dataset: str | None = None
    expectation: str | None = None
    group: dict[str, Any] | None = None
    severity: str | None = None
    outcome: str | None = None
    observed: float | None = None
    expected: Any = None
    message: str | None = None
    run_id: str | None = None
    incident_id: str | None = None
    sent_at: str | None = None
    items: list[dict[str, Any]] | None = None  # a digest's notifications (their payloads)
    groups: list[dict[str, Any]] | None = None  # the failing groups of a ``by:`` expectation
    detail: dict[str, Any] | None = None  # what a gate, profile or DQDL run adds (counts, files)
    upstream: dict[str, Any] | None = None  # a downstream_incident's incident (docs/lineage.md)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"notification kind {self.kind!r} is not one of {', '.join(KINDS)}")

    def payload(self, sent_at: datetime) -> dict[str, Any]:
        """The JSON a webhook receives: the contract's fields, and a digest's ``items``, a
        ``by:`` failure's ``groups`` and a flow's ``detail`` when they apply."""
        out = asdict(self) | {"sent_at": sent_at.isoformat()}
        for extra in ("items", "groups", "detail", "upstream"):
            if out[extra] is None:
                del out[extra]
        return out

    def title(self) -> str:
        what = self.kind.replace("_", " ")
        about = " ".join(x for x in (self.dataset, self.expectation) if x)
        return f"[assay] {what}" + (f": {about}" if about else "")

    def item_lines(self, most: int = 20) -> list[str]:
        """A digest's notifications, one line each (at most ``most``, then how many more)."""
        items = self.items or []
        lines = [
            " ".join(str(x) for x in (i.get("kind"), i.get("dataset"), i.get("expectation")) if x)
            + (f": {i['message']}" if i.get("message") else "")
            for i in items[:most]
        ]
        if len(items) > most:
            lines.append(f"… and {len(items) - most} more")
        return lines

    def facts(self) -> list[tuple[str, str]]:
        """The payload's facts in words, for Slack and e-mail."""
        names = (
            "dataset", "expectation", "group", "groups", "severity",
            "outcome", "observed", "expected", "run_id",
        )  # fmt: skip
        found = [(n, getattr(self, n)) for n in names if getattr(self, n) not in (None, {}, "")]
        return [(n, v if isinstance(v, str) else json.dumps(v, default=str)) for n, v in found]


def test_notification(channel: str) -> Notification:
    """The notification ``assay notify test`` sends: a new id each time."""
    return Notification(
        id=str(uuid.uuid4()),
        kind="test",
        message=f"a test of channel '{channel}' from assay: if you read this, the channel works",
    )


@dataclass
class Delivery:
    """How delivering one notification to one channel went."""

    channel: str
    notification_id: str
    status: str  # sent | failed
    attempts: int
    error: str | None = None
    answers: list[str] = field(default_factory=list)  # each attempt's outcome, in words
    sent_at: datetime | None = None  # of the last attempt: the payload's ``sent_at``
    retryable: bool = False  # a failure another attempt may cure (connection error, 5xx, 429)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"sent_at": None if self.sent_at is None else self.sent_at.isoformat()}


class _Retry(Exception):
    """A failure worth another attempt (a connection error, a timeout, a 5xx)."""


class _Final(Exception):
    """A failure no retry changes (a 4xx, a refused recipient)."""


def deliver(
    name: str,
    channel: Webhook | Slack | Email,
    notification: Notification,
    *,
    smtp: Smtp | None = None,
    attempts: int = ATTEMPTS,
    first_wait: float = FIRST_WAIT_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> Delivery:
    """Send ``notification`` through ``channel``, retrying as the module says; never raises for
    the channel's failures (they are the delivery's ``failed`` status and its ``error``)."""
    done = Delivery(name, notification.id, "failed", 0)
    for attempt in range(attempts):
        if attempt:
            sleep(first_wait * 2 ** (attempt - 1))
        done.attempts, done.sent_at = attempt + 1, clock()
        try:
            answer = _send(channel, notification, done.sent_at, smtp)
        except _Retry as error:
            done.error, done.retryable = str(error), True
            done.answers.append(str(error))
            continue
        except _Final as error:
            done.error, done.retryable = str(error), False
            done.answers.append(str(error))
            return done
        done.status, done.error, done.retryable = "sent", None, False
        done.answers.append(answer)
        return done
    return done


def _send(
    channel: Webhook | Slack | Email, notification: Notification, now: datetime, smtp: Smtp | None
) -> str:
    if isinstance(channel, Email):
        if smtp is None:
            raise _Final("no smtp server is configured")
        return _email(channel, notification, now, smtp)
    payload = notification.payload(now)
    if isinstance(channel, Slack):
        payload = _slack(notification, now)
    return _post(channel.url, payload, notification.id)


def _post(url: str, payload: dict[str, Any], key: str) -> str:
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Idempotency-Key": key, "User-Agent": "assay"},
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # http(s): checked
            return f"HTTP {response.status}"
    except urllib.error.HTTPError as error:
        if error.code >= 500 or error.code == 429:
            raise _Retry(f"HTTP {error.code} {error.reason}") from None
        raise _Final(f"HTTP {error.code} {error.reason}") from None
    except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
        reason = getattr(error, "reason", error)
        raise _Retry(f"cannot reach {url}: {reason}") from None


def _slack(notification: Notification, now: datetime) -> dict[str, Any]:
    facts = notification.facts()
    text = notification.title() + (f": {notification.message}" if notification.message else "")
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": notification.title()[:150]}},
    ]
    if notification.message:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": notification.message[:3000]}})
    if facts:
        blocks.append(
            {
                "type": "section",
                "fields": [{"type": "mrkdwn", "text": f"*{k}*\n{v}"[:2000]} for k, v in facts[:10]],
            }
        )
    if notification.items:
        listed = "\n".join(f"• {line}" for line in notification.item_lines())
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": listed[:3000]}})
    blocks.append(
        {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": f"id {notification.id} · {now.isoformat()}"}],
        }
    )
    return {"text": text, "blocks": blocks}


def _email(channel: Email, notification: Notification, now: datetime, smtp: Smtp) -> str:
    message = EmailMessage()
    message["Subject"] = notification.title()
    message["From"] = smtp.sender
    message["To"] = ", ".join(channel.to)
    message["Message-ID"] = f"<{notification.id}@assay>"  # the same notification, the same id
    message["Date"] = now.strftime("%a, %d %b %Y %H:%M:%S +0000")
    lines = [notification.message or notification.title(), ""]
    lines += [f"{k}: {v}" for k, v in notification.facts()]
    lines += [f"- {line}" for line in notification.item_lines()]
    lines += ["", f"id: {notification.id}", f"sent at: {now.isoformat()}"]
    message.set_content("\n".join(lines) + "\n")
    message.add_attachment(
        json.dumps(notification.payload(now), indent=2).encode(),
        maintype="application",
        subtype="json",
        filename="notification.json",
    )
    password = os.environ.get(smtp.password_env) if smtp.password_env else None
    if smtp.user and password is None:
        raise _Final(f"smtp user {smtp.user} needs its password in ${smtp.password_env or '(password_env)'}")
    try:
        with smtplib.SMTP(smtp.host, smtp.port, timeout=TIMEOUT_S) as server:
            if smtp.starttls:
                server.starttls()
            if smtp.user:
                server.login(smtp.user, password or "")
            refused = server.send_message(message)
    except smtplib.SMTPRecipientsRefused as error:
        raise _Final(f"the smtp server refused every recipient: {', '.join(error.recipients)}") from None
    except smtplib.SMTPAuthenticationError as error:
        raise _Final(f"the smtp server refused the login: {error.smtp_code}") from None
    except smtplib.SMTPResponseException as error:
        if 400 <= error.smtp_code < 500:
            raise _Retry(f"smtp {error.smtp_code} {error.smtp_error!r}") from None
        raise _Final(f"smtp {error.smtp_code} {error.smtp_error!r}") from None
    except (smtplib.SMTPException, OSError) as error:
        raise _Retry(f"cannot reach the smtp server {smtp.host}:{smtp.port}: {error}") from None
    if refused:
        return f"sent; refused by the server for {', '.join(sorted(refused))}"
    return f"sent to {len(channel.to)} recipient(s)"
