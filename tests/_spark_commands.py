"""The commands of the Spark-against-DuckDB tests of ``assay`` as a user runs it (dqdl run, profile,
gate, check run on the demo's data), for DuckDB and for one Spark half (Spark Connect, a standalone
cluster), and the checks that the Spark half gave DuckDB's answers; shared by
tests/engine/test_spark_connect.py and tests/engine/test_spark_cluster.py."""

from __future__ import annotations

import json
import shutil
from importlib.resources import files
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from assay.demo import bureau as bu
from assay.demo import faults as fa
from assay.demo import trades, vendor
from sparksession import VOLATILE, assert_same_profile

DEMO = files("assay.demo") / "data"


class World:
    """The commands of every test, for both engines, and what they printed."""

    def __init__(self, root: Path, spark: str, url: str) -> None:
        self.root = root
        self.spark = spark  # the name of the Spark engine's half: "connect", "cluster"
        self.engine_args = {
            "duckdb": ["--engine", "duckdb"],
            spark: ["--engine", "spark", "--spark-master", url],
        }
        self.commands: list[list[str]] = []
        self.slots: dict[tuple[str, str], list[int]] = {}
        self.results: list[dict[str, Any]] = []

    def add(self, test: str, engine: str, *args: str, slot: str | None = None) -> None:
        self.slots.setdefault((test, slot or engine), []).append(len(self.commands))
        self.commands.append([*args, *self.engine_args[engine]])

    def printed(self, test: str, engine: str) -> list[dict[str, Any]]:
        """What each of the test's commands on the engine printed, its exit code checked."""
        done = [self.results[i] for i in self.slots[(test, engine)]]
        for result in done:
            assert result["code"] in (0, 1), result["err"]
        return done


def dqdl(world: World, engine: str) -> None:
    out = world.root / f"dqdl-{engine}.json"
    world.add(
        "dqdl", engine, "dqdl", "run", str(DEMO / "orders.dqdl"), "--data", str(DEMO / "orders.csv"),
        "--ref", f"customers={DEMO / 'customers.csv'}", "--now", "2026-01-15T12:00:00",
        "--json", str(out), "--workspace", str(world.root / f"dqdl-{engine}"),
    )  # fmt: skip


# the null day and the new venue's day are profiled on Spark; the days around them on DuckDB in
# both workspaces (a dataset moves between engines without a schema alert: docs/engines.md)
SPARK_DAYS = {vendor.NULL_DAY, vendor.VENUE_DAY}
PROFILED = [day for day in vendor.DAYS[24:35] if day <= vendor.VENUE_DAY]


def profile(world: World, engine: str) -> None:
    workspace = world.root / f"profile-{engine}"
    (workspace / "checks").mkdir(parents=True)
    (workspace / "checks" / f"{vendor.DATASET}.yaml").write_text(vendor.CONFIG)
    for day in PROFILED:
        path = world.root / f"trades_{day}.parquet"
        if not path.exists():
            pq.write_table(vendor.trades(day), path)
        world.add(
            "profile", engine if day in SPARK_DAYS else "duckdb", "profile", str(path),
            "--dataset", vendor.DATASET, "--load-date", day.isoformat(), "--workspace", str(workspace),
            "--json", slot=engine,
        )  # fmt: skip


def gate(world: World, engine: str) -> None:
    bureau = bu.Bureau([bu.Contributor("BANK_A", "bank", 150)])
    months = [bureau.month("BANK_A", 0), fa.swap_limit_mapping(bureau.month("BANK_A", 1))[0]]
    for i, month in enumerate(months):
        path = world.root / f"gate-{engine}-{i}.csv"
        path.write_text(bu.csv_text(month))
        world.add(
            "gate", engine, "gate", str(path), "--rules", str(DEMO / "bureau_rules.csv"), "--contributor",
            "BANK_A", "--contributor-type", "bank", "--table", "silver.accounts", "--key", "account_id",
            "--order", "statement_date", "--contributor-column", "contributor_id",
            "--schema", str(DEMO / "accounts_schema.yaml"), "--workspace", str(world.root / f"gate-{engine}"),
            "--json",
        )  # fmt: skip


