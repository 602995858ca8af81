"""A parse error names the physical line where its record starts (what ``cat -n`` shows), also
after a quoted cell that holds a line break."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from assay.engine import Engine
from assay.gate import batch as batches

# lines:   1 header; 2-3 A1 (a note of two lines); 4 A2; 5 A3 (a field short); 6-8 A4 (a note of
# three lines and a field too many); 9 A5 (no number); 10 A6
NOTES = """contributor_id,account_id,statement_date,amount,note
B1,A1,2025-01-31,10,"multi
line note"
B1,A2,2025-01-31,20,ok
B1,A3,2025-01-31,30
B1,A4,2025-01-31,40,"three
line
note",extra
B1,A5,2025-01-31,abc,y
B1,A6,2025-01-31,60,"z"
"""


def test_lines_are_physical_after_a_quoted_line_break(reader: Engine, tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text(NOTES)
    read = batches.read(reader, path, None)
    assert sorted(e.line for e in read.errors if e.line is not None) == [5, 6, 9]
    bad = next(e for e in read.errors if e.row is not None)
    assert bad.message == "line 9: amount: 'abc' is not a valid bigint"
    assert all(e.message.startswith(f"line {e.line}: ") for e in read.errors)
    assert read.total == 6


def test_lines_without_line_breaks_in_cells_are_unchanged(reader: Engine, tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("id,n\na,1\nb,x\nc,2,3\nd,y\n")
    schema = pa.schema([pa.field("id", pa.string()), pa.field("n", pa.int64())])
    read = batches.read(reader, path, schema)
    assert sorted(e.line for e in read.errors if e.line is not None) == [3, 4, 5]
