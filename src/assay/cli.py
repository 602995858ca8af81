"""The ``assay`` command: parse arguments, call the package, render. No logic lives here.

Imports of the engine, the lake, the store and the renderers happen inside the commands that use
them, so that ``assay --help`` starts in a fraction of a second (``bench/startup.py`` measures it;
tests/test_cli.py checks that importing this module loads none of them).

Exit codes (DESIGN.md): 0 the run completed (data failures are in its outputs); 1 a
``--fail-on`` level was reached; 2 usage or configuration error; 3 system error.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from assay import __version__
from assay._cli_common import (
    BackoffOption,
    EngineOption,
    FailOnOption,
    RetriesOption,
    SparkMasterOption,
    StoreOption,
    WorkspaceOption,
    err,
    out,
    retry_of,
    write_json,
)
from assay._terminal import visible
from assay.errors import AssayError, ConfigError
from assay.vocabulary import AlertLevel, RuleSeverity, reached
from assay.vocabulary import fail_on as parse_fail_on
from assay.workspace import Workspace, store_url

ByOption = Annotated[
    str | None, typer.Option(help="Who decides.", envvar="ASSAY_USER", show_default="the login name")
]

# How input files are read (docs/reading.md), spelled once for dqdl run, profile and gate.
_READING = "Reading input files"
NullValueOption = Annotated[
    list[str] | None,
    typer.Option(
        "--null-value",
        help="A cell value read as NULL in every column, e.g. NA or NULL (repeatable).",
        show_default="NA, N/A, NULL and null in number and date columns",
        rich_help_panel=_READING,
    ),
]
DelimiterOption = Annotated[
    str | None,
    typer.Option(help="The CSV delimiter, one character.", show_default="detected", rich_help_panel=_READING),
]
QuoteOption = Annotated[
    str | None,
    typer.Option(help="The CSV quote character.", show_default="detected", rich_help_panel=_READING),
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
        help="Declared column types: a schema file in the gate's format (YAML).",
        show_default="types inferred from the file",
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


_write_json = write_json


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

    threshold = parse_fail_on(fail_on)
    references = _references(ref or [])
    read = _read_options(null_value, delimiter, quote, no_header, encoding, decimal_comma, schema)
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


@app.command("gate")
def gate(
    batch: Annotated[Path, typer.Argument(help="The contributor's batch: a CSV (or Parquet) file.")],
    rules: Annotated[Path, typer.Option("--rules", help="The control CSV of rules.")],
    contributor: Annotated[
        str, typer.Option(help="The contributor's id (becomes a partition and a folder name).")
    ],
    contributor_type: Annotated[
        str | None,
        typer.Option(
            "--contributor-type",
            help="Selects the control CSV's rules.",
            show_default="every rule is for 'all'",
        ),
    ] = None,
    table: Annotated[
        str | None,
        typer.Option(help="The Iceberg table to commit to.", show_default="the one configured in checks/"),
    ] = None,
    key: Annotated[
        str | None,
        typer.Option(
            help="The column identifying a record across months.", show_default="gate.key in checks/"
        ),
    ] = None,
    order: Annotated[
        str | None, typer.Option(help="The statement-date column.", show_default="gate.order in checks/")
    ] = None,
    contributor_column: Annotated[
        str | None,
        typer.Option(
            help="The column holding the contributor id.", show_default="gate.contributor_column in checks/"
        ),
    ] = None,
    schema: Annotated[
        Path | None,
        typer.Option(
            help="The table's schema (YAML) for its first commit.", show_default="types read from the batch"
        ),
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    summary: Annotated[
        Path | None,
        typer.Option(help="Also write the run summary JSON here.", show_default="only in <workspace>/runs"),
    ] = None,
    fail_on: FailOnOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the run summary as JSON.")] = False,
    null_value: NullValueOption = None,
    delimiter: DelimiterOption = None,
    quote: QuoteOption = None,
    no_header: NoHeaderOption = False,
    encoding: EncodingOption = "utf-8",
    decimal_comma: DecimalCommaOption = False,
    engine: EngineOption = "duckdb",
    spark_master: SparkMasterOption = None,
    retries: RetriesOption = 0,
    backoff: BackoffOption = 0.0,
) -> None:
    """Validate a contributor's batch against its own past, quarantine what fails, commit the rest."""
    from assay.lake import checksum

    checksum.begin(batch)  # read while the modules below are imported (see its module)
    from assay._render import print_gate, progress
    from assay.engine.registry import engine_factory
    from assay.platform.flows import gate as run_gate
    from assay.platform.runs.gate import GateOptions, gate_table
    from assay.store import MetricStore

    threshold = parse_fail_on(fail_on)
    open_engine = engine_factory(engine, master=spark_master)
    space = Workspace(workspace)
    space.ensure()
    chosen = gate_table(
        space, table=table, key=key, order=order, contributor_column=contributor_column, schema=schema
    )
    options = GateOptions(
        batch=batch,
        rules=rules,
        contributor=contributor,
        contributor_type=contributor_type,
        workspace=space.root,
        table=chosen.table,
        key=chosen.key,
        order=chosen.order,
        contributor_column=chosen.contributor_column,
        schema=chosen.schema,
        read=_read_options(null_value, delimiter, quote, no_header, encoding, decimal_comma),
    )
    with (
        MetricStore.open(store_url(store), workspace=space.root) as metric_store,
        progress(err, f"Gating {batch} for {contributor}"),
    ):
        result = run_gate(
            options, store=metric_store, engine_factory=open_engine, retry=retry_of(retries, backoff)
        )
    payload = result.summary.to_dict()
    if summary is not None:
        _write_json(str(summary), payload)
    if json_out:
        _write_json("-", payload)
    else:
        print_gate(out, result)
    # rows quarantined are a critical rule's failure, rows warned (or a dataset rule failed) a warning's
    found = {RuleSeverity.CRITICAL: result.critical_failures, RuleSeverity.WARNING: result.warnings}
    if reached((rule.severity for rule, hit in found.items() if hit), threshold):
        raise typer.Exit(1)


