"""The workspace's Iceberg tables: real PyIceberg on a SQL catalog in a temporary workspace, no mocks."""

from __future__ import annotations

import doctest
import sqlite3
import threading
from collections.abc import Iterator
from datetime import date, datetime
from multiprocessing.synchronize import Barrier
from pathlib import Path
from types import ModuleType

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from _processes import TIMEOUT_SECONDS, breaking, run_together, spawn
from assay.errors import ConfigError, PlatformError
from assay.lake import commits, fields, iceberg
from assay.lake.iceberg import Warehouse

TABLE = "silver.accounts"
PARTITION_BY = ("contributor_id", "statement_date")
JAN, FEB, MAR = date(2024, 1, 31), date(2024, 2, 29), date(2024, 3, 31)
SCHEMA = pa.schema(
    [
        ("contributor_id", pa.string()),
        ("statement_date", pa.date32()),
        ("account_id", pa.int64()),
        ("credit_limit", pa.decimal128(18, 2)),
        ("opened_at", pa.timestamp("us")),
    ]
)
PROCESSES = 2
ROUNDS = 4
ROWS_PER_MONTH = 50


def accounts(contributor: str, month: date, count: int, first_id: int = 0) -> pa.Table:
    """``count`` rows of one contributor-month, with account ids from ``first_id``."""
    return pa.table(
        {
            "contributor_id": [contributor] * count,
            "statement_date": [month] * count,
            "account_id": list(range(first_id, first_id + count)),
            "credit_limit": pa.array([i * 100 for i in range(count)], pa.decimal128(18, 2)),
            "opened_at": [datetime(2020, 1, 1, 12, 0, 0, 123456)] * count,
        },
        schema=SCHEMA,
    )


@pytest.fixture
def warehouse(tmp_path: Path) -> Iterator[Warehouse]:
    with Warehouse.open(tmp_path) as opened:
        opened.create(TABLE, SCHEMA, PARTITION_BY)
        yield opened


def data_files(workspace: Path) -> list[Path]:
    return sorted((workspace / "warehouse").rglob("*.parquet"))


# --- the catalog and its tables ---------------------------------------------------------------


def test_open_makes_the_catalog_in_the_workspace(tmp_path: Path) -> None:
    with Warehouse.open(tmp_path) as warehouse:
        assert warehouse.tables() == []
    assert (tmp_path / "warehouse" / "catalog.db").is_file()


def test_create_exists_schema_and_tables(warehouse: Warehouse, tmp_path: Path) -> None:
    assert warehouse.exists(TABLE)
    assert not warehouse.exists("silver.other")
    assert warehouse.schema(TABLE) == SCHEMA
    warehouse.commit(TABLE, pa.concat_tables([accounts("B1", JAN, 3), accounts("B2", JAN, 2)]))
    [info] = warehouse.tables()
    assert (info.name, info.rows, info.snapshots, info.partitions) == (TABLE, 5, 1, 2)
    assert info.schema == SCHEMA
    assert info.location.startswith((tmp_path / "warehouse").as_uri())


def test_the_schema_is_the_inputs_even_where_iceberg_has_no_such_type(tmp_path: Path) -> None:
    schema = pa.schema(
        [
            ("name", pa.large_string()),
            ("small", pa.int8()),
            ("unsigned", pa.uint16()),
            ("at", pa.timestamp("ns", tz="Europe/Paris")),
        ]
    )
    rows = pa.table(
        {
            "name": ["a"],
            "small": [7],
            "unsigned": [65535],
            "at": [1_700_000_000_123_456_000],
        },
        schema=schema,
    )
    with Warehouse.open(tmp_path) as warehouse:
        warehouse.create("raw.odd", schema, partition_by=["small"])
        warehouse.commit("raw.odd", rows)
        assert warehouse.schema("raw.odd") == schema
        assert warehouse.read("raw.odd", {"small": 7}).equals(rows)


