"""Freshness proposals on the scheduler's clock: the bound and the backtest read each load at the
time its scheduled run judges it (the profile's schedule and lag, or the ticks the store holds),
so that a proposal that held on every stored load holds on the next scheduled run."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.platform.checks.document import parse_document
from assay.platform.flows import profile
from assay.platform.proposals import accept, propose
from assay.platform.proposals.clock import Clock
from assay.platform.schedule import run_pass
from assay.store import MetricStore
from assay.store.schedules import TickRecord
from assay.workspace import Workspace

DOCUMENT = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: shop.orders
  source: {{path: "../data/*.parquet"}}
profiles:
  - id: daily
    slice: {{column: day}}
    schedule: "{schedule}"
    lag: {lag}
    metrics:
      - row_count
expectations:
  - {{id: some, metric: daily.row_count, expect: "> 0"}}
"""
START = date(2026, 10, 1)
DAYS = 17


def _load(root: Path, day: date) -> Path:
    """A day's orders, placed every 20 minutes from 00:10 to 23:50."""
    stamps = [datetime.combine(day, time(0, 10), UTC) + timedelta(minutes=20 * k) for k in range(72)]
    file = root / "data" / f"orders-{day}.parquet"
    pq.write_table(pa.table({"day": [day] * len(stamps), "placed_at": stamps}), file)
    return file


def _world(root: Path, schedule: str, lag: int) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "checks").mkdir()
    (root / "checks" / "orders.yaml").write_text(DOCUMENT.format(schedule=schedule, lag=lag))
    with MetricStore.open(workspace=root) as store:
        for i in range(DAYS):
            day = START + timedelta(days=i)
            profile(_load(root, day), dataset="shop.orders", load_date=day, store=store, workspace=root)
    return root


@pytest.mark.parametrize(
    ("schedule", "lag", "bound"),
    [
        # judged two days after at 06:00: 30 h 10 min after the last order, and a quarter
        ("0 6 * * *", 2, "38 hours"),
        # judged at midnight: 10 minutes after the last order, an hour at least
        ("0 0 * * *", 1, "1 hour"),
    ],
)
def test_a_backtested_freshness_proposal_holds_on_the_scheduled_run(
    tmp_path: Path, schedule: str, lag: int, bound: str
) -> None:
    root = _world(tmp_path, schedule, lag)
    latest = START + timedelta(days=DAYS - 1)
    with MetricStore.open(workspace=root) as store:
        found = propose("shop.orders", store=store, workspace=root, at=datetime(2026, 10, 20, tzinfo=UTC))
        fresh = next(p for p in found.proposals if p.kind == "freshness")
        assert (
            fresh.backtest == {"loads": DAYS, "would_have_failed": 0} and fresh.dry_run["outcome"] == "passed"
        )
        assert fresh.expectation["expect"] == f"<= {bound}" and fresh.evidence["bound"] == bound
        accept(store, fresh.id, by="ana", workspace=root)
        # the scheduler's run of the latest load: the tick `lag` days after it
        tick = datetime.combine(latest + timedelta(days=lag), time(int(schedule.split()[1])), UTC)
        done = run_pass(Workspace(root), store, tick + timedelta(minutes=5))
        (started,) = done.started
        assert started.due.at == latest
        assert started.summary["advisory"]["failed"] == 0 and started.summary["advisory"]["passed"] == 1


def test_the_scheduler_s_stored_runs_are_the_clock_a_late_run_included() -> None:
    document = parse_document(DOCUMENT.format(schedule="0 6 * * *", lag=1))
    daily = document.profiles[0]
    day = date(2026, 10, 1)
    tick = datetime(2026, 10, 2, 6, 0, tzinfo=UTC)

    def ran(claimed: datetime) -> TickRecord:
        return TickRecord(
            "checks/orders.yaml", "daily", tick, day, "shop.orders", "completed", None, claimed, None, None
        )

    late = Clock.of(daily, [], [ran(tick + timedelta(hours=3))])  # the scheduler was down till 09:00
    assert late.source == "runs" and late.runs[day] == tick + timedelta(hours=3)
    resumed = Clock.of(daily, [], [ran(tick + timedelta(days=9))])  # a backfill: its tick is the clock
    assert resumed.runs[day] == tick
    unscheduled = parse_document(
        DOCUMENT.format(schedule="0 6 * * *", lag=1).replace('    schedule: "0 6 * * *"\n    lag: 1\n', "")
    )
    assert Clock.of(unscheduled.profiles[0], [], []).source == "none"


def test_no_schedule_and_backfilled_loads_propose_no_freshness_and_say_why(tmp_path: Path) -> None:
    root = _world(tmp_path, "0 6 * * *", 1)
    path = root / "checks" / "orders.yaml"
    path.write_text(path.read_text().replace('    schedule: "0 6 * * *"\n    lag: 1\n', ""))
    with MetricStore.open(workspace=root) as store:
        found = propose("shop.orders", store=store, workspace=root, record=False)
    assert not [p for p in found.proposals if p.kind == "freshness"]
    assert any("freshness is not proposed: profile 'daily' has no schedule" in n for n in found.notes)
