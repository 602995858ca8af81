"""The demo's first part: a realistic DQDL ruleset on a sample order export shipped with assay.

The orders carry planted problems (a duplicated id, empty emails, a negative amount, an
unknown status, an unknown customer, an order shipped before it was placed), so the run shows
passing, failing and threshold-tolerated rules, row-level results and stored metrics.
"""

from __future__ import annotations

import shutil
from contextlib import nullcontext
from importlib import resources
from importlib.util import find_spec
from typing import Any

import pyarrow.compute as pc
from rich.console import Console
from rich.markup import escape

from assay._render import print_outcomes, progress
from assay.dqdl import evaluate, parse
from assay.lake.writers import write_table
from assay.platform.lineage import emitting_to
from assay.store import MetricStore
from assay.workspace import Workspace

CLOCK = "2026-12-01T06:00:00+00:00"  # the demo's fixed "now", so its freshness rule is reproducible


def _client_installed() -> bool:
    """Whether the OpenLineage client is there (``assay[openlineage]``), without importing it."""
    try:
        return find_spec("openlineage.client") is not None
    except ModuleNotFoundError:  # no openlineage package at all
        return False


def run_orders(console: Console, workspace: Workspace, *, status: Console) -> dict[str, Any]:
    """The DQDL part of the demo; returns its outcome counts, score and files (for --json)."""
    data = workspace.root / "data"
    data.mkdir(exist_ok=True)
    package = resources.files("assay.demo") / "data"
    for name in ("orders.csv", "customers.csv", "orders.dqdl"):
        with resources.as_file(package / name) as source:
            shutil.copyfile(source, data / name)
    rules_file = data / "orders.dqdl"
    console.rule("[bold]1. A DQDL ruleset on an order export")
    console.print(f"{rules_file} on {data / 'orders.csv'}\n", highlight=False)
    events = workspace.root / "lineage" / "orders.jsonl" if _client_installed() else None
    with (
        MetricStore.open(workspace=workspace.root) as store,
        progress(status, "Evaluating the order ruleset"),
        # this run's OpenLineage events, written to a file by the client's file transport
        emitting_to({"type": "file", "log_file_path": str(events), "append": True})
        if events
        else nullcontext(),
    ):
        result = evaluate(
            parse(rules_file.read_text(), filename=str(rules_file)),
            data / "orders.csv",
            references={"customers": data / "customers.csv"},
            dataset="orders",
            store=store,
            now=CLOCK,
            row_level=True,
        )
    print_outcomes(console, result)
    rows = result.row_level
    assert rows is not None
    rows_file = workspace.root / "orders.row_level.parquet"
    write_table(rows, rows_file)
    failed = rows.filter(pc.equal(rows.column("DataQualityEvaluationResult"), "Failed"))
    console.print(
        f"\n{failed.num_rows} of {rows.num_rows} rows failed at least one rule "
        f"(row-level results: {rows_file}):",
        highlight=False,
    )
    for row in failed.select(["order_id", "DataQualityRulesFail"]).to_pylist()[:10]:
        console.print(
            f"  {row['order_id']}: {escape('; '.join(row['DataQualityRulesFail']))}", highlight=False
        )
    console.print(
        f"\nMetrics of this run are in {workspace.store_path} (dataset 'orders'); run it again with\n"
        f"  assay dqdl run {rules_file} --data {data / 'orders.csv'} "
        f"--ref customers={data / 'customers.csv'} --dataset orders --workspace {workspace.root}",
        highlight=False,
    )
    if events is not None:
        console.print(
            f"\nThe OpenLineage events of this run (START, then COMPLETE with each rule as an assertion):\n"
            f"  {events}",
            highlight=False,
        )
    else:
        console.print(
            "\nInstall assay[openlineage] to see this run's OpenLineage events too (docs/openlineage.md).",
            highlight=False,
        )
    return {
        "openlineage": str(events) if events is not None else None,
        "ruleset": str(rules_file),
        "data": str(data / "orders.csv"),
        "outcomes": result.counts(),
        "score": result.score,
        "rows": rows.num_rows,
        "failed_rows": failed.num_rows,
        "row_level": str(rows_file),
    }
