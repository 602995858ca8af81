"""The Spark engine on a Spark Connect server (``--spark-master sc://host:port``) gives DuckDB's
answers: ``assay dqdl run``, ``assay profile``, ``assay gate`` and ``assay check run`` on the
demo's data, each command run as a user runs it, against a real Connect server started for the
session (issue 10: "only public DataFrame and SQL APIs, so Spark Connect works too").

A process holds either a classic SparkSession or Connect sessions, so every command here runs in
one separate Python process (:func:`sparksession.run_assay_commands`), the DuckDB references
included; the whole Spark half of the suite runs on Connect by hand with
``ASSAY_TEST_SPARK_MASTER=sc://…`` (docs/engines.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from _demo_workspace import cli_env
from assay.demo import bureau as bu
from assay.demo import faults as fa
from assay.demo import trades, vendor
from checks._history import trades29
from sparksession import VOLATILE, assert_same_profile, run_assay_commands

DEMO = files("assay.demo") / "data"
ENGINES = ("duckdb", "connect")


class World:
    """The commands of every test, for both engines, and what they printed."""

    def __init__(self, root: Path, url: str) -> None:
        self.root = root
        self.engine_args = {
            "duckdb": ["--engine", "duckdb"],
            "connect": ["--engine", "spark", "--spark-master", url],
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


def _dqdl(world: World, engine: str) -> None:
    out = world.root / f"dqdl-{engine}.json"
    world.add(
        "dqdl", engine, "dqdl", "run", str(DEMO / "orders.dqdl"), "--data", str(DEMO / "orders.csv"),
        "--ref", f"customers={DEMO / 'customers.csv'}", "--now", "2026-01-15T12:00:00",
        "--json", str(out), "--workspace", str(world.root / f"dqdl-{engine}"),
    )  # fmt: skip


# the null day and the new venue's day are profiled on Connect; the days around them on DuckDB in
# both workspaces (a dataset moves between engines without a schema alert: docs/engines.md)
CONNECT_DAYS = {vendor.NULL_DAY, vendor.VENUE_DAY}
PROFILED = [day for day in vendor.DAYS[24:35] if day <= vendor.VENUE_DAY]


def _profile(world: World, engine: str) -> None:
    workspace = world.root / f"profile-{engine}"
    (workspace / "checks").mkdir(parents=True)
    (workspace / "checks" / f"{vendor.DATASET}.yaml").write_text(vendor.CONFIG)
    for day in PROFILED:
        path = world.root / f"trades_{day}.parquet"
        if not path.exists():
            pq.write_table(vendor.trades(day), path)
        world.add(
            "profile", engine if day in CONNECT_DAYS else "duckdb", "profile", str(path),
            "--dataset", vendor.DATASET, "--load-date", day.isoformat(), "--workspace", str(workspace),
            "--json", slot=engine,
        )  # fmt: skip


def _gate(world: World, engine: str) -> None:
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


def _check(world: World, engine: str, history: Path) -> None:
    # the last day judged against 29 days DuckDB measured: the store is the engines' common ground
    workspace = world.root / f"check-{engine}"
    shutil.copytree(history, workspace)
    day = trades.days()[-1]
    world.add(
        "check", engine, "check", "run", str(workspace / "checks" / "trades.yaml"), "--at", str(day),
        "--now", trades.clock(day).isoformat(), "--workspace", str(workspace),
        "--json", str(workspace / "out.json"),
    )  # fmt: skip


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, spark_connect_url: str) -> World:
    root = tmp_path_factory.mktemp("connect")
    history = trades29()  # the first 29 days, run on DuckDB (tests/checks/_history.py)
    world = World(root, spark_connect_url)
    for engine in ENGINES:
        _dqdl(world, engine)
        _profile(world, engine)
        _gate(world, engine)
        _check(world, engine, history)
    world.results = run_assay_commands(world.commands)
    return world


def test_dqdl_run_on_connect_gives_duckdbs_outcomes_and_metrics(world: World) -> None:
    world.printed("dqdl", "duckdb"), world.printed("dqdl", "connect")
    duck, spark = (json.loads((world.root / f"dqdl-{e}.json").read_text())["rules"] for e in ENGINES)
    assert [r["outcome"] for r in spark] == [r["outcome"] for r in duck]
    assert {r["outcome"] for r in duck} >= {"Passed", "Failed"}
    for on_spark, on_duckdb in zip(spark, duck, strict=True):
        assert on_spark["metrics"] == pytest.approx(on_duckdb["metrics"], nan_ok=True), on_duckdb["rule"]


def test_profile_on_connect_gives_duckdbs_profiles_and_alerts(world: World) -> None:
    duck, mixed = ([json.loads(r["out"]) for r in world.printed("profile", e)] for e in ENGINES)
    on_connect = [i for i, day in enumerate(PROFILED) if day in CONNECT_DAYS]
    kinds = [{(a["kind"], a["column"]) for a in duck[i]["alerts"]} for i in on_connect]
    assert ("null_rate", "settle_ccy") in kinds[0] and ("new_value", "venue") in kinds[1]
    for i in on_connect:
        assert_same_profile(mixed[i], duck[i])
    # the loads after a Connect load judge its profile as DuckDB's: the same alerts every day
    assert [d["alerts"] for d in mixed] == [d["alerts"] for d in duck]


def test_gate_on_connect_splits_as_duckdb(world: World) -> None:
    duck, spark = (
        [
            {k: v for k, v in json.loads(r["out"]).items() if k not in VOLATILE}
            for r in world.printed("gate", e)
        ]
        for e in ENGINES
    )
    assert duck[1]["quarantined"] > 0
    assert spark == duck


def test_check_run_on_connect_judges_duckdbs_history_as_duckdb(world: World) -> None:
    [done_duck], [done_spark] = world.printed("check", "duckdb"), world.printed("check", "connect")
    assert done_spark["code"] == done_duck["code"]
    duck, spark = (json.loads((world.root / f"check-{e}" / "out.json").read_text()) for e in ENGINES)
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


def test_connect_without_its_client_says_what_to_install(tmp_path: Path) -> None:
    # the command as a user runs it, in a process where grpcio cannot be imported
    script = tmp_path / "without_grpc.py"
    script.write_text(
        "import sys\nsys.modules['grpc'] = None\nfrom assay.cli import main\n"
        "sys.argv = ['assay', *sys.argv[1:]]\nmain()\n"
    )
    (tmp_path / "r.dqdl").write_text("Rules = [ RowCount > 0 ]")
    (tmp_path / "d.csv").write_text("a\n1\n")
    done = subprocess.run(
        [sys.executable, str(script), "dqdl", "run", str(tmp_path / "r.dqdl"),
         "--data", str(tmp_path / "d.csv"), "--engine", "spark", "--spark-master", "sc://127.0.0.1:1",
         "--workspace", str(tmp_path / "ws")],
        capture_output=True, text=True, env=cli_env(), timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "needs PySpark's connect client: pip install 'assay[spark-connect]'" in done.stderr
    assert "grpcio" in done.stderr and "Traceback" not in done.stderr
