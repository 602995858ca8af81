"""The PostgreSQL engine against a real server (tests/pgserver.py): assay's queries run inside
the server, read only, with the server's refusals split into config errors (the query's) and
platform errors (the server's), and a lost server reconnected by the same engine."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import psycopg
import pyarrow as pa
import pytest
from sqlglot import exp

from assay.engine import DataKind, DuckDBEngine, EngineError, PostgresEngine
from assay.errors import ConfigError, PlatformError
from assay.measure import Aggregate, Frequencies, FrequencyAggregate, ScanPlan
from assay.measure.requests import count_if, count_star
from pgserver import PostgresServer


def _at(day: int, hour: int, minute: int = 0, second: int = 0, micro: int = 0) -> dt.datetime:
    return dt.datetime(2026, 11, day, hour, minute, second, micro, tzinfo=dt.UTC)


ROWS = [
    (1, "EU", Decimal("100.50"), 1.25, 10, "first", dt.date(2026, 11, 1), _at(1, 9), True),
    (2, "EU", Decimal("20.00"), None, 20, None, dt.date(2026, 11, 1), _at(1, 10), False),
    (3, "US", Decimal("7.25"), 0.5, None, "third", dt.date(2026, 11, 2), None, True),
    (4, "US", None, 2.0, 40, "fourth", None, _at(2, 23, 59, 59, 123456), None),
    (5, "APAC", Decimal("-3.10"), 0.0, 50, "", dt.date(2026, 11, 3), _at(3, 0, 30), True),
    (6, None, Decimal("1.00"), 4.5, 60, "sixth", dt.date(2026, 11, 3), _at(3, 1), False),
]  # fmt: skip
NAMES = ["id", "region", "amount", "fee", "qty", "note", "trade_date", "executed_at", "settled"]
SCHEMA = pa.schema(
    [
        ("id", pa.int32()),
        ("region", pa.string()),
        ("amount", pa.decimal128(12, 2)),
        ("fee", pa.float64()),
        ("qty", pa.int64()),
        ("note", pa.string()),
        ("trade_date", pa.date32()),
        ("executed_at", pa.timestamp("us", tz="UTC")),
        ("settled", pa.bool_()),
    ]
)
CREATE = """CREATE TABLE public.trades (
    id integer, region text, amount numeric(12,2), fee double precision, qty bigint,
    note varchar(20), trade_date date, executed_at timestamptz, settled boolean, doc jsonb)"""


def _load(url: str) -> str:
    """Create public.trades (and an unrelated table) in the database of ``url``; the libpq URL."""
    libpq = url.replace("+psycopg", "")
    with psycopg.connect(libpq, autocommit=True) as connection:
        connection.execute(CREATE)
        connection.execute("CREATE TABLE public.venues (code text)")
        with connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO public.trades VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [(*row, json.dumps({"id": row[0]})) for row in ROWS],
            )
    return libpq


@pytest.fixture
def engine(postgres_url: str) -> Iterator[PostgresEngine]:
    _load(postgres_url)
    opened = PostgresEngine(postgres_url)  # the store's SQLAlchemy spelling is accepted
    opened.register_table("trades", "public.trades")
    yield opened
    opened.close()


def _select(*columns: exp.Expr | str) -> exp.Select:
    return exp.select(*columns).from_(exp.table_("trades"))


def test_columns_are_read_from_the_server_with_their_kinds(engine: PostgresEngine) -> None:
    found = {c.name: (c.type, c.kind) for c in engine.columns("trades")}
    assert found == {
        "id": ("int4", DataKind.INTEGER),
        "region": ("text", DataKind.STRING),
        "amount": ("numeric(12,2)", DataKind.DECIMAL),
        "fee": ("float8", DataKind.FLOAT),
        "qty": ("int8", DataKind.INTEGER),
        "note": ("varchar(20)", DataKind.STRING),
        "trade_date": ("date", DataKind.DATE),
        "executed_at": ("timestamptz", DataKind.TIMESTAMP),
        "settled": ("bool", DataKind.BOOLEAN),
        "doc": ("jsonb", DataKind.OTHER),
    }
    assert engine.queries == 0


def test_rows_cross_as_arrow_typed_by_the_server(engine: PostgresEngine) -> None:
    table = engine.query(_select(exp.Star()).order_by("id"))
    assert table.schema == SCHEMA.append(pa.field("doc", pa.string()))
    assert table.drop_columns(["doc"]).to_pylist() == [dict(zip(NAMES, row, strict=True)) for row in ROWS]
    assert [json.loads(d) for d in table["doc"].to_pylist()] == [{"id": row[0]} for row in ROWS]
    # an aggregate of a numeric has no declared precision: float64, not a per-value decimal
    total = engine.query(_select(exp.func("sum", exp.column("amount")).as_("total")))
    assert total.schema.field("total").type == pa.float64()
    assert total["total"].to_pylist() == [pytest.approx(125.65)]


def test_types_without_a_family_still_cross(engine: PostgresEngine, postgres_url: str) -> None:
    with psycopg.connect(postgres_url.replace("+psycopg", ""), autocommit=True) as connection:
        connection.execute("CREATE TYPE mood AS ENUM ('calm', 'tense')")
        connection.execute(
            "CREATE TABLE public.odd (m mood, a integer[], n numeric(8,2), t timetz, u uuid, w numeric(50,2))"
        )
        connection.execute(
            "INSERT INTO public.odd VALUES ('calm', '{1,2}', 'NaN', '10:00+02', "
            "'00000000-0000-0000-0000-000000000001', 1.5)"
        )
    engine.register_table("odd", "public.odd")
    assert [(c.type, c.kind) for c in engine.columns("odd")] == [
        ("mood", DataKind.OTHER),
        ("int4[]", DataKind.OTHER),
        ("numeric(8,2)", DataKind.DECIMAL),
        ("timetz", DataKind.OTHER),
        ("uuid", DataKind.OTHER),
        ("numeric(50,2)", DataKind.DECIMAL),
    ]
    row = engine.query(exp.select(exp.Star()).from_("odd"))
    # NaN has no decimal128, nor 50 digits: float64 then; timetz keeps its offset as text
    assert [str(f.type) for f in row.schema] == [
        "string",
        "list<item: int64>",
        "double",
        "string",
        "string",
        "double",
    ]
    values = row.to_pylist()[0]
    assert values["m"] == "calm" and values["a"] == [1, 2] and values["t"] == "10:00:00+02:00"
    assert values["n"] != values["n"] and values["w"] == 1.5  # NaN


def _metrics_query() -> exp.Select:
    """A profile's kind of query: aggregates over the whole and per region, in one scan."""
    query = _select(
        exp.column("region"),
        exp.func("grouping", exp.column("region")).as_("g"),
        exp.Count(this=exp.Star()).as_("row_count"),
        exp.func("sum", exp.column("amount")).as_("amount_sum"),
        exp.func("avg", exp.column("fee")).as_("fee_mean"),
        exp.Count(this=exp.column("note")).as_("note_count"),
        exp.Count(this=exp.Distinct(expressions=[exp.column("trade_date")])).as_("days"),
        exp.func("max", exp.column("executed_at")).as_("last_executed"),
    ).where(exp.column("id").neq(exp.Literal.number(99)))
    return query.group_by(
        exp.GroupingSets(
            expressions=[exp.Tuple(expressions=[]), exp.Tuple(expressions=[exp.column("region")])]
        )
    )