def test_create_is_idempotent_and_refuses_another_schema_or_partitioning(warehouse: Warehouse) -> None:
    warehouse.create(TABLE, SCHEMA, PARTITION_BY)
    other = SCHEMA.set(2, pa.field("account_id", pa.string()))
    with pytest.raises(ConfigError, match="column 'account_id' is int64 there, string here"):
        warehouse.create(TABLE, other, PARTITION_BY)
    with pytest.raises(ConfigError, match="column 'opened_at' is there, not here"):
        warehouse.create(TABLE, SCHEMA.remove(4), PARTITION_BY)
    with pytest.raises(ConfigError, match="partitioned by"):
        warehouse.create(TABLE, SCHEMA, ["contributor_id"])
    assert len(warehouse.tables()) == 1


@pytest.mark.parametrize(
    "name",
    ["accounts", "silver.", ".accounts", "a.b.c", "silver.1accounts", "silver.acc-ounts", "s." + "x" * 65],
)
def test_a_bad_table_name_is_a_config_error(tmp_path: Path, name: str) -> None:
    with Warehouse.open(tmp_path) as warehouse, pytest.raises(ConfigError, match="is not a table name"):
        warehouse.create(name, SCHEMA, [])


def test_partitioning_by_an_unknown_column_is_a_config_error(tmp_path: Path) -> None:
    with Warehouse.open(tmp_path) as warehouse, pytest.raises(ConfigError, match="'month': it has no such"):
        warehouse.create(TABLE, SCHEMA, ["contributor_id", "month"])


def test_a_column_iceberg_cannot_hold_is_a_config_error_naming_it(tmp_path: Path) -> None:
    with Warehouse.open(tmp_path) as warehouse:
        with pytest.raises(ConfigError, match="column 'note' has no type"):
            warehouse.create(TABLE, SCHEMA.append(pa.field("note", pa.null())), PARTITION_BY)
        with pytest.raises(ConfigError, match="column 'count' is uint64"):
            warehouse.create(TABLE, SCHEMA.append(pa.field("count", pa.uint64())), PARTITION_BY)
        assert not warehouse.exists(TABLE)


def test_an_unknown_table_is_a_config_error_that_says_where_to_look(tmp_path: Path) -> None:
    with Warehouse.open(tmp_path) as warehouse:
        for call in (
            lambda: warehouse.schema("silver.nope"),
            lambda: warehouse.read("silver.nope", {}),
            lambda: warehouse.commit("silver.nope", accounts("B1", JAN, 1)),
        ):
            with pytest.raises(
                ConfigError, match=r"no table 'silver.nope' in the workspace; `assay table list`"
            ):
                call()


def test_a_catalog_that_cannot_be_opened_is_a_platform_error(tmp_path: Path) -> None:
    (tmp_path / "warehouse" / "catalog.db").mkdir(parents=True)
    with pytest.raises(PlatformError, match="cannot open the Iceberg catalog"):
        Warehouse.open(tmp_path)


# --- partitions and pruned reads --------------------------------------------------------------


def test_partitions_are_read_from_metadata_alone(warehouse: Warehouse, tmp_path: Path) -> None:
    warehouse.commit(
        TABLE, pa.concat_tables([accounts("B1", JAN, 3), accounts("B1", FEB, 2), accounts("B2", JAN, 4)])
    )
    for path in data_files(tmp_path):
        path.unlink()  # were a data file read, this would fail
    listed = sorted(
        (p.values["contributor_id"], p.values["statement_date"], p.rows) for p in warehouse.partitions(TABLE)
    )
    assert listed == [("B1", JAN, 3), ("B1", FEB, 2), ("B2", JAN, 4)]
    only = warehouse.partitions(TABLE, {"contributor_id": "B1", "statement_date": [FEB, MAR]})
    assert [(p.values, p.rows) for p in only] == [({"contributor_id": "B1", "statement_date": FEB}, 2)]
    with pytest.raises(ConfigError, match="'account_id' is not a partition column"):
        warehouse.partitions(TABLE, {"account_id": 1})


