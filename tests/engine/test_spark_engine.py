"""The Spark engine on the session's one SparkSession (tests/sparksession.py): its views, its
readers (CSV as text with DuckDB's semantics, Parquet, JSON), its errors, and the registry."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlglot import exp

from assay.dqdl import evaluate
from assay.engine import DataKind, DuckDBEngine, EngineError
from assay.engine.registry import engine_factory, make_engine, open_engine
from assay.engine.spark import SparkEngine, read_conf
from assay.errors import ConfigError
from assay.lake.readers import ReadOptions, register


@pytest.fixture
def spark(spark_session: Any) -> Any:
    engine = SparkEngine(spark_session)
    yield engine
    engine.close()


def count(engine: Any, table: str) -> int:
    return int(
        engine.query(exp.select(exp.func("count", exp.Star()).as_("n")).from_(table)).to_pylist()[0]["n"]
    )


def test_two_engines_on_one_session_keep_their_own_tables(spark_session: Any) -> None:
    first, second = SparkEngine(spark_session), SparkEngine(spark_session)
    first.register_arrow("t", pa.table({"a": [1, 2, 3]}))
    second.register_arrow("t", pa.table({"a": [1]}))
    assert (count(first, "t"), count(second, "t")) == (3, 1)
    first.close()
    assert count(second, "t") == 1  # closing one engine drops its views only
    views = {t.name for t in spark_session.catalog.listTables()}
    assert not any(v.endswith("_t") and v.startswith(first._prefix) for v in views)
    second.close()
    # an engine handed a session never stops it
    assert spark_session.sql("SELECT 1 AS x").collect()[0]["x"] == 1


def test_columns_map_spark_types_to_kinds(spark: SparkEngine) -> None:
    import datetime as dt
    from decimal import Decimal

    table = pa.table(
        {
            "i": pa.array([1], pa.int32()),
            "f": [1.5],
            "d": pa.array([Decimal("1.20")], pa.decimal128(4, 2)),
            "s": ["x"],
            "b": [True],
            "day": [dt.date(2021, 1, 1)],
            "ts": pa.array([dt.datetime(2021, 1, 1)], pa.timestamp("us", tz="UTC")),
        }
    )
    spark.register_arrow("t", table)
    kinds = [c.kind for c in spark.columns("t")]
    assert kinds == [
        DataKind.INTEGER,
        DataKind.FLOAT,
        DataKind.DECIMAL,
        DataKind.STRING,
        DataKind.BOOLEAN,
        DataKind.DATE,
        DataKind.TIMESTAMP,
    ]


def test_describe_binds_without_counting_a_query(spark: SparkEngine) -> None:
    spark.register_arrow("t", pa.table({"a": [1, 2]}))
    columns = spark.describe(
        exp.select(exp.column("a").as_("b"), exp.Literal.string("x").as_("c")).from_("t")
    )
    assert [(c.name, c.kind) for c in columns] == [("b", DataKind.INTEGER), ("c", DataKind.STRING)]
    assert spark.queries == 0
    with pytest.raises(EngineError, match="nope"):
        spark.describe(exp.select(exp.column("nope")).from_("t"))


def test_errors_are_one_line_and_name_the_users_table(spark: SparkEngine) -> None:
    spark.register_arrow("orders", pa.table({"a": [1]}))
    with pytest.raises(EngineError) as caught:
        spark.query(exp.select(exp.column("missing")).from_("orders"))
    assert "\n" not in caught.value.message
    assert "missing" in caught.value.message and spark._prefix not in caught.value.message


def write_csv(path: Path, text: str, *, packed: bool = False) -> Path:
    if packed:
        with gzip.open(path, "wt", encoding="utf-8", newline="") as handle:
            handle.write(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


CSV = 'id;amount;name;day;note\n1;2,5;"a;b";2021-01-02;\n2;NA;;2021-01-03;x\n3;;"say ""hi""";;NA\n'


