"""The ``assay`` command: parse arguments, call the package, render. No logic lives here.

Exit codes (DESIGN.md): 0 the run completed (data failures are in its outputs); 1 a
``--fail-on`` level was reached; 2 usage or configuration error; 3 system error.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from assay import __version__
from assay._render import print_outcomes
from assay.errors import AssayError, ConfigError
from assay.workspace import Workspace, store_url

# The options every command that reads a workspace or the metric store takes, spelled once.
WorkspaceOption = Annotated[
    Path | None, typer.Option(help="Workspace folder [env ASSAY_WORKSPACE; ./.assay].")
]
StoreOption = Annotated[
    str | None, typer.Option(help="Metric store URL [env ASSAY_STORE_URL; workspace SQLite].")
]

# How input files are read (docs/reading.md), spelled once for dqdl run, profile and gate.
_READING = "Reading input files"
NullValueOption = Annotated[
    list[str] | None,
    typer.Option(
        "--null-value",
        help="A cell value read as NULL in every column, e.g. NA or NULL (repeatable).",
        rich_help_panel=_READING,
    ),
]
DelimiterOption = Annotated[
    str | None,
    typer.Option(
        help="The CSV delimiter, one character (detected when not given).", rich_help_panel=_READING
    ),
]
QuoteOption = Annotated[
    str | None,
    typer.Option(help="The CSV quote character (detected when not given).", rich_help_panel=_READING),
]
NoHeaderOption = Annotated[
    bool,
    typer.Option(
        "--no-header",
        help="The CSV's first line is data; columns are named column0, column1, ...",
        rich_help_panel=_READING,
    ),
]
EncodingOption = Annotated[
    str, typer.Option(help="The CSV's encoding, e.g. latin-1 or utf-16.", rich_help_panel=_READING)
]
DecimalCommaOption = Annotated[
    bool,
    typer.Option("--decimal-comma", help="Numbers are written 3,14 (not 3.14).", rich_help_panel=_READING),
]
TypesOption = Annotated[
    Path | None,
    typer.Option(
        "--schema",
        help="Declared column types: a schema file in the gate's format (YAML); others are inferred.",
        rich_help_panel=_READING,
    ),
]


def _read_options(
    null_value: list[str] | None,
    delimiter: str | None,
    quote: str | None,
    no_header: bool,
    encoding: str,
    decimal_comma: bool,
    schema: Path | None = None,
) -> Any:
    """The reading options as one ReadOptions value (imported late: ``--help`` stays fast)."""
    from assay.lake.readers import ReadOptions

    types = None
    if schema is not None:
        from assay.gate.schema import load_schema

        types = load_schema(schema)
    return ReadOptions(
        nulls=tuple(null_value or ()),
        delimiter=delimiter,
        quote=quote,
        header=not no_header,
        encoding=encoding,
        decimal_comma=decimal_comma,
        types=types,
    )


app = typer.Typer(
    name="assay",
    help="Data quality for tables that arrive in loads: DQDL rules on DuckDB.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
dqdl_app = typer.Typer(help="Validate and run AWS Glue DQDL rulesets.", no_args_is_help=True)
app.add_typer(dqdl_app, name="dqdl")
rules_app = typer.Typer(help="Rulesets kept in a control CSV.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")
table_app = typer.Typer(help="Tables committed through the gate.", no_args_is_help=True)
app.add_typer(table_app, name="table")
decisions_app = typer.Typer(
    help="Decisions on never-seen values: list, accept, reject.", no_args_is_help=True
)
app.add_typer(decisions_app, name="decisions")

out = Console()
err = Console(stderr=True)


def _version(value: bool) -> None:
    if value:
        out.print(f"assay {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """assay: can this load be trusted?"""


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


def _write_json(target: str, payload: dict[str, Any]) -> None:
    text = json.dumps(payload, indent=2, allow_nan=False) + "\n"
    if target == "-":
        sys.stdout.write(text)
        return
    path = Path(target)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(text)
        partial.replace(path)
    except OSError as error:
        raise ConfigError(f"{path}: cannot write: {error.strerror}") from None


@dqdl_app.command("validate")
def dqdl_validate(
    file: Annotated[Path, typer.Argument(help="A DQDL ruleset file.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print the parsed rules as JSON.")] = False,
) -> None:
    """Check that FILE is valid DQDL; exit 2 with a positioned message if it is not."""
    from assay.lang.dqdl import parse_text, rule_text
    from assay.lang.dqdl.printer import analyzer_text

    parsed = parse_text(_read_ruleset(file), filename=str(file))
    rules = [rule_text(r) for r in parsed.ruleset.rules or ()]
    analyzers = [analyzer_text(a) for a in parsed.ruleset.analyzers or ()]
    for warning in parsed.warnings:
        sys.stderr.write(f"{file}:{warning}\n")
    if json_out:
        _write_json("-", {"file": str(file), "valid": True, "rules": rules, "analyzers": analyzers})
        return
    out.print(f"{file}: valid DQDL, {len(rules)} rule(s), {len(analyzers)} analyzer(s)", highlight=False)


@dqdl_app.command("run")
def dqdl_run(
    file: Annotated[Path, typer.Argument(help="A DQDL ruleset file.")],
    data: Annotated[
        str, typer.Option("--data", help="The primary dataset: CSV, Parquet or JSON-lines file.")
    ],
    ref: Annotated[
        list[str] | None, typer.Option("--ref", help="A reference dataset as ALIAS=PATH (repeatable).")
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(help="Record metrics under this dataset name, for dynamic rules and history."),
    ] = None,
    partition: Annotated[
        str | None, typer.Option(help="The partition of the dataset (e.g. a contributor).")
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[
        str | None, typer.Option("--json", help="Write the result as JSON to OUT ('-' = stdout).")
    ] = None,
    row_level: Annotated[
        Path | None,
        typer.Option("--row-level", help="Write the rows with their outcomes to OUT.parquet or OUT.csv."),
    ] = None,
    composite_mode: Annotated[
        str, typer.Option(help="How composite rules combine: column or row.")
    ] = "column",
    filtered_rows: Annotated[
        str, typer.Option(help="Row-level label of rows a where clause excludes: passed or skipped.")
    ] = "passed",
    now: Annotated[
        str | None, typer.Option(help="Fix the clock (ISO-8601) for date and freshness rules.")
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            help="Exit 1 when a rule is 'failed' (failed or in error) or in 'error' (in error only)."
        ),
    ] = None,
    null_value: NullValueOption = None,
    delimiter: DelimiterOption = None,
    quote: QuoteOption = None,
    no_header: NoHeaderOption = False,
    encoding: EncodingOption = "utf-8",
    decimal_comma: DecimalCommaOption = False,
    schema: TypesOption = None,
) -> None:
    """Evaluate the ruleset in FILE on a dataset and report each rule's outcome."""
    from assay.dqdl import evaluate, parse
    from assay.store import MetricStore

    if fail_on not in (None, "failed", "error"):
        raise ConfigError("--fail-on must be 'failed' or 'error'")
    ruleset = parse(_read_ruleset(file), filename=str(file))
    references = _references(ref or [])
    read = _read_options(null_value, delimiter, quote, no_header, encoding, decimal_comma, schema)
    space = Workspace(workspace)
    metric_store = None
    if dataset:
        url = store_url(store)
        space.ensure()
        metric_store = MetricStore.open(url, workspace=space.root)
    try:
        with err.status(f"Evaluating {file} on {data}...", spinner="dots"):
            result = evaluate(
                ruleset,
                data,
                references=references or None,
                dataset=dataset,
                partition=partition,
                store=metric_store,
                now=now,
                composite_mode=composite_mode,
                filtered_rows=filtered_rows,
                row_level=row_level is not None,
                read=read,
            )
    finally:
        if metric_store is not None:
            metric_store.close()
    payload = result.to_dict()
    if result.run_id:
        space.write_run(
            result.run_id, {"run_id": result.run_id, "ruleset": str(file), "data": data, **payload}
        )
    if row_level is not None and result.row_level is not None:
        from assay.lake.writers import write_table

        write_table(result.row_level, row_level)
    if json_out:
        _write_json(json_out, payload)
    if json_out != "-":
        print_outcomes(out, result)
        if row_level is not None:
            out.print(f"Row-level results: {row_level}", highlight=False)
    counts = result.counts()
    if (fail_on == "error" and counts["Error"]) or (
        fail_on == "failed" and (counts["Failed"] or counts["Error"])
    ):
        raise typer.Exit(1)


