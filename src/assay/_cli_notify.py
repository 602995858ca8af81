"""``assay notify``: the notification channels of ``<workspace>/assay.yaml``.

Imported by :mod:`assay.cli`, which registers :data:`notify_app`; the work is in
:mod:`assay.platform.notify`.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.markup import escape

from assay._cli_common import StoreOption, WorkspaceOption, out
from assay.workspace import Workspace, store_url

notify_app = typer.Typer(
    help="Notification channels (declared in <workspace>/assay.yaml) and the outbox.", no_args_is_help=True
)


@notify_app.command("test")
def notify_test(
    channel: Annotated[str, typer.Argument(metavar="CHANNEL", help="A channel's name in assay.yaml.")],
    workspace: WorkspaceOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the delivery as one JSON object.")] = False,
) -> None:
    """Send a test notification (kind "test") to CHANNEL, retried as every notification is, and say
    how it went. Exit 0 sent, 1 not delivered, 2 no such channel or a mistake in assay.yaml."""
    from assay.platform.notify import deliver, load_config, test_notification

    config = load_config(Workspace(workspace).root)
    target = config.channel(channel)
    notification = test_notification(channel)
    done = deliver(channel, target, notification, smtp=config.smtp)
    if json_out:
        sent = notification.payload(done.sent_at) if done.sent_at else None
        sys.stdout.write(json.dumps({"delivery": done.to_dict(), "notification": sent}) + "\n")
    else:
        verdict = "[green]sent[/green]" if done.status == "sent" else "[red]not delivered[/red]"
        tries = f"{done.attempts} attempt(s)"
        out.print(
            f"{escape(channel)} ({target.type}): {verdict} after {tries}; id {notification.id}",
            highlight=False,
        )
        for number, answer in enumerate(done.answers, 1):
            out.print(f"  attempt {number}: {escape(answer)}", highlight=False)
    if done.status != "sent":
        raise typer.Exit(1)


@notify_app.command("outbox")
def notify_outbox(
    status: Annotated[
        str | None,
        typer.Option(
            help="Only the notifications in this status: pending, sent, failed, held (waiting for "
            "a digest) or digested.",
            show_default="every status",
        ),
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the outbox as one JSON object.")] = False,
) -> None:
    """The notifications that check runs caused, one row per channel, oldest first: what was sent,
    what waits for a delivery pass (assay notify deliver), what gave up and why."""
    from assay.store import MetricStore

    space = Workspace(workspace)
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        rows = metric_store.outbox(status=status)
    if json_out:
        sys.stdout.write(json.dumps({"notifications": [r.to_dict() for r in rows]}, indent=2) + "\n")
        return
    if not rows:
        out.print("the outbox is empty" + (f" (status {escape(status)})" if status else ""), highlight=False)
        return
    for row in rows:
        about = " ".join(x for x in (row.payload.get("dataset"), row.payload.get("expectation")) if x)
        line = f"{row.created_at:%Y-%m-%d %H:%M} {row.status:<9} {escape(row.channel)} {row.kind}"
        line += f" {escape(about)}"
        if row.attempts:
            line += f" ({row.attempts} attempt(s))"
        out.print(line, highlight=False)
        if row.error and row.status != "sent":
            out.print(f"  {escape(row.error)}", highlight=False)


@notify_app.command("deliver")
def notify_deliver(
    now: Annotated[
        str | None,
        typer.Option(
            help="The pass's time (ISO 8601; naive means UTC): which retries are due and which "
            "days' digests are complete.",
            show_default="the current time",
        ),
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the pass as one JSON object.")] = False,
) -> None:
    """One delivery pass: make the digests of finished days, then send every pending notification
    that is due, once each (a failure is retried by a later pass, with backoff). Exit 0 when
    nothing failed for good, 1 when a notification failed, 2 on a mistake in assay.yaml."""
    from assay.judge.evaluation import parse_now
    from assay.platform.notify import load_config
    from assay.platform.outbox import deliver_pass
    from assay.store import MetricStore

    space = Workspace(workspace)
    config = load_config(space.root)
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        done = deliver_pass(metric_store, config, now=parse_now(now) if now else None)
    if json_out:
        sys.stdout.write(json.dumps(done.to_dict(), indent=2) + "\n")
    else:
        print_delivery(done)
    if done.count("failed"):
        raise typer.Exit(1)


def print_delivery(done: Any) -> None:
    """A delivery pass in words (also after each pass of assay run --due)."""
    for item in done.deliveries:
        style = {"sent": "green", "retrying": "yellow", "failed": "red"}[item["status"]]
        about = " ".join(x for x in (item.get("dataset"), item["kind"]) if x)
        line = f"[{style}]{item['status']}[/{style}] {escape(item['channel'])}: {escape(about)}"
        if item.get("error"):
            line += f" ({escape(item['error'])})"
        out.print(line, highlight=False)
    summary = (
        f"delivered: {done.count('sent')} sent, {done.count('retrying')} retrying, "
        f"{done.count('failed')} failed"
    )
    if done.digests:
        summary += f"; {done.digests} digest(s) made"
    if done.channels_down:
        summary += f"; down: {', '.join(done.channels_down)}"
    out.print(escape(summary), highlight=False)
