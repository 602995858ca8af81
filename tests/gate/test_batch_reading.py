"""The gate reads real CSV files: reading options, gzip, offsets to UTC, blank_is_null (issue 8 §3)."""

from __future__ import annotations

import gzip
import json
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pytest

from assay.engine import Engine
from assay.errors import ConfigError
from assay.gate import batch as batches
from assay.gate.schema import load_schema, schema_text
from assay.lake.readers import ReadOptions
from gate.conftest import HEADER, RULES, Bench


def test_offsets_are_converted_to_utc(reader: Engine, tmp_path: Path) -> None:
    path = tmp_path / "b.csv"
    path.write_text(
        "id,at,tz\n1,2024-01-01T10:00:00+02:00,2024-01-01T10:00:00+02:00\n"
        "2,2024-01-01 09:00:00,2024-01-01 09:00:00Z\n"
    )
    schema_file = tmp_path / "s.yaml"
    schema_file.write_text(
        "columns:\n  - {name: id, type: bigint}\n  - {name: at, type: timestamp}\n"
        "  - {name: tz, type: timestamptz}\n"
    )
    schema = load_schema(schema_file)
    assert schema.field("tz").type == pa.timestamp("us", tz="UTC")
    read = batches.read(reader, path, schema)
    assert not read.errors
    assert batches.fetch(reader, read.typed).column("at").to_pylist() == [
        datetime(2024, 1, 1, 8),
        datetime(2024, 1, 1, 9),
    ]
    assert [t.hour for t in batches.fetch(reader, read.typed).column("tz").to_pylist()] == [8, 9]
    # inferred, too: the first batch of a table without a schema file
    inferred = batches.read(reader, path, None)
    assert batches.fetch(reader, inferred.typed).column("at").to_pylist() == [
        datetime(2024, 1, 1, 8),
        datetime(2024, 1, 1, 9),
    ]
    assert "timestamptz" in schema_text(schema)


def test_blank_is_null_per_text_column(reader: Engine, tmp_path: Path) -> None:
    path = tmp_path / "b.csv"
    path.write_text("id,first,middle,n\n1,Ana,,\n2, ,  ,5\n")
    schema_file = tmp_path / "s.yaml"
    schema_file.write_text(
        "columns:\n  - {name: id, type: bigint}\n  - {name: first, type: string}\n"
        "  - {name: middle, type: string, blank_is_null: false}\n  - {name: n, type: bigint}\n"
    )
    schema = load_schema(schema_file)
    read = batches.read(reader, path, schema)
    assert not read.errors
    assert batches.fetch(reader, read.typed).column("first").to_pylist() == [
        "Ana",
        None,
    ]  # default: blank is missing
    assert batches.fetch(reader, read.typed).column("middle").to_pylist() == ["", "  "]  # kept as written
    assert batches.fetch(reader, read.typed).column("n").to_pylist() == [None, 5]
    assert "blank_is_null: false" in schema_text(schema)
    assert load_schema(schema_file).equals(schema)


def test_blank_is_null_false_is_for_text_columns(tmp_path: Path) -> None:
    schema_file = tmp_path / "s.yaml"
    schema_file.write_text("columns:\n  - {name: n, type: bigint, blank_is_null: false}\n")
    with pytest.raises(ConfigError, match="blank_is_null: false is for text columns"):
        load_schema(schema_file)
    schema_file.write_text("columns:\n  - {name: n, type: bigint, blank_as_null: true}\n")
    with pytest.raises(ConfigError, match="unknown key"):
        load_schema(schema_file)


def test_reading_options_and_gzip(reader: Engine, tmp_path: Path) -> None:
    path = tmp_path / "b.csv.gz"
    path.write_bytes(gzip.compress(b"id;amount;note\n1;2,5;NA\n2;NA;x\n"))
    read = batches.read(reader, path, None, ReadOptions(nulls=("NA",), delimiter=";", decimal_comma=True))
    assert not read.errors
    assert read.schema.field("amount").type == pa.decimal128(18, 1)
    assert [
        str(v) if v is not None else None
        for v in batches.fetch(reader, read.typed).column("amount").to_pylist()
    ] == [
        "2.5",
        None,
    ]
    assert batches.fetch(reader, read.typed).column("note").to_pylist() == [None, "x"]


