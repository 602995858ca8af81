"""Declared types are converted exactly or refused, never rounded (docs/reading.md, --schema).

``dqdl run --schema`` and ``profile --schema`` read a cell into its declared type as the gate
does: a number that the type cannot hold as written (``7.25`` in a bigint, ``1.005`` in a
decimal(10,2)) is refused with its column and value, not rounded to 7 or 1.01.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from _invoke import completed
from assay.dqdl import evaluate
from assay.engine import DuckDBEngine
from assay.errors import ConfigError
from assay.lake.readers import ReadOptions, register

SCHEMA = "columns:\n  - {name: code, type: bigint}\n  - {name: amount, type: 'decimal(10,2)'}\n"


def _register(path: Path, declared: pa.Schema, read: ReadOptions | None = None) -> None:
    engine = DuckDBEngine()
    try:
        register(engine, "t", path, read or ReadOptions(types=declared))
    finally:
        engine.close()


def test_a_fraction_in_an_integer_column_is_refused_not_rounded(tmp_path: Path) -> None:
    path = tmp_path / "i.csv"
    path.write_text("code,amount\n1,7.25\n2,3\n")
    declared = pa.schema([pa.field("amount", pa.int64())])
    with pytest.raises(
        ConfigError, match=r"column 'amount' is declared bigint, but 1 value\(s\) do not convert.*'7\.25'"
    ):
        _register(path, declared)


def test_more_decimal_places_than_the_scale_are_refused_not_rounded(tmp_path: Path) -> None:
    path = tmp_path / "rnd.csv"
    path.write_text("code,amount\n1,1.50\n3,1.005\n4,2.675\n5,2\n")
    declared = pa.schema([pa.field("amount", pa.decimal128(10, 2))])
    with pytest.raises(
        ConfigError,
        match=r"column 'amount' is declared decimal\(10, 2\), but 2 value\(s\) do not convert.*'1\.005'",
    ):
        _register(path, declared)


def test_exact_values_convert_with_spaces_signs_and_a_decimal_comma(tmp_path: Path) -> None:
    path = tmp_path / "ok.csv"
    path.write_text("code;amount\n 007 ;1,5\n-12;-2,25\n+3; ,75\n4;NA\n")
    declared = pa.schema([pa.field("code", pa.int64()), pa.field("amount", pa.decimal128(10, 2))])
    result = evaluate(
        'Rules = [ Sum "code" = 2, Sum "amount" = 0, Completeness "amount" = 0.75 ]',
        path,
        read=ReadOptions(types=declared, decimal_comma=True, delimiter=";"),
    )
    assert [(r.outcome, r.message) for r in result.rules] == [("Passed", None)] * 3


def test_dqdl_run_and_profile_with_a_schema_exit_2_on_a_rounded_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = tmp_path / "s.yaml"
    schema.write_text(SCHEMA)
    data = tmp_path / "i.csv"
    data.write_text("code,amount\n1,7.25\n2,1.005\n")
    rules = tmp_path / "i.dqdl"
    rules.write_text('Rules = [ Sum "amount" = 8.26 ]')
    run = completed("dqdl", "run", str(rules), "--data", str(data), "--schema", str(schema))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "column 'amount' is declared decimal(10, 2)" in run.stderr and "'1.005'" in run.stderr
    workspace = tmp_path / "ws"
    profiled = completed(
        "profile", str(data), "--dataset", "d", "--load-date", "2024-01-31", "--schema", str(schema),
        "--workspace", str(workspace),
    )  # fmt: skip
    assert profiled.returncode == 2, profiled.stdout + profiled.stderr
    assert "'1.005'" in profiled.stderr
