"""A reconciliation finds exactly the planted differences: missing, extra, changed, within and
beyond a tolerance, NULL against NULL equal, NULL keys and repeated keys reported; on one engine
(DuckDB files, one join) and across engines (PostgreSQL against Parquet, Spark against DuckDB,
by checksums of key ranges), and the canonical text every engine hashes is the same."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlglot import exp

from assay.engine import DataKind, Engine
from assay.engine.postgres import PostgresEngine
from assay.engine.registry import make_engine
from assay.errors import ConfigError
from assay.platform.reconcile import Spec, reconcile
from assay.platform.reconcile.checksums import canonical
from assay.platform.reconcile.plan import Compared
from assay.platform.reconcile.sides import default_factory
from reconcile._planted import EXPECTED, found, tables

SPEC = Spec.of(["id"], tolerances=["amount=0.01"])


@pytest.fixture
def files(tmp_path: Path) -> Path:
    source, target = tables()
    pq.write_table(source, tmp_path / "source.parquet")
    pq.write_table(target, tmp_path / "target.parquet")
    return tmp_path


def _postgres(url: str, table: pa.Table, name: str) -> str:
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain) as connection:
        connection.execute(
            exp.Create(
                this=exp.Schema(
                    this=exp.to_table(name),
                    expressions=[
                        exp.ColumnDef(
                            this=exp.to_identifier(n), kind=exp.DataType.build(t, dialect="postgres")
                        )
                        for n, t in [
                            ("id", "bigint"),
                            ("amount", "float8"),
                            ("name", "text"),
                            ("day", "date"),
                            ("ok", "boolean"),
                        ]
                    ],
                ),
                kind="TABLE",
            ).sql("postgres")
        )
        with connection.cursor() as cursor:
            placeholders = ", ".join(["%s"] * len(table.column_names))
            cursor.executemany(
                f"INSERT INTO {name} VALUES ({placeholders})",  # the test's own constant names
                [tuple(r.values()) for r in table.to_pylist()],
            )
    return plain


def test_one_engine_finds_exactly_the_planted_differences(files: Path) -> None:
    result = reconcile("source.parquet", "target.parquet", SPEC, base=files, workspace=files).to_dict()
    assert result["mode"] == "rows"
    assert found(result) == EXPECTED
    assert result["samples"]["only_in_source"] == [{"key": {"id": 3}}]
    assert result["samples"]["only_in_target"] == [{"key": {"id": 21}}]
    assert result["samples"]["changed"] == [
        {"key": {"id": 6}, "columns": ["amount"]},
        {"key": {"id": 8}, "columns": ["name"]},
        {"key": {"id": 9}, "columns": ["day"]},
    ]
    assert result["samples"]["null_keys"]["source"] == [{"key": {"id": None}, "rows": 1}]
    assert result["samples"]["duplicate_keys"]["target"] == [{"key": {"id": 10}, "rows": 2}]
    assert result["rows"] == {"source": 21, "target": 21}
    assert result["equal"] is False


def test_without_the_tolerance_the_amount_within_it_differs(files: Path) -> None:
    result = reconcile("source.parquet", "target.parquet", Spec.of(["id"]), base=files, workspace=files)
    assert result.counts["changed"] == 4
    assert result.changed_by_column["amount"] == 2


def test_a_table_against_itself_is_equal(files: Path) -> None:
    pq.write_table(tables()[1].slice(0, 19), files / "clean.parquet")  # no NULL key, no repeat
    result = reconcile("clean.parquet", "clean.parquet", SPEC, base=files, workspace=files)
    assert result.equal and result.differences == 0 and result.rows == {"source": 19, "target": 19}


def test_postgres_against_parquet_by_checksums(files: Path, postgres_url: str) -> None:
    source, _ = tables()
    url = _postgres(postgres_url, source, "source_rows")
    port = urlsplit(url).port
    (files / "assay.yaml").write_text(f"sources:\n  servers: ['127.0.0.1:{port}']\n")
    result = reconcile(
        f"postgres:{url}#public.source_rows", "target.parquet", SPEC, base=files, workspace=files
    ).to_dict()
    assert result["mode"] == "checksums"
    assert found(result) == EXPECTED
    assert result["samples"]["changed"] == [
        {"key": {"id": 6}, "columns": ["amount"]},
        {"key": {"id": 8}, "columns": ["name"]},
        {"key": {"id": 9}, "columns": ["day"]},
    ]
    # only the differing ranges' rows crossed: fewer than either table
    assert 0 < result["moved"]["source"]["rows"] < 21
    assert result["moved"]["source"]["bytes"] > 0


def test_a_postgres_server_the_workspace_does_not_declare_is_refused(files: Path, postgres_url: str) -> None:
    url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    with pytest.raises(ConfigError, match="not one the workspace allows"):
        reconcile(f"postgres:{url}#public.x", "target.parquet", SPEC, base=files, workspace=files)


def test_spark_against_duckdb_by_checksums(files: Path, spark_session: Any) -> None:
    from assay.engine.spark import SparkEngine

    spark_session.read.parquet(str(files / "source.parquet")).createOrReplaceTempView("reconcile_source")

    def factory(kind: str) -> Engine:
        return SparkEngine(spark_session) if kind == "spark" else default_factory(kind)

    result = reconcile(
        "spark:reconcile_source", "target.parquet", SPEC, base=files, workspace=files, factory=factory
    ).to_dict()
    assert result["mode"] == "checksums"
    assert found(result) == EXPECTED


VALUES: list[tuple[DataKind, str, Any]] = [
    (DataKind.INTEGER, "bigint", 42),
    (DataKind.INTEGER, "bigint", -7),
    (DataKind.DECIMAL, "double", 1.5),
    (DataKind.DECIMAL, "double", 0.1),
    (DataKind.DECIMAL, "decimal(12, 2)", Decimal("12.30")),
    (DataKind.STRING, "varchar", "Ana Lee"),
    (DataKind.DATE, "date", dt.date(2026, 1, 31)),
    (DataKind.TIMESTAMP, "timestamp", dt.datetime(2026, 1, 31, 8, 5, 3)),
    (DataKind.BOOLEAN, "boolean", True),
    (DataKind.STRING, "varchar", None),
]


def _texts(engine: Engine) -> list[str]:
    texts = []
    for i, (kind, type_name, value) in enumerate(VALUES):
        literal = exp.null() if value is None else exp.Literal.string(str(value))
        typed = exp.cast(literal, exp.DataType.build(type_name))
        inner = exp.select(exp.alias_(typed, "v", quoted=True))
        text = canonical(Compared("v", kind))
        row = engine.rows(
            exp.select(exp.alias_(text, "t", quoted=True)).from_(exp.Subquery(this=inner, alias=f"q{i}"))
        )
        texts.append(row[0]["t"])
    return texts


def test_spark_duckdb_and_postgres_write_the_same_canonical_text(
    postgres_url: str, spark_session: Any
) -> None:
    from assay.engine.spark import SparkEngine

    duck = make_engine("duckdb")
    postgres = PostgresEngine(postgres_url.replace("postgresql+psycopg://", "postgresql://"))
    spark = SparkEngine(spark_session)
    try:
        expected = _texts(duck)
        assert expected[:4] == ["v42", "v-7", "v1.500000", "v0.100000"]
        assert expected[-1] == "n"
        assert _texts(postgres) == expected
        assert _texts(spark) == expected
    finally:
        for engine in (duck, postgres, spark):
            engine.close()


HEXES = ["00000000", "00000001", "7fffffff", "80000000", "ffffffff", "d41d8cd9", "0a1b2c3d"]


def _numbers(engine: Engine, method: Any) -> list[int]:
    """Each of HEXES as ``method`` (an engine's ``hex_number``) reads it, in one query."""
    read = [exp.alias_(method(exp.Literal.string(h)), f"n{i}", quoted=True) for i, h in enumerate(HEXES)]
    [row] = engine.rows(exp.select(*read))
    return [int(row[f"n{i}"]) for i in range(len(HEXES))]


def test_duckdb_postgres_and_spark_each_read_eight_hex_digits_as_the_number_they_spell(
    postgres_url: str, spark_session: Any
) -> None:
    """The checksums' numbers: each engine's own hex-to-integer, and the portable default it
    replaces, give Python's ``int(h, 16)`` on every engine (a wrong one would not give a wrong
    answer, only every range fetched)."""
    from assay.engine.base import Engine as Base
    from assay.engine.spark import SparkEngine

    duck = make_engine("duckdb")
    postgres = PostgresEngine(postgres_url.replace("postgresql+psycopg://", "postgresql://"))
    spark = SparkEngine(spark_session)
    expected = [int(h, 16) for h in HEXES]
    try:
        for engine in (duck, postgres, spark):
            assert _numbers(engine, engine.hex_number) == expected, engine.dialect
            assert _numbers(engine, lambda d, e=engine: Base.hex_number(e, d)) == expected, engine.dialect
    finally:
        for engine in (duck, postgres, spark):
            engine.close()


def test_equal_tables_across_engines_move_only_checksums(files: Path, postgres_url: str) -> None:
    clean = tables()[1].slice(0, 19)  # no NULL key, no repeated key
    pq.write_table(clean, files / "clean.parquet")
    url = _postgres(postgres_url, clean, "clean_rows")
    (files / "assay.yaml").write_text(f"sources:\n  servers: ['127.0.0.1:{urlsplit(url).port}']\n")
    result = reconcile(
        f"postgres:{url}#public.clean_rows", "clean.parquet", SPEC, base=files, workspace=files
    )
    assert result.equal and result.rows == {"source": 19, "target": 19}
    assert result.moved is not None
    assert {side: moved.rows for side, moved in result.moved.items()} == {"source": 0, "target": 0}