def check(world: World, engine: str, history: Path) -> None:
    # the last day judged against 29 days DuckDB measured: the store is the engines' common ground
    workspace = world.root / f"check-{engine}"
    shutil.copytree(history, workspace)
    day = trades.days()[-1]
    world.add(
        "check", engine, "check", "run", str(workspace / "checks" / "trades.yaml"), "--at", str(day),
        "--now", trades.clock(day).isoformat(), "--workspace", str(workspace),
        "--json", str(workspace / "out.json"),
    )  # fmt: skip


def every_command(world: World, history: Path) -> None:
    """Add each test's commands, DuckDB's first, then the Spark half's."""
    for engine in ("duckdb", world.spark):
        dqdl(world, engine)
        profile(world, engine)
        gate(world, engine)
        check(world, engine, history)


def assert_dqdl_run_agrees(world: World) -> None:
    """dqdl run: the Spark half gave DuckDB's outcomes and metrics."""
    world.printed("dqdl", "duckdb"), world.printed("dqdl", world.spark)
    engines = ("duckdb", world.spark)
    duck, spark = (json.loads((world.root / f"dqdl-{e}.json").read_text())["rules"] for e in engines)
    assert [r["outcome"] for r in spark] == [r["outcome"] for r in duck]
    assert {r["outcome"] for r in duck} >= {"Passed", "Failed"}
    for on_spark, on_duckdb in zip(spark, duck, strict=True):
        assert on_spark["metrics"] == pytest.approx(on_duckdb["metrics"], nan_ok=True), on_duckdb["rule"]


def assert_profile_agrees(world: World) -> None:
    """profile: the loads the Spark half profiled have DuckDB's profiles and alerts, and the loads
    after them are judged as on DuckDB."""
    duck, mixed = (
        [json.loads(r["out"]) for r in world.printed("profile", e)] for e in ("duckdb", world.spark)
    )
    on_spark = [i for i, day in enumerate(PROFILED) if day in SPARK_DAYS]
    kinds = [{(a["kind"], a["column"]) for a in duck[i]["alerts"]} for i in on_spark]
    assert ("null_rate", "settle_ccy") in kinds[0] and ("new_value", "venue") in kinds[1]
    for i in on_spark:
        assert_same_profile(mixed[i], duck[i])
    assert [d["alerts"] for d in mixed] == [d["alerts"] for d in duck]


def assert_gate_splits_agree(world: World) -> None:
    """gate: the Spark half committed, quarantined and held what DuckDB did."""
    duck, spark = (
        [
            {k: v for k, v in json.loads(r["out"]).items() if k not in VOLATILE}
            for r in world.printed("gate", e)
        ]
        for e in ("duckdb", world.spark)
    )
    assert duck[1]["quarantined"] > 0
    assert spark == duck


def assert_check_run_agrees(world: World) -> None:
    """check run: the Spark half judged DuckDB's history as DuckDB did, value for value."""
    [done_duck], [done_spark] = world.printed("check", "duckdb"), world.printed("check", world.spark)
    assert done_spark["code"] == done_duck["code"]
    duck, spark = (
        json.loads((world.root / f"check-{e}" / "out.json").read_text()) for e in ("duckdb", world.spark)
    )
    shape = [
        (o["expectation"], str(o["group"]), o["outcome"], o["reason"], len(o["samples"]))
        for o in duck["outcomes"]
    ]
    assert [
        (o["expectation"], str(o["group"]), o["outcome"], o["reason"], len(o["samples"]))
        for o in spark["outcomes"]
    ] == shape
    assert {o["outcome"] for o in duck["outcomes"]} >= {"passed", "failed"}
    for mine, theirs in zip(spark["outcomes"], duck["outcomes"], strict=True):
        if theirs["observed"] is None:
            assert mine["observed"] is None
        else:
            assert mine["observed"] == pytest.approx(theirs["observed"], rel=1e-9), theirs["expectation"]
