"""Nested columns (structs, lists, maps) in row-level output: kept in Parquet, JSON in CSV."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from assay.dqdl import evaluate
from assay.lake.writers import write_table


def _nested(tmp_path: Path) -> Path:
    table = pa.table(
        {
            "id": [1, 2],
            "tags": [["a", "b"], None],
            "address": [{"city": "Oslo", "zip": 150}, None],
            "scores": pa.array([[("math", 9)], None], pa.map_(pa.string(), pa.int64())),
            "history": [[{"year": 2023, "codes": ["x"]}], []],
        }
    )
    path = tmp_path / "nested.parquet"
    pq.write_table(table, path)
    return path


def test_row_level_parquet_keeps_nested_columns(tmp_path: Path) -> None:
    result = evaluate('Rules = [ IsComplete "id" ]', _nested(tmp_path), row_level=True)
    assert result.row_level is not None
    out = tmp_path / "rows.parquet"
    write_table(result.row_level, out)
    rows = pq.read_table(out).to_pylist()
    assert rows[0]["address"] == {"city": "Oslo", "zip": 150}
    assert rows[0]["history"] == [{"year": 2023, "codes": ["x"]}]
    assert rows[0]["scores"] == [("math", 9)]


def test_row_level_csv_holds_nested_values_as_json(tmp_path: Path) -> None:
    result = evaluate('Rules = [ IsComplete "id" ]', _nested(tmp_path), row_level=True)
    assert result.row_level is not None
    out = tmp_path / "rows.csv"
    write_table(result.row_level, out)
    with out.open() as handle:
        first, second = list(csv.DictReader(handle))
    assert json.loads(first["address"]) == {"city": "Oslo", "zip": 150}
    assert json.loads(first["scores"]) == {"math": 9}
    assert json.loads(first["history"]) == [{"year": 2023, "codes": ["x"]}]
    assert json.loads(first["tags"]) == ["a", "b"]
    assert second["address"] == "" and json.loads(second["history"]) == []
    assert json.loads(first["DataQualityRulesPass"]) == ['IsComplete "id"']
