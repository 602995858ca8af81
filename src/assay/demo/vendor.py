"""The demo's third part: a vendor's daily trade file, profiled every day and judged against its
own history (seed 002). Thirty days of clean files teach the monitor each column; then a column
that was never null arrives 2% null, and a venue code nobody has seen appears. Every type check
passes both days; the monitor alerts on exactly those days, and the new venue waits on a person.
"""

from __future__ import annotations

import functools
import random
from datetime import date, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from rich.console import Console
from rich.markup import escape

from assay._render import decision_dict, progress
from assay.monitor import ProfileResult, history
from assay.platform.flows import profile
from assay.store import MetricStore
from assay.workspace import Workspace

DATASET = "vendor_trades"
# the vendor delivers on business days: 35 files from 1 October to 18 November 2026
DAYS = [d for d in (date(2026, 10, 1) + timedelta(days=i) for i in range(49)) if d.weekday() < 5]
NULL_DAY = DAYS[30]  # settle_ccy, never null so far, arrives 2% null
VENUE_DAY = DAYS[33]  # a venue code never seen before
VENUES = ("XLON", "XPAR", "XETR", "XAMS", "XMIL")
CONFIG = """\
# How the monitor judges the vendor's daily trade file (docs/monitor.md)
window: last:20
categorical: [venue]
domain_columns: [venue]
null_rate:
  conditioned:
    fill_px: row_count   # a fill price is missing more often on busy days
"""


def trades(day: date) -> pa.Table:
    """One day's file: busier mid-week, a fill price missing more often on busy days."""
    r = random.Random(day.toordinal())
    busy = (1.0, 1.1, 1.15, 1.1, 1.0)[day.weekday()]
    n = int(2000 * busy * r.uniform(0.95, 1.05))
    miss = 0.002 + 0.01 * busy
    venues = [r.choice(VENUES) for _ in range(n)]
    if day == VENUE_DAY:
        venues = [("XWAR" if i % 40 == 0 else v) for i, v in enumerate(venues)]
    ccy: list[str | None] = [r.choice(("GBP", "EUR", "EUR", "USD")) for _ in range(n)]
    if day == NULL_DAY:
        ccy = [None if i % 50 == 0 else c for i, c in enumerate(ccy)]
    return pa.table(
        {
            "trade_id": [f"{day:%Y%m%d}-{i:05d}" for i in range(n)],
            "trade_date": [day] * n,
            "venue": venues,
            "side": [r.choice("BS") for _ in range(n)],
            "qty": [r.randint(1, 500) * 100 for _ in range(n)],
            "price": [round(r.uniform(10, 250), 2) for _ in range(n)],
            "fill_px": [None if r.random() < miss else round(r.uniform(10, 250), 2) for _ in range(n)],
            "settle_ccy": ccy,
        }
    )


def run_vendor(console: Console, workspace: Workspace, *, status: Console) -> dict[str, Any]:
    """The monitor part of the demo; returns its alerts and pending decisions (for --json)."""
    console.rule("[bold]3. A vendor's daily file, judged against its own history")
    folder = workspace.root / "vendor"
    folder.mkdir(exist_ok=True)
    checks = workspace.root / "checks"
    checks.mkdir(exist_ok=True)
    (checks / f"{DATASET}.yaml").write_text(CONFIG)
    from assay.platform.checks.settings import load_config

    config = functools.partial(load_config, checks / f"{DATASET}.yaml")  # read inside each run
    alerted: list[ProfileResult] = []
    with MetricStore.open(workspace=workspace.root) as store:
        with progress(status, f"Profiling {len(DAYS)} daily files", len(DAYS)) as step:
            for day in DAYS:
                path = folder / f"trades_{day.isoformat()}.parquet"
                pq.write_table(trades(day), path)
                result = profile(
                    path, dataset=DATASET, load_date=day, store=store, workspace=workspace.root, config=config
                )
                if result.alerts:
                    alerted.append(result)
                step()
        console.print(
            f"{len(DAYS)} daily files in {folder}, each profiled in one query and judged against the 20 "
            "loads before it.",
            highlight=False,
        )
        console.print("Days with an alert:", highlight=False)
        for result in alerted:
            for alert in result.alerts:
                colour = "red" if alert.severity == "hard" else "yellow"
                console.print(
                    f"  {result.load_date} [{colour}]{alert.severity:4}[/{colour}] {alert.kind:10} "
                    f"{alert.column or '(load)'}: {escape(alert.message)}"
                )
        pending = store.decisions(DATASET, "pending")
        incidents = store.incidents(dataset=DATASET)
        points = history(store, DATASET, column="settle_ccy")
    plot = workspace.root / "settle_ccy.png"
    from assay._plot import plot_history

    plot_history(points, plot, f"{DATASET}.settle_ccy null rate")
    console.print(
        f"\nsettle_ccy had no null in {DAYS.index(NULL_DAY)} files: its band has zero width, so "
        "2% nulls is a hard alert. The new venue is not mapped to a default: it waits on a decision.",
        highlight=False,
    )
    console.print(
        f"Each day's profile is a recorded run (runs/); the alerts opened {len(incidents)} incident(s) "
        f"for the dataset's owners: assay incidents list --workspace {workspace.root}",
        highlight=False,
    )
    for decision in pending:
        console.print(
            f"  decision {decision.id}: {decision.column} = '{decision.value}' ({decision.rows} rows), "
            f"pending since {decision.first_date}",
            highlight=False,
        )
    console.print(
        f"History with its bands: {plot}\nExplore:\n"
        f"  assay history {DATASET} --column settle_ccy --workspace {workspace.root}\n"
        f"  assay history {DATASET} --column fill_px --plot fill_px.png --workspace {workspace.root}\n"
        f"  assay decisions list --workspace {workspace.root}\n"
        f"  assay decisions accept {pending[0].id if pending else 'ID'} --by you "
        f"--workspace {workspace.root}\n"
        f"  assay profile {folder / f'trades_{VENUE_DAY.isoformat()}.parquet'} --dataset {DATASET} "
        f"--load-date {VENUE_DAY} --alerts alerts.json --workspace {workspace.root}",
        highlight=False,
    )
    return {
        "dataset": DATASET,
        "days": len(DAYS),
        "alerts": [
            {"load_date": r.load_date.isoformat(), **alert.to_dict()} for r in alerted for alert in r.alerts
        ],
        "decisions": [decision_dict(d) for d in pending],
        "incidents": [i.id for i in incidents],
        "plot": str(plot),
    }
