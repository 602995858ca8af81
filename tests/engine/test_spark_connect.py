"""The Spark engine on a Spark Connect server (``--spark-master sc://host:port``) gives DuckDB's
answers: ``assay dqdl run``, ``assay profile``, ``assay gate`` and ``assay check run`` on the
demo's data, each command run as a user runs it, against a real Connect server started for the
session (issue 10: "only public DataFrame and SQL APIs, so Spark Connect works too").

A process holds either a classic SparkSession or Connect sessions, so every command here runs in
one separate Python process (:func:`sparksession.run_assay_commands`), the DuckDB references
included; the whole Spark half of the suite runs on Connect by hand with
``ASSAY_TEST_SPARK_MASTER=sc://…`` (docs/engines.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import _spark_commands as sc
from _demo_workspace import cli_env
from checks._history import trades29
from sparksession import run_assay_commands


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, spark_connect_url: str) -> sc.World:
    world = sc.World(tmp_path_factory.mktemp("connect"), "connect", spark_connect_url)
    sc.every_command(world, trades29())  # the first 29 days of the check, run on DuckDB
    world.results = run_assay_commands(world.commands)
    return world


def test_dqdl_run_on_connect_gives_duckdbs_outcomes_and_metrics(world: sc.World) -> None:
    sc.assert_dqdl_run_agrees(world)


def test_profile_on_connect_gives_duckdbs_profiles_and_alerts(world: sc.World) -> None:
    sc.assert_profile_agrees(world)


def test_gate_on_connect_splits_as_duckdb(world: sc.World) -> None:
    sc.assert_gate_splits_agree(world)


def test_check_run_on_connect_judges_duckdbs_history_as_duckdb(world: sc.World) -> None:
    sc.assert_check_run_agrees(world)


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