def _normal(table: pa.Table) -> list[tuple[object, ...]]:
    rows = [
        tuple(float(v) if isinstance(v, Decimal | float) else v for v in row.values())
        for row in table.to_pylist()
    ]
    return sorted(rows, key=lambda row: (row[1], str(row[0])))


def test_a_grouping_sets_query_runs_in_postgres_with_duckdbs_numbers(engine: PostgresEngine) -> None:
    query = _metrics_query()
    assert "GROUPING SETS ((), (region))" in engine.render(query)
    found = _normal(engine.query(query))
    duck = DuckDBEngine()
    duck.register_arrow(
        "trades", pa.Table.from_pylist([dict(zip(NAMES, r, strict=True)) for r in ROWS], SCHEMA)
    )
    expected = _normal(duck.query(query))
    assert len(found) == 5  # the total and four regions (NULL among them)
    assert [row[:2] for row in found] == [row[:2] for row in expected]
    for ours, theirs in zip(found, expected, strict=True):
        for a, b in zip(ours, theirs, strict=True):
            assert a == (pytest.approx(b) if isinstance(b, float) else b)
    total = found[-1]
    assert total[1] == 1 and total[2] == len(ROWS) and total[4] == pytest.approx(8.25 / 5)
    assert engine.queries == 1 and duck.queries == 1


def test_only_data_queries_are_counted(engine: PostgresEngine) -> None:
    engine.columns("trades")
    engine.describe(_select("region", "amount"))
    engine.register_query("eu", _select(exp.Star()).where(exp.column("region").eq(exp.Literal.string("EU"))))
    engine.inspect(exp.select(exp.Count(this=exp.Star())).from_("eu"))
    assert engine.queries == 0
    assert engine.query(exp.select(exp.Count(this=exp.Star()).as_("n")).from_("eu")).to_pylist() == [{"n": 2}]
    assert engine.queries == 1


