"""``assay check``: the commands of check documents (validate, run, history, plan, export, import).

Imported by :mod:`assay.cli` (which registers :data:`check_app`); argument parsing and rendering
only, as in ``cli.py``: the work is in :mod:`assay.platform.checks`.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.markup import escape
from rich.table import Table

from assay._cli_common import (
    BACKOFF_HELP,
    RETRIES_HELP,
    EngineOption,
    FormatOption,
    JunitOption,
    ProblemFormat,
    SparkMasterOption,
    StoreOption,
    WorkspaceOption,
    err,
    junit_errors,
    out,
)
from assay._cli_common import write_json as _write_json
from assay._cli_dbt import check_import_dbt
from assay._render_runs import STYLE as _STYLE
from assay._render_runs import measured, print_run
from assay.errors import ConfigError
from assay.vocabulary import fail_on as parse_fail_on
from assay.workspace import Workspace, store_url

if TYPE_CHECKING:
    from assay.platform.checks.document import Document, DocumentError

check_app = typer.Typer(
    help="Check documents (kind: DatasetChecks): what to measure, what makes it wrong.", no_args_is_help=True
)

DocArgument = Annotated[
    Path,
    typer.Argument(
        metavar="DOC",
        help="A check document (YAML, kind: DatasetChecks) or event contracts (kind: EventContract).",
    ),
]
MoreArgument = Annotated[
    list[Path] | None,
    typer.Argument(
        metavar="DOC",
        help="More event contract files: every contract on one event is measured together.",
        show_default=False,
    ),
]

# check run's --fail-on: every command's levels, and the word "nothing" (assay.vocabulary.NOTHING).
CheckFailOnOption = Annotated[
    str | None,
    typer.Option(
        "--fail-on",
        metavar="LEVEL",
        help="Exit 1 when an expectation of this level or worse failed: critical, error or warning "
        "(also accepted: failed = warning, hard = critical, soft = warning); 'nothing' exits 1 when "
        "the run evaluated nothing (every expectation skipped or in error), alone or as error,nothing.",
        show_default="never",
    ),
]


_TITLE = "assay check validate"  # the annotations' title, as GitHub shows it over the message


def _load(doc: Path, form: str = "text") -> Document:
    """The document, or exit 2 with every mistake on its own line (file:line:col: message)."""
    from assay.platform.checks.document import DocumentError, load_document

    try:
        return load_document(doc)
    except DocumentError as error:
        _problems(error, str(doc), form)


def _problems(error: DocumentError, where: str, form: str) -> NoReturn:
    """Print a document's mistakes, one a line (``text``: file:line:col: message on stderr;
    ``github``: a GitHub Actions annotation each, on stdout, where the runner reads them), then
    exit 2 with the error as the cause (``--junit`` writes it)."""
    from assay.platform.reports.github import annotation

    for problem in error.problems:
        if form == ProblemFormat.GITHUB:
            shown = annotation(
                "error",
                problem.message,
                file=problem.file,
                line=problem.line,
                col=problem.column,
                title=_TITLE,
            )
            sys.stdout.write(shown + "\n")
        else:
            sys.stderr.write(f"{problem}\n")
    noun = "mistake" if len(error.problems) == 1 else "mistakes"
    sys.stderr.write(f"{where}: {len(error.problems)} {noun}; nothing was run\n")
    raise typer.Exit(2) from error


def _load_events(files: list[Path], form: str = "text") -> Any:
    """The events of contract files, or exit 2 with every mistake on its own line."""
    from assay.platform.events.document import ContractError
    from assay.platform.events.event import events, load_contracts

    try:
        return events(load_contracts(files))
    except ContractError as error:
        _problems(error, ", ".join(map(str, files)), form)


def _validate_events(files: list[Path], json_out: bool, form: str) -> None:
    from assay.platform.events.event import describe

    described = describe(_load_events(files, form))
    if json_out:
        _write_json("-", {"documents": [str(f) for f in files], "valid": True, "events": described})
        return
    for item in described:
        count = sum(len(c["requirements"]) for c in item["contracts"])
        out.print(
            f"{', '.join(map(str, files))}: valid; event {item['event']}, "
            f"{len(item['contracts'])} contract(s), {count} requirement(s) on {len(item['fields'])} "
            f"field(s), one query per {item['window']} window",
            highlight=False,
        )


@check_app.command("validate")
def check_validate(
    doc: DocArgument,
    more: MoreArgument = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print what the document declares as JSON.")
    ] = False,
    workspace: WorkspaceOption = None,
    form: FormatOption = ProblemFormat.TEXT,
) -> None:
    """Check DOC without reading any data; exit 2 listing every mistake as file:line:col: message.
    With a workspace (when its folder exists), DOC's notify routes are checked against the
    channels of its assay.yaml, as check run checks them."""
    from assay.platform.events.document import event_files
    from assay.platform.reports.github import annotation
    from assay.platform.runs.check import notify_config

    try:
        files = event_files(doc, more)
        if files is not None:
            _validate_events(files, json_out, form)
            return
        document = _load(doc, form)
        space = Workspace(workspace)
        if space.root.is_dir():
            notify_config(space, document)
    except ConfigError as error:  # a mistake without a place (no such file, a route): on DOC
        if form == ProblemFormat.GITHUB:
            sys.stdout.write(annotation("error", str(error), file=str(doc), title=_TITLE) + "\n")
        raise
    metrics = sum(len(p.specs()) for p in document.profiles)
    if json_out:
        payload = {
            "document": str(doc),
            "valid": True,
            "dataset": document.dataset.name,
            "profiles": [p.id for p in document.profiles],
            "metrics": metrics,
            "expectations": [e.id for e in document.expectations],
        }
        _write_json("-", payload)
        return
    out.print(
        f"{doc}: valid; dataset {document.dataset.name}, {len(document.profiles)} profile(s), "
        f"{metrics} metric(s), {len(document.expectations)} expectation(s)",
        highlight=False,
    )


@check_app.command("run")
def check_run(
    doc: DocArgument,
    more: MoreArgument = None,
    at: Annotated[
        str | None,
        typer.Option(
            help="The run's logical date or date-time: its slice of rows and its point in history.",
            show_default="the date of --now",
        ),
    ] = None,
    now: Annotated[
        str | None,
        typer.Option(
            help="The run's clock (ISO-8601), for freshness and now() in filters.", show_default="now"
        ),
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only", help="Run only this expectation id (repeatable).", show_default="every expectation"
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Measure and judge, record nothing; show the rows flagged.")
    ] = False,
    retries: Annotated[
        int | None,
        typer.Option(min=0, help=RETRIES_HELP, show_default="the document's retry.attempts - 1"),
    ] = None,
    backoff: Annotated[
        float | None,
        typer.Option(
            min=0,
            help=BACKOFF_HELP,
            show_default="the document's retry.backoff",
        ),
    ] = None,
    json_out: Annotated[
        str | None,
        typer.Option(
            "--json",
            metavar="OUT",
            help="Write the run's JSON to OUT ('-': stdout).",
            show_default="not written",
        ),
    ] = None,
    fail_on: CheckFailOnOption = None,
    junit: JunitOption = None,
    engine: EngineOption = "duckdb",
    spark_master: SparkMasterOption = None,
) -> None:
    """Run DOC: measure each profile in one query, store the metrics, judge every expectation from
    stored numbers (event contracts: every contract on an event, one window, one query). Exit 0
    completed, 1 --fail-on reached, 2 invalid document, 3 system error."""
    from assay._render import progress
    from assay.platform.checks.outcomes import failing_severities
    from assay.platform.events.document import event_files
    from assay.platform.runs.check import run_document
    from assay.store import MetricStore

    with junit_errors(junit, str(doc), "check run") as started:
        parse_fail_on(fail_on, nothing=True)  # a wrong word stops the command before anything runs
        files = event_files(doc, more)
        if files is not None:
            options = {"at": at, "now": now, "only": tuple(only or ()), "dry_run": dry_run}
            _run_events(
                files,
                options | {"retries": retries, "backoff": backoff},
                workspace,
                store,
                engine,
                (json_out, junit, started),
                fail_on,
            )
            return
        document = _load(doc)
        space = Workspace(workspace)
        space.ensure()
        with (
            MetricStore.open(store_url(store), workspace=space.root) as metric_store,
            progress(err, f"Checking {document.dataset.name}"),
        ):
            result = run_document(
                document,
                doc,
                at=at,
                now=now,
                store=metric_store,
                workspace=space,
                only=tuple(only or ()),
                dry_run=dry_run,
                retries=retries,
                backoff=backoff,
                engine=engine,
                spark_master=spark_master,
            )
        payload = result.to_dict()
        _reports(payload, json_out, junit, started)
        if json_out != "-":
            print_run(payload)
        if result.state == "system_error":
            sys.stderr.write(f"error: {result.error or 'the run could not measure'}\n")
            raise typer.Exit(3)
        if fail_on is not None and failing_severities(result, fail_on):
            raise typer.Exit(1)


def _run_events(
    files: list[Path],
    options: dict[str, Any],
    workspace: Path | None,
    store: str | None,
    engine: str,
    reports: tuple[str | None, Path | None, datetime],
    fail_on: str | None,
) -> None:
    """``check run`` of event contract files: one run per event, each on its window; ``reports``
    are ``--json``, ``--junit`` and the command's start."""
    from assay._render import progress
    from assay.platform.checks.outcomes import failing_severities
    from assay.platform.runs.event import duckdb_only, events_payload, run_events
    from assay.store import MetricStore

    duckdb_only(engine)
    found = _load_events(files)  # every mistake of the files, each with its place, before anything opens
    space = Workspace(workspace)
    space.ensure()
    with (
        MetricStore.open(store_url(store), workspace=space.root) as metric_store,
        progress(err, "Checking event contracts"),
    ):
        results = run_events(found, store=metric_store, workspace=space, **options)
    payloads = [r.to_dict() for r in results]
    json_out = reports[0]
    _reports(events_payload(results), *reports)
    if json_out != "-":
        for payload in payloads:
            print_run(payload)
            for contract in payload["contracts"]:
                style = _STYLE.get(contract["outcome"], "")
                out.print(
                    f"contract {escape(contract['consumer'])}: [{style}]{contract['outcome']}[/{style}]"
                    + (f", {len(contract['broken'])} broken: " if contract["broken"] else "")
                    + escape("; ".join(_broken(b) for b in contract["broken"])),
                    highlight=False,
                )
    failed = [r for r in results if r.state == "system_error"]
    if failed:
        sys.stderr.write(f"error: {failed[0].error or 'the run could not measure'}\n")
        raise typer.Exit(3)
    if fail_on is not None and any(failing_severities(r, fail_on) for r in results):
        raise typer.Exit(1)


