"""``assay gate`` and ``assay table list|export``: a contributor's batch through the ingestion gate,
and the tables it commits to.

Imported by :mod:`assay.cli`, which registers the commands; the work is in
:mod:`assay.platform.flows` and :mod:`assay.lake.iceberg`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer
from typer import _click  # typer vendors click: its Context is the one commands are given
from typer.core import TyperCommand

from assay._cli_common import (
    BackoffOption,
    EngineOption,
    FailOnOption,
    JunitOption,
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
)
from assay.platform.reading import read_options
from assay.vocabulary import fail_on as parse_fail_on
from assay.vocabulary import reached
from assay.workspace import Workspace, store_url

table_app = typer.Typer(help="Tables committed through the gate.", no_args_is_help=True)


class GateCommand(TyperCommand):
    """``assay gate``, whose first argument is a batch file, unless it is the word ``audit``:
    then the line is ``assay gate audit ...``. A batch is a ``.csv`` or ``.parquet`` file, so
    no batch is named ``audit``; ``./audit`` would still be gated (and refused for its name)."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: _click.Context | None = None, **extra: Any
    ) -> _click.Context:
        if args and args[0] == "audit":
            audit = typer.main.get_command(_audit_app)
            return audit.make_context(f"{info_name or 'gate'} audit", args[1:], parent=parent, **extra)
        return super().make_context(info_name, args, parent=parent, **extra)


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
    junit: JunitOption = None,
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
    """Validate a contributor's batch against its own past, quarantine what fails, commit the rest.

    `assay gate audit RUN_ID` (or `--table NAME`) accounts for every row of a run's batch."""
    from assay.lake import checksum

    checksum.begin(batch)  # read while the modules below are imported (see its module)
    from assay._render import print_gate, progress
    from assay.engine.registry import engine_factory
    from assay.platform.flows import gate as run_gate
    from assay.platform.runs.gate import findings, gate_options
    from assay.store import MetricStore

    with junit_errors(junit, table or str(batch), "gate"):
        threshold = parse_fail_on(fail_on)
        open_engine = engine_factory(engine, master=spark_master)
        space = Workspace(workspace)
        space.ensure()
        options = gate_options(
            space,
            batch=batch,
            rules=rules,
            contributor=contributor,
            contributor_type=contributor_type,
            table=table,
            key=key,
            order=order,
            contributor_column=contributor_column,
            schema=schema,
            read=read_options(null_value, delimiter, quote, no_header, encoding, decimal_comma),
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
        if junit is not None:
            from assay.platform.reports import junit as report

            report.write(junit, report.gate_suites(payload))
        if json_out:
            _write_json("-", payload)
        else:
            print_gate(out, result)
        if reached(findings(result), threshold):
            raise typer.Exit(1)


_audit_app = typer.Typer()


@_audit_app.command("audit")
def gate_audit(
    run_id: Annotated[
        str | None, typer.Argument(help="The gate run to audit (its run_id).", show_default=False)
    ] = None,
    table: Annotated[
        str | None, typer.Option(help="Audit every gate run of this table instead.", show_default=False)
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the audit as JSON.")] = False,
) -> None:
    """Account for every row of a gate run's batch: read the batch again and find each row in
    exactly one of the run's outputs (committed, quarantined, held). Exit 1 when a run is not
    balanced."""
    from assay._render_runs import print_gate_audit
    from assay.errors import ConfigError
    from assay.platform.runs.audit import audit_run, audit_table
    from assay.store import MetricStore

    if (run_id is None) == (table is None):
        raise ConfigError(
            "say which run to audit: RUN_ID or --table NAME (every run of the table), not both"
            if run_id is not None
            else "say which run to audit: RUN_ID or --table NAME (every run of the table)"
        )
    space = Workspace(workspace)
    space.existing(store)
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        if run_id is not None:
            audits = [audit_run(space, metric_store, run_id)]
        else:
            assert table is not None
            audits = audit_table(space, metric_store, table)
    balanced = all(audit.balanced for audit in audits)
    if json_out:
        if run_id is not None:
            _write_json("-", audits[0].to_dict())
        else:
            _write_json("-", {"table": table, "balanced": balanced, "runs": [a.to_dict() for a in audits]})
    else:
        print_gate_audit(out, [{**a.to_dict(), "balance_known": a.balance is not None} for a in audits])
    if not balanced:
        raise typer.Exit(1)


@table_app.command("list")
def table_list(
    workspace: WorkspaceOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the tables as JSON.")] = False,
) -> None:
    """List the tables of the workspace with their rows, snapshots and partitions."""
    from assay._render import print_tables

    space = Workspace(workspace)
    space.existing()
    with space.warehouse() as warehouse:
        tables = warehouse.tables()
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

    from assay.store import MetricStore

    space = Workspace(workspace)
    space.existing()
    with space.warehouse() as warehouse:
        rows = warehouse.export(table, out_file)
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
