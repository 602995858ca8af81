"""Inputs: CSV, Parquet, JSON lines, pyarrow, pandas, polars; bad inputs say what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.dqdl import evaluate
from assay.errors import ConfigError

RULES = 'Rules = [ RowCount = 3, IsComplete "name", Sum "amount" = 6 ]'


def _table() -> pa.Table:
    return pa.table({"name": ["a", "b", "c"], "amount": [1, 2, 3]})


def _outcomes(data: object) -> list[str]:
    return [r.outcome for r in evaluate(RULES, data).rules]


def test_csv(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("name,amount\na,1\nb,2\nc,3\n")
    assert _outcomes(path) == ["Passed"] * 3


def test_a_blank_text_cell_in_csv_is_an_empty_string_not_null(tmp_path: Path) -> None:
    # Glue reads it as "" so Completeness counts it (DQDL.md §10.3); blank numbers stay NULL.
    path = tmp_path / "d.csv"
    path.write_text("name,amount\na,1\n,\nc,3\n")
    result = evaluate(
        'Rules = [ IsComplete "name", IsComplete "amount", ColumnValues "name" != EMPTY ]', path
    )
    assert [r.outcome for r in result.rules] == ["Passed", "Failed", "Failed"]


def test_parquet_and_json_lines(tmp_path: Path) -> None:
    pq.write_table(_table(), tmp_path / "d.parquet")
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(r) for r in _table().to_pylist()))
    assert _outcomes(tmp_path / "d.parquet") == ["Passed"] * 3
    assert _outcomes(str(tmp_path / "d.jsonl")) == ["Passed"] * 3


def test_frames() -> None:
    assert _outcomes(_table()) == ["Passed"] * 3
    assert _outcomes(_table().to_pandas()) == ["Passed"] * 3
    assert (
        _outcomes(pd.DataFrame({"name": ["a", "b", "c"], "amount": [1, 2, 3]}, index=[7, 8, 9]))
        == ["Passed"] * 3
    )
    assert _outcomes(pl.from_arrow(_table())) == ["Passed"] * 3


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.csv", None, "no such data file"),
        ("d.xlsx", b"PK", "unknown data file type '.xlsx'"),
        ("broken.parquet", b"not parquet at all", "cannot read the file as parquet"),
    ],
)
def test_unreadable_input_is_a_config_error(
    tmp_path: Path, name: str, content: bytes | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ConfigError, match=message) as raised:
        evaluate(RULES, path)
    assert str(path) in str(raised.value)


def test_a_folder_is_not_a_data_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a folder"):
        evaluate(RULES, tmp_path)


def test_an_unknown_object_is_refused() -> None:
    with pytest.raises(ConfigError, match="cannot read data of type"):
        evaluate(RULES, object())


def test_a_dataframe_column_of_mixed_values_is_the_users_mistake_not_a_platform_failure() -> None:
    """Data as a spreadsheet import leaves it: a column of numbers and text."""
    frame = pd.DataFrame({"body_mass_g": [3750, "n/a", 3800, None], "species": ["Adelie"] * 4})
    with pytest.raises(ConfigError, match=r"column body_mass_g.*one type") as caught:
        evaluate("Rules = [ RowCount > 0 ]", frame, threads=1)
    assert "Traceback" not in caught.value.message