@pytest.mark.parametrize("packed", [False, True], ids=["plain", "gzip"])
def test_csv_reads_like_duckdb(tmp_path: Path, spark: SparkEngine, packed: bool) -> None:
    # delimiter detected, quotes doubled, decimal comma, blank text cell = "", NA in a number
    # column = NULL: the same table on both engines
    path = write_csv(tmp_path / ("d.csv.gz" if packed else "d.csv"), CSV, packed=packed)
    read = ReadOptions(decimal_comma=True)
    on_spark = register(spark, "t", path, read)
    on_duckdb = register(DuckDBEngine(), "t", path, read)
    assert [c.kind for c in on_spark.columns] == [c.kind for c in on_duckdb.columns]
    assert [c.kind for c in on_spark.columns] == [
        DataKind.INTEGER,
        DataKind.FLOAT,
        DataKind.STRING,
        DataKind.DATE,
        DataKind.STRING,
    ]
    rows = spark.query(exp.select(exp.Star()).from_("t").order_by("id")).to_pylist()
    assert [(r["amount"], r["name"], r["note"]) for r in rows] == [
        (2.5, "a;b", ""),
        (None, "", "x"),
        (None, 'say "hi"', "NA"),
    ]


def test_csv_null_strings_and_headerless(tmp_path: Path, spark: SparkEngine) -> None:
    path = write_csv(tmp_path / "d.csv", "1,-,x\n2,7,\n")
    table = register(spark, "t", path, ReadOptions(header=False, nulls=("-",)))
    assert table.column_names() == ["column0", "column1", "column2"]
    rows = spark.query(exp.select(exp.Star()).from_("t").order_by("column0")).to_pylist()
    assert rows == [
        {"column0": 1, "column1": None, "column2": "x"},
        {"column0": 2, "column1": 7, "column2": ""},
    ]


def test_csv_with_a_date_that_is_not_iso_stays_text(tmp_path: Path, spark: SparkEngine) -> None:
    path = write_csv(
        tmp_path / "d.csv", "day,ts\n2021-01-02,2021-01-02 10:00:00+02:00\n1/2/21,2021-01-03T00:00:00Z\n"
    )
    kinds = {c.name: c.kind for c in register(spark, "t", path).columns}
    assert kinds == {"day": DataKind.STRING, "ts": DataKind.TIMESTAMP}
    ts = spark.query(exp.select(exp.func("min", exp.column("ts")).as_("m")).from_("t")).to_pylist()[0]["m"]
    assert ts.isoformat() == "2021-01-02T08:00:00+00:00"  # an offset is converted to UTC


def test_parquet_json_and_jsonl_files(tmp_path: Path, spark: SparkEngine) -> None:
    pq.write_table(pa.table({"a": [1, 2]}), tmp_path / "x.parquet")
    (tmp_path / "x.json").write_text(json.dumps([{"a": 1}, {"a": 2}, {"a": 3}]))
    (tmp_path / "x.jsonl").write_text('{"a": 1}\n{"a": 2}\n')
    for name, file in (("p", "x.parquet"), ("j", "x.json"), ("l", "x.jsonl")):
        register(spark, name, tmp_path / file)
    assert (count(spark, "p"), count(spark, "j"), count(spark, "l")) == (2, 3, 2)
    spark.register_file("both", [str(tmp_path / "x.parquet")] * 2, "parquet")
    assert count(spark, "both") == 4


def test_a_csv_on_spark_gives_duckdbs_outcomes(tmp_path: Path, engine: Any) -> None:
    path = write_csv(tmp_path / "d.csv", CSV)
    rules = (
        'Rules = [ IsComplete "name", Completeness "amount" > 0.3, ColumnValues "day" <= "2021-01-03", '
        'ColumnValues "name" matches "[a-z; ]*", RowCount = 3 ]'
    )
    result = evaluate(rules, str(path), engine=engine, read=ReadOptions(decimal_comma=True))
    # the blank name is "" (complete; it matches), the blank day is NULL (no date: not <= ...)
    assert [r.outcome for r in result.rules] == ["Passed", "Passed", "Failed", "Failed", "Passed"]
    assert result.rules[1].metrics["Column.amount.Completeness"] == pytest.approx(1 / 3)
    assert result.rules[2].metrics["Column.day.ColumnValues.Compliance"] == pytest.approx(2 / 3)
    assert result.rules[3].metrics["Column.name.ColumnValues.Compliance"] == pytest.approx(2 / 3)


