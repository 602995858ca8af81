"""`assay profile`, `assay decisions`, `assay history` through the real entry point."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from monitor.test_monitor import trades
from test_cli import run


def load(tmp_path: Path, i: int, table: pa.Table) -> Path:
    path = tmp_path / f"trades-{i}.parquet"
    pq.write_table(table, path)
    return path


def profile(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, i: int, table: pa.Table, *extra: str
) -> tuple[int, str, str]:
    day = (date(2026, 3, 2) + timedelta(days=i)).isoformat()
    return run(
        capsys, "profile", str(load(tmp_path, i, table)), "--dataset", "trades", "--load-date", day,
        "--workspace", str(tmp_path / "ws"), *extra,
    )  # fmt: skip


def test_profile_alerts_decisions_and_history(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for i in range(6):
        code, out, _ = profile(capsys, tmp_path, i, trades(seed=i))
        assert code == 0
    assert "No alert" in out
    broken = trades(seed=9, venues=("XLON", "XNEW"))
    broken = broken.set_column(
        3, "fill", pa.array([None] * 4 + broken.column("fill").to_pylist()[4:], pa.int64())
    )
    alerts = tmp_path / "alerts.json"
    code, out, _ = profile(capsys, tmp_path, 6, broken, "--alerts", str(alerts), "--fail-on", "hard")
    assert code == 1
    found = json.loads(alerts.read_text())
    kinds = {(a["kind"], a["column"], a["severity"]) for a in found}
    # XPAR and XETR, on every earlier load, are gone and XNEW holds their rows: a category
    # replaced is a hard new-value alert (docs/monitor.md)
    assert ("null_rate", "fill", "hard") in kinds and ("new_value", "venue", "hard") in kinds
    new = next(a for a in found if a["kind"] == "new_value")
    assert set(new) == {
        "dataset",
        "load_date",
        "column",
        "kind",
        "severity",
        "observed",
        "expected",
        "window",
        "values",
        "message",
    }
    assert new["values"][0]["value"] == "XNEW" and new["values"][0]["count"] == 100
    assert new["window"] == {"kind": "last", "size": 20}
    null = next(a for a in found if a["kind"] == "null_rate")
    assert null["expected"] == {"low": 0.0, "high": 0.0} and null["observed"] == 0.02

    ws = str(tmp_path / "ws")
    code, out, _ = run(capsys, "decisions", "list", "--workspace", ws, "--json")
    (decision,) = json.loads(out)["decisions"]
    assert (decision["value"], decision["status"]) == ("XNEW", "pending")
    code, out, _ = run(capsys, "decisions", "accept", str(decision["id"]), "--by", "ana", "--workspace", ws)
    assert code == 0 and "accepted" in out
    code, _, err = run(capsys, "decisions", "reject", str(decision["id"]), "--workspace", ws)
    assert code == 2 and "already accepted by ana" in err
    code, _, err = run(capsys, "decisions", "accept", "999", "--workspace", ws)
    assert code == 2 and "no decision 999" in err

    plot = tmp_path / "fill.png"
    code, out, _ = run(
        capsys, "history", "trades", "--column", "fill", "--plot", str(plot), "--workspace", ws, "--json"
    )
    points = json.loads(out)["points"]
    assert len(points) == 7 and points[-1]["severity"] == "hard" and points[-1]["high"] == 0.0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 10_000
    code, out, _ = run(capsys, "history", "trades", "--workspace", ws)
    assert code == 0 and "RowCount" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--load-date", "yesterday"], "is not a date"),
        (["--load-date", "2026-03-02", "--window", "lastweek"], "last:N or weekday:N"),
        (["--load-date", "2026-03-02", "--fail-on", "loud"], "--fail-on: 'loud' is not a level"),
    ],
)
def test_profile_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], message: str
) -> None:
    path = load(tmp_path, 0, trades())
    code, _, err = run(
        capsys, "profile", str(path), "--dataset", "t", "--workspace", str(tmp_path / "ws"), *args
    )
    assert code == 2 and message in err


def test_a_bad_configuration_names_the_field(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "t.yaml"
    config.write_text("window: last:20\nnull_rate:\n  conditoned: {fill: row_count}\n")
    path = load(tmp_path, 0, trades())
    code, _, err = run(
        capsys, "profile", str(path), "--dataset", "t", "--load-date", "2026-03-02", "--config", str(config),
        "--workspace", str(tmp_path / "ws"),
    )  # fmt: skip
    assert code == 2 and "null_rate.conditoned" in err


def test_history_of_an_unknown_dataset(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "history", "nope", "--workspace", str(tmp_path))
    assert code == 2 and "no loads of dataset 'nope'" in err