def test_registered_queries_bind_when_registered_and_leave_nothing_on_the_server(
    engine: PostgresEngine, postgres_url: str
) -> None:
    eu = _select(exp.Star()).where(exp.column("region").eq(exp.Literal.string("EU")))
    engine.register_query("slice", eu)
    engine.register_query("big", exp.select("id").from_("slice").where("amount > 50"), materialize=True)
    assert "AS MATERIALIZED" in engine.render(exp.select("id").from_("big"))
    # a later registration of "slice" does not change "big", as with a view
    engine.register_query("slice", _select(exp.Star()))
    assert engine.query(exp.select("id").from_("big")).to_pylist() == [{"id": 1}]
    assert engine.query(exp.select(exp.Count(this=exp.Star()).as_("n")).from_("slice"))["n"].to_pylist() == [
        6
    ]
    # nothing was created on the server, not even temporary objects
    with psycopg.connect(postgres_url.replace("+psycopg", "")) as connection:
        created = connection.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname LIKE 'pg_temp%%' OR c.relname IN ('slice', 'big')"
        ).fetchone()
    assert created == (0,)


def test_the_session_refuses_to_write(engine: PostgresEngine) -> None:
    with pytest.raises(EngineError, match="cannot execute CREATE TABLE in a read-only transaction"):
        engine._run("CREATE TABLE public.written (a integer)")
    with pytest.raises(EngineError, match="read-only transaction"):
        engine._run("CREATE TEMP VIEW v AS SELECT 1")


def test_an_unknown_table_or_schema_is_a_config_error_naming_what_exists(engine: PostgresEngine) -> None:
    with pytest.raises(ConfigError) as error:
        engine.register_table("t", "public.trade")
    assert (
        error.value.message == "postgres table public.trade: no such table (tables in public: trades, venues)"
    )
    with pytest.raises(ConfigError, match=r"postgres table trade: no such table \(tables in public: trades"):
        engine.register_table("t", "trade")
    with pytest.raises(ConfigError, match=r"no such schema sales \(schemas: public\)"):
        engine.register_table("t", "sales.trades")
    with pytest.raises(ConfigError, match="in database wh, but the source's url connects to test_"):
        engine.register_table("t", "wh.public.trades")
    with pytest.raises(ConfigError, match="postgres table : not a table name"):
        engine.register_table("t", "")
    with pytest.raises(ConfigError, match=r"no such table \(tables in public: trades"):
        engine.register_table("t", "trades; DROP TABLE trades")  # one quoted name, never SQL
    engine.register_table("t", "TRADES")  # unquoted names fold to lower case, as in PostgreSQL
    assert [c.name for c in engine.columns("t")][:2] == ["id", "region"]


def test_a_query_the_server_refuses_is_an_engine_error_with_its_message(engine: PostgresEngine) -> None:
    with pytest.raises(EngineError) as error:
        engine.query(_select("settled_at"))
    assert error.value.message == 'column "settled_at" does not exist'
    with pytest.raises(EngineError, match="operator does not exist: text > integer"):
        engine.describe(_select("id").where("region > 5"))
    with pytest.raises(EngineError, match="division by zero"):
        engine.query(_select(exp.column("qty") / exp.Literal.number(0)))
    with pytest.raises(EngineError, match='"nowhere" does not exist'):
        engine.register_query("x", exp.select("a").from_("nowhere"))
    with pytest.raises(EngineError, match="never registered"):
        engine.columns("nowhere")
    # the connection survives a refused query
    assert engine.query(_select(exp.Count(this=exp.Star()).as_("n")))["n"].to_pylist() == [6]


def test_a_statement_timeout_is_a_platform_error(postgres_url: str) -> None:
    engine = PostgresEngine(postgres_url, statement_timeout=0.1)
    with pytest.raises(
        PlatformError, match=r"127\.0\.0\.1:\d+/test_\w+ failed: canceling statement due to statement"
    ):
        engine.query(exp.select(exp.func("pg_sleep", exp.Literal.number(30))))
    assert engine.query(exp.select(exp.Literal.number(1).as_("one"))).to_pylist() == [{"one": 1}]
    engine.close()


def test_data_of_other_places_is_refused_clearly(engine: PostgresEngine) -> None:
    with pytest.raises(ConfigError, match="a PostgreSQL source holds no local data: the table ref"):
        engine.register_arrow("ref", pa.table({"a": [1]}))
    with pytest.raises(ConfigError, match=r"holds no local data: the parquet file x\.parquet"):
        engine.register_file("x", "x.parquet", "parquet")


# --- a server that stops and comes back: a dedicated one, the session's keeps running ------


