"""``assay check import-dbt``: a dbt manifest's generic tests as check documents, one per model.
Registered on :data:`assay._cli_check.check_app`; the work is in :mod:`assay.platform.checks.dbt`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def check_import_dbt(
    manifest: Annotated[
        Path,
        typer.Argument(metavar="MANIFEST", help="A dbt project's target/manifest.json (dbt 1.6 and later)."),
    ],
    source_template: Annotated[
        str,
        typer.Option(
            "--source-template",
            help="Where each model's table lives, with {database} {schema} {name} {alias}: "
            "duckdb:PATH#TABLE, postgres:URL#TABLE, iceberg:TABLE or a file path.",
        ),
    ],
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Write one MODEL.yaml per model into this folder.", show_default="stdout"),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace documents that already exist in --out.")
    ] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print a report: documents, converted and not converted tests.")
    ] = False,
) -> None:
    """A dbt manifest's generic tests as check documents, one per model; every test not converted is named."""
    from assay.platform.checks.dbt.command import import_dbt_command

    raise typer.Exit(import_dbt_command(manifest, source_template, out_dir, force=force, json_out=json_out))
