"""``dqdl run`` and ``profile`` refuse a ragged line, naming it, also when it is the file's last
and cut short in a way that makes DuckDB's dialect detection fail (issue 28, item 11): never
the engine's "It was not possible to automatically detect the CSV parsing dialect"."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.engine import DuckDBEngine
from assay.errors import ConfigError
from assay.lake.readers import ReadOptions, register

BODY = "id,name,amount\n1,a,10\n2,b,20\n"


@pytest.mark.parametrize(
    ("last", "line", "fields"),
    [
        ("3,c", 4, 2),  # cut short
        ("3,c\r", 4, 2),  # cut short after a stray carriage return: the engine's detection fails
        ("3", 4, 1),
    ],
    ids=["cut", "cut-carriage-return", "one-field"],
)
@pytest.mark.parametrize("delimiter", [None, ","], ids=["detected", "given"])
def test_a_cut_last_line_is_named(
    tmp_path: Path, last: str, line: int, fields: int, delimiter: str | None
) -> None:
    path = tmp_path / "cut.csv"
    path.write_bytes((BODY + last).encode())
    with pytest.raises(ConfigError) as refused:
        register(DuckDBEngine(), "t", path, ReadOptions(delimiter=delimiter))
    plural = "s" if fields != 1 else ""
    assert str(refused.value).startswith(
        f"{path}: line {line} has {fields} field{plural} where the header has 3 (split by ',')"
    )
    assert "automatically detect" not in str(refused.value)
