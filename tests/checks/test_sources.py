"""The document's other sources: a DuckDB database file (attached read-only), a workspace Iceberg
table, a glob of CSV files; the same document gives the same numbers on each."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from _invoke import assay
from assay.lake.iceberg import Warehouse

ROWS = pa.table(
    {
        "id": [1, 2, 3, 4, 5, 6],
        "day": pa.array(["2026-11-01"] * 3 + ["2026-11-02"] * 3, pa.string()).cast(pa.date32()),
        "region": ["EU", "US", "EU", "EU", "US", None],
        "amount": [10.0, -2.0, 5.0, 7.0, None, 1.0],
    }
)

DOC = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset: {{name: t, source: {source}}}
profiles:
  - id: daily
    slice: {{column: day}}
    dimensions: [region]
    metrics:
      - row_count
      - {{null_rate: [amount]}}
      - {{sum: [amount]}}
      - {{count_where: {{name: neg, condition: "amount < 0"}}}}
expectations:
  - {{id: rows, metric: daily.row_count, expect: "> 0"}}
  - {{id: by-region, metric: daily.row_count, by: [region], expect: "> 0"}}
  - {{id: nulls, metric: daily.null_rate(amount), expect: "= 0"}}
  - {{id: sum, metric: daily.sum(amount), expect: "> 0"}}
  - {{id: neg, metric: daily.neg, expect: "= 0"}}
"""


def observed(root: Path, source: str, day: str) -> dict[str, object]:
    doc = root / "checks" / "t.yaml"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(DOC.format(source=source))
    # the data lies beside the workspace: its admin allows that folder (docs/checks.md)
    (root / "assay.yaml").write_text("sources:\n  paths: [..]\n")
    out = root / "run.json"
    assert assay("check", "run", str(doc), "--at", day, "--workspace", str(root), "--json", str(out)) == 0
    run = json.loads(out.read_text())
    assert run["queries"]["measure"] == 1
    return {
        (o["expectation"], json.dumps(o["group"])): (o["outcome"], o["observed"]) for o in run["outcomes"]
    }


@pytest.fixture
def expected(tmp_path: Path) -> dict[str, object]:
    import pyarrow.parquet as pq

    pq.write_table(ROWS, tmp_path / "rows.parquet")
    return observed(tmp_path / "parquet", '{path: "../../rows.parquet"}', "2026-11-02")


def test_the_parquet_numbers(expected: dict[tuple[str, str], tuple[str, float]]) -> None:
    assert expected[("rows", "null")] == ("passed", 3)
    assert expected[("nulls", "null")] == ("failed", pytest.approx(1 / 3))
    assert expected[("by-region", '{"region": "EU"}')] == ("passed", 1)
    assert expected[("by-region", '{"region": null}')] == ("passed", 1)  # a NULL region is a group
    assert expected[("neg", "null")] == ("passed", 0)


def test_a_duckdb_database_file(tmp_path: Path, expected: dict[str, object]) -> None:
    database = tmp_path / "wh.duckdb"
    with duckdb.connect(str(database)) as con:
        con.register("rows", ROWS)
        con.execute("CREATE SCHEMA sales")
        con.execute("CREATE TABLE sales.trades AS SELECT * FROM rows")
    root = tmp_path / "ws"
    got = observed(root, '{duckdb: {path: "../../wh.duckdb", table: sales.trades}}', "2026-11-02")
    assert got == expected
    # read-only: the run never changed the database
    with duckdb.connect(str(database), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM sales.trades").fetchone() == (6,)


def test_a_workspace_iceberg_table(tmp_path: Path, expected: dict[str, object]) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    with Warehouse.open(root) as warehouse:
        warehouse.create("silver.trades", ROWS.schema, ["day"])
        warehouse.commit("silver.trades", ROWS)
    assert observed(root, "{iceberg: silver.trades}", "2026-11-02") == expected


def test_an_unknown_iceberg_table_names_the_tables(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    doc = root / "checks" / "t.yaml"
    doc.parent.mkdir(parents=True)
    doc.write_text(DOC.format(source="{iceberg: silver.nope}"))
    out = tmp_path / "run.json"
    assay("check", "run", str(doc), "--workspace", str(root), "--json", str(out))
    run = json.loads(out.read_text())
    assert {o["outcome"] for o in run["outcomes"]} == {"config_error"}
    assert "silver.nope" in run["outcomes"][0]["message"]


def test_a_glob_of_csv_files(tmp_path: Path, expected: dict[str, object]) -> None:
    folder = tmp_path / "drops"
    folder.mkdir()
    for day in ("2026-11-01", "2026-11-02"):
        rows = ROWS.filter(pa.compute.equal(ROWS.column("day"), pa.scalar(day).cast(pa.date32())))
        pacsv.write_csv(rows, folder / f"rows-{day}.csv")
    got = observed(tmp_path / "ws", '{path: "../../drops/*.csv"}', "2026-11-02")
    # A CSV has no NULL text: the missing region is a blank cell, read as DQDL reads it (the
    # empty string), so its group is "" (docs/checks.md); every other number is the same.
    blank = got.pop(("by-region", '{"region": ""}'))
    assert blank == expected.pop(("by-region", '{"region": null}'))
    assert got == expected


def test_an_unknown_duckdb_table_is_a_config_error_naming_it(tmp_path: Path) -> None:
    database = tmp_path / "wh.duckdb"
    duckdb.connect(str(database)).close()
    doc = tmp_path / "ws" / "checks" / "t.yaml"
    doc.parent.mkdir(parents=True)
    doc.write_text(DOC.format(source='{duckdb: {path: "../../wh.duckdb", table: main.nope}}'))
    (tmp_path / "ws" / "assay.yaml").write_text("sources:\n  paths: [..]\n")
    out = tmp_path / "run.json"
    assay("check", "run", str(doc), "--workspace", str(tmp_path / "ws"), "--json", str(out))
    run = json.loads(out.read_text())
    assert {o["outcome"] for o in run["outcomes"]} == {"config_error"}
    assert all("nope" in o["message"] for o in run["outcomes"])
