"""``assay dqdl validate``, ``assay dqdl run`` and ``assay rules compile``: DQDL rulesets, written
by hand or kept in a control CSV.

Imported by :mod:`assay.cli`, which registers the groups; the work is in :mod:`assay.lang.dqdl`,
:mod:`assay.platform.flows` and :mod:`assay.rules.control`.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from assay._cli_common import (
    BackoffOption,
    EngineOption,
    FailOnOption,
    FormatOption,
    JunitOption,
    ProblemFormat,
    RetriesOption,
    SparkMasterOption,
    StoreOption,
    WorkspaceOption,
    err,
    junit_errors,
    out,
    retry_of,
)
from assay._cli_common import write_json as _write_json
from assay._cli_reading import (
    DecimalCommaOption,
    DelimiterOption,
    EncodingOption,
    NoHeaderOption,
    NullValueOption,
    QuoteOption,
    TypesOption,
)
from assay._terminal import visible
from assay.errors import ConfigError
from assay.platform.reading import read_options
from assay.vocabulary import fail_on as parse_fail_on
from assay.vocabulary import reached
from assay.workspace import Workspace, store_url

dqdl_app = typer.Typer(help="Validate and run AWS Glue DQDL rulesets.", no_args_is_help=True)
rules_app = typer.Typer(help="Rulesets kept in a control CSV.", no_args_is_help=True)


def _read_ruleset(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such ruleset file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a UTF-8 text file") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None


def _references(items: list[str]) -> dict[str, str]:
    refs: dict[str, str] = {}
    for item in items:
        alias, sep, path = item.partition("=")
        if not sep or not alias or not path:
            raise ConfigError(f"--ref {item!r}: write --ref ALIAS=PATH")
        if alias in refs:
            raise ConfigError(f"--ref: alias '{alias}' is given twice")
        refs[alias] = path
    return refs


@dqdl_app.command("validate")
def dqdl_validate(
    file: Annotated[Path, typer.Argument(help="A DQDL ruleset file.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print the parsed rules as JSON.")] = False,
    form: FormatOption = ProblemFormat.TEXT,
) -> None:
    """Check that FILE is valid DQDL; exit 2 with a positioned message if it is not."""
    from assay.lang.dqdl import parse_text, rule_text
    from assay.lang.dqdl.errors import DQDLSyntaxError
    from assay.lang.dqdl.printer import analyzer_text
    from assay.platform.reports.github import annotation

    github = form == ProblemFormat.GITHUB
    if github and json_out:  # a warning's annotation would come before the JSON on stdout
        raise ConfigError("--json and --format github both print on stdout: give one of them")
    title = "assay dqdl validate"
    try:
        parsed = parse_text(_read_ruleset(file), filename=str(file))
    except ConfigError as error:
        if github:  # beside the error, printed on stderr as always (exit 2)
            where = error if isinstance(error, DQDLSyntaxError) else None
            message = where.reason if where else str(error)
            line, col = (where.line, where.column) if where else (None, None)
            sys.stdout.write(
                annotation("error", message, file=str(file), line=line, col=col, title=title) + "\n"
            )
        raise
    rules = [rule_text(r) for r in parsed.ruleset.rules or ()]
    analyzers = [analyzer_text(a) for a in parsed.ruleset.analyzers or ()]
    for warning in parsed.warnings:
        if github:
            shown = annotation(
                "warning", warning.message, file=str(file), line=warning.line, col=warning.column, title=title
            )
            sys.stdout.write(shown + "\n")
        else:
            sys.stderr.write(visible(f"{file}:{warning}") + "\n")
    if json_out:
        _write_json("-", {"file": str(file), "valid": True, "rules": rules, "analyzers": analyzers})
        return
    out.print(f"{file}: valid DQDL, {len(rules)} rule(s), {len(analyzers)} analyzer(s)", highlight=False)


@dqdl_app.command("run")
def dqdl_run(
    file: Annotated[Path, typer.Argument(help="A DQDL ruleset file.")],
    data: Annotated[
        str,
        typer.Option(
            "--data",
            help="The primary dataset: a CSV, Parquet or JSON-lines file, or spark:db.table (on Spark).",
        ),
    ],
    ref: Annotated[
        list[str] | None,
        typer.Option("--ref", help="A reference dataset as ALIAS=PATH (repeatable).", show_default="none"),
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(
            help="Record metrics under this dataset name, for dynamic rules and history.",
            show_default="nothing recorded",
        ),
    ] = None,
    partition: Annotated[
        str | None,
        typer.Option(help="The partition of the dataset (e.g. a contributor).", show_default="none"),
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[
        str | None,
        typer.Option(
            "--json", help="Write the result as JSON to OUT ('-' = stdout).", show_default="not written"
        ),
    ] = None,
    row_level: Annotated[
        Path | None,
        typer.Option(
            "--row-level",
            help="Write the rows with their outcomes to OUT.parquet or OUT.csv.",
            show_default="not written",
        ),
    ] = None,
    composite_mode: Annotated[
        str, typer.Option(help="How composite rules combine: column or row.")
    ] = "column",
    filtered_rows: Annotated[
        str, typer.Option(help="Row-level label of rows a where clause excludes: passed or skipped.")
    ] = "passed",
    now: Annotated[
        str | None,
        typer.Option(
            help="Fix the clock (ISO-8601) for date and freshness rules.", show_default="the current time"
        ),
    ] = None,
    fail_on: FailOnOption = None,
    junit: JunitOption = None,
    null_value: NullValueOption = None,
    delimiter: DelimiterOption = None,
    quote: QuoteOption = None,
    no_header: NoHeaderOption = False,
    encoding: EncodingOption = "utf-8",
    decimal_comma: DecimalCommaOption = False,
    schema: TypesOption = None,
    engine: EngineOption = "duckdb",
    spark_master: SparkMasterOption = None,
    retries: RetriesOption = 0,
    backoff: BackoffOption = 0.0,
) -> None:
    """Evaluate the ruleset in FILE on a dataset and report each rule's outcome."""
    from assay._render import print_outcomes, progress
    from assay.dqdl import parse
    from assay.engine.registry import engine_factory
    from assay.platform.flows import evaluate
    from assay.store import MetricStore

    with junit_errors(junit, dataset or data, "dqdl run") as started:
        threshold = parse_fail_on(fail_on)
        references = _references(ref or [])
        read = read_options(null_value, delimiter, quote, no_header, encoding, decimal_comma, schema)
        open_engine = engine_factory(engine, master=spark_master)  # a wrong name fails before any reading
        space = Workspace(workspace)
        metric_store = None
        if dataset:
            url = store_url(store)
            space.ensure()
            metric_store = MetricStore.open(url, workspace=space.root)
        try:
            with progress(err, f"Evaluating {file} on {data}"):
                result = evaluate(
                    lambda: parse(_read_ruleset(file), filename=str(file)),  # read inside the run: a bad
                    data,  # ruleset is a recorded config_error of the dataset
                    references=references or None,
                    dataset=dataset,
                    partition=partition,
                    store=metric_store,
                    now=now,
                    composite_mode=composite_mode,
                    filtered_rows=filtered_rows,
                    row_level=row_level is not None,
                    workspace=space.root,
                    source=str(file),
                    read=read,
                    engine_factory=open_engine,
                    retry=retry_of(retries, backoff),
                )
        finally:
            if metric_store is not None:
                metric_store.close()
        payload = result.to_dict()
        if row_level is not None and result.row_level is not None:
            from assay.lake.writers import write_table

            write_table(result.row_level, row_level)
        if json_out:
            _write_json(json_out, payload)
        if junit is not None:
            from assay.platform.reports import junit as report

            seconds = (datetime.now(UTC) - started).total_seconds()
            suites = report.dqdl_suites(
                payload, run_id=result.run_id, data=data, started=started, seconds=seconds
            )
            report.write(junit, suites)
        if json_out != "-":
            print_outcomes(out, result)
            if row_level is not None:
                out.print(f"Row-level results: {row_level}", highlight=False)
        if reached(result.levels(), threshold):
            raise typer.Exit(1)


@rules_app.command("compile")
def rules_compile(
    control: Annotated[Path, typer.Argument(help="The control CSV.")],
    contributor_type: Annotated[
        str | None,
        typer.Option(
            "--contributor-type",
            help="The contributor type to select.",
            show_default="every rule is for 'all'",
        ),
    ] = None,
    out_file: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Write the ruleset to FILE instead of printing it.", show_default="stdout"
        ),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the ruleset and where it went as JSON.")
    ] = False,
) -> None:
    """Print the DQDL ruleset a control CSV generates for a contributor type."""
    from assay.rules.control import load

    text = load(control).ruleset_text(contributor_type)
    payload = {
        "control": str(control),
        "contributor_type": contributor_type,
        "out": None if out_file is None else str(out_file),
        "ruleset": text,
    }
    if out_file is None:
        if json_out:
            _write_json("-", payload)
        else:
            sys.stdout.write(text)
        return
    try:
        out_file.parent.mkdir(parents=True, exist_ok=True)
        out_file.write_text(text)
    except OSError as error:
        raise ConfigError(f"{out_file}: cannot write: {error.strerror}") from None
    if json_out:
        _write_json("-", payload)
    else:
        err.print(f"wrote {out_file}", highlight=False)
