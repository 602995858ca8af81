"""Floods of a default value on real files: ``nycflights13::weather`` cut into daily CSV files
(``realdata.py``), profiled with ``assay profile`` as a user runs it. After ten clean January
days, the 30th arrives with a fifth of its temperatures at 0 (then at -1): both stay inside a
winter's range widened by its span, and only move the lowest quantiles of the shape, so before
the ``default_value`` judgement neither raised anything on ``temp``. The 30th as it was is the
foggy day of that January: 5 of its 72 visibilities are 0 in a column that had no 0 for weeks,
a real event, not a flood."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pytest

from monitor.weather_workspace import alerts as profile_alerts
from monitor.weather_workspace import profiled

FIRST, CLEAN = 19, 10  # 2013-01-20 to 01-29, then the foggy 30th


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, pa.Table]:
    """A workspace holding CLEAN clean days; the next day's date and clean table."""
    return profiled(tmp_path_factory.mktemp("weather"), FIRST, CLEAN)


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
    alerts = [
        a for a in profile_alerts(capsys, folder, day, _flooded(table, value), said) if a["column"] == "temp"
    ]
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
    alerts = profile_alerts(capsys, folder, day, table, "clean")
    assert [a for a in alerts if a["kind"] == "default_value"] == []
