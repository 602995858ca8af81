"""``assay incidents``: list, show, acknowledge, resolve and mute the incidents of check runs.

Imported by :mod:`assay.cli`, which registers :data:`incidents_app`; the work is in
:mod:`assay.platform.incidents`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.markup import escape

from assay._cli_common import StoreOption, WorkspaceOption, out
from assay.errors import ConfigError
from assay.workspace import Workspace, store_url

incidents_app = typer.Typer(
    help="Incidents: check failures grouped by dataset, dimension and expectation.", no_args_is_help=True
)

IdArgument = Annotated[str, typer.Argument(metavar="ID", help="An incident's id (assay incidents list).")]
ByOption = Annotated[
    str, typer.Option("--by", help="Who does it (kept in the incident's history).", envvar="ASSAY_USER")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the incident as one JSON object.")]
_STYLE = {"open": "red", "acknowledged": "yellow", "muted": "blue", "resolved": "green"}


def _open(workspace: Any, store: str | None) -> Any:
    from assay.store import MetricStore

    space = Workspace(workspace)
    return MetricStore.open(store_url(store), workspace=space.root)


def _line(incident: Any) -> str:
    style = _STYLE.get(incident.state, "")
    group = f" {json.dumps(incident.group)}" if incident.group else ""
    seen = f"{incident.failures} failure(s) since {incident.opened_at:%Y-%m-%d %H:%M}"
    return (
        f"{incident.id[:8]} [{style}]{incident.state:<12}[/{style}] {incident.severity:<8} "
        f"{escape(incident.dataset)} {incident.dimension} {escape(incident.expectation)}"
        f"{escape(group)}: {seen}"
    )


@incidents_app.command("list")
def incidents_list(
    status: Annotated[
        str | None,
        typer.Option(
            help="Only incidents in this state: open, acknowledged, muted, resolved, or unresolved "
            "(the first three).",
            show_default="every state",
        ),
    ] = None,
    dataset: Annotated[
        str | None, typer.Option(help="Only this dataset's.", show_default="every dataset")
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the incidents as one JSON object.")] = False,
) -> None:
    """The incidents, most recently opened first."""
    from assay.store.incidents import INCIDENT_STATES

    states: list[str] | None = None
    if status == "unresolved":
        states = ["open", "acknowledged", "muted"]
    elif status is not None:
        if status not in INCIDENT_STATES:
            raise ConfigError(
                f"unknown status {status!r}: expected one of {', '.join(INCIDENT_STATES)} or unresolved"
            )
        states = [status]
    with _open(workspace, store) as metric_store:
        found = metric_store.incidents(dataset=dataset, states=states, layers=True)
    if json_out:
        sys.stdout.write(json.dumps({"incidents": [i.to_dict() for i in found]}, indent=2) + "\n")
        return
    if not found:
        out.print("no incidents", highlight=False)
    for incident in found:
        out.print(_line(incident), highlight=False)


def _resolve_id(metric_store: Any, prefix: str) -> str:
    """An incident's id from its id or a unique prefix of it (list shows 8 characters)."""
    matches: list[str] = [i.id for i in metric_store.incidents() if i.id.startswith(prefix)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise ConfigError(f"no incident {prefix!r} (assay incidents list shows them)")
    raise ConfigError(f"{prefix!r} names {len(matches)} incidents: give more of the id")


def _show(incident: Any, json_out: bool, layers: Sequence[Any] | None = None) -> None:
    if json_out:
        shown = incident.to_dict() | ({} if layers is None else {"layers": [la.to_dict() for la in layers]})
        sys.stdout.write(json.dumps({"incident": shown}, indent=2, default=str) + "\n")
        return
    out.print(_line(incident), highlight=False)
    out.print(f"  id {incident.id}; owner {escape(str(incident.owner))}", highlight=False)
    if layers and len(layers) > 1:  # the same failure in connected datasets (docs/lineage.md)
        out.print(f"  layers: {escape(', '.join(la.dataset for la in layers))}", highlight=False)
    if incident.message:
        out.print(f"  {escape(incident.message)}", highlight=False)
    for event in incident.events:
        who = f" by {escape(event['by'])}" if event.get("by") else ""
        run = f" (run {event['run_id']})" if event.get("run_id") else ""
        out.print(f"  {event['at'][:16]} {event['kind']}{who}{run}", highlight=False)


@incidents_app.command("show")
def incidents_show(
    incident_id: IdArgument,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: JsonOption = False,
) -> None:
    """One incident with its history: every evaluation it counted and everything done to it."""
    with _open(workspace, store) as metric_store:
        incident = metric_store.incident(_resolve_id(metric_store, incident_id))
        layers = metric_store.incident_layers(incident.id)
    _show(incident, json_out, layers)


@incidents_app.command("ack")
def incidents_ack(
    incident_id: IdArgument,
    by: ByOption,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: JsonOption = False,
) -> None:
    """Acknowledge an incident: someone is on it. It stays unresolved and keeps counting."""
    from assay.platform.incidents import acknowledge

    with _open(workspace, store) as metric_store:
        incident = acknowledge(
            metric_store, _resolve_id(metric_store, incident_id), by=by, now=datetime.now(UTC)
        )
    _show(incident, json_out)


@incidents_app.command("resolve")
def incidents_resolve(
    incident_id: IdArgument,
    by: ByOption,
    cause: Annotated[
        str,
        typer.Option(
            help="Why: real_issue or expected_change (its loads stay out of later baselines), "
            "false_alarm (they come back in), new_normal (they come in and the baselines restart "
            "at its first failure)."
        ),
    ],
    note: Annotated[
        str | None, typer.Option(help="A note kept with the resolution.", show_default="none")
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: JsonOption = False,
) -> None:
    """Resolve an incident by hand, with its cause; its owners hear of it where they heard of it."""
    from assay.platform.incidents import resolve

    with _open(workspace, store) as metric_store:
        incident, left = resolve(
            metric_store,
            _resolve_id(metric_store, incident_id),
            by=by,
            cause=cause,
            note=note,
            now=datetime.now(UTC),
        )
    _show(incident, json_out)
    if not json_out and left:
        out.print(f"  {left} load(s) left out of later baselines", highlight=False)


@incidents_app.command("mute")
def incidents_mute(
    incident_id: IdArgument,
    until: Annotated[str, typer.Option(help="Until when (ISO 8601; naive means UTC).")],
    by: ByOption,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: JsonOption = False,
) -> None:
    """Mute an incident until a time: it keeps counting evaluations, and tells no one."""
    from assay.judge.evaluation import parse_now
    from assay.platform.incidents import mute

    with _open(workspace, store) as metric_store:
        incident = mute(
            metric_store,
            _resolve_id(metric_store, incident_id),
            until=parse_now(until),
            by=by,
            now=datetime.now(UTC),
        )
    _show(incident, json_out)
