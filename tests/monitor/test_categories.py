"""Categories the monitor finds and judges by itself (issue 30, "the monitor sees shapes"): a
panel's dimension is a category though no value repeats inside a load, a category replaced is one
hard alert, two categorical columns swapped are one alert naming both, and a value every load
held that is gone today is an alert. End to end through ``assay profile`` on real files:
``ggplot2::txhousing`` (46 cities, one row each a month) and ``nycflights13::flights``."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _invoke import completed
from assay.monitor import DatasetConfig, ProfileResult
from assay.platform import flows
from assay.store import MetricStore
from monitor.realdata import daily_loads, txhousing_monthly, with_value
from test_cli import run


def day(i: int) -> date:
    return date(2026, 1, 5) + timedelta(days=i)


PANEL_LOADS = 12  # txhousing months profiled clean before the load under test
FLIGHT_LOADS = 12


def _profile(
    capsys: pytest.CaptureFixture[str], workspace: Path, dataset: str, day: date, table: pa.Table
) -> Any:
    path = workspace.parent / f"{dataset}-{day.isoformat()}.parquet"
    pq.write_table(table, path)
    code, out, err = run(
        capsys, "profile", str(path), "--dataset", dataset, "--load-date", day.isoformat(),
        "--workspace", str(workspace), "--json",
    )  # fmt: skip
    assert code == 0, err
    return json.loads(out)


Later = Callable[[pa.Table], Any]


def _later(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], workspace: Path, dataset: str, day: date
) -> Later:
    """Profile one more load on a copy of ``workspace``: each test plants its fault alone."""
    copy = tmp_path / "ws"
    shutil.copytree(workspace, copy)
    return lambda table: _profile(capsys, copy, dataset, day, table)


@pytest.fixture(scope="module")
def panel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    return _clean(tmp_path_factory, "tx", txhousing_monthly()[:PANEL_LOADS])


@pytest.fixture(scope="module")
def flights(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    return _clean(tmp_path_factory, "flights", daily_loads()[:FLIGHT_LOADS])


def _clean(
    tmp_path_factory: pytest.TempPathFactory, dataset: str, loads: tuple[tuple[date, pa.Table], ...]
) -> tuple[Path, list[Any]]:
    """The clean loads profiled once per module, through the same command (without capsys)."""
    workspace = tmp_path_factory.mktemp(dataset) / "ws"
    outputs = []
    for day, table in loads:
        path = workspace.parent / f"{dataset}-{day.isoformat()}.parquet"
        pq.write_table(table, path)
        done = completed(
            "profile", str(path), "--dataset", dataset, "--load-date", day.isoformat(),
            "--workspace", str(workspace), "--json",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(done.stdout))
    return workspace, outputs


def alerts(result: Any, column: str | None = None) -> list[tuple[str, str | None, str]]:
    return [
        (a["kind"], a["column"], a["severity"])
        for a in result["alerts"]
        if column is None or a["column"] == column
    ]


# --- 1. a panel's dimension is a category --------------------------------------------------------


def test_a_panel_city_never_seen_is_a_new_value_decision(
    panel: tuple[Path, list[Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace, _ = panel
    day, table = txhousing_monthly()[PANEL_LOADS]
    extra = table.slice(0, 1)
    extra = extra.set_column(0, extra.schema.field(0), pa.array(["Zzyzx"], extra.schema.field(0).type))
    result = _later(tmp_path, capsys, workspace, "tx", day)(pa.concat_tables([table, extra]))
    (found,) = [a for a in result["alerts"] if a["column"] == "city"]
    assert (found["kind"], found["severity"]) == ("new_value", "soft")
    assert found["values"] == [{"value": "Zzyzx", "count": 1, "decision": "pending"}]
    assert len(result["decisions"]) == 1


def test_a_clean_panel_month_is_quiet_on_its_city(
    panel: tuple[Path, list[Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace, _ = panel
    day, table = txhousing_monthly()[PANEL_LOADS]
    result = _later(tmp_path, capsys, workspace, "tx", day)(table)
    assert alerts(result, "city") == []
    city = next(c for c in result["columns"] if c["name"] == "city")
    assert city["distinct"] == 46 and result["decisions"] == []


# --- 2. a category replaced ------------------------------------------------------------------------


def test_a_city_renamed_is_one_hard_alert_with_its_decision(
    panel: tuple[Path, list[Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace, _ = panel
    day, table = txhousing_monthly()[PANEL_LOADS]
    result = _later(tmp_path, capsys, workspace, "tx", day)(with_value(table, "city", "Abilene TX", 1))
    assert alerts(result, "city") == [("new_value", "city", "hard")]
    (found,) = [a for a in result["alerts"] if a["column"] == "city"]
    assert "replaced" in found["message"] and "Abilene" in found["message"]
    assert found["values"] == [{"value": "Abilene TX", "count": 1, "decision": "pending"}]
    assert len(result["decisions"]) == 1  # the new value still goes to a person


# --- 3. two categorical columns swapped ------------------------------------------------------------


def test_origin_and_dest_swapped_is_one_hard_swap_alert_and_no_decisions(
    flights: tuple[Path, list[Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace, _ = flights
    day, table = daily_loads()[FLIGHT_LOADS]
    origin, dest = table.schema.get_field_index("origin"), table.schema.get_field_index("dest")
    swapped = table.set_column(origin, "origin", table.column("dest")).set_column(
        dest, "dest", table.column("origin")
    )
    result = _later(tmp_path, capsys, workspace, "flights", day)(swapped)
    on_them = [a for a in result["alerts"] if a["column"] in ("origin", "dest")]
    assert [(a["kind"], a["severity"]) for a in on_them] == [("swap", "hard")]
    assert "origin" in on_them[0]["message"] and "dest" in on_them[0]["message"]
    with MetricStore.open(workspace=tmp_path / "ws") as store:  # the copy _later profiled in
        assert {d.column for d in store.decisions("flights")} <= {"carrier", "dest"}
        assert not [d for d in store.decisions("flights") if d.value in ("EWR", "JFK", "LGA")]


# --- 4. a dimension value vanished -------------------------------------------------------------------


def test_a_carrier_every_day_held_is_gone(
    flights: tuple[Path, list[Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace, _ = flights
    day, table = daily_loads()[FLIGHT_LOADS]
    without = table.filter(pa.compute.not_equal(table.column("carrier"), "UA"))
    result = _later(tmp_path, capsys, workspace, "flights", day)(without)
    assert alerts(result, "carrier") == [("vanished_value", "carrier", "hard")]
    (found,) = [a for a in result["alerts"] if a["column"] == "carrier"]
    assert found["message"].startswith("1 value(s) held by each of 12 loads are gone: UA (17.3% of rows")


def test_a_city_gone_from_the_panel_is_a_soft_alert(
    panel: tuple[Path, list[Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace, _ = panel
    day, table = txhousing_monthly()[PANEL_LOADS]
    without = table.filter(pa.compute.not_equal(table.column("city"), "Waco"))
    result = _later(tmp_path, capsys, workspace, "tx", day)(without)
    assert alerts(result, "city") == [("vanished_value", "city", "soft")]


def test_a_clean_flights_day_raises_no_category_alert(
    flights: tuple[Path, list[Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace, _ = flights
    day, table = daily_loads()[FLIGHT_LOADS]
    result = _later(tmp_path, capsys, workspace, "flights", day)(table)
    kinds = {a["kind"] for a in result["alerts"]}
    assert not kinds & {"swap", "vanished_value"}


# --- small loads, through the Python API ------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MetricStore]:
    monkeypatch.setenv("ASSAY_WORKSPACE", str(tmp_path))
    with MetricStore.open(workspace=tmp_path) as opened:
        yield opened


def _venues(
    store: MetricStore, loads: list[dict[str, int]], config: DatasetConfig | None = None
) -> ProfileResult:
    """Profile one load per mapping of venue -> rows; the last one's result."""
    for i, counts in enumerate(loads):
        venues = [venue for venue, rows in counts.items() for _ in range(rows)]
        table = pa.table({"venue": venues, "qty": list(range(len(venues)))})
        result = flows.profile(table, dataset="trades", load_date=day(i), store=store, config=config)
    return result


