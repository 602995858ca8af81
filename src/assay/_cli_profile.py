"""``assay profile`` and ``assay history``: a load profiled and judged against earlier loads, and a
metric's stored series with the band each load was judged against.

Imported by :mod:`assay.cli`, which registers the commands; the work is in
:mod:`assay.platform.flows` and :mod:`assay.monitor`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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
from assay.errors import ConfigError
from assay.platform.reading import read_options
from assay.vocabulary import fail_on as parse_fail_on
from assay.vocabulary import reached
from assay.workspace import Workspace, store_url


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
    from assay.platform.runs.profile import dataset_config, findings, load_day
    from assay.store import MetricStore

    threshold = parse_fail_on(fail_on)
    day = load_day(load_date, "--load-date")
    read = read_options(null_value, delimiter, quote, no_header, encoding, decimal_comma, schema)
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
            config=lambda: dataset_config(space, dataset, config),  # read inside the run, recorded
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
    if reached(findings(result), threshold):
        raise typer.Exit(1)


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
    from assay.platform.runs.profile import dataset_config
    from assay.store import MetricStore

    space = Workspace(workspace)
    space.existing(store_url(store))
    blanks = dataset_config(space, dataset, None).null_rate.blanks
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