def test_registry_chooses_by_name_then_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_ENGINE", raising=False)
    assert make_engine().dialect == "duckdb"
    monkeypatch.setenv("ASSAY_ENGINE", "nosuch")
    with pytest.raises(ConfigError, match="unknown engine 'nosuch': choose one of duckdb, spark"):
        make_engine()
    assert make_engine("duckdb").dialect == "duckdb"  # the argument wins over the environment


def test_spark_without_pyspark_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)
    with pytest.raises(ConfigError, match=r"pip install 'assay\[spark\]'"):
        make_engine("spark")


def test_engine_factory_takes_a_session_and_leaves_it_running(spark_session: Any) -> None:
    factory = engine_factory(spark_session)
    assert factory is not None
    engine = factory()
    assert engine.dialect == "spark"
    engine.close()
    assert spark_session.sql("SELECT 2 AS x").collect()[0]["x"] == 2
    with pytest.raises(ConfigError, match="SparkSession"):
        engine_factory(42)


def test_spark_conf_file(tmp_path: Path) -> None:
    conf = tmp_path / "spark.conf"
    conf.write_text("# comment\nspark.sql.shuffle.partitions   3\nspark.executor.memory=1g\n\n")
    assert read_conf(conf) == {"spark.sql.shuffle.partitions": "3", "spark.executor.memory": "1g"}
    conf.write_text("spark.only.a.key\n")
    with pytest.raises(ConfigError, match=r"spark.conf:1: expected 'key value'"):
        read_conf(conf)


def test_dqdl_run_on_spark_gives_duckdbs_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spark_session: Any
) -> None:
    # the shipped demo ruleset and data (CSV, a reference, CustomSql, dates), through the CLI
    from importlib.resources import files

    from _invoke import assay

    data = files("assay.demo") / "data"
    payloads = {}
    for engine in ("duckdb", "spark"):
        out = tmp_path / f"{engine}.json"
        code = assay(
            "dqdl", "run", str(data / "orders.dqdl"), "--data", str(data / "orders.csv"),
            "--ref", f"customers={data / 'customers.csv'}", "--now", "2026-01-15T12:00:00",
            "--json", str(out), "--engine", engine, "--workspace", str(tmp_path / engine),
        )  # fmt: skip
        assert code in (0, 1), capsys.readouterr().err
        payloads[engine] = json.loads(out.read_text())
    duck, spark = payloads["duckdb"]["rules"], payloads["spark"]["rules"]
    assert [r["outcome"] for r in spark] == [r["outcome"] for r in duck]
    assert {r["outcome"] for r in duck} >= {"Passed", "Failed"}
    for on_spark, on_duckdb in zip(spark, duck, strict=True):
        assert on_spark["metrics"] == pytest.approx(on_duckdb["metrics"], nan_ok=True), on_duckdb["rule"]
    assert spark_session.sql("SELECT 3 AS x").collect()[0]["x"] == 3  # the run left the session running


