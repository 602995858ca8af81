"""The gate reads NA, N/A, NULL and null as NULL in number and date columns, as dqdl run does
(assay.lake.readers.NULL_TOKENS), and keeps every cell as it was sent for the quarantine."""

from __future__ import annotations

import csv
from pathlib import Path

import pyarrow as pa

from assay.engine import Engine
from assay.gate import batch as batches
from assay.gate.schema import load_schema
from assay.lake.readers import ReadOptions
from gate.conftest import Bench

# The first rows of R's airquality, as pandas writes it with na_rep="NA", as a contributor file.
AIRQUALITY = """contributor_id,account_id,statement_date,Ozone,Solar.R,Wind,country
B1,D000,2025-01-31,41.0,190.0,7.4,NA
B1,D001,2025-01-31,36.0,118.0,8.0,FR
B1,D004,2025-01-31,NA,NA,14.3,DE
B1,D005,2025-01-31,28.0,NA,14.9,NA
B1,D009,2025-01-31,N/A,194.0,8.6,US
B1,D010,2025-01-31,7.0,null,6.9,
"""


def test_null_tokens_are_missing_in_inferred_number_columns_and_text_in_text_ones(
    reader: Engine, tmp_path: Path
) -> None:
    path = tmp_path / "aq.csv"
    path.write_text(AIRQUALITY)
    read = batches.read(reader, path, None)
    assert not read.errors
    assert read.schema.field("Ozone").type == pa.decimal128(18, 1)
    assert read.schema.field("Solar.R").type == pa.decimal128(18, 1)
    assert read.schema.field("country").type == pa.string()
    typed = batches.fetch(reader, read.typed)
    assert [v is None for v in typed.column("Ozone").to_pylist()] == [False, False, True, False, True, False]
    assert typed.column("Solar.R").null_count == 3
    assert typed.column("country").to_pylist() == ["NA", "FR", "DE", "NA", "US", None]  # Namibia
    # given as --null-value, NA is missing in the text column too
    given = batches.read(reader, path, None, ReadOptions(nulls=("NA",)))
    assert batches.fetch(reader, given.typed).column("country").to_pylist() == [
        None,
        "FR",
        "DE",
        None,
        "US",
        None,
    ]


def test_null_tokens_are_missing_in_declared_number_and_date_columns(reader: Engine, tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("id,amt,day,code\n1,NA,2024-01-31,NA\n2,1.5,N/A,FR\n3, NULL ,null,DE\n4,abc,NA,NULL\n")
    schema_file = tmp_path / "s.yaml"
    schema_file.write_text(
        "columns:\n  - {name: id, type: bigint}\n  - {name: amt, type: 'decimal(10,2)'}\n"
        "  - {name: day, type: date}\n  - {name: code, type: string}\n"
    )
    read = batches.read(reader, path, load_schema(schema_file))
    # the one bad cell is named; the NA beside it is no fault
    assert [(e.line, e.message) for e in read.errors] == [
        (5, "line 5: amt: 'abc' is not a valid decimal(10,2)")
    ]
    typed = batches.fetch(reader, read.typed)
    assert typed.column("amt").to_pylist()[0] is None and typed.column("day").to_pylist()[1:] == [None, None]
    assert typed.column("code").to_pylist() == ["NA", "FR", "DE"]


def test_a_decimal_comma_cell_is_quoted_as_sent(reader: Engine, tmp_path: Path) -> None:
    path = tmp_path / "feb.csv"
    path.write_text("id;amount;price\nA1;10,5;1,5\nA2;7;2,25\n")
    schema_file = tmp_path / "s.yaml"
    schema_file.write_text(
        "columns:\n  - {name: id, type: string}\n  - {name: amount, type: bigint}\n"
        "  - {name: price, type: 'decimal(10,2)'}\n"
    )
    options = ReadOptions(delimiter=";", decimal_comma=True)
    read = batches.read(reader, path, load_schema(schema_file), options)
    assert [e.message for e in read.errors] == ["line 2: amount: '10,5' is not a valid bigint"]
    assert batches.fetch_text(reader, read, [0]).to_pylist() == [
        {"id": "A1", "amount": "10,5", "price": "1,5", batches.ROW: 0}
    ]
    # inferred: the numbers are typed with their decimal point, their text stays as written
    path = tmp_path / "mar.csv"
    path.write_text("id;amount;price\nA1;10,5;1,5\nA2;7,5;2,25\nA3;8,5;NA\n")
    inferred = batches.read(reader, path, None, options)
    assert not inferred.errors
    assert inferred.schema.field("amount").type == pa.decimal128(18, 1)
    assert inferred.schema.field("price").type == pa.decimal128(18, 2)
    prices = batches.fetch(reader, inferred.typed).column("price").to_pylist()
    assert [str(v) if v is not None else None for v in prices] == ["1.50", "2.25", None]
    assert batches.fetch_text(reader, inferred, [0, 2]).column("price").to_pylist() == ["1,5", "NA"]


def test_the_quarantine_file_holds_the_cells_as_sent(bench: Bench) -> None:
    header = (
        "contributor_id;account_id;statement_date;account_status;credit_limit;product_limit;temporary_limit"
    )
    path = bench.csv("B1;A1;2024-01-31;ACTIVE;10,5;10;0", "B1;A2;2024-01-31;ACTIVE;50;50;0", header=header)
    schema = bench.root / "s.yaml"
    schema.write_text(
        "columns:\n  - {name: contributor_id, type: string}\n  - {name: account_id, type: string}\n"
        "  - {name: statement_date, type: date}\n  - {name: account_status, type: string}\n"
        "  - {name: credit_limit, type: bigint}\n  - {name: product_limit, type: bigint}\n"
        "  - {name: temporary_limit, type: bigint}\n"
    )
    result = bench.gate(
        path,
        table="silver.accounts",
        key="account_id",
        order="statement_date",
        contributor_column="contributor_id",
        schema=schema,
        read=ReadOptions(delimiter=";", decimal_comma=True),
    )
    assert (result.summary.parse_errors, result.summary.quarantined) == (1, 1)
    assert result.summary.quarantine_file is not None
    with open(result.summary.quarantine_file, newline="") as handle:
        rows = {r["account_id"]: r for r in csv.DictReader(handle)}
    assert rows["A1"]["credit_limit"] == "10,5"
    assert rows["A1"]["dq_reasons"] == "line 2: credit_limit: '10,5' is not a valid bigint"
    assert list(rows) == ["A1"]