@table_app.command("list")
def table_list(
    workspace: WorkspaceOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the tables as JSON.")] = False,
) -> None:
    """List the tables of the workspace with their rows, snapshots and partitions."""
    from assay._render import print_tables
    from assay.lake.iceberg import Warehouse

    tables = Warehouse.open(Workspace(workspace).existing()).tables()
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
    store: StoreOption = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the rows written and where as JSON.")
    ] = False,
) -> None:
    """Write the committed rows of a table to a Parquet or CSV file."""
    from datetime import UTC, datetime

    from assay.lake.iceberg import Warehouse
    from assay.store import MetricStore

    space = Workspace(workspace)
    rows = Warehouse.open(space.existing()).export(table, out_file)
    # a read of the table that assay saw: what its importance is made of (docs/scores.md)
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        metric_store.record_read(
            table,
            "export",
            at=datetime.now(UTC),
            by=os.environ.get("ASSAY_USER"),
            detail={"rows": rows, "format": out_file.suffix.lstrip(".")},
        )
    if json_out:
        _write_json("-", {"table": table, "out": str(out_file), "rows": rows})
        return
    out.print(f"{rows} rows of {table} written to {out_file}", highlight=False)


def _dataset_config(space: Workspace, dataset: str, config: Path | None) -> Any:
    from assay.monitor import DatasetConfig
    from assay.platform.checks.settings import load_config

    if config is not None:
        return load_config(config)
    document = space.document_for(dataset)  # the workspace's one rule
    return load_config(document) if document is not None else DatasetConfig()


def _day(text: str, option: str) -> Any:
    from datetime import date

    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"{option}: '{text}' is not a date such as 2026-01-31") from None


