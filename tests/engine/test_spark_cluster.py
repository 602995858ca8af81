"""The Spark engine on a standalone cluster (``--spark-master spark://host:port``): a master and two
workers started from the PySpark wheel's jars by the commands of docs/operations.md
(tests/sparkcluster.py). ``assay dqdl run``, ``assay profile``, ``assay gate`` and ``assay check
run`` give DuckDB's answers with the work done by the workers' executors, and what the executors
need (inputs every machine reads, the warehouse, Python of the driver's version) is checked before
a run with a configuration error (exit 2) that says what to change.

Each command runs as a user runs it, in a driver process of its own (this process holds the
suite's ``local[2]`` session): :func:`sparksession.run_assay_commands`."""

from __future__ import annotations

import shlex
import shutil
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

import _spark_commands as sc
from assay.demo import bureau as bu
from assay.errors import ConfigError
from checks._history import trades29
from sparkcluster import SparkCluster, documented_commands, run_driver
from sparksession import run_assay_commands

DEMO = files("assay.demo") / "data"


def documented_run(cluster: SparkCluster) -> list[str]:
    """The documented ``assay`` run on the cluster, its data the demo's, without its engine flags
    (checked to name the cluster)."""
    [line] = [c for c in documented_commands() if c.startswith("assay ")]
    argv = shlex.split(cluster.substitute(line).replace("/srv/data", str(DEMO)))[1:]
    at = argv.index("--engine")
    assert argv[at : at + 4] == ["--engine", "spark", "--spark-master", cluster.url]
    return argv[:at] + argv[at + 4 :]


class ClusterWorld(sc.World):
    """The commands, what they printed, and the tasks each worker's executors ran for them."""

    tasks: dict[str, int]
    apps: list[dict[str, Any]]  # the master's record of the commands' applications


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, spark_cluster: SparkCluster) -> ClusterWorld:
    world = ClusterWorld(tmp_path_factory.mktemp("cluster"), "cluster", spark_cluster.url)
    history = trades29()  # the first 29 days of the check, run on DuckDB (tests/checks/_history.py)
    for engine in ("duckdb", "cluster"):
        # the cluster's `dqdl run` is the documented one; DuckDB's has the same arguments
        world.add(
            "dqdl", engine, *documented_run(spark_cluster), "--now", "2026-01-15T12:00:00",
            "--json", str(world.root / f"dqdl-{engine}.json"),
            "--workspace", str(world.root / f"dqdl-{engine}"),
        )  # fmt: skip
        sc.profile(world, engine)
        sc.gate(world, engine)
        sc.check(world, engine, history)
    before, apps = spark_cluster.tasks_run(), spark_cluster.applications()
    world.results = run_assay_commands(world.commands, env=spark_cluster.env, session_on=spark_cluster.url)
    world.tasks = {k: v - before.get(k, 0) for k, v in spark_cluster.tasks_run().items()}
    world.apps = [a for a in spark_cluster.state()["completedapps"] if a["id"] not in apps]
    return world


def test_dqdl_run_on_the_spark_cluster_gives_duckdbs_outcomes_and_metrics(world: ClusterWorld) -> None:
    sc.assert_dqdl_run_agrees(world)


def test_profile_on_the_spark_cluster_gives_duckdbs_profiles_and_alerts(world: ClusterWorld) -> None:
    sc.assert_profile_agrees(world)


def test_gate_on_the_spark_cluster_splits_as_duckdb(world: ClusterWorld) -> None:
    sc.assert_gate_splits_agree(world)


def test_check_run_on_the_spark_cluster_judges_duckdbs_history_as_duckdb(world: ClusterWorld) -> None:
    sc.assert_check_run_agrees(world)


def test_the_spark_clusters_workers_did_the_work(world: ClusterWorld) -> None:
    # the commands' application ran on the master, with an executor on each worker (processes
    # other than the driver), and both executors ran its tasks
    assert all(world.tasks.get(f"worker-{i}", 0) > 0 for i in (1, 2)), world.tasks
    [app] = world.apps
    assert (app["name"], app["state"], app["cores"]) == ("assay", "FINISHED", 2)


