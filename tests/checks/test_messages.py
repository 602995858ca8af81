"""A check run's messages state the bound: a dynamic condition says the number it set on this
history, and a freshness reads as a duration, in the JSON's message and on the console."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _invoke import assay

DOCUMENT = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: shop.orders
  source: {path: "../data/*.parquet"}
profiles:
  - id: daily
    slice: {column: day}
    metrics:
      - row_count
      - freshness: placed_at
expectations:
  - {id: volume, metric: daily.row_count, expect: ">= 0.8 * last()"}
  - {id: fresh, metric: daily.freshness(placed_at), expect: "<= 8 hours"}
"""
FIRST = date(2026, 10, 1)


def _day(root: Path, day: date, rows: int) -> None:
    stamps = [datetime.combine(day, time(23, 50), UTC) - timedelta(minutes=k) for k in range(rows)]
    pq.write_table(pa.table({"day": [day] * rows, "placed_at": stamps}), root / "data" / f"o-{day}.parquet")


def _run(root: Path, day: date, now: datetime) -> tuple[int, dict[str, dict[str, object]]]:
    out = root / "out.json"
    code = assay(
        "check", "run", str(root / "checks" / "orders.yaml"), "--at", str(day), "--now", now.isoformat(),
        "--workspace", str(root), "--json", str(out),
    )  # fmt: skip
    outcomes = json.loads(out.read_text())["outcomes"]
    return code, {o["expectation"]: o for o in outcomes}


def test_a_dynamic_bound_and_a_freshness_are_stated_as_what_they_were(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "orders.yaml").write_text(DOCUMENT)
    second = FIRST + timedelta(days=1)
    _day(tmp_path, FIRST, 11)
    _day(tmp_path, second, 8)
    code, first = _run(tmp_path, FIRST, datetime.combine(second, time(2, 0), UTC))
    assert code == 0
    assert first["fresh"]["message"] == "freshness(placed_at) = 2 h 10 min, expected at most 8 h"
    # judged 30 h 10 min after the last order, against 0.8 of yesterday's 11 rows
    _, judged = _run(tmp_path, second, datetime.combine(second + timedelta(days=2), time(6, 0), UTC))
    volume, fresh = judged["volume"], judged["fresh"]
    assert volume["message"] == "row_count = 8, expected at least 8.8 (>= 0.8 * last())"
    assert volume["expected"] == {"low": 8.8} and volume["unit"] is None
    assert fresh["message"] == "freshness(placed_at) = 1 d 6 h, expected at most 8 h"
    assert fresh["observed"] == 108600.0 and fresh["expected"] == {"high": 28800.0}
    assert fresh["unit"] == "seconds"
    capsys.readouterr()
    assay("check", "run", str(tmp_path / "checks" / "orders.yaml"), "--at", str(second),
          "--now", datetime.combine(second + timedelta(days=2), time(6, 0), UTC).isoformat(),
          "--workspace", str(tmp_path), "--dry-run")  # fmt: skip
    shown = capsys.readouterr().out
    assert "1 d 6 h" in shown and "1.086e+05" not in shown