@rules_app.command("compile")
def rules_compile(
    control: Annotated[Path, typer.Argument(help="The control CSV.")],
    contributor_type: Annotated[
        str, typer.Option("--contributor-type", help="The contributor type to select.")
    ],
    out_file: Annotated[
        Path | None, typer.Option("--out", help="Write the ruleset to FILE instead of printing it.")
    ] = None,
) -> None:
    """Print the DQDL ruleset a control CSV generates for a contributor type."""
    from assay.rules.control import load

    text = load(control).ruleset_text(contributor_type)
    if out_file is None:
        sys.stdout.write(text)
        return
    try:
        out_file.parent.mkdir(parents=True, exist_ok=True)
        out_file.write_text(text)
    except OSError as error:
        raise ConfigError(f"{out_file}: cannot write: {error.strerror}") from None
    err.print(f"wrote {out_file}", highlight=False)


@app.command("gate")
def gate(
    batch: Annotated[Path, typer.Argument(help="The contributor's batch: a CSV (or Parquet) file.")],
    rules: Annotated[Path, typer.Option("--rules", help="The control CSV of rules.")],
    contributor: Annotated[
        str, typer.Option(help="The contributor's id (becomes a partition and a folder name).")
    ],
    contributor_type: Annotated[
        str, typer.Option("--contributor-type", help="Selects the control CSV's rules.")
    ],
    table: Annotated[str, typer.Option(help="The Iceberg table to commit to.")] = "silver.accounts",
    key: Annotated[str, typer.Option(help="The column identifying an account across months.")] = "account_id",
    order: Annotated[str, typer.Option(help="The statement-date column.")] = "statement_date",
    contributor_column: Annotated[
        str, typer.Option(help="The column holding the contributor id.")
    ] = "contributor_id",
    schema: Annotated[
        Path | None, typer.Option(help="The table's schema (YAML) for its first commit.")
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    summary: Annotated[Path | None, typer.Option(help="Also write the run summary JSON here.")] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(help="Exit 1 when a row is quarantined ('critical') or also warned ('warning')."),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the run summary as JSON.")] = False,
    null_value: NullValueOption = None,
    delimiter: DelimiterOption = None,
    quote: QuoteOption = None,
    no_header: NoHeaderOption = False,
    encoding: EncodingOption = "utf-8",
    decimal_comma: DecimalCommaOption = False,
) -> None:
    """Validate a contributor's batch against its own past, quarantine what fails, commit the rest."""
    from assay._render import print_gate
    from assay.gate.gate import Gate, GateOptions
    from assay.store import MetricStore

    if fail_on not in (None, "critical", "warning"):
        raise ConfigError("--fail-on must be 'critical' or 'warning'")
    space = Workspace(workspace)
    space.ensure()
    options = GateOptions(
        batch=batch,
        rules=rules,
        contributor=contributor,
        contributor_type=contributor_type,
        workspace=space.root,
        table=table,
        key=key,
        order=order,
        contributor_column=contributor_column,
        schema=schema,
        read=_read_options(null_value, delimiter, quote, no_header, encoding, decimal_comma),
    )
    with (
        MetricStore.open(store_url(store), workspace=space.root) as metric_store,
        err.status(f"Gating {batch} for {contributor}...", spinner="dots"),
    ):
        result = Gate(options, metric_store).run()
    payload = result.summary.to_dict()
    if summary is not None:
        _write_json(str(summary), payload)
    if json_out:
        _write_json("-", payload)
    else:
        print_gate(out, result)
    if (fail_on == "critical" and result.critical_failures) or (
        fail_on == "warning" and (result.critical_failures or result.warnings)
    ):
        raise typer.Exit(1)


@table_app.command("list")
def table_list(
    workspace: WorkspaceOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the tables as JSON.")] = False,
) -> None:
    """List the tables of the workspace with their rows, snapshots and partitions."""
    from assay._render import print_tables
    from assay.lake.iceberg import Warehouse

    tables = Warehouse.open(Workspace(workspace).ensure()).tables()
    if json_out:
        rows = [
            {
                "table": t.name,
                "rows": t.rows,
                "snapshots": t.snapshots,
                "partitions": t.partitions,
                "columns": t.schema.names,
            }
            for t in tables
        ]
        _write_json("-", {"tables": rows})
        return
    print_tables(out, tables)


@table_app.command("export")
def table_export(
    table: Annotated[str, typer.Argument(help="The table, e.g. silver.accounts.")],
    out_file: Annotated[Path, typer.Argument(help="OUT.parquet or OUT.csv")],
    workspace: WorkspaceOption = None,
) -> None:
    """Write the committed rows of a table to a Parquet or CSV file."""
    from assay.lake.iceberg import Warehouse

    rows = Warehouse.open(Workspace(workspace).ensure()).export(table, out_file)
    out.print(f"{rows} rows of {table} written to {out_file}", highlight=False)


def _dataset_config(space: Workspace, dataset: str, config: Path | None) -> Any:
    from assay.monitor import DatasetConfig, load_config

    if config is not None:
        return load_config(config)
    default = space.root / "checks" / f"{dataset}.yaml"
    return load_config(default) if default.exists() else DatasetConfig()


def _day(text: str, option: str) -> Any:
    from datetime import date

    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"{option}: '{text}' is not a date such as 2026-01-31") from None


