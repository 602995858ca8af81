"""``assay decisions list|accept|reject``: the decisions on never-seen values that the monitor opens
and the gate holds rows for; ``assay accept``: a load held out of later baselines taken back in.

Imported by :mod:`assay.cli`, which registers the group; the work is in
:mod:`assay.platform.decisions`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from assay._cli_common import StoreOption, WorkspaceOption, out
from assay._cli_common import write_json as _write_json
from assay.errors import ConfigError
from assay.workspace import Workspace, store_url

ByOption = Annotated[
    str | None, typer.Option(help="Who decides.", envvar="ASSAY_USER", show_default="the login name")
]
decisions_app = typer.Typer(
    help="Decisions on never-seen values: list, accept, reject.", no_args_is_help=True
)


@decisions_app.command("list")
def decisions_list(
    dataset: Annotated[
        str | None, typer.Option(help="Only this dataset's decisions.", show_default="all")
    ] = None,
    status: Annotated[
        str | None, typer.Option(help="Only 'pending', 'accepted' or 'rejected' ones.", show_default="all")
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the decisions as JSON.")] = False,
) -> None:
    """List the decisions on never-seen values, with who decided and when."""
    from assay._render import decision_dict, print_decisions
    from assay.store import MetricStore

    if status not in (None, "pending", "accepted", "rejected"):
        raise ConfigError("--status must be 'pending', 'accepted' or 'rejected'")
    space = Workspace(workspace)
    space.existing(store_url(store))
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        found = metric_store.decisions(dataset, status)
    if json_out:
        _write_json("-", {"decisions": [decision_dict(d) for d in found]})
    else:
        print_decisions(out, found)


def _decide(
    decision_id: int | None,
    status: str,
    options: _Bulk,
    by: str | None,
    note: str | None,
    workspace: Path | None,
    store: str | None,
    json_out: bool,
) -> None:
    import getpass

    from assay._render import decision_dict
    from assay.platform.decisions import decide
    from assay.store import MetricStore

    options.check(decision_id)
    space = Workspace(workspace)
    space.ensure()
    who = by or os.environ.get("ASSAY_USER") or getpass.getuser()
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        taken = decide(
            space,
            metric_store,
            status,
            by=who,
            decision_id=decision_id,
            dataset=None if decision_id is not None else options.dataset,
            column=options.column,
            note=note,
        )
    decided, lines = taken.decisions, taken.released
    if json_out:
        payload: dict[str, Any] = {"decisions": [decision_dict(d) for d in decided], "released": lines}
        if decision_id is not None:
            payload["decision"] = payload["decisions"][0]
        _write_json("-", payload)
        return
    if not decided:
        where = f"{options.dataset}.{options.column}" if options.column else options.dataset
        out.print(f"no pending decision on {where}", highlight=False, markup=False)
    for d in decided:
        out.print(
            f"decision {d.id}: {d.dataset}.{d.column} = '{d.value}' {d.status} by {d.decided_by}",
            highlight=False,
            markup=False,
        )
    for line in lines:
        out.print(line, highlight=False)


class _Bulk:
    """``--dataset D [--column C] --all``: every pending decision there, instead of one ID."""

    def __init__(self, dataset: str | None, column: str | None, every: bool) -> None:
        self.dataset, self.column, self.every = dataset, column, every

    def check(self, decision_id: int | None) -> None:
        if decision_id is not None and (self.every or self.dataset or self.column):
            raise ConfigError("give a decision ID, or --dataset D [--column C] --all, not both")
        if decision_id is None and not (self.every and self.dataset):
            raise ConfigError("give a decision ID, or --dataset D [--column C] --all for every pending one")


DecisionArgument = Annotated[
    int | None,
    typer.Argument(metavar="ID", help="The decision's id (assay decisions list); or use --all."),
]
BulkDataset = Annotated[
    str | None, typer.Option(help="With --all: the dataset whose decisions to take.", show_default="none")
]
BulkColumn = Annotated[
    str | None, typer.Option(help="With --all: only this column's decisions.", show_default="every column")
]
BulkAll = Annotated[bool, typer.Option("--all", help="Every pending decision of --dataset (and --column).")]
DecideJson = Annotated[bool, typer.Option("--json", help="Print the decisions taken as JSON.")]


@decisions_app.command("accept")
def decisions_accept(
    decision_id: DecisionArgument = None,
    dataset: BulkDataset = None,
    column: BulkColumn = None,
    every: BulkAll = False,
    by: ByOption = None,
    note: Annotated[str | None, typer.Option(help="Why.", show_default="none")] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: DecideJson = False,
) -> None:
    """Accept a new value: it is known from now on, and rows the gate held for it are committed."""
    _decide(decision_id, "accepted", _Bulk(dataset, column, every), by, note, workspace, store, json_out)


@decisions_app.command("reject")
def decisions_reject(
    decision_id: DecisionArgument = None,
    dataset: BulkDataset = None,
    column: BulkColumn = None,
    every: BulkAll = False,
    by: ByOption = None,
    note: Annotated[str | None, typer.Option(help="Why.", show_default="none")] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: DecideJson = False,
) -> None:
    """Reject a new value: rows the gate held for it are quarantined; it alerts hard if it comes back."""
    _decide(decision_id, "rejected", _Bulk(dataset, column, every), by, note, workspace, store, json_out)


def accept_command(
    dataset: Annotated[str, typer.Argument(help="The dataset whose load to accept.")],
    load_date: Annotated[
        str, typer.Option("--load-date", help="The held load's date (YYYY-MM-DD; a check run's --at day).")
    ],
    column: Annotated[
        str | None, typer.Option(help="Only what this column raised.", show_default="every column")
    ] = None,
    kind: Annotated[
        str | None,
        typer.Option(
            help="Only what this raised: a monitor judgement (null_rate, volume, range...), a check "
            "expectation's id or a DQDL rule.",
            show_default="everything",
        ),
    ] = None,
    new_normal: Annotated[
        bool,
        typer.Option(
            "--new-normal",
            help="The load starts a new level: it and the held loads after it come in, the loads "
            "before it leave these metrics' baselines.",
        ),
    ] = False,
    by: ByOption = None,
    note: Annotated[str | None, typer.Option(help="Why.", show_default="none")] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print what was accepted as JSON.")] = False,
) -> None:
    """Accept a load held out of later baselines (it raised a hard alert or failed an expectation):
    later judgements read it again. Audited."""
    import getpass
    from datetime import UTC, date, datetime

    from assay.platform.baselines import accept
    from assay.store import MetricStore

    try:
        day = date.fromisoformat(load_date)
    except ValueError:
        raise ConfigError(f"--load-date {load_date!r} is not a date (YYYY-MM-DD)") from None
    space = Workspace(workspace)
    space.existing(store_url(store))
    who = by or os.environ.get("ASSAY_USER") or getpass.getuser()
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        done = accept(
            metric_store,
            dataset,
            on=day,
            column=column,
            kind=kind,
            new_normal=new_normal,
            by=who,
            note=note,
            now=datetime.now(UTC),
        )
    if json_out:
        _write_json("-", done.to_dict())
        return
    for mark in done.marks:
        item = mark.to_dict()
        out.print(
            f"{dataset} {item['load_date']}: {item['kind']} ({item['metric']}) accepted by {who}",
            highlight=False,
            markup=False,
        )
    if new_normal:
        out.print(f"  new normal: {done.left_out} earlier load(s) left these baselines", highlight=False)
