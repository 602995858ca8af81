"""A malformed record (short, long, cut at the end, an unclosed quote) is ONE parse error, with its
line, wherever it is in the file; the rest of the file is gated and ``total`` is the file's
records (issue 28, item 11). On both engines."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.demo.bureau import Bureau, Contributor, csv_text
from assay.engine import Engine
from assay.gate import batch as batches
from assay.lake.readers import ReadOptions
from assay.store import MetricStore
from gate.conftest import HEADER, Bench

RULES = '''rule_id,contributor_type,category,severity,rule,description
C01,bank,completeness,critical,"IsComplete ""account_id""",Every record names its account
'''


def _contributor_file(tmp_path: Path, bad: str, *, last: bool) -> Path:
    """The demo bureau's 16-column file of 80 records, with ``bad`` in the middle or last (no
    line break after it: a transfer cut mid-line)."""
    lines = csv_text(
        Bureau(contributors=(Contributor("BANK_R", "bank", 80),)).month("BANK_R", 0)
    ).splitlines()
    assert len(lines) == 81
    path = tmp_path / "BANK_R.csv"
    if last:
        path.write_text("\n".join([*lines, bad]))
    else:
        path.write_text("\n".join([*lines[:41], bad, *lines[41:]]) + "\n")
    return path


@pytest.mark.parametrize("last", [False, True], ids=["middle", "last"])
def test_a_short_line_is_one_parse_error(bench: Bench, tmp_path: Path, last: bool) -> None:
    path = _contributor_file(tmp_path, "BANK_R,broken line", last=last)
    rules = tmp_path / "one_rule.csv"
    rules.write_text(RULES)
    result = bench.gate(
        path,
        contributor="BANK_R",
        contributor_type="bank",
        rules=rules,
        table="silver.accounts",
        key="account_id",
        order="statement_date",
        contributor_column="contributor_id",
    )
    s = result.summary
    assert (s.total, s.passed, s.quarantined, s.held, s.parse_errors) == (81, 80, 1, 0, 1)
    line = 82 if last else 42
    quarantined = _quarantined(s.quarantine_file)
    assert [(r["dq_line"], r["dq_reasons"], r["dq_raw_line"]) for r in quarantined] == [
        (str(line), f"line {line}: 2 fields where the header has 16", "BANK_R,broken line")
    ]


def _quarantined(path: str | None) -> list[dict[str, str]]:
    if path is None:
        return []
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


CASES = {
    "short": ("a,b,c\n1,2,3\n4,5\n6,7,8\n", [3], ["2 fields where the header has 3"], 2),
    # name: (file, lines of the parse errors, their messages' ends, records read)
    "long": ("a,b,c\n1,2,3\n4,5,6,7,8\n6,7,8\n", [3], ["5 fields where the header has 3"], 2),
    "spaces": ("a,b,c\n1,2,3\n   \n6,7,8\n", [3], ["1 field where the header has 3"], 2),
    "cut": ("a,b,c\n1,2,3\n4,5,6\n6,7", [4], ["2 fields where the header has 3"], 2),
    "cut in a quote": (
        'a,b,c\n1,2,3\n4,5,6\n6,7,"8',
        [4],
        ["not closed: the file ends inside it (cut short?)"],
        2,
    ),
    "unclosed quote": (
        'a,b,c\n1,2,3\n4,"5,6\n6,7,8\n9,9,9\n',
        [3],
        ["not closed: the file ends inside it (cut short?)"],
        1,
    ),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("delimiter", [None, ","], ids=["detected", "given"])
def test_each_malformed_record_is_one_error(
    reader: Engine, tmp_path: Path, case: str, delimiter: str | None
) -> None:
    text, lines, endings, records = CASES[case]
    path = tmp_path / "m.csv"
    path.write_text(text)
    read = batches.read(reader, path, None, ReadOptions(delimiter=delimiter))
    assert [e.line for e in read.errors] == lines
    assert all(e.message.endswith(end) for e, end in zip(read.errors, endings, strict=True))
    assert all(e.message.startswith(f"line {e.line}: ") for e in read.errors)
    assert (read.records, read.total) == (records, records + len(lines))


# --- every record counted once, over generated contributor files --------------------------------

WIDTH = len(HEADER.split(","))
SCHEMA = """columns:
  - {name: contributor_id, type: string}
  - {name: account_id, type: string}
  - {name: statement_date, type: date}
  - {name: account_status, type: string}
  - {name: credit_limit, type: bigint}
  - {name: product_limit, type: bigint}
  - {name: temporary_limit, type: bigint}
"""
_CELL = st.sampled_from(["B1", "A7", "2025-01-31", "ACTIVE", "100", "", "x y", "0"])


@st.composite
def _record(draw: Any, fields: int) -> str:
    return ",".join(draw(st.lists(_CELL, min_size=fields, max_size=fields)))


@st.composite
def _contributor_files(draw: Any) -> tuple[str, list[int], int]:
    """A file's text, the lines of its malformed records, and its records (good and bad)."""
    kinds = draw(st.lists(st.sampled_from(["good", "good", "good", "short", "long", "quote"]), max_size=8))
    lines, bad = [HEADER], []
    for kind in kinds:
        if kind == "good":  # typed alike, so that every file's columns are inferred alike
            lines.append(f"B1,A{len(lines)},2025-01-31,ACTIVE,100,100,0")
            continue
        if kind == "quote":  # a quoted cell with the wrong number of fields around it
            record = draw(_record(WIDTH - 2)) + ',"a, quoted cell"'
        else:
            fields = draw(st.integers(1, WIDTH - 1) if kind == "short" else st.integers(WIDTH + 1, WIDTH + 4))
            record = draw(_record(fields))
        if not record.strip():
            record = "B1" + record  # a blank line is no record at all
        lines.append(record)
        bad.append(len(lines))
    text = "\n".join(lines)
    ending = draw(st.sampled_from(["newline", "none", "cut", "cut in a quote"]))
    if ending == "newline":
        text += "\n"
    elif ending == "cut":
        text += "\n" + draw(_record(draw(st.integers(1, WIDTH - 1)))).lstrip(",") + "B"
        bad.append(len(lines) + 1)
    elif ending == "cut in a quote":
        text += "\n" + draw(_record(WIDTH - 1)) + ',"cut sh'
        bad.append(len(lines) + 1)
    records = len(lines) - 1 + (ending.startswith("cut"))
    return text, bad, records


def test_every_record_is_counted_once(engine: Any, tmp_path_factory: Any) -> None:
    """Every record of a generated file once: total == its records == committed + quarantined +
    held, one parse error per malformed record, each at its line (fewer files on Spark, where a
    gate run takes seconds)."""

    @given(_contributor_files())
    @settings(max_examples=25 if engine == "duckdb" else 6, deadline=None)
    def check(example: tuple[str, list[int], int]) -> None:
        text, bad, records = example
        root = tmp_path_factory.mktemp("files")  # a workspace each: a file sent twice is recognised
        with MetricStore.open(workspace=root / "ws") as store:
            path, schema = root / "batch.csv", root / "schema.yaml"
            path.write_text(text)
            schema.write_text(SCHEMA)
            s = Bench(root, store, engine).gate(path, schema=schema).summary
        assert s.total == records == s.passed + s.quarantined + s.held
        assert s.parse_errors == len(bad)
        reported = [int(r["dq_line"]) for r in _quarantined(s.quarantine_file) if r["dq_raw_line"]]
        assert sorted(reported) == bad

    check()