@app.command("profile")
def profile_command(
    input_file: Annotated[
        str, typer.Argument(metavar="INPUT", help="The load: a CSV, Parquet or JSON-lines file.")
    ],
    dataset: Annotated[str, typer.Option(help="The dataset the load belongs to.")],
    load_date: Annotated[
        str,
        typer.Option("--load-date", help="The load's date (YYYY-MM-DD); a date profiled again is replaced."),
    ],
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    window: Annotated[
        str | None, typer.Option(help="last:N or weekday:N earlier loads [the dataset's config; last:20].")
    ] = None,
    config: Annotated[
        Path | None, typer.Option(help="The dataset's configuration [<workspace>/checks/<dataset>.yaml].")
    ] = None,
    alerts: Annotated[Path | None, typer.Option(help="Write the alerts as a JSON list to this file.")] = None,
    fail_on: Annotated[
        str | None, typer.Option(help="Exit 1 on a 'hard' alert, or on any alert ('soft').")
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the profile and its alerts as JSON.")
    ] = False,
    null_value: NullValueOption = None,
    delimiter: DelimiterOption = None,
    quote: QuoteOption = None,
    no_header: NoHeaderOption = False,
    encoding: EncodingOption = "utf-8",
    decimal_comma: DecimalCommaOption = False,
    schema: TypesOption = None,
) -> None:
    """Profile every column of a load in one scan, keep the profile, and judge it against earlier loads."""
    from assay._render import print_profile
    from assay.monitor import profile
    from assay.store import MetricStore

    if fail_on not in (None, "hard", "soft"):
        raise ConfigError("--fail-on must be 'hard' or 'soft'")
    day = _day(load_date, "--load-date")
    read = _read_options(null_value, delimiter, quote, no_header, encoding, decimal_comma, schema)
    space = Workspace(workspace)
    space.ensure()
    settings = _dataset_config(space, dataset, config)
    with (
        MetricStore.open(store_url(store), workspace=space.root) as metric_store,
        err.status(f"Profiling {input_file}...", spinner="dots"),
    ):
        result = profile(
            input_file,
            dataset=dataset,
            load_date=day,
            store=metric_store,
            window=window,
            config=settings,
            read=read,
        )
    if alerts is not None:
        text = json.dumps([a.to_dict() for a in result.alerts], indent=2, allow_nan=False) + "\n"
        try:
            alerts.parent.mkdir(parents=True, exist_ok=True)
            alerts.write_text(text)
        except OSError as error:
            raise ConfigError(f"{alerts}: cannot write: {error.strerror}") from None
    if json_out:
        _write_json("-", result.to_dict())
    else:
        print_profile(out, result)
    severities = {a.severity for a in result.alerts}
    if (fail_on == "hard" and "hard" in severities) or (fail_on == "soft" and severities):
        raise typer.Exit(1)


