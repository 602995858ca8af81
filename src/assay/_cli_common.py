"""What every ``assay`` command module shares: the workspace and store options, the consoles,
and how a JSON report is written (stdout, or a file written whole)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from enum import StrEnum
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


# The CI test report of every command that judges rules or expectations (docs/ci.md).
JunitOption = Annotated[
    Path | None,
    typer.Option(
        "--junit",
        metavar="FILE",
        help="Also write the results as a JUnit XML file, for CI test-report viewers.",
        show_default="not written",
    ),
]


class ProblemFormat(StrEnum):
    """How ``check validate`` and ``dqdl validate`` print mistakes (docs/ci.md)."""

    TEXT = "text"  # file:line:col: message, on stderr
    GITHUB = "github"  # ::error file=…,line=…,col=…::message, GitHub Actions' annotations, on stdout


FormatOption = Annotated[
    ProblemFormat,
    typer.Option(
        "--format",
        help="How mistakes are printed: text (file:line:col: message) or github "
        "(GitHub Actions annotations on stdout).",
    ),
]


@contextmanager
def junit_errors(target: Path | None, subject: str, command: str) -> Iterator[datetime]:
    """Around a command that writes ``--junit``: when it stops on an error (exit 2 or 3) before
    it has results, the file still tells why, as one test case in error: a CI report step after
    a failed command shows that error, not nothing or an earlier run's file. Yields the start."""
    started = datetime.now(UTC)
    try:
        yield started
    except typer.Exit as done:
        # a document's mistakes are printed one a line, then exit 2 with the error as the cause
        if target is not None and isinstance(done.__cause__, Exception):
            _junit_error(target, subject, command, done.__cause__, started)
        raise
    except Exception as error:
        if target is not None:
            _junit_error(target, subject, command, error, started)
        raise


def _junit_error(target: Path, subject: str, command: str, error: Exception, started: datetime) -> None:
    from assay.platform.reports import junit
    from assay.platform.runs.run import as_assay_error

    failure = as_assay_error(error, "assay")
    kind = "config_error" if failure.exit_code == 2 else "system_error"
    junit.write(target, [junit.error_suite(subject, command, failure, kind, started)])


def retry_of(retries: int, backoff: float) -> Any:
    """The driver's :class:`~assay.platform.runs.driver.Retry` for ``--retries`` and ``--backoff``."""
    from assay.platform.runs.driver import Retry

    return Retry.after(retries, backoff)


out = _terminal_out
err = _terminal_err


def write_json(target: str, payload: dict[str, Any]) -> None:
    if target == "-":
        sys.stdout.write(json.dumps(payload, indent=2, allow_nan=False) + "\n")
        return
    from assay.lake.writers import write_json as write_file  # imported when a file is written

    write_file(Path(target), payload)