def test_a_read_opens_only_the_files_of_its_partition(warehouse: Warehouse, tmp_path: Path) -> None:
    for first_id in (0, 100):  # two commits: two files in each partition
        warehouse.commit(
            TABLE,
            pa.concat_tables(
                [accounts(c, m, 5, first_id) for c in ("B1", "B2", "B3") for m in (JAN, FEB, MAR)]
            ),
        )
    assert len(data_files(tmp_path)) == 18
    where = {"contributor_id": "B2", "statement_date": FEB}
    assert warehouse.scan_files(TABLE, where) == 2
    assert warehouse.scan_files(TABLE, {"contributor_id": "B2"}) == 6
    assert warehouse.scan_files(TABLE, {"contributor_id": "B9"}) == 0
    read = warehouse.read(TABLE, where)
    assert read.num_rows == 10
    assert set(read.column("contributor_id").to_pylist()) == {"B2"}
    assert set(read.column("statement_date").to_pylist()) == {FEB}
    assert read.schema == SCHEMA


def test_read_takes_lists_nulls_other_columns_and_a_projection(warehouse: Warehouse) -> None:
    rows = pa.concat_tables([accounts("B1", JAN, 3), accounts("B2", FEB, 3), accounts("B3", MAR, 3)])
    warehouse.commit(TABLE, rows)
    both = warehouse.read(TABLE, {"contributor_id": ["B1", "B3"]}, columns=["account_id", "contributor_id"])
    assert both.column_names == ["account_id", "contributor_id"]
    assert sorted(both.column("contributor_id").to_pylist()) == ["B1"] * 3 + ["B3"] * 3
    assert warehouse.read(TABLE, {"account_id": 1, "statement_date": FEB}).num_rows == 1
    assert warehouse.read(TABLE, {"contributor_id": None}).num_rows == 0
    assert warehouse.read(TABLE, {}).num_rows == 9
    with pytest.raises(ConfigError, match="has no column 'month'"):
        warehouse.read(TABLE, {"month": JAN})
    with pytest.raises(ConfigError, match="has no column 'month'"):
        warehouse.read(TABLE, {}, columns=["month"])


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ({"account_id": "seven"}, "cannot compare .*Could not convert seven into a long"),
        ({"statement_date": "soon"}, "Could not convert soon into a date"),
        ({"account_id": object()}, "cannot compare column 'account_id' with <object"),
    ],
)
def test_a_value_that_cannot_be_compared_is_a_config_error(
    warehouse: Warehouse, where: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        warehouse.read(TABLE, where)


def test_reading_one_partition_of_many_returns_only_its_rows(warehouse: Warehouse) -> None:
    months = [date(2020 + y, m, 1) for y in range(2) for m in range(1, 13)]
    contributors = [f"B{i}" for i in range(4)]
    rows = pa.concat_tables([accounts(c, m, 20) for c in contributors for m in months])
    warehouse.commit(TABLE, rows)
    assert len(warehouse.partitions(TABLE)) == len(months) * len(contributors) == 96
    where = {"contributor_id": "B2", "statement_date": date(2021, 6, 1)}
    assert warehouse.scan_files(TABLE, where) == 1
    read = warehouse.read(TABLE, where)
    assert read.num_rows == 20
    assert read.column("account_id").to_pylist() == list(range(20))


def test_parquet_files_hold_exactly_the_rows_a_read_returns(warehouse: Warehouse) -> None:
    for first_id in (0, 100):  # two commits: two files in each partition
        warehouse.commit(
            TABLE, pa.concat_tables([accounts(c, m, 5, first_id) for c in ("B1", "B2") for m in (JAN, FEB)])
        )
    for where in (
        {"contributor_id": "B2", "statement_date": FEB},
        {"contributor_id": ["B1", "B2"]},
        {"contributor_id": "B1", "statement_date": [JAN, FEB]},  # the gate's older months, one plan
    ):
        files = warehouse.parquet_files(TABLE, where)
        assert files is not None and len(files) == warehouse.scan_files(TABLE, where)
        scanned = pa.concat_tables([pq.read_table(path) for path in files]).select(SCHEMA.names)
        read = warehouse.read(TABLE, where)
        key = [("contributor_id", "ascending"), ("statement_date", "ascending"), ("account_id", "ascending")]
        assert scanned.cast(SCHEMA).sort_by(key).equals(read.sort_by(key))
    assert warehouse.parquet_files(TABLE, {"contributor_id": "B9"}) == []
    # a filter on a column that does not partition the table leaves other rows in the files
    assert warehouse.parquet_files(TABLE, {"account_id": 1}) is None


def test_parquet_files_are_none_once_the_schema_has_changed(warehouse: Warehouse) -> None:
    warehouse.commit(TABLE, accounts("B1", JAN, 3))
    table = warehouse._load(TABLE)
    with table.update_schema() as update:
        update.rename_column("credit_limit", "limit")
    assert warehouse.parquet_files(TABLE, {"contributor_id": "B1"}) is None


def test_a_one_partition_batch_is_written_as_pyiceberg_writes_it(warehouse: Warehouse) -> None:
    from pyiceberg.io.pyarrow import _dataframe_to_data_files

    table = warehouse._load(TABLE)
    rows = fields.to_storage(accounts("B1", JAN, 1000), SCHEMA, TABLE)
    rows = pa.concat_tables([rows.slice(0, 10), rows.slice(10)])  # in two chunks, as from an engine
    (ours,) = commits.write(table, TABLE, rows)
    (theirs,) = _dataframe_to_data_files(table_metadata=table.metadata, df=rows, io=table.io)
    same = ("partition", "record_count", "value_counts", "null_value_counts", "lower_bounds", "upper_bounds")
    assert all(getattr(ours, name) == getattr(theirs, name) for name in same)
    assert ours.file_path.rsplit("/", 1)[0] == theirs.file_path.rsplit("/", 1)[0]
    local = [path.removeprefix("file://") for path in (ours.file_path, theirs.file_path)]
    assert pq.read_table(local[0]).equals(pq.read_table(local[1]))
    # rows of two partitions take PyIceberg's own path
    two = pa.concat_tables([rows, fields.to_storage(accounts("B2", JAN, 3), SCHEMA, TABLE)])
    assert commits.single_partition(table, two) is None
    assert len(commits.write(table, TABLE, two)) == 2


# --- commits ----------------------------------------------------------------------------------


def test_a_commit_appends_in_one_snapshot(warehouse: Warehouse) -> None:
    first = warehouse.commit(TABLE, accounts("B1", JAN, 3))
    second = warehouse.commit(TABLE, accounts("B1", JAN, 2, first_id=10))
    assert (first.rows_added, first.rows_deleted, second.rows_added) == (3, 0, 2)
    assert [s.snapshot_id for s in warehouse.snapshots(TABLE)] == [first.snapshot_id, second.snapshot_id]
    assert [s.operation for s in warehouse.snapshots(TABLE)] == ["append", "append"]
    assert warehouse.read(TABLE, {"contributor_id": "B1"}).num_rows == 5


def test_a_replace_swaps_two_months_of_one_contributor_in_one_snapshot(warehouse: Warehouse) -> None:
    warehouse.commit(
        TABLE,
        pa.concat_tables(
            [accounts(c, m, 4) for c in ("B1", "B2") for m in (JAN, FEB, MAR)],
        ),
    )
    before = warehouse.snapshots(TABLE)
    resend = pa.concat_tables([accounts("B1", JAN, 6, first_id=1000), accounts("B1", FEB, 1, first_id=1000)])
    done = warehouse.commit(TABLE, resend, replace={"contributor_id": "B1", "statement_date": [JAN, FEB]})
    assert (done.rows_added, done.rows_deleted) == (7, 8)
    after = warehouse.snapshots(TABLE)
    # One new snapshot holds both halves: no history entry shows the months deleted but not re-added.
    assert len(after) == len(before) + 1
    assert after[-1].snapshot_id == done.snapshot_id
    assert after[-1].operation == "overwrite"
    assert (after[-1].properties["deleted-records"], after[-1].properties["added-records"]) == ("8", "7")
    counts = {
        (p.values["contributor_id"], p.values["statement_date"]): p.rows for p in warehouse.partitions(TABLE)
    }
    assert counts == {
        ("B1", JAN): 6,
        ("B1", FEB): 1,
        ("B1", MAR): 4,
        ("B2", JAN): 4,
        ("B2", FEB): 4,
        ("B2", MAR): 4,
    }
    b1_jan = warehouse.read(TABLE, {"contributor_id": "B1", "statement_date": JAN})
    assert sorted(b1_jan.column("account_id").to_pylist()) == list(range(1000, 1006))
    assert (
        warehouse.read(TABLE, {"contributor_id": "B2"}).column("account_id").to_pylist() == [0, 1, 2, 3] * 3
    )


def test_a_reader_never_sees_the_months_deleted_but_not_yet_added(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    def months(first_count: int, second_count: int) -> pa.Table:
        return pa.concat_tables([accounts("B1", JAN, first_count), accounts("B1", FEB, second_count)])

    warehouse.commit(TABLE, months(4, 4))
    seen: set[int] = set()
    stop = threading.Event()

    def read_until_stopped() -> None:
        with Warehouse.open(tmp_path) as reader:
            while not stop.is_set():
                seen.add(reader.read(TABLE, {"contributor_id": "B1"}, columns=["account_id"]).num_rows)

    thread = threading.Thread(target=read_until_stopped)
    thread.start()
    try:
        for counts in [(6, 1), (4, 4)] * 5:
            warehouse.commit(
                TABLE, months(*counts), replace={"contributor_id": "B1", "statement_date": [JAN, FEB]}
            )
    finally:
        stop.set()
        thread.join()
    # The whole old pair of months or the whole new one; never 0, 4, 6 or 1 rows.
    assert seen and seen <= {8, 7}
    assert len(warehouse.snapshots(TABLE)) == 11


def test_empty_rows_with_a_replace_only_delete(warehouse: Warehouse) -> None:
    warehouse.commit(TABLE, pa.concat_tables([accounts("B1", JAN, 3), accounts("B1", FEB, 2)]))
    done = warehouse.commit(
        TABLE, accounts("B1", JAN, 0), replace={"contributor_id": "B1", "statement_date": JAN}
    )
    assert (done.rows_added, done.rows_deleted) == (0, 3)
    assert [(p.values["statement_date"], p.rows) for p in warehouse.partitions(TABLE)] == [(FEB, 2)]
    nothing = warehouse.commit(TABLE, accounts("B9", JAN, 0), replace={"contributor_id": "B9"})
    assert (nothing.rows_added, nothing.rows_deleted) == (0, 0)
    assert warehouse.tables()[0].rows == 2


def test_a_replace_of_no_months_is_an_append(warehouse: Warehouse) -> None:
    warehouse.commit(TABLE, accounts("B1", JAN, 3))
    done = warehouse.commit(
        TABLE, accounts("B1", FEB, 2), replace={"contributor_id": "B1", "statement_date": []}
    )
    assert (done.rows_added, done.rows_deleted) == (2, 0)
    assert warehouse.snapshots(TABLE)[-1].operation == "append"
    assert warehouse.tables()[0].rows == 5
    # a month never committed replaces nothing: an append too (the gate's first file of a month)
    done = warehouse.commit(
        TABLE, accounts("B1", MAR, 4), replace={"contributor_id": "B1", "statement_date": [MAR]}
    )
    assert (done.rows_added, done.rows_deleted) == (4, 0)
    assert warehouse.snapshots(TABLE)[-1].operation == "append"
    # and a month committed before is replaced in an overwrite
    done = warehouse.commit(
        TABLE, accounts("B1", MAR, 1), replace={"contributor_id": "B1", "statement_date": [MAR]}
    )
    assert (done.rows_added, done.rows_deleted) == (1, 4)
    assert warehouse.snapshots(TABLE)[-1].operation == "overwrite"
    assert warehouse.tables()[0].rows == 6


def test_a_replace_on_other_columns_rewrites_only_the_matching_rows(warehouse: Warehouse) -> None:
    warehouse.commit(TABLE, pa.concat_tables([accounts("B1", JAN, 5), accounts("B2", JAN, 5)]))
    done = warehouse.commit(TABLE, accounts("B1", JAN, 1, first_id=50), replace={"account_id": [1, 2]})
    assert (done.rows_added, done.rows_deleted) == (1, 4)
    assert len(warehouse.snapshots(TABLE)) == 2
    ids = warehouse.read(TABLE, {"contributor_id": "B1"}).column("account_id").to_pylist()
    assert sorted(ids) == [0, 3, 4, 50]
    untouched = warehouse.read(TABLE, {"contributor_id": "B2"}).column("account_id").to_pylist()
    assert sorted(untouched) == [0, 3, 4]  # the same ids of another contributor go too: replace says so


def test_properties_go_into_the_summary_and_find_the_snapshot_again(warehouse: Warehouse) -> None:
    def run(run_id: str, sha: str, contributor: str) -> dict[str, str]:
        return {"assay.run_id": run_id, "assay.source_sha256": sha, "assay.contributor": contributor}

    first = warehouse.commit(TABLE, accounts("B1", JAN, 2), properties=run("r1", "aa", "B1"))
    second = warehouse.commit(TABLE, accounts("B2", JAN, 2), properties=run("r2", "bb", "B2"))
    again = warehouse.commit(
        TABLE,
        accounts("B1", JAN, 2),
        replace={"contributor_id": "B1", "statement_date": JAN},
        properties=run("r3", "aa", "B1"),
    )
    found = warehouse.find_snapshot(TABLE, **{"assay.source_sha256": "aa"})
    assert found is not None and found.snapshot_id == again.snapshot_id  # the most recent one
    earlier = warehouse.find_snapshot(TABLE, **{"assay.source_sha256": "aa", "assay.run_id": "r1"})
    assert earlier is not None and earlier.snapshot_id == first.snapshot_id
    assert earlier.properties["assay.contributor"] == "B1"
    assert earlier.committed_at.tzinfo is not None
    assert earlier.committed_at <= warehouse.snapshots(TABLE)[-1].committed_at
    by_b2 = warehouse.find_snapshot(TABLE, **{"assay.contributor": "B2"})
    assert by_b2 is not None and by_b2.snapshot_id == second.snapshot_id
    assert warehouse.find_snapshot(TABLE, **{"assay.source_sha256": "cc"}) is None


def test_a_property_iceberg_writes_itself_is_refused(warehouse: Warehouse) -> None:
    with pytest.raises(ConfigError, match="'added-records' is one Iceberg writes itself"):
        warehouse.commit(TABLE, accounts("B1", JAN, 1), properties={"added-records": "0"})
    assert warehouse.snapshots(TABLE) == []


def test_compatible_types_are_cast_and_columns_may_come_in_any_order(warehouse: Warehouse) -> None:
    rows = accounts("B1", JAN, 2)
    narrower = pa.table(
        {
            "opened_at": rows.column("opened_at"),
            "account_id": rows.column("account_id").cast(pa.int32()),
            "contributor_id": rows.column("contributor_id").cast(pa.large_string()),
            "statement_date": rows.column("statement_date"),
            "credit_limit": rows.column("credit_limit").cast(pa.decimal128(10, 2)),
        }
    )
    warehouse.commit(TABLE, narrower)
    assert warehouse.read(TABLE, {}).equals(rows)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            accounts("B1", JAN, 1).drop_columns(["credit_limit"]),
            "has column 'credit_limit', which the rows lack",
        ),
        (accounts("B1", JAN, 1).append_column("score", pa.array([1])), "the rows have column 'score'"),
        (
            accounts("B1", JAN, 1).set_column(2, "account_id", pa.array(["7"])),
            "column 'account_id' is int64 in table 'silver.accounts' but string in the rows",
        ),
        (
            accounts("B1", JAN, 1).set_column(2, "account_id", pa.array([7.0])),
            "column 'account_id' is int64 .* but double",
        ),
        (
            accounts("B1", JAN, 1).set_column(4, "opened_at", pa.array([1_000_000_001], pa.timestamp("ns"))),
            "column 'opened_at' .* cannot take these timestamp\\[ns\\] values",
        ),
        (
            accounts("B1", JAN, 1).set_column(4, "opened_at", pa.array([1], pa.timestamp("us", tz="UTC"))),
            "column 'opened_at' is timestamp\\[us\\] in table .* but timestamp\\[us, tz=UTC\\]",
        ),
    ],
    ids=["missing", "extra", "string-for-int", "float-for-int", "lost-nanoseconds", "zone"],
)
def test_rows_that_do_not_fit_the_schema_are_refused_naming_the_column(
    warehouse: Warehouse, rows: pa.Table, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        warehouse.commit(TABLE, rows)
    assert warehouse.snapshots(TABLE) == []


def test_a_commit_that_always_conflicts_gives_up_with_a_platform_error(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    warehouse.commit(TABLE, accounts("B1", JAN, 3))
    files_before = data_files(tmp_path)
    # Another writer that always wins: the catalog ignores every update of the table's pointer,
    # so each attempt's compare-and-swap finds nothing to swap and PyIceberg reports a conflict.
    with sqlite3.connect(tmp_path / "warehouse" / "catalog.db") as connection:
        connection.execute(
            "CREATE TRIGGER always_first BEFORE UPDATE ON iceberg_tables BEGIN SELECT RAISE(IGNORE); END"
        )
    with pytest.raises(
        PlatformError, match=r"3 attempts to commit failed, the last with: .*updated by another process"
    ):
        warehouse.commit(
            TABLE, accounts("B1", JAN, 5), replace={"contributor_id": "B1", "statement_date": JAN}, retries=2
        )
    assert len(warehouse.snapshots(TABLE)) == 1
    assert data_files(tmp_path) == files_before  # the new files were removed again


# --- export -----------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_export_writes_the_whole_table(warehouse: Warehouse, tmp_path: Path, suffix: str) -> None:
    rows = pa.concat_tables([accounts("B1", JAN, 3), accounts("B2", FEB, 4)])
    warehouse.commit(TABLE, rows)
    path = tmp_path / "out" / f"accounts{suffix}"
    assert warehouse.export(TABLE, path) == 7
    written = pq.read_table(path) if suffix == ".parquet" else pacsv.read_csv(path)
    assert written.num_rows == 7
    assert sorted(written.column("account_id").to_pylist()) == [0, 0, 1, 1, 2, 2, 3]
    if suffix == ".parquet":
        assert written.schema == SCHEMA
    assert not list(path.parent.glob("*.partial"))


def test_export_to_another_file_type_is_a_config_error(warehouse: Warehouse, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"export a table to a \.parquet or \.csv file"):
        warehouse.export(TABLE, tmp_path / "accounts.json")


# --- several processes at once ----------------------------------------------------------------


def gate(workspace: str, contributor: str, barrier: Barrier) -> None:
    """What one `assay gate` does, round after round: create the table, replace a month, commit."""
    with breaking(barrier), Warehouse.open(Path(workspace)) as warehouse:
        barrier.wait()
        warehouse.create(TABLE, SCHEMA, PARTITION_BY)
        for month in range(1, ROUNDS + 1):
            statement = date(2024, month, 1)
            barrier.wait()
            warehouse.commit(
                TABLE,
                accounts(contributor, statement, ROWS_PER_MONTH),
                replace={"contributor_id": contributor, "statement_date": statement},
                properties={"assay.contributor": contributor, "assay.run_id": f"{contributor}-{month}"},
            )
        # A corrected resend of the first month, racing the other contributor's.
        barrier.wait()
        first = date(2024, 1, 1)
        warehouse.commit(
            TABLE,
            accounts(contributor, first, ROWS_PER_MONTH * 2, first_id=1000),
            replace={"contributor_id": contributor, "statement_date": first},
            properties={"assay.contributor": contributor, "assay.run_id": f"{contributor}-resend"},
        )


def test_two_processes_committing_different_contributors_at_once_all_land(tmp_path: Path) -> None:
    barrier = spawn.Barrier(PROCESSES, timeout=TIMEOUT_SECONDS)
    contributors = [f"B{worker}" for worker in range(PROCESSES)]
    run_together([spawn.Process(target=gate, args=(str(tmp_path), c, barrier)) for c in contributors])
    expected = {
        (c, month): ROWS_PER_MONTH * (2 if month == 1 else 1)
        for c in contributors
        for month in range(1, ROUNDS + 1)
    }
    with Warehouse.open(tmp_path) as warehouse:
        counts = {
            (p.values["contributor_id"], p.values["statement_date"].month): p.rows
            for p in warehouse.partitions(TABLE)
        }
        assert counts == expected
        [info] = warehouse.tables()
        assert info.rows == sum(expected.values())
        assert info.snapshots == PROCESSES * (ROUNDS + 1)  # one per commit, however many attempts it took
        for contributor in contributors:
            resend = warehouse.find_snapshot(TABLE, **{"assay.run_id": f"{contributor}-resend"})
            assert resend is not None and resend.properties["assay.contributor"] == contributor
            first = warehouse.read(TABLE, {"contributor_id": contributor, "statement_date": date(2024, 1, 1)})
            assert min(first.column("account_id").to_pylist()) == 1000


# --- the docstrings ---------------------------------------------------------------------------


@pytest.mark.parametrize("module", [iceberg, fields], ids=lambda m: m.__name__)
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0


def test_a_workspace_path_with_a_space_or_percent_keeps_its_files_inside(tmp_path: Path) -> None:
    workspace = tmp_path / "my work 100%"
    with Warehouse.open(workspace) as warehouse:
        rows = accounts("B1", date(2025, 1, 31), 3)
        warehouse.create("silver.accounts", rows.schema, partition_by=["contributor_id", "statement_date"])
        warehouse.commit("silver.accounts", rows, properties={"run_id": "r1"})
        assert warehouse.read("silver.accounts", {"contributor_id": "B1"}).num_rows == 3
    written = list(tmp_path.rglob("*.parquet"))
    assert written and all(workspace in path.parents for path in written)


@pytest.mark.parametrize("name", ["a#b", "a?b"])
def test_a_workspace_path_iceberg_cannot_carry_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="cannot contain '#' or '\\?'"):
        Warehouse.open(tmp_path / name)


# --- Parquet files an engine wrote (issue 10) --------------------------------------------------


def _engine_files(warehouse: Warehouse, rows: pa.Table, label: str = "run") -> list[Path]:
    """``rows`` written by DuckDB as Parquet into the table's data location, as the gate does."""
    from sqlglot import exp

    from assay.engine.duckdb import DuckDBEngine

    folder = warehouse.data_folder(TABLE, label)
    assert folder is not None
    engine = DuckDBEngine()
    try:
        engine.register_arrow("rows", rows)
        return engine.write_parquet(exp.select(exp.Star()).from_("rows"), folder / "00000")
    finally:
        engine.close()


def test_files_an_engine_wrote_are_committed_and_read_back_by_name(warehouse: Warehouse) -> None:
    jan = accounts("B1", JAN, 2)
    files = _engine_files(warehouse, jan)
    info = warehouse.commit(TABLE, files=files, properties={"assay.run-id": "r1"})
    assert info.rows_added == 2
    back = warehouse.read(TABLE, {"contributor_id": "B1"})
    assert back.sort_by("account_id").equals(jan.sort_by("account_id"))
    # the engine's files carry no Iceberg field ids: the table maps their columns by name
    table = warehouse._load(TABLE)
    assert table.metadata.name_mapping() is not None
    assert warehouse.parquet_files(TABLE, {"contributor_id": "B1", "statement_date": JAN}) == files
    # a later commit of PyIceberg's own files reads alongside them
    warehouse.commit(TABLE, accounts("B1", FEB, 1, first_id=5))
    assert warehouse.read(TABLE, {"contributor_id": "B1"}).num_rows == 3


def test_a_file_of_two_partitions_is_refused_and_removed(warehouse: Warehouse) -> None:
    files = _engine_files(warehouse, pa.concat_tables([accounts("B1", JAN, 1), accounts("B1", FEB, 1, 1)]))
    with pytest.raises(PlatformError, match="do not fit the table"):
        warehouse.commit(TABLE, files=files)
    assert not any(f.exists() for f in files)
    assert warehouse.read(TABLE, {"contributor_id": "B1"}).num_rows == 0


def test_rows_or_files_not_both(warehouse: Warehouse) -> None:
    jan = accounts("B1", JAN, 1)
    with pytest.raises(ValueError, match="rows or files"):
        warehouse.commit(TABLE, jan, files=_engine_files(warehouse, jan))
