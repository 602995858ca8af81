"""What every ``assay`` command module shares: the workspace and store options, the consoles,
and how a JSON report is written (stdout, or a file written whole)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from assay._terminal import err as _terminal_err
from assay._terminal import out as _terminal_out

# The options every command that reads a workspace or the metric store takes, spelled once.
# Help texts never hold square brackets: rich reads them as markup and drops them. A default that
# is not a value (None means "derived" or "not done") is described with show_default, so that every
# option's help shows what happens without it (tests/test_cli.py checks each command's --help).
WorkspaceOption = Annotated[
    Path | None,
    typer.Option(help="Workspace folder.", envvar="ASSAY_WORKSPACE", show_default="./.assay"),
]
StoreOption = Annotated[
    str | None,
    typer.Option(
        help="Metric store URL.", envvar="ASSAY_STORE_URL", show_default="the workspace's SQLite file"
    ),
]
# Where a run's queries run (docs/engines.md); spelled once for every command that takes them.
EngineOption = Annotated[
    str,
    typer.Option(
        "--engine", help="The engine that runs the queries: duckdb or spark.", envvar="ASSAY_ENGINE"
    ),
]
SparkMasterOption = Annotated[
    str | None,
    typer.Option(
        "--spark-master",
        help="The Spark master URL for --engine spark (spark://host:7077, sc://host for Spark Connect).",
        envvar="ASSAY_SPARK_MASTER",
        show_default="local[2]",
    ),
]
# One --fail-on for every command that judges (assay.vocabulary.fail_on reads it; README.md,
# "Exit codes", says where each command's findings stand on the scale).
FailOnOption = Annotated[
    str | None,
    typer.Option(
        "--fail-on",
        metavar="LEVEL",
        help="Exit 1 when a finding of this level or worse was found: critical, error or warning "
        "(also accepted: failed = warning, hard = critical, soft = warning).",
        show_default="never",
    ),
]
# How a run tries again after a system error (docs/runs.md, "Retries"): the same words for
# `check run` (whose defaults are its document's) and the flows whose default is no retry.
RETRIES_HELP = "Retries after a system error."
BACKOFF_HELP = "Seconds before the first retry (doubling)."
RetriesOption = Annotated[int, typer.Option(min=0, help=RETRIES_HELP)]
BackoffOption = Annotated[float, typer.Option(min=0, help=BACKOFF_HELP)]


def retry_of(retries: int, backoff: float) -> Any:
    """The driver's :class:`~assay.platform.runs.driver.Retry` for ``--retries`` and ``--backoff``."""
    from assay.platform.runs.driver import Retry

    return Retry(retries + 1, backoff)


out = _terminal_out
err = _terminal_err


def write_json(target: str, payload: dict[str, Any]) -> None:
    text = json.dumps(payload, indent=2, allow_nan=False) + "\n"
    if target == "-":
        sys.stdout.write(text)
        return
    from assay.lake.writers import write_text  # imported when a file is written, not at start-up

    write_text(Path(target), text)