def _pg_ctl(server: PostgresServer, *arguments: str) -> None:
    server._run("pg_ctl", "-D", str(server.data), "-l", str(server.log), "-w", *arguments)


def _restart(server: PostgresServer) -> None:
    """Start a stopped server again on its port, as PostgresServer.start() does."""
    options = f"-k {server.folder / 'socket'} -p {server.port} -c listen_addresses=127.0.0.1 -c fsync=off"
    _pg_ctl(server, "-o", options, "start")


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    server = PostgresServer.start()
    try:
        yield server
    finally:
        server.stop()


def test_a_stopped_server_is_a_platform_error_and_the_engine_reconnects(own_server: PostgresServer) -> None:
    url = _load(own_server.create_database("wh"))
    secret = url.replace("postgres@", "postgres:s3cr%40t-pw@")  # trust authentication ignores it
    engine = PostgresEngine(secret, connect_timeout=2)
    engine.register_table("trades", "public.trades")
    count = exp.select(exp.Count(this=exp.Star()).as_("n")).from_("trades")
    assert engine.query(count).to_pylist() == [{"n": 6}]

    _pg_ctl(own_server, "-m", "fast", "stop")
    messages = []
    for _ in range(2):  # the lost connection, then the refused new one
        with pytest.raises(PlatformError) as error:
            engine.query(count)
        messages.append(error.value.message)
    where = f"127.0.0.1:{own_server.port}/wh"
    assert (
        messages[0]
        == f"the PostgreSQL server {where} failed: terminating connection due to administrator command"
    )
    assert messages[1].startswith(f"could not connect to the PostgreSQL server {where}: ")
    assert "Connection refused" in messages[1]
    assert not any("s3cr" in m for m in messages)

    _restart(own_server)
    assert engine.query(count).to_pylist() == [{"n": 6}]  # the same engine, its names kept
    assert engine.queries == 4
    engine.close()


def test_the_password_never_appears_in_a_message(postgres_url: str) -> None:
    refused = PostgresEngine("postgresql://ana:hunter2-secret@127.0.0.1:1/wh", connect_timeout=1)
    with pytest.raises(PlatformError) as error:
        refused.register_table("t", "public.trades")
    assert error.value.message.startswith("could not connect to the PostgreSQL server 127.0.0.1:1/wh: ")
    assert "hunter2" not in error.value.message and "hunter2" not in repr(refused)
    with pytest.raises(ConfigError) as invalid:
        PostgresEngine("postgresql://ana:hunter2-secret@db/wh?no_such_option=1")
    assert "hunter2" not in invalid.value.message
    _load(postgres_url)
    engine = PostgresEngine(postgres_url.replace("postgres@", "postgres:hunter2-secret@"))
    with pytest.raises(ConfigError) as unknown:
        engine.register_table("t", "public.nosuch")
    assert "hunter2" not in unknown.value.message
    engine.close()


def test_importing_the_engines_does_not_import_the_driver() -> None:
    code = "import sys, assay.engine; print('psycopg' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.strip() == "False"


def test_the_scan_planner_measures_in_one_postgres_query_as_on_duckdb(engine: PostgresEngine) -> None:
    def plan() -> tuple[ScanPlan, list[str]]:
        scan = ScanPlan("trades")
        slots = [
            scan.add(Aggregate(count_star()), "rows"),
            scan.add(Aggregate(exp.Count(this=exp.column("note"))), "complete"),
            scan.add(Aggregate(count_if(exp.column("amount") > exp.Literal.number(10))), "big"),
            scan.add(Aggregate(exp.func("avg", exp.column("fee"))), "mean"),
            scan.add(FrequencyAggregate(Frequencies(("region",)), exp.Count(this=exp.Star())), "distinct"),
        ]
        return scan, slots

    ours, slots = plan()
    found = ours.run(engine)
    duck = DuckDBEngine()
    duck.register_arrow(
        "trades", pa.Table.from_pylist([dict(zip(NAMES, r, strict=True)) for r in ROWS], SCHEMA)
    )
    theirs, _ = plan()
    expected = theirs.run(duck)
    assert [found.number(s) for s in slots] == [6, 5, 2, pytest.approx(1.65), 3]
    assert [found.number(s) for s in slots] == [pytest.approx(expected.number(s)) for s in slots]
    assert engine.queries == 1 and not found.errors
    # a request the server refuses costs its own group only (the planner's isolation)
    ours.add(Aggregate(exp.func("max", exp.column("settled_at"))), "renamed")
    isolated = ours.run(engine)
    assert isolated.number(slots[0]) == 6 and list(isolated.errors.values()) == [
        'column "settled_at" does not exist'
    ]
