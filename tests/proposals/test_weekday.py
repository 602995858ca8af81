"""``history: same_weekday``: a Saturday judged against Saturdays; and the seasonal volume band
proposed where weekdays differ, its backtest recomputed by hand."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from assay.demo.trades import clock
from assay.platform.checks.document import parse_document
from assay.platform.proposals import propose
from assay.platform.runs.check import run_document
from assay.store import MetricStore
from assay.workspace import Workspace
from proposals._history import WEEKLY, WEEKLY_DAYS, WEEKLY_START

SATURDAY = WEEKLY_START + timedelta(days=WEEKLY_DAYS - 3)  # 2026-10-31, a Saturday


@pytest.fixture
def world(weekly_history: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "ws"
    shutil.copytree(weekly_history, copy)
    return copy


def test_a_saturday_is_judged_against_saturdays(world: Path) -> None:
    assert SATURDAY.weekday() == 5
    band = "between avg(last(2)) * 0.9 and avg(last(2)) * 1.1"
    text = (
        f'{WEEKLY}expectations:\n  - {{id: plain, metric: daily.row_count, expect: "{band}"}}\n'
        f'  - {{id: weekday, metric: daily.row_count, expect: "{band}", history: same_weekday}}\n'
    )
    document = parse_document(text)
    with MetricStore.open(workspace=world) as store:
        result = run_document(
            document,
            world / "checks" / "visits.yaml",
            at=SATURDAY,
            now=clock(SATURDAY),
            store=store,
            workspace=Workspace(world),
            dry_run=True,
        )
    outcomes = {o["expectation"]: o for o in result.outcomes}
    # plain: the last two loads, Thursday and Friday (about 120 rows each); weekday: two Saturdays
    assert outcomes["plain"]["outcome"] == "failed" and outcomes["weekday"]["outcome"] == "passed"
    saturdays = [SATURDAY - timedelta(days=7), SATURDAY - timedelta(days=14)]
    with MetricStore.open(workspace=world) as store:
        series = store.metric_series(
            "shop.visits",
            partition="daily",
            names={"row_count"},
            before=datetime.combine(SATURDAY, datetime.min.time(), UTC),
        )[("Dataset", "*", "row_count")]
    by_day = {at.date(): value for at, value in series}
    average = sum(by_day[d] for d in saturdays) / 2
    assert outcomes["weekday"]["expected"] == {"low": average * 0.9, "high": average * 1.1}
    assert result.queries == {"measure": 1, "judge": 0}


def test_the_seasonal_volume_band_where_weekdays_differ(world: Path) -> None:
    with MetricStore.open(workspace=world) as store:
        found = propose("shop.visits", store=store, workspace=world, record=False)
        loads = store.profiled_loads("shop.visits")
    volume = next(p for p in found.proposals if p.kind == "volume")
    assert volume.expectation["history"] == "same_weekday" and volume.evidence["baseline"] == "same_weekday"
    assert volume.evidence["spread"]["same_weekday"] <= 0.5 * volume.evidence["spread"]["last"]
    assert volume.evidence["weekday_mean_rows"]["Sat"] < volume.evidence["weekday_mean_rows"]["Mon"] / 2
    assert volume.requires == {"profile": "daily", "metrics": ["row_count"]}
    # by hand: each load against the mean of the k previous loads of its weekday
    k = volume.evidence["k"]
    low, high = volume.evidence["band"]
    judged = failed = 0
    for i, load in enumerate(loads):
        same = [x.row_count for x in loads[:i] if x.logical_date.weekday() == load.logical_date.weekday()][
            -k:
        ]
        if len(same) < k:
            continue
        judged += 1
        failed += not (low * sum(same) / k < load.row_count < high * sum(same) / k)
    assert volume.backtest == {"loads": judged, "would_have_failed": failed} and judged > 0
    assert volume.dry_run["outcome"] == "passed"
