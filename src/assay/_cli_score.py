"""``assay score`` and ``assay certify``: quality scores, their rollups, an event's EQS, and a
dataset's certification badge.

Imported by :mod:`assay.cli`, which registers the commands; the work is in
:mod:`assay.platform.scores`, :mod:`assay.platform.certify` and the event contracts' score.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from assay._cli_common import StoreOption, WorkspaceOption, out
from assay._render_runs import print_badge, print_scores
from assay.errors import ConfigError
from assay.workspace import Workspace, store_url

NowOption = Annotated[
    str | None,
    typer.Option(
        help="The clock the score is computed at (ISO-8601); its window ends there.", show_default="now"
    ),
]


def _open(workspace: Any, store: str | None) -> tuple[Workspace, Any]:
    from assay.store import MetricStore

    space = Workspace(workspace)
    return space, MetricStore.open(store_url(store), workspace=space.root)


def score(
    datasets: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[DATASET]...",
            help="Datasets to score ('event NAME' scores an event).",
            show_default="every dataset",
        ),
    ] = None,
    by: Annotated[
        str | None,
        typer.Option("--by", help="Roll the scores up by tag, schema or owner.", show_default="no rollup"),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the scores as JSON.")] = False,
    now: NowOption = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
) -> None:
    """Score datasets: Health (pass rate, reliability) and Enrichment (metadata, check coverage)
    make the score; Importance (consumers, reads) ranks what to fix first. `assay score event
    NAME` prints an event's Event Quality Score. Formulas: docs/scores.md."""
    from assay.judge.evaluation import parse_now
    from assay.platform import entries, scores

    clock = parse_now(now)
    if by is not None and by not in scores.ROLLUP_BY:
        raise ConfigError(f"--by must be one of {', '.join(scores.ROLLUP_BY)}, not '{by}'")
    names = list(datasets or [])
    if names and names[0] == "event":
        if len(names) != 2 or by is not None:
            raise ConfigError("usage: assay score event NAME [--json] (one event, no --by)")
        _event(names[1], clock, json_out, workspace, store)
        return
    space, metric_store = _open(workspace, store)
    with metric_store:
        found = entries.score_and_keep(space.root, metric_store, names, now=clock)
    if by is not None:
        groups = scores.rollup(found, by)
        if json_out:
            sys.stdout.write(json.dumps(groups, indent=2) + "\n")
            return
        table = Table(title=f"Scores by {by}", title_justify="left")
        for column in ("group", "score", "datasets", "fix first"):
            table.add_column(column, overflow="fold")
        for g in groups:
            first = ", ".join(f"{item['dataset']} ({item['score']:.1f})" for item in g["fix_first"][:3])
            table.add_row(escape(g["group"]), f"{g['score']:.1f}", str(g["datasets"]), escape(first))
        out.print(table)
        return
    if json_out:
        sys.stdout.write(json.dumps([s.to_dict() for s in found], indent=2) + "\n")
        return
    print_scores(found, clock)


def _event(name: str, clock: Any, json_out: bool, workspace: Any, store: str | None) -> None:
    from assay.platform.events.score import record_event_score

    space, metric_store = _open(workspace, store)
    with metric_store:
        # the day's score is kept (the last of a UTC day replaces the others), and the producer
        # alerted on the second day below the gate
        found = record_event_score(metric_store, space.root, name, now=clock)
    if json_out:
        sys.stdout.write(json.dumps(found, indent=2) + "\n")
        return
    gate = found.get("gate")
    state = "below its gate" if found.get("below_gate") else "at or above its gate"
    tier = found.get("tier")
    out.print(
        f"{escape(found['event'])}: {found['score']:.1f} of 100 (tier {tier}, gate {gate}: {state})"
        + (" — provisional: under 14 days of history" if found.get("provisional") else ""),
        highlight=False,
    )
    table = Table(title_justify="left")
    for column in ("dimension", "points", "max", "why"):
        table.add_column(column, overflow="fold")
    for dimension, item in found["dimensions"].items():
        table.add_row(
            dimension, f"{item['points']:.1f}", f"{item['max']:g}", escape(str(item.get("why") or ""))
        )
    out.print(table)


def certify(
    dataset: Annotated[str, typer.Argument(metavar="DATASET", help="The dataset to certify.")],
    enroll: Annotated[
        bool,
        typer.Option(
            "--enroll",
            help="Write the four certification template checks, advisory, into the dataset's document.",
        ),
    ] = False,
    key: Annotated[
        str | None,
        typer.Option(
            help="With --enroll: the column that identifies a row.", show_default="found from the profile"
        ),
    ] = None,
    freshness: Annotated[
        str | None,
        typer.Option(
            help="With --enroll: the timestamp column of freshness.", show_default="found from the profile"
        ),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the badge and its criteria as JSON.")
    ] = False,
    now: NowOption = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
) -> None:
    """Judge DATASET's certification criteria and move its badge: certified, at_risk (a criterion
    slipping, still certified), not_certified or revoked. With --enroll, write the template checks
    its badge needs (freshness, uniqueness, completeness, volume) as advisory."""
    from assay.judge.evaluation import parse_now
    from assay.platform import certify as certification
    from assay.platform.scores import subjects

    clock = parse_now(now)
    space, metric_store = _open(workspace, store)
    with metric_store:
        (subject,) = subjects(space.root, metric_store, [dataset])
        if enroll:
            from assay.platform.checks.edit import add_expectations

            found = certification.templates(subject, metric_store, now=clock, key=key, freshness=freshness)
            path = certification.enroll_path(subject)
            if not found["expectations"]:
                message = f"{dataset}: every core dimension has a certification check already"
                if json_out:
                    sys.stdout.write(
                        json.dumps({"dataset": dataset, "enrolled": [], "document": str(path)}) + "\n"
                    )
                else:
                    out.print(message, highlight=False)
                return
            diff = add_expectations(path, found["expectations"], found["metrics"] or None)
            if json_out:
                payload = {
                    "dataset": dataset,
                    "enrolled": [e["id"] for e in found["expectations"]],
                    "document": str(path),
                    "diff": diff,
                }
                sys.stdout.write(json.dumps(payload, indent=2) + "\n")
                return
            out.print(diff, highlight=False, markup=False)
            out.print(
                f"enrolled {dataset}: {', '.join(e['id'] for e in found['expectations'])} written to {path} "
                f"as advisory; they count toward the badge after "
                f"{subject.document.certification.advisory_days} days of outcomes",
                highlight=False,
            )
            return
        result = certification.certify(subject, metric_store, now=clock, by=os.environ.get("ASSAY_USER"))
    if json_out:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        return
    print_badge(result)
