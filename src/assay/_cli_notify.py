"""``assay notify``: the notification channels of ``<workspace>/assay.yaml``.

Imported by :mod:`assay.cli`, which registers :data:`notify_app`; the work is in
:mod:`assay.platform.notify`.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.markup import escape

from assay._cli_common import WorkspaceOption, out
from assay.workspace import Workspace

notify_app = typer.Typer(
    help="Notification channels (declared in <workspace>/assay.yaml).", no_args_is_help=True
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
