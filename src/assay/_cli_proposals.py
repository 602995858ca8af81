"""``assay propose`` and ``assay proposals``: checks proposed from a dataset's stored history,
and a person's decisions on them.

Imported by :mod:`assay.cli`, which registers :func:`propose_command` as ``propose`` and
:data:`proposals_app` as ``proposals``; the work is in :mod:`assay.platform.proposals`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from assay._cli_common import StoreOption, WorkspaceOption, err, out
from assay.workspace import Workspace, store_url

proposals_app = typer.Typer(
    help="Checks proposed from stored history: list, show, accept or reject them.", no_args_is_help=True
)

IdArgument = Annotated[str, typer.Argument(metavar="ID", help="A proposal's id or its first characters.")]
ByOption = Annotated[
    str, typer.Option("--by", help="Who decides (kept in the proposal's trail).", envvar="ASSAY_USER")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def _open(workspace: Path | None, store: str | None) -> Any:
    from assay.store import MetricStore

    return MetricStore.open(store_url(store), workspace=Workspace(workspace).root)


def _summary(kind: str, expectation: dict[str, Any]) -> str:
    if expectation.get("classified"):  # a classification (kind classify)
        return "; ".join(
            f"classify {', '.join(columns)} as {name}" for name, columns in expectation["classified"].items()
        )
    if expectation.get("rule"):
        return str(expectation["rule"])
    text = f"{expectation.get('metric')} {expectation.get('expect')}"
    return text + (" (same weekday)" if expectation.get("history") == "same_weekday" else "")


def propose_command(
    dataset: Annotated[str, typer.Argument(help="The dataset, as its check document names it.")],
    intent: Annotated[
        str | None,
        typer.Option(
            help='What you care about, in words ("no missing customer ids").', show_default="every proposal"
        ),
    ] = None,
    min_loads: Annotated[int, typer.Option(help="The fewest profiled loads a proposal is mined from.")] = 14,
    profile: Annotated[
        str | None, typer.Option(help="The document's profile to propose for.", show_default="its first")
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the proposals as a JSON list.")] = False,
) -> None:
    """Propose checks mined from the dataset's stored profiles, each with its evidence, a backtest
    on the stored loads and a dry run on the latest load."""
    from assay.platform.proposals import propose

    with _open(workspace, store) as metric_store:
        found = propose(
            dataset,
            store=metric_store,
            workspace=Workspace(workspace).root,
            intent=intent,
            min_loads=min_loads,
            profile=profile,
        )
    for note in found.notes:
        err.print(note, highlight=False, markup=False)
    if json_out:
        sys.stdout.write(json.dumps([p.to_dict() for p in found.proposals], indent=2, allow_nan=False) + "\n")
        return
    out.print(
        f"{escape(found.dataset)}: {len(found.proposals)} proposal(s) mined from {max(found.loads - 1, 0)} "
        f"load(s), dry-run on {found.latest} in {found.queries} query",
        highlight=False,
    )
    for p in found.proposals:
        _print_line(p.id, p.kind, p.expectation, p.backtest, p.dry_run, p.evidence)
    if found.left_out:
        reasons = ", ".join(f"{n} {reason}" for reason, n in found.left_out.items())
        out.print(f"left out: {reasons}", highlight=False)
    if found.proposals:
        out.print(
            "assay proposals show ID / accept ID --by NAME / reject ID --by NAME --why TEXT", highlight=False
        )


def _print_line(
    pid: str,
    kind: str,
    expectation: dict[str, Any],
    backtest: dict[str, Any] | None,
    dry: dict[str, Any] | None,
    evidence: dict[str, Any] | None = None,
) -> None:
    backtest = backtest or {}
    dry = dry or {}
    if kind == "classify":  # its backtest: loads under the threshold; its dry run: the latest's share
        from assay.platform.proposals.kinds.classify import THRESHOLD

        threshold = (evidence or {}).get("threshold", THRESHOLD)  # the one it was mined with
        out.print(
            f"{pid[:8]} {kind:<12} {escape(_summary(kind, expectation))}: under {threshold:.0%} on "
            f"{backtest.get('would_have_failed')} of {backtest.get('loads')} loads; latest load "
            f"{(dry.get('observed') or 0):.0%}",
            highlight=False,
        )
        return
    out.print(
        f"{pid[:8]} {kind:<12} {escape(_summary(kind, expectation))}: would have failed "
        f"{backtest.get('would_have_failed')} of {backtest.get('loads')} loads; dry run {dry.get('outcome')}",
        highlight=False,
    )


@proposals_app.command("list")
def proposals_list(
    dataset: Annotated[
        str | None, typer.Option(help="Only this dataset's.", show_default="every dataset")
    ] = None,
    state: Annotated[
        str | None, typer.Option(help="Only open, accepted or rejected ones.", show_default="every state")
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: JsonOption = False,
) -> None:
    """The proposals, oldest first."""
    with _open(workspace, store) as metric_store:
        found = metric_store.proposals(dataset=dataset, state=state)
    if json_out:
        sys.stdout.write(json.dumps({"proposals": [r.to_dict() for r in found]}, indent=2) + "\n")
        return
    if not found:
        out.print("no proposals", highlight=False)
    for r in found:
        out.print(f"{r.state:<9}", end=" ", highlight=False)
        _print_line(r.id, r.kind, r.expectation, r.backtest, r.dry_run, r.evidence)


def _show(record: Any, json_out: bool, diff: str | None = None) -> None:
    if json_out:
        payload = {"proposal": record.to_dict()}
        if diff is not None:
            payload["diff"] = diff
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return
    out.print(f"{record.id} {record.state} {record.kind} on {escape(record.dataset)}", highlight=False)
    out.print(f"  {escape(_summary(record.kind, record.expectation))}", highlight=False)
    out.print(f"  evidence: {escape(json.dumps(record.evidence))}", highlight=False)
    out.print(
        f"  backtest: {json.dumps(record.backtest)}; dry run: {json.dumps(record.dry_run)}", highlight=False
    )
    if record.requires:
        out.print(f"  requires: {escape(json.dumps(record.requires))}", highlight=False)
    for event in record.events:
        who = f" by {escape(event['by'])}" if event.get("by") else ""
        why = f": {escape(event['detail']['why'])}" if event.get("detail", {}).get("why") else ""
        out.print(f"  {event['at'][:16]} {event['kind']}{who}{why}", highlight=False)
    if diff:
        out.print(escape(diff), highlight=False, end="")


@proposals_app.command("show")
def proposals_show(
    proposal_id: IdArgument,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: JsonOption = False,
) -> None:
    """One proposal with its evidence, backtest, dry run and trail."""
    with _open(workspace, store) as metric_store:
        record = metric_store.proposal(proposal_id)
    _show(record, json_out)


@proposals_app.command("accept")
def proposals_accept(
    proposal_id: IdArgument,
    by: ByOption,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: JsonOption = False,
) -> None:
    """Accept a proposal: its expectation is written into the dataset's check document as advisory
    (the diff is shown)."""
    from assay.platform.proposals import accept

    with _open(workspace, store) as metric_store:
        done = accept(metric_store, proposal_id, by=by, workspace=Workspace(workspace).root)
    _show(done.proposal, json_out, done.diff)


@proposals_app.command("reject")
def proposals_reject(
    proposal_id: IdArgument,
    by: ByOption,
    why: Annotated[str, typer.Option(help="Why (kept with the decision).")],
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: JsonOption = False,
) -> None:
    """Reject a proposal, saying why: it is not proposed again until its evidence changes."""
    from assay.platform.proposals import reject

    with _open(workspace, store) as metric_store:
        record = reject(metric_store, proposal_id, by=by, why=why)
    _show(record, json_out)