@app.command("profile")
def profile_command(
    input_file: Annotated[
        str,
        typer.Argument(
            metavar="INPUT",
            help="The load: a CSV, Parquet or JSON-lines file, or spark:db.table (--engine spark).",
        ),
    ],
    dataset: Annotated[str, typer.Option(help="The dataset the load belongs to.")],
    load_date: Annotated[
        str,
        typer.Option("--load-date", help="The load's date (YYYY-MM-DD); a date profiled again is replaced."),
    ],
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    window: Annotated[
        str | None,
        typer.Option(help="last:N or weekday:N earlier loads.", show_default="the dataset's config; last:20"),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(help="The dataset's configuration.", show_default="<workspace>/checks/<dataset>.yaml"),
    ] = None,
    alerts: Annotated[
        Path | None,
        typer.Option(help="Write the alerts as a JSON list to this file.", show_default="not written"),
    ] = None,
    fail_on: FailOnOption = None,
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
    engine: EngineOption = "duckdb",
    spark_master: SparkMasterOption = None,
    retries: RetriesOption = 0,
    backoff: BackoffOption = 0.0,
) -> None:
    """Profile every column of a load in one scan, keep the profile, and judge it against earlier loads."""
    from assay.lake import checksum

    checksum.begin(input_file)  # read while the modules below are imported (see its module)
    from assay._render import print_profile, progress
    from assay.engine.registry import engine_factory
    from assay.platform.flows import profile
    from assay.store import MetricStore

    threshold = parse_fail_on(fail_on)
    day = _day(load_date, "--load-date")
    read = _read_options(null_value, delimiter, quote, no_header, encoding, decimal_comma, schema)
    open_engine = engine_factory(engine, master=spark_master)
    space = Workspace(workspace)
    space.ensure()
    with (
        MetricStore.open(store_url(store), workspace=space.root) as metric_store,
        progress(err, f"Profiling {input_file}"),
    ):
        result = profile(
            input_file,
            dataset=dataset,
            load_date=day,
            store=metric_store,
            workspace=space.root,
            window=window,
            config=lambda: _dataset_config(space, dataset, config),  # read inside the run, recorded
            read=read,
            engine_factory=open_engine,
            retry=retry_of(retries, backoff),
        )
    if alerts is not None:
        import json

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
    if reached((AlertLevel(a.severity).severity for a in result.alerts), threshold):
        raise typer.Exit(1)


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