def test_inference_keeps_ambiguous_dates_and_yes_no_as_text(reader: Engine, tmp_path: Path) -> None:
    path = tmp_path / "b.csv"
    path.write_text("day,answer,flag\n1/2/21,Yes,true\n3/4/21,No,false\n")
    schema = batches.read(reader, path, None).schema
    assert [f.type for f in schema] == [pa.string(), pa.string(), pa.bool_()]


def test_a_remote_batch_other_than_s3_is_not_supported(reader: Engine) -> None:
    # s3:// batches are read: tests/storage/test_inputs.py
    with pytest.raises(ConfigError, match=r"remote paths \(https://\) are not supported"):
        batches.read(reader, Path("https://example.org/b.csv"), None)


def test_the_gate_reads_a_gzipped_semicolon_batch_with_null_strings(bench: Bench) -> None:
    rows = [HEADER.replace(",", ";"), "B1;A1;2024-01-31;ACTIVE;100;100;0", "B1;A2;2024-01-31;NULL;50;50;0"]
    path = bench.root / "b1.csv.gz"
    path.write_bytes(gzip.compress(("\n".join(rows) + "\n").encode()))
    result = bench.gate(path, read=ReadOptions(delimiter=";", nulls=("NULL",)))
    assert result.summary.total == 2 and result.summary.quarantined == 0
    # the NULL status is missing, so the domain rule (a warning) does not pass it
    assert result.summary.warned == 1


def test_gate_command_takes_the_reading_options(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from assay.cli import app

    rules = tmp_path / "rules.csv"
    rules.write_text(RULES)
    batch = tmp_path / "b.csv"
    batch.write_text(HEADER.replace(",", "|") + "\nB1|A1|2024-01-31|ACTIVE|100|100|0\n")
    args = ["gate", str(batch), "--rules", str(rules), "--contributor", "B1", "--contributor-type", "bank"]
    args += ["--table", "silver.accounts", "--key", "account_id", "--order", "statement_date"]
    args += ["--contributor-column", "contributor_id"]
    args += ["--workspace", str(tmp_path / "ws"), "--delimiter", "|", "--json"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    summary = json.loads(done.output)
    assert (summary["total"], summary["passed"], summary["parse_errors"]) == (1, 1, 0)


def test_numbers_are_read_exactly_and_blank_cells_are_missing(reader: Engine, tmp_path: Path) -> None:
    """An integer or decimal cell converts only when written exactly (the engines' casts would
    round '7.25' into 7 and '1.005' into 1.01); whitespace around the digits is not a fault,
    and a cell of whitespace only is a missing value, whatever the column's type."""
    path = tmp_path / "b.csv"
    path.write_text(
        "id,n,amount,day\n"
        "a, 7 ,1.50,2024-01-31\n"
        "b,\t8,  ,\n"
        "c,7.25,1.00,2024-01-31\n"  # line 4: not an integer
        "d,9,1.005,2024-01-31\n"  # line 5: more decimals than the column keeps
        "e,  ,\t,2024-02-30\n"  # line 6: no such date
    )
    schema_file = tmp_path / "s.yaml"
    schema_file.write_text(
        "columns:\n  - {name: id, type: string}\n  - {name: n, type: bigint}\n"
        "  - {name: amount, type: 'decimal(18,2)'}\n  - {name: day, type: date}\n"
    )
    read = batches.read(reader, path, load_schema(schema_file))
    assert [(e.line, e.message) for e in read.errors] == [
        (4, "line 4: n: '7.25' is not a valid bigint"),
        (5, "line 5: amount: '1.005' is not a valid decimal(18,2)"),
        (6, "line 6: day: '2024-02-30' is not a valid date"),
    ]
    typed = batches.fetch(reader, read.typed)
    assert typed.column("id").to_pylist() == ["a", "b"]
    assert typed.column("n").to_pylist() == [7, 8]
    assert [str(v) if v is not None else None for v in typed.column("amount").to_pylist()] == ["1.50", None]
    assert typed.column("day").to_pylist()[1] is None
    assert read.total == 5 and read.records == 5
