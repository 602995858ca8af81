"""A Spark standalone cluster for tests: a master and two workers, processes of their own started
from the jars inside the PySpark wheel (nothing from Maven); a pytest plugin.

The ``spark_cluster`` fixture (session scope) runs the commands of docs/operations.md's "Spark
cluster" block as written (its ``export`` lines, then the master and each worker, each in a
process group of its own), with its own free ports for 7077 and 8080 and a temporary folder for
``/srv/spark``; waits, against a deadline, until the master's JSON (``/json/`` of its web UI)
lists both workers alive; and at the end of the session kills each process group (the workers'
executors with them). Memory stays small: 256 MB for each daemon, 1 GB a worker offers, and the
runs' executors ask 512 MB (``cluster.conf``, for ``ASSAY_SPARK_CONF``).

Use it from a test folder by importing the fixture into that folder's ``conftest.py``::

    from sparkcluster import spark_cluster  # noqa: F401

    def test_something_spark(spark_cluster: SparkCluster) -> None:
        run_assay_commands([[..., "--engine", "spark", "--spark-master", spark_cluster.url]],
                           env=spark_cluster.env)

A test that uses it has ``spark`` in its id (tests/conftest.py sends those to one worker).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

OPERATIONS = Path(__file__).resolve().parent.parent / "docs" / "operations.md"
SECTION = "### Spark cluster"
START_SECONDS = 180  # a JVM's start on a busy two-core machine is 5-20 s; three of them at once
EXECUTOR_CONF = "spark.executor.memory 512m\n"


def documented_commands() -> list[str]:
    """The ``$`` lines of the first console block under docs/operations.md's "Spark cluster"."""
    text = OPERATIONS.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    block = re.search(r"^```console\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert block is not None, f"{OPERATIONS}: no console block under {SECTION!r}"
    return [line[2:] for line in block.group(1).splitlines() if line.startswith("$ ")]


@dataclass
class SparkCluster:
    """A running cluster: its master's URL, its web UI, its folder, and what a run on it needs."""

    url: str
    webui: str
    root: Path
    substitutions: dict[str, str]
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def substitute(self, command: str) -> str:
        """A documented command with this cluster's ports and folders."""
        for documented, mine in self.substitutions.items():
            command = command.replace(documented, mine)
        return command

    @property
    def env(self) -> dict[str, str]:
        """The environment of a driver process for this cluster: its executors' Python is this
        one (the driver's), their memory small."""
        return {
            "PYSPARK_PYTHON": sys.executable,
            "ASSAY_SPARK_CONF": str(self.root / "assay.conf"),
            "SPARK_LOCAL_IP": "127.0.0.1",
        }

    def state(self) -> dict[str, Any]:
        """The master's JSON: its workers, its running and completed applications."""
        with urllib.request.urlopen(f"{self.webui}/json/", timeout=10) as answer:
            found: dict[str, Any] = json.load(answer)
        return found

    def applications(self) -> set[str]:
        """The ids of the applications the master has run or runs."""
        state = self.state()
        return {a["id"] for a in state["activeapps"] + state["completedapps"]}

    def tasks_run(self) -> dict[str, int]:
        """Per worker folder, the tasks its executors ran (from the executors' own logs)."""
        return {
            worker.name: sum(log.read_text(errors="replace").count("Running task") for log in logs)
            for worker in sorted(self.root.glob("worker-*"))
            for logs in [list(worker.glob("app-*/*/stderr"))]
        }


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _exports(commands: list[str]) -> str:
    return "\n".join(c for c in commands if c.startswith("export "))


def start(root: Path) -> SparkCluster:
    """Start the documented master and workers under ``root``; the cluster once both workers are
    registered (the fixture stops it with :func:`stop`)."""
    commands = documented_commands()
    port, webui = _free_port(), _free_port()
    cluster = SparkCluster(
        url=f"spark://127.0.0.1:{port}",
        webui=f"http://127.0.0.1:{webui}",
        root=root,
        substitutions={
            ":7077": f":{port}",
            "--port 7077": f"--port {port}",
            "8080": str(webui),
            "/srv/spark": str(root),
        },
    )
    (root / "assay.conf").write_text(EXECUTOR_CONF)
    daemons = [c.removesuffix("&").strip() for c in commands if "spark-class" in c]
    assert [("Master" in c, "Worker" in c) for c in daemons] == [(True, False), (False, True), (False, True)]
    # `python` in the documented SPARK_HOME line is this interpreter: its folder first on PATH
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    try:
        for i, daemon in enumerate(daemons):
            script = f"{_exports(commands)}\nexec {cluster.substitute(daemon)}"
            with (root / f"daemon-{i}.log").open("wb") as log:
                cluster.processes.append(
                    subprocess.Popen(
                        ["bash", "-c", script], stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root,
                        start_new_session=True,
                    )
                )  # fmt: skip
        _wait_for_workers(cluster, 2)
    except BaseException:
        stop(cluster)
        raise
    return cluster


def _wait_for_workers(cluster: SparkCluster, count: int) -> None:
    deadline = time.monotonic() + START_SECONDS
    while True:
        _follow_the_masters_ui(cluster)
        try:
            alive = [w for w in cluster.state()["workers"] if w["state"] == "ALIVE"]
            if len(alive) == count:
                return
        except (OSError, ValueError):
            # not up yet: no answer; or HTML, since Spark's WebUI.bind starts Jetty, then adds
            # the handlers one by one, the page at "/" before its JSON at "/json"
            pass
        gone = [p.pid for p in cluster.processes if p.poll() is not None]
        if gone or time.monotonic() > deadline:
            logs = "\n".join(
                f"--- {log.name}\n{log.read_text(errors='replace')[-2000:]}"
                for log in sorted(cluster.root.glob("daemon-*.log"))
            )
            why = f"a daemon exited (see its log), pid {gone[0]}" if gone else "timed out"
            pytest.fail(f"the Spark cluster did not start ({why}):\n{logs}")
        time.sleep(0.25)


def _follow_the_masters_ui(cluster: SparkCluster) -> None:
    """Point ``cluster.webui`` at the port the master's log says its web UI bound: when the free
    port chosen for it was taken in the meantime, Spark binds the next one, and the chosen port
    answers with another process's page."""
    log = cluster.root / "daemon-0.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    bound = re.search(r"Successfully started service 'MasterUI' on port (\d+)", text)
    if bound:
        cluster.webui = f"http://127.0.0.1:{bound.group(1)}"


def stop(cluster: SparkCluster) -> None:
    """Kill every daemon's process group (a worker's executors are in its group)."""
    for process in cluster.processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    cluster = start(tmp_path_factory.mktemp("spark-cluster"))
    try:
        yield cluster
    finally:
        stop(cluster)


_DRIVER = """
import contextlib, io, json, os, sys
from assay.cli import main
done, results = [], sys.argv[1]
if len(sys.argv) > 2:  # one session on that master, which the commands find active
    from assay.engine.spark import build_session
    build_session(sys.argv[2])
for command in json.load(sys.stdin):
    if command["env"]:  # a session of its own, built with this environment (PYSPARK_PYTHON)
        from pyspark.sql import SparkSession
        active = SparkSession.getActiveSession()
        if active is not None:
            active.stop()
    out, err = io.StringIO(), io.StringIO()
    before = dict(os.environ)
    os.environ.update(command["env"])  # read by the command's SparkContext (PYSPARK_PYTHON)
    sys.argv = ["assay", *command["argv"]]
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main()
        except SystemExit as stop:
            code = int(stop.code or 0)
    os.environ.clear()
    os.environ.update(before)
    done.append({"code": code, "out": out.getvalue(), "err": err.getvalue()})
with open(results, "w") as file:
    json.dump(done, file)
"""


def run_driver(
    commands: list[tuple[dict[str, str], list[str]]],
    env: dict[str, str],
    prefix: list[str],
    cwd: Path,
    session_on: str,
) -> list[dict[str, Any]]:
    """Run ``assay ARGS...`` for each ``(environment, arguments)``, in order, in one driver process
    (one JVM for all) started under ``prefix`` (``unshare …``) in ``cwd``; each gives ``{"code",
    "out", "err"}``. The commands share one session on ``session_on`` (one application), built
    first, until one with an environment of its own: from there each builds its own."""
    results = cwd / "results.json"
    done = subprocess.run(
        [*prefix, sys.executable, "-c", _DRIVER, str(results), session_on],
        input=json.dumps([{"env": e, "argv": a} for e, a in commands]),
        capture_output=True,
        text=True,
        env=os.environ | env,
        cwd=cwd,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found: list[dict[str, Any]] = json.loads(results.read_text())
    return found