def test_dqdl_run_refuses_an_unknown_engine(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from _invoke import assay

    rules = tmp_path / "r.dqdl"
    rules.write_text("Rules = [ RowCount > 0 ]")
    (tmp_path / "d.csv").write_text("a\n1\n")
    code = assay("dqdl", "run", str(rules), "--data", str(tmp_path / "d.csv"), "--engine", "oracle")
    assert code == 2
    assert "unknown engine 'oracle': choose one of duckdb, spark" in capsys.readouterr().err


def test_the_session_defaults_are_assays(spark_session: Any) -> None:
    # UTC (one instant for a literal), ANSI mode off (division by zero is NULL), small shuffles
    settings = ("spark.sql.session.timeZone", "spark.sql.ansi.enabled", "spark.sql.shuffle.partitions")
    assert [spark_session.conf.get(key) for key in settings] == ["UTC", "false", "2"]


# Text that is blank or nearly so: the profile's blank test runs its regular expression only on
# values that sort before "!" or start with a no-break space (measure.kinds.blank).
EDGES = ["", " ", "\t", "\u00a0", "\u00a0 \x0b", "\x0b"]  # blank
EDGES += ["\x01", " x", "\u00a0x", "\u00a1", "\u00ff ", "x ", "\u3000"]  # not


@pytest.mark.parametrize("counted", [True, False], ids=["value-counts", "estimated"])
def test_blank_text_is_found_behind_its_cheap_prefilter(engine: Any, counted: bool) -> None:
    from assay.engine.registry import open_engine
    from assay.measure.profile import profile

    blank = set(" \t\n\r\f\x0b\u00a0")
    values = [*EDGES, None, "plain"]
    opened = open_engine(engine)
    try:
        opened.register_arrow("t", pa.table({"s": values}))
        load = profile(opened, "t", opened.columns("t"), exact=["s"] if counted else [])
    finally:
        opened.close()
    column = load.column("s")
    assert column.distinct_exact is counted
    assert column.blanks == sum(1 for v in values if v is not None and set(v) <= blank) == 6


MIXED_DATE_TIMES = {
    "dated_first": ["2024-01-01", "2024-01-02 10:00:00", "2024-01-03"],
    "timed_first": ["2024-01-02 10:00:00", "2024-01-01", "2024-01-03"],
    "zoned_late": ["2024-01-01", "2024-01-02 10:00", "2024-01-02T10:00:00+02:00"],
    "zoned_first": ["2024-01-02T10:00:00Z", "2024-01-01", "2024-01-03 10:00"],
    "not_iso": ["2024-01-01", "1/2/21 10:00", "2024-01-03"],
    "zoned_date": ["2024-01-01+02:00", "2024-01-02Z", "2024-01-03 10:00+02:00"],
}


def test_dates_beside_date_times_get_the_same_type_on_both_engines(tmp_path: Path, engine: Any) -> None:
    """A date is its midnight and an offset anywhere makes a column zoned, on DuckDB (whose own
    detection depends on the order of the rows) as on Spark (whose detection is assay's)."""
    from assay.engine.types import canonical

    names = list(MIXED_DATE_TIMES)
    lines = [",".join(MIXED_DATE_TIMES[n][row] for n in names) for row in range(3)]
    path = write_csv(tmp_path / "mixed.csv", ",".join(names) + "\n" + "\n".join(lines) + "\n")
    opened = open_engine(engine)
    try:
        types = {c.name: canonical(opened.dialect, c.type) for c in register(opened, "t", path).columns}
    finally:
        opened.close()
    assert types == {
        "dated_first": "timestamp",
        "timed_first": "timestamp",
        "zoned_late": "timestamptz",
        "zoned_first": "timestamptz",
        "not_iso": "string",
        "zoned_date": "string",
    }


def test_value_shapes_come_from_the_same_first_rows_on_both_engines(tmp_path: Path, engine: Any) -> None:
    """Each shape's share is read from the load's first rows (assay.measure.shapes.SAMPLE_ROWS),
    the same rows on DuckDB and Spark: here the rows after them hold no shape at all."""
    from assay.measure import shapes
    from assay.measure.profile import profile

    first, rest = shapes.SAMPLE_ROWS, 150
    lines = ["email,phone,ic,note"]
    lines += [f"u{i}@example.com,+44 20 7946 {i:04d},{800101140000 + i},n{i}" for i in range(first)]
    lines += [f"u{i},{i},{i},n{i}" for i in range(rest)]
    path = tmp_path / "people.csv"
    path.write_text("\n".join(lines) + "\n")
    opened = open_engine(engine)
    try:
        table = register(opened, "t", path)
        load = profile(opened, "t", table.columns)
    finally:
        opened.close()
    assert [(c.name, c.sampled, c.shapes) for c in load.columns] == [
        ("email", first, {"email": 1.0}),
        ("phone", first, {"phone": 1.0}),
        ("ic", first, {"identity_number": 1.0}),
        ("note", first, {}),
    ]