@app.command("history")
def history_command(
    dataset: Annotated[str, typer.Argument(help="The dataset.")],
    column: Annotated[str | None, typer.Option(help="A column.", show_default="the whole load")] = None,
    metric: Annotated[
        str | None,
        typer.Option(
            help="MissingRate, NullRate, RowCount, DistinctValuesCount, Minimum, Maximum...",
            show_default="MissingRate of a column (what its null-rate band judges), RowCount of the load",
        ),
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the series as JSON.")] = False,
    plot: Annotated[
        Path | None,
        typer.Option(help="Draw the series, its band and the alerts to OUT.png.", show_default="no plot"),
    ] = None,
) -> None:
    """Show a metric's stored series with the band each load was judged against."""
    from assay._render import print_history
    from assay.monitor import default_metric, history
    from assay.store import MetricStore

    space = Workspace(workspace)
    space.existing(store_url(store))
    blanks = _dataset_config(space, dataset, None).null_rate.blanks
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        points = history(metric_store, dataset, column=column, metric=metric, blanks=blanks)
    name = f"{dataset} {column + ' ' if column else ''}{metric or default_metric(column)}"
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


@app.command("recover")
def recover_command(
    dataset: Annotated[
        str | None, typer.Option(help="Only this dataset's runs.", show_default="every dataset")
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print what was recovered as JSON.")] = False,
) -> None:
    """Finish the runs that were killed after their commit, and undo those killed before it; then
    finish, or run again, the scheduled ticks whose process was killed."""
    from datetime import UTC, datetime

    from assay._cli_schedule import print_ticks
    from assay.platform.runs.recover import recover
    from assay.platform.schedule import resume_orphans
    from assay.store import MetricStore

    space = Workspace(workspace)
    space.ensure()
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        done = recover(metric_store, space, dataset=dataset)
        ticks = resume_orphans(space, metric_store, datetime.now(UTC), dataset=dataset)
    if json_out:
        _write_json(
            "-",
            {"recovered": [item.to_dict() for item in done], "ticks": [s.to_dict() for s in ticks.started]},
        )
        return
    if not done and not ticks.started and not ticks.problems:
        out.print("nothing to recover", highlight=False)
    for item in done:
        out.print(
            f"{item.action} {item.kind} run {item.run_id} of {item.dataset}: {item.detail}",
            highlight=False,
            markup=False,
        )
    print_ticks(ticks)


@app.command("demo")
def demo(
    workspace: Annotated[
        Path | None, typer.Option(help="Where to build the demo.", show_default="./assay-demo")
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print what each part of the demo did as JSON, not the story.")
    ] = False,
    serve: Annotated[
        bool,
        typer.Option(
            "--serve", help="Then serve the demo's workspace in the web control plane (until Ctrl-C)."
        ),
    ] = False,
    port: Annotated[int, typer.Option(min=1, max=65535, help="With --serve: the port to listen on.")] = 8000,
) -> None:
    """Run the sample ruleset on the sample orders shipped with assay and show the outcomes."""
    import io

    from assay.demo import run_demo
    from assay.demo.orders import CLOCK

    # With --json the story is not printed: stdout holds the one JSON object, progress is on stderr.
    # Either way the story is recorded and kept in the workspace as story.txt, to read again.
    story = Console(file=io.StringIO(), width=100, record=True) if json_out else Console(record=True)
    done = run_demo(story, workspace or Path("assay-demo"), status=err)
    command = f"assay serve --workspace {done['workspace']} --now {CLOCK} --port {port}"
    story.print(
        f"\nSee it all in a browser: {command}\nthen open the login link it prints (http://127.0.0.1:{port}/).",
        highlight=False,
        markup=False,
    )
    done["serve"] = {"command": command, "url": f"http://127.0.0.1:{port}/", "now": CLOCK}
    (Path(done["workspace"]) / "story.txt").write_text(story.export_text(styles=False))
    if json_out:
        _write_json("-", done)
    if serve:
        from assay._cli_web import serve_workspace

        serve_workspace(Path(done["workspace"]), None, port=port, now=CLOCK)


def main() -> None:
    """Entry point: map assay's errors to exit codes, never a traceback for a user's mistake."""
    try:
        # Only the commands this line names are built in full (assay._cli_lazy): start-up time.
        from assay._cli_lazy import command_for

        code = command_for(app, sys.argv[1:])(standalone_mode=False)  # a typer.Exit's code
        if isinstance(code, int) and code:
            sys.exit(code)
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(130)
    except AssayError as error:
        # Plain text, never re-wrapped: the caret under a ruleset error must stay in its column.
        sys.stderr.write(visible(f"error: {error}") + "\n")
        sys.exit(error.exit_code)
    except Exception as error:  # click's usage errors and anything unexpected
        if isinstance(error, typer.TyperException):  # usage errors: typer prints them, exit 2
            error.show()  # type: ignore[attr-defined]
            sys.exit(getattr(error, "exit_code", 2))
        if os.environ.get("ASSAY_DEBUG"):
            import traceback

            traceback.print_exc()
        from assay.platform.runs.run import as_assay_error

        failure = as_assay_error(error, "assay")
        sys.stderr.write(visible(f"error: {failure} (set ASSAY_DEBUG=1 for the traceback)") + "\n")
        sys.exit(failure.exit_code)


def _register_check_app() -> None:
    # At the end, so that the check commands' module can use this one's options and consoles.
    from assay._cli_check import check_app
    from assay._cli_incidents import incidents_app
    from assay._cli_notify import notify_app
    from assay._cli_proposals import proposals_app, propose_command
    from assay._cli_schedule import run_due, scheduler, worker
    from assay._cli_score import certify, score
    from assay._cli_web import serve, users_app

    app.add_typer(check_app, name="check")
    app.add_typer(notify_app, name="notify")
    app.add_typer(incidents_app, name="incidents")
    app.command("run")(run_due)
    app.command("scheduler")(scheduler)
    app.command("worker")(worker)
    app.command("score")(score)
    app.command("certify")(certify)
    app.command("propose")(propose_command)
    app.add_typer(proposals_app, name="proposals")
    app.command("serve")(serve)
    app.add_typer(users_app, name="users")


_register_check_app()