@decisions_app.command("list")
def decisions_list(
    dataset: Annotated[str | None, typer.Option(help="Only this dataset's decisions.")] = None,
    status: Annotated[str | None, typer.Option(help="Only 'pending', 'accepted' or 'rejected' ones.")] = None,
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
    space.ensure()
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        found = metric_store.decisions(dataset, status)
    if json_out:
        _write_json("-", {"decisions": [decision_dict(d) for d in found]})
    else:
        print_decisions(out, found)


def _decide(
    decision_id: int, status: str, by: str | None, note: str | None, workspace: Path | None, store: str | None
) -> None:
    import getpass

    from assay.gate.holds import release
    from assay.store import MetricStore

    space = Workspace(workspace)
    space.ensure()
    who = by or os.environ.get("ASSAY_USER") or getpass.getuser()
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        decided = metric_store.decide(decision_id, status, by=who, note=note)
        released = release(space, metric_store, decided)
    out.print(
        f"decision {decided.id}: {decided.dataset}.{decided.column} = '{decided.value}' "
        f"{decided.status} by {decided.decided_by}",
        highlight=False,
        markup=False,
    )
    for line in released:
        out.print(line, highlight=False)


@decisions_app.command("accept")
def decisions_accept(
    decision_id: Annotated[
        int, typer.Argument(metavar="ID", help="The decision's id (assay decisions list).")
    ],
    by: Annotated[str | None, typer.Option(help="Who decides [env ASSAY_USER; the login name].")] = None,
    note: Annotated[str | None, typer.Option(help="Why.")] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
) -> None:
    """Accept a new value: it is known from now on, and rows the gate held for it are committed."""
    _decide(decision_id, "accepted", by, note, workspace, store)


@decisions_app.command("reject")
def decisions_reject(
    decision_id: Annotated[
        int, typer.Argument(metavar="ID", help="The decision's id (assay decisions list).")
    ],
    by: Annotated[str | None, typer.Option(help="Who decides [env ASSAY_USER; the login name].")] = None,
    note: Annotated[str | None, typer.Option(help="Why.")] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
) -> None:
    """Reject a new value: rows the gate held for it are quarantined; it alerts hard if it comes back."""
    _decide(decision_id, "rejected", by, note, workspace, store)


@app.command("history")
def history_command(
    dataset: Annotated[str, typer.Argument(help="The dataset.")],
    column: Annotated[str | None, typer.Option(help="A column (default: the whole load).")] = None,
    metric: Annotated[
        str | None, typer.Option(help="NullRate, RowCount, DistinctValuesCount, Minimum, Maximum...")
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the series as JSON.")] = False,
    plot: Annotated[
        Path | None, typer.Option(help="Draw the series, its band and the alerts to OUT.png.")
    ] = None,
) -> None:
    """Show a metric's stored series with the band each load was judged against."""
    from assay._render import print_history
    from assay.monitor import history
    from assay.store import MetricStore

    space = Workspace(workspace)
    space.ensure()
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        points = history(metric_store, dataset, column=column, metric=metric)
    name = f"{dataset} {column + ' ' if column else ''}{metric or ('NullRate' if column else 'RowCount')}"
    if plot is not None:
        from assay._plot import plot_history

        plot_history(points, plot, name)
    if json_out:
        _write_json(
            "-",
            {"dataset": dataset, "column": column, "metric": metric, "points": [p.to_dict() for p in points]},
        )
        return
    print_history(out, name, points)
    if plot is not None:
        out.print(f"Plot: {plot}", highlight=False)


@app.command("demo")
def demo(
    workspace: Annotated[Path | None, typer.Option(help="Where to build the demo [./assay-demo].")] = None,
) -> None:
    """Run the sample ruleset on the sample orders shipped with assay and show the outcomes."""
    from assay.demo import run_demo

    run_demo(out, workspace or Path("assay-demo"))


def main() -> None:
    """Entry point: map assay's errors to exit codes, never a traceback for a user's mistake."""
    try:
        code = app(standalone_mode=False)  # returns the code of a typer.Exit raised by a command
        if isinstance(code, int) and code:
            sys.exit(code)
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(130)
    except AssayError as error:
        # Plain text, never re-wrapped: the caret under a ruleset error must stay in its column.
        sys.stderr.write(f"error: {error}\n")
        sys.exit(error.exit_code)
    except Exception as error:  # click's usage errors and anything unexpected
        if isinstance(error, typer.TyperException):  # usage errors: typer prints them, exit 2
            error.show()  # type: ignore[attr-defined]
            sys.exit(getattr(error, "exit_code", 2))
        if os.environ.get("ASSAY_DEBUG"):
            traceback.print_exc()
        sys.stderr.write(f"internal error: {type(error).__name__}: {error} (set ASSAY_DEBUG=1 for details)\n")
        sys.exit(3)