def test_a_spark_executor_python_of_another_version_is_named() -> None:
    # PySpark's own error for it (its error class, the message its worker raises), read back as
    # what to change: no second interpreter of another version is needed on the machine
    from pyspark.errors import PySparkRuntimeError

    from assay.engine.spark_cluster import _python_gap

    raised = PySparkRuntimeError(
        errorClass="PYTHON_VERSION_MISMATCH",
        messageParameters={"worker_version": "3.9", "driver_version": "3.11"},
    )
    gap = _python_gap(RuntimeError(f"Job aborted: {raised}"), "python3")
    assert isinstance(gap, ConfigError)
    assert "the Spark executors run Python 3.9" in str(gap) and "this driver Python 3.11" in str(gap)
    assert f"set PYSPARK_PYTHON to a Python {sys.version_info.major}.{sys.version_info.minor}" in str(gap)


def test_what_the_spark_clusters_executors_need_is_checked_first(
    tmp_path: Path, spark_cluster: SparkCluster
) -> None:
    # The driver runs in a mount namespace of its own where `only/` is a fresh tmpfs: a path there
    # is on the driver's machine only, as on a driver host that is not one of the workers.
    staged, only = tmp_path / "staged", tmp_path / "only"
    staged.mkdir()
    only.mkdir()
    shutil.copy(str(DEMO / "orders.csv"), staged / "orders.csv")
    prefix = [
        "unshare", "-m", "bash", "-c", 'mount -t tmpfs tmpfs "$1" && cp "$2"/* "$1"/ && shift 2 && exec "$@"',
        "driver-only", str(only), str(staged),
    ]  # fmt: skip
    dqdl = [
        "dqdl", "run", str(DEMO / "orders.dqdl"), "--engine", "spark", "--spark-master", spark_cluster.url,
        "--workspace", str(tmp_path / "ws"), "--data",
    ]  # fmt: skip
    readable = str(staged / "orders.csv")
    no_python = str(tmp_path / "no-python")
    month = tmp_path / "month.csv"
    month.write_text(bu.csv_text(bu.Bureau([bu.Contributor("BANK_A", "bank", 20)]).month("BANK_A", 0)))
    gate = [
        "gate", str(month), "--rules", str(DEMO / "bureau_rules.csv"), "--contributor", "BANK_A",
        "--contributor-type", "bank", "--table", "silver.accounts", "--key", "account_id",
        "--order", "statement_date", "--contributor-column", "contributor_id",
        "--schema", str(DEMO / "accounts_schema.yaml"), "--workspace", str(only / "ws"),
        "--engine", "spark", "--spark-master", spark_cluster.url,
    ]  # fmt: skip
    done = run_driver(
        [
            ({}, [*dqdl, "orders.csv"]),  # in the driver's folder (staged/), the run's cwd
            ({}, [*dqdl, str(only / "orders.csv")]),
            ({}, gate),  # its workspace, and so its warehouse, on the driver only
            ({"PYSPARK_PYTHON": no_python}, [*dqdl, readable]),
        ],
        spark_cluster.env | {"COLUMNS": "1000"},
        prefix,
        staged,
        session_on=spark_cluster.url,
    )
    assert [d["code"] for d in done] == [2] * 4, [d["err"] for d in done]
    assert all('docs/operations.md, "Spark cluster"' in d["err"] for d in done), [d["err"] for d in done]
    assert not any("Traceback" in d["err"] for d in done)
    relative, driver_only, warehouse, missing = done
    assert "orders.csv: a relative path" in relative["err"] and "give an absolute path" in relative["err"]
    assert (
        f"{only / 'orders.csv'}: not readable by the executors of {spark_cluster.url}" in driver_only["err"]
    )
    assert f"{only / 'ws'}" in warehouse["err"] and "not writable by the executors" in warehouse["err"]
    assert f"cannot start Python PYSPARK_PYTHON={no_python}" in missing["err"]