CLEAN = {"XLON": 60, "XPAR": 50, "XETR": 40}


def test_a_venue_replaced_by_a_new_one_is_one_hard_alert_and_a_decision(store: MetricStore) -> None:
    result = _venues(store, [CLEAN] * 6 + [{"XLON": 60, "XPAR": 50, "XNEW": 40}])
    assert [(a.kind, a.column, a.severity) for a in result.alerts] == [("new_value", "venue", "hard")]
    assert result.alerts[0].message.startswith("category replaced: XETR (held by every load of the window)")
    assert [d.value for d in store.decisions("trades")] == ["XNEW"]


def test_a_venue_added_beside_the_others_stays_a_soft_new_value(store: MetricStore) -> None:
    result = _venues(store, [CLEAN] * 6 + [{**CLEAN, "XNEW": 2}])
    assert [(a.kind, a.severity) for a in result.alerts] == [("new_value", "soft")]


def test_a_value_of_one_row_a_load_in_a_moving_set_may_skip_a_day(store: MetricStore) -> None:
    """The 2-row floor: a value of one row a day, among values that come and go, is not missed
    when it skips a day (a destination flown once a day); the same value in a set that never
    moves is (a panel's city)."""
    moving = [{**CLEAN, "XONE": 1, **({"XODD": 3} if i % 2 else {})} for i in range(6)]
    result = _venues(store, [*moving, CLEAN])
    assert [a.kind for a in result.alerts] == []
    (judged,) = [j for j in result.judgements if j.kind == "vanished_value"]
    assert judged.severity is None


def test_a_value_gone_from_a_set_that_never_moves_is_soft_when_small(store: MetricStore) -> None:
    result = _venues(store, [{**CLEAN, "XONE": 1}] * 6 + [CLEAN])
    assert [(a.kind, a.severity) for a in result.alerts] == [("vanished_value", "soft")]


def test_vanished_value_can_be_switched_off(store: MetricStore) -> None:
    config = DatasetConfig.model_validate({"columns": {"venue": {"checks": {"vanished_value": False}}}})
    result = _venues(store, [CLEAN] * 6 + [{"XLON": 60, "XPAR": 50}], config)
    assert [a.kind for a in result.alerts if a.column == "venue"] == []
    assert "vanished_value" not in {j.kind for j in result.judgements}
