"""What arrives, on real files (issue 30): timestamps an hour late, and yesterday's file again.

Ten days of ``nycflights13::weather`` written as CSV files (``time_hour`` is ISO text, as a
CSV carries it) and of ``nycflights13::flights`` as Parquet files (``time_hour`` a timestamp),
each profiled by path into one store, once per module. Day 11 is then profiled several times, once
per fault (profiling a date again replaces its profile, and a load is judged only against the
loads before its date, so the faults do not see each other); the day on time, once.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from assay.judge.drift.bands import MIN_RANGE_HISTORY
from assay.monitor import ProfileResult
from assay.platform import flows
from assay.store import MetricStore
from monitor.realdata import daily_loads, weather_daily

DAYS = MIN_RANGE_HISTORY  # clean loads before the faulty day: the range bands' history, no more


@dataclass
class Run:
    dataset: str
    store: MetricStore
    folder: Path
    loads: list[tuple[date, pa.Table]]
    parquet: bool
    results: dict[date, ProfileResult] = field(default_factory=dict)

    def write(self, table: pa.Table, name: str, *, parquet: bool) -> Path:
        path = self.folder / f"{name}.{'parquet' if parquet else 'csv'}"
        if parquet:
            pq.write_table(table, path)
        else:
            pcsv.write_csv(table, path)
        return path

    def profile(self, path: Path, day: date) -> ProfileResult:
        return flows.profile(
            str(path), dataset=self.dataset, load_date=day, store=self.store, workspace=self.folder
        )

    @functools.cached_property
    def on_time(self) -> ProfileResult:
        """The faulty day's own file, on time: profiled once for the tests that compare with it."""
        day, table = self.loads[DAYS]
        return self.profile(self.write(table, "on-time", parquet=self.parquet), day)


@pytest.fixture(scope="module")
def store() -> Iterator[MetricStore]:
    """Both timelines' store, in memory: migrated once, and no commit waits for a disk."""
    with MetricStore.open("sqlite://") as opened:
        yield opened


def _timeline(
    store: MetricStore, folder: Path, dataset: str, loads: list[tuple[date, pa.Table]], *, parquet: bool
) -> Run:
    run = Run(dataset, store, folder, loads, parquet)
    for day, table in loads[:DAYS]:
        run.results[day] = run.profile(run.write(table, day.isoformat(), parquet=parquet), day)
    return run


@pytest.fixture(scope="module")
def weather(store: MetricStore, tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp("weather")
    return _timeline(store, folder, "weather", list(weather_daily()[: DAYS + 1]), parquet=False)


@pytest.fixture(scope="module")
def flights(store: MetricStore, tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp("flights")
    return _timeline(store, folder, "flights", list(daily_loads()[: DAYS + 1]), parquet=True)


def _shifted(table: pa.Table, delta: timedelta) -> pa.Table:
    column = table.column("time_hour")
    if pa.types.is_string(column.type):  # ISO text in UTC: "2013-01-26T05:00:00Z"
        moved = [None if v is None else _later(v, delta) for v in column.to_pylist()]
        array = pa.array(moved, pa.string())
    else:
        array = pa.array([None if v is None else v + delta for v in column.to_pylist()], column.type)
    return table.set_column(table.schema.get_field_index("time_hour"), "time_hour", array)


def _later(text: str, delta: timedelta) -> str:
    return (datetime.fromisoformat(text.removesuffix("Z")) + delta).isoformat() + "Z"


def _kinds(result: ProfileResult) -> list[tuple[str, str | None, str]]:
    return [(a.kind, a.column, a.severity) for a in result.alerts]


@pytest.mark.parametrize("name", ["weather", "flights"])
def test_timestamps_an_hour_late_are_a_range_alert(name: str, request: pytest.FixtureRequest) -> None:
    run: Run = request.getfixturevalue(name)
    day, table = run.loads[DAYS]
    late = run.profile(run.write(_shifted(table, timedelta(hours=1)), "late", parquet=run.parquet), day)
    assert ("range", "time_hour", "soft") in _kinds(late)
    (alert,) = [a for a in late.alerts if a.column == "time_hour"]
    assert "expected the first value" in alert.message and "hours from the load date" in alert.message
    # ... while the same day on time raises nothing on the column, nor did any clean day
    assert [a for a in run.on_time.alerts if a.column == "time_hour"] == []
    assert [(d, a.message) for d, r in run.results.items() for a in r.alerts if a.column == "time_hour"] == []


@pytest.mark.parametrize("rewritten", [False, True], ids=["same-file", "rewritten"])
def test_yesterdays_file_again_is_one_hard_alert_naming_its_date(weather: Run, rewritten: bool) -> None:
    """Yesterday's CSV delivered again under today's date, as is (the same checksum) or re-written
    as Parquet (the same content): one hard ``duplicate_load`` alert naming yesterday."""
    yesterday, table = weather.loads[DAYS - 1]
    day = weather.loads[DAYS][0]
    path = weather.write(table, "again", parquet=True) if rewritten else weather.folder / f"{yesterday}.csv"
    again = weather.profile(path, day)
    duplicates = [a for a in again.alerts if a.kind == "duplicate_load"]
    assert [(a.column, a.severity) for a in duplicates] == [(None, "hard")]
    assert f"the same content as the load of {yesterday.isoformat()}" in duplicates[0].message
    (incident,) = [i for i in weather.store.incidents(dataset="weather") if "duplicate_load" in i.expectation]
    assert incident.state == "open"
    # the day's own file is no duplicate, and no clean day was one
    assert [a for a in weather.on_time.alerts if a.kind == "duplicate_load"] == []
    assert [d for d, r in weather.results.items() for a in r.alerts if a.kind == "duplicate_load"] == []


def test_the_first_hour_missing_at_every_station_is_no_shift(weather: Run) -> None:
    """One end moving alone happens on clean days (2013-02-21 has no 05:00 UTC reading at any
    airport): no range alert on ``time_hour``, whose other end stayed where it always is."""
    day, table = weather.loads[DAYS]
    first = table.column("time_hour")[0].as_py()
    later = table.filter(pa.array([v != first for v in table.column("time_hour").to_pylist()]))
    assert later.num_rows == table.num_rows - 3
    result = weather.profile(weather.write(later, "no-first-hour", parquet=False), day)
    assert [a for a in result.alerts if a.column == "time_hour"] == []
    judged = [j for j in result.judgements if (j.kind, j.column) == ("range", "time_hour")]
    assert judged and judged[0].observed is not None  # judged, within no shift