def _reports(payload: dict[str, Any], json_out: str | None, junit: Path | None, started: datetime) -> None:
    """A check run's ``--json`` and ``--junit``, both from its one payload."""
    if json_out is not None:
        _write_json(json_out, payload)
    if junit is not None:
        from assay.platform.reports import junit as report

        report.write(junit, report.check_suites(payload, started=started))


def _broken(item: dict[str, Any]) -> str:
    """One broken requirement of a contract, in words: ``venue.non_empty 69.41% (baseline 100.00%)``."""
    shown = {k: "none" if item[k] is None else f"{item[k]:.2%}" for k in ("observed", "baseline")}
    return f"{item['field']}.{item['requirement']} {shown['observed']} (baseline {shown['baseline']})"


@check_app.command("history")
def check_history(
    doc: DocArgument,
    expectation: Annotated[
        str | None, typer.Option(help="Only this expectation's outcomes.", show_default="every expectation")
    ] = None,
    group: Annotated[
        list[str] | None,
        typer.Option(
            "--group",
            metavar="K=V",
            help="Only this group's outcomes (repeatable).",
            show_default="every group",
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the history as JSON.")] = False,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
) -> None:
    """The recorded runs of DOC's dataset, oldest first: states, outcomes, observed and expected
    values. Dry runs never appear."""
    from assay.platform.checks.history import history
    from assay.store import MetricStore

    document = _load(doc)
    wanted: dict[str, str] = {}
    for item in group or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--group {item!r}: write --group KEY=VALUE")
        wanted[key] = value
    if expectation is not None and expectation not in {e.id for e in document.expectations}:
        raise ConfigError(f"--expectation: no expectation '{expectation}' in {doc}")
    space = Workspace(workspace)
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        payload = history(metric_store, document.dataset.name, expectation=expectation, group=wanted)
    if json_out:
        sys.stdout.write(json.dumps(payload, indent=2, sort_keys=False, allow_nan=False) + "\n")
        return
    table = Table(title=f"{document.dataset.name}: {len(payload['runs'])} run(s)", title_justify="left")
    for name in ("at", "state", "expectation", "group", "outcome", "observed", "expected"):
        table.add_column(name, overflow="fold")
    for run in payload["runs"]:
        for item in run["outcomes"] or [{"expectation": "", "group": None, "outcome": "", "observed": None}]:
            group_text = ", ".join(f"{k}={v}" for k, v in (item.get("group") or {}).items())
            expected = item.get("expected") or {}
            table.add_row(
                escape(str(run["at"])),
                run["state"],
                escape(item["expectation"]),
                escape(group_text),
                item["outcome"],
                measured(item.get("observed"), item.get("unit")),
                escape(
                    ", ".join(
                        f"{k} {measured(v, item.get('unit'))}" if isinstance(v, float | int) else f"{k} {v}"
                        for k, v in expected.items()
                    )
                ),
            )
    out.print(table)


@check_app.command("plan")
def check_plan(
    doc: DocArgument,
    json_out: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
    at: Annotated[
        str | None, typer.Option(help="The logical date the plan's slice would read.", show_default="today")
    ] = None,
    workspace: WorkspaceOption = None,
) -> None:
    """What each profile of DOC will measure, the one query it will send (SQL), and which
    expectations read which metric. Reads the source's schema only; nothing runs."""
    from assay.platform.checks.history import plan

    document = _load(doc)
    payload = plan(document, doc, at=at, workspace=Workspace(workspace))
    if json_out:
        _write_json("-", payload)
        return
    for item in payload["profiles"]:
        out.print(f"[bold]profile {escape(item['id'])}[/bold] on {escape(item['source'])}", highlight=False)
        for metric in item["metrics"]:
            readers = ", ".join(metric["expectations"]) or "no expectation"
            error = f"  [yellow]{escape(metric['error'])}[/yellow]" if metric.get("error") else ""
            out.print(f"  {escape(metric['metric'])}: read by {escape(readers)}{error}", highlight=False)
        if item.get("rules"):
            out.print(f"  DQDL rules in the same scan: {escape(', '.join(item['rules']))}", highlight=False)
        if item.get("error"):
            out.print(f"  [yellow]{escape(item['error'])}[/yellow]", highlight=False)
        if item.get("sql"):
            out.print(item["sql"], highlight=False, markup=False)


@check_app.command("export-dqdl")
def check_export_dqdl(
    doc: DocArgument,
    out_file: Annotated[
        Path | None, typer.Option("--out", help="Write the ruleset to this file.", show_default="stdout")
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the ruleset and each expectation's rule as JSON.")
    ] = False,
) -> None:
    """DOC as an AWS Glue DQDL ruleset; what has no DQDL equivalent is a comment, never dropped."""
    from assay.platform.checks.convert_cli import export_command
    from assay.platform.checks.export import export_dqdl, export_entries

    if not json_out:
        raise typer.Exit(export_command(doc, out_file))
    document = _load(doc)
    text = export_dqdl(document)
    if out_file is not None:
        from assay.lake.writers import write_text

        write_text(out_file, text)
    entries = [
        {"expectation": e.expectation, "rule": e.rule, "notes": list(e.notes)}
        for e in export_entries(document)
    ]
    payload = {
        "document": str(doc),
        "dataset": document.dataset.name,
        "out": None if out_file is None else str(out_file),
    }
    _write_json("-", {**payload, "ruleset": text, "expectations": entries})


@check_app.command("import-odcs")
def check_import_odcs(
    contract: Annotated[
        Path, typer.Argument(metavar="CONTRACT", help="An Open Data Contract Standard v3 contract (YAML).")
    ],
    out_file: Annotated[
        Path | None,
        typer.Option("--out", help="Write the check document to this file.", show_default="stdout"),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the document and the entries not imported as JSON.")
    ] = False,
) -> None:
    """A contract's quality section as a check document; every entry without an equivalent is named."""
    from assay.lake.writers import write_text
    from assay.platform.checks.convert_cli import import_command
    from assay.platform.checks.document import read_text
    from assay.platform.checks.odcs import import_odcs

    if not json_out:
        raise typer.Exit(import_command(contract, out_file))
    text = read_text(contract, "contract file")
    result = import_odcs(text, filename=str(contract))
    if out_file is not None:
        write_text(out_file, result.text)
    payload = {"contract": str(contract), "out": None if out_file is None else str(out_file)}
    _write_json("-", {**payload, "document": result.text, "unsupported": list(result.unsupported)})


check_app.command("import-dbt")(check_import_dbt)
