"""``assay reconcile``: two tables compared row by row by key (docs/reconcile.md).

Imported by :mod:`assay.cli`, which registers the command; the work is in
:mod:`assay.platform.reconcile`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from assay._cli_common import SparkMasterOption, WorkspaceOption, err, out
from assay._cli_common import write_json as _write_json


def reconcile_command(
    source: Annotated[
        str,
        typer.Argument(
            help="The source: a file or glob, iceberg:NAME, duckdb:PATH#TABLE, postgres:URL#schema.table "
            "or spark:db.table."
        ),
    ],
    target: Annotated[str, typer.Argument(help="The target, named as the source is.")],
    key: Annotated[
        list[str], typer.Option("--key", help="A key column (repeat for a key of several columns).")
    ],
    columns: Annotated[
        str | None,
        typer.Option(
            help="The compared columns, C1,C2.", show_default="the columns both sides share, minus the key"
        ),
    ] = None,
    tolerance: Annotated[
        list[str] | None,
        typer.Option(
            help="C=ABS: numbers of column C within ABS of each other are equal (repeat per column).",
            show_default="none: equal means equal",
        ),
    ] = None,
    samples: Annotated[int, typer.Option(help="Sample keys of each kind of difference.")] = 10,
    group_by: Annotated[
        str | None,
        typer.Option(
            "--group-by",
            help="Compare the count and the sums of the numeric columns per value of this column, not rows.",
            show_default="rows",
        ),
    ] = None,
    json_out: Annotated[
        str | None,
        typer.Option(
            "--json", help="Write the result as JSON to OUT ('-' = stdout).", show_default="not written"
        ),
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(
            help="The dataset whose classified columns are masked in the sample keys (docs/privacy.md).",
            show_default="the target's (or else the source's) when it is iceberg:NAME",
        ),
    ] = None,
    workspace: WorkspaceOption = None,
    spark_master: SparkMasterOption = None,
) -> None:
    """Compare SOURCE with TARGET by key: rows only in one, rows whose columns differ, per column,
    with sample keys. Exit 1 when they differ (or a key is NULL or repeated)."""
    from assay._render import progress
    from assay.engine import Engine
    from assay.platform.reconcile import Spec, reconcile
    from assay.platform.reconcile.sides import default_factory, location
    from assay.workspace import Workspace

    spec = Spec.of(
        key,
        columns=None if columns is None else columns.split(","),
        tolerances=tolerance or (),
        samples=samples,
        group_by=group_by,
    )

    def factory(kind: str) -> Engine:
        if kind == "spark":
            from assay.engine.registry import make_engine

            return make_engine("spark", **({"master": spark_master} if spark_master else {}))
        return default_factory(kind)

    space = Workspace(workspace)
    if dataset is not None and space.document_for(dataset) is None:
        from assay.errors import ConfigError

        raise ConfigError(
            f"--dataset {dataset}: no check document or dataset file of that name in the workspace"
        )
    with progress(err, f"Reconciling {source} with {target}"):
        result = reconcile(
            source,
            target,
            spec,
            base=Path.cwd(),
            workspace=space.root,
            factory=factory,
            progress=lambda step: err.log(step) if err.is_terminal else None,
        )
    named = dataset or next(
        (
            where.iceberg
            for where in map(location, (target, source))
            if not isinstance(where, str) and where.iceberg
        ),
        None,
    )
    if named:
        from assay.platform.privacy import masker_for

        result = result.masked(masker_for(space, named))
    found = result.to_dict()
    if json_out is not None:
        _write_json(json_out, found)
    if json_out != "-":
        print_reconcile(out, found)
    if not result.equal:
        raise typer.Exit(1)


def print_reconcile(console: Console, found: dict[str, Any]) -> None:
    """The counts on a line, then each column's changes and the sample keys."""

    def say(text: str) -> None:
        console.print(text, highlight=False, markup=False)

    rows = found["rows"]
    unit = "groups of " + found["group_by"] if found.get("group_by") else "rows"
    say(
        f"{found['source']} ({rows['source']} rows) against {found['target']} ({rows['target']} rows), "
        f"by {', '.join(found['key'])}: {'equal' if found['equal'] else 'DIFFERENT'}"
    )
    say(
        f"  {unit} only in the source: {found['only_in_source']}; only in the target: "
        f"{found['only_in_target']}; changed: {found['changed']}"
    )
    changed = {c: n for c, n in found["changed_by_column"].items() if n}
    if changed:
        say("  changed by column: " + ", ".join(f"{c} {n}" for c, n in changed.items()))
    for side in ("source", "target"):
        if found["null_keys"].get(side):
            say(f"  rows with a NULL key in the {side} (not compared): {found['null_keys'][side]}")
        if found["duplicate_keys"].get(side):
            say(f"  keys on more than one row in the {side} (not compared): {found['duplicate_keys'][side]}")
    for kind in ("only_in_source", "only_in_target", "changed"):
        for sample in found["samples"][kind]:
            key = ", ".join(f"{c}={v}" for c, v in sample["key"].items())
            extra = f" ({', '.join(sample['columns'])})" if sample.get("columns") else ""
            say(f"  {kind.replace('_', ' ')}: {key}{extra}")
    moved = found.get("moved")
    if moved:
        say(
            "  moved: "
            + "; ".join(f"{side} {m['rows']} rows, {m['bytes']} bytes" for side, m in moved.items())
        )
