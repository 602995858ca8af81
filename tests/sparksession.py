"""One SparkSession for the whole test session, and the ``engine`` fixture; a pytest plugin.

The ``spark_session`` fixture (session scope) starts Spark ``local[2]`` once, with assay's
defaults (:data:`assay.engine.spark.DEFAULT_CONF`), and stops it at the end of the session; it
needs PySpark (the ``dev`` extra) and a Java 17+ runtime, and fails, never skips, without them.
Every engine a test builds on it has views of its own, so tests cannot see each other's tables.

The ``engine`` fixture runs a test once per engine, as a value for ``assay.dqdl.evaluate(...,
engine=...)``: ``"duckdb"``, or the shared SparkSession. Use it from a test folder by importing
the fixtures into that folder's ``conftest.py``::

    from sparksession import engine, spark_session  # noqa: F401

    def test_something(engine: object) -> None:
        result = evaluate(ruleset, data, engine=engine)
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ENGINES = ("duckdb", "spark")


# Where a classic session's JVM serves Spark Connect when spark_connect_url asks it to (static
# settings, read only by Spark's Connect service): a free port of 127.0.0.1.
CONNECT_BINDING = {"spark.connect.grpc.binding.address": "127.0.0.1", "spark.connect.grpc.binding.port": "0"}


@pytest.fixture(scope="session")
def spark_session() -> Iterator[Any]:
    from assay.engine.spark import build_session

    master = os.environ.get("ASSAY_TEST_SPARK_MASTER") or "local[2]"
    session = build_session(master, None if master.startswith("sc://") else CONNECT_BINDING)
    yield session
    session.stop()


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> Any:
    """``"duckdb"`` or the session's SparkSession; ``request.param`` names the engine."""
    if request.param == "spark":
        return request.getfixturevalue("spark_session")
    return "duckdb"


def engine_name(engine: Any) -> str:
    """The name of an ``engine`` fixture's value."""
    return engine if isinstance(engine, str) else "spark"


ROW_COLUMNS = (
    "DataQualityRulesPass",
    "DataQualityRulesFail",
    "DataQualityRulesSkip",
    "DataQualityEvaluationResult",
)


# the keys of a gate's run summary that differ between any two runs (ids, paths, clocks)
VOLATILE = {"run_id", "source", "quarantine_file", "held_file", "snapshot_id", "started_at", "finished_at"}


def assert_same_profile(mine: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Two engines' ``assay profile --json`` of one load agree: alerts, decisions and every
    column's statistics, an estimated distinct count within the documented 10 %."""
    assert mine["alerts"] == theirs["alerts"]
    assert mine["decisions"] == theirs["decisions"]
    for a, b in zip(mine["columns"], theirs["columns"], strict=True):
        a, b = dict(a), dict(b)
        if not b["distinct_exact"]:  # an estimate: within the documented tolerance
            assert a.pop("distinct") == pytest.approx(b.pop("distinct"), rel=0.1)
        assert a == b


def assert_same_results(result: Any, reference: Any) -> None:
    """Two evaluations of one vector agree: every rule's outcome and every metric (no DQDL
    metric is estimated, so floats agree to pytest.approx's relative 1e-6; NaN equals NaN), and
    the row-level outcomes row for row. Messages are the engines' own words and may differ."""
    assert [r.outcome for r in result.rules] == [r.outcome for r in reference.rules]
    for mine, theirs in zip(result.rules, reference.rules, strict=True):
        assert mine.metrics.keys() == theirs.metrics.keys(), mine.rule
        for key, value in theirs.metrics.items():
            if value is None:
                assert mine.metrics[key] is None, (mine.rule, key)
            else:
                assert mine.metrics[key] == pytest.approx(value, nan_ok=True), (mine.rule, key)
    if reference.row_level is not None:
        assert result.row_level is not None
        for column in ROW_COLUMNS:
            assert (
                result.row_level.column(column).to_pylist() == reference.row_level.column(column).to_pylist()
            )


@pytest.fixture(scope="session")
def spark_connect_url(spark_session: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark Connect server: Spark's own gRPC service (``SparkConnectService``, which
    ``spark-submit --class …SparkConnectServer`` starts in a JVM of its own on a session of its
    own), started in the JVM of the session's SparkSession, whose settings are the ones that
    server would be given (``local[2]``, assay's defaults); yields its ``sc://`` URL and stops the
    service at the end of the session. A second JVM would cost the two cores its start and its
    warm-up (the first command on a fresh one took half a minute) and hold a gigabyte.

    A Python process holds either a classic SparkSession or Spark Connect sessions, never both
    (PySpark marks the process as Connect for good), so tests reach this server from another
    process: ``assay`` commands run by :func:`run_assay_commands`. When the session is itself on
    Connect (``ASSAY_TEST_SPARK_MASTER=sc://…``) there is no JVM here: the server is a process of
    its own, started with ``spark-submit``."""
    context = getattr(spark_session, "_jsc", None)
    if context is None:
        yield from _connect_server_process(tmp_path_factory)
        return
    services = spark_session._jvm.org.apache.spark.sql.connect.service
    service = getattr(services, "SparkConnectService$").__getattr__("MODULE$")  # the Scala object
    service.start(context.sc())
    try:
        yield f"sc://127.0.0.1:{service.localPort()}"
    finally:
        service.stop(getattr(service, "stop$default$1")(), getattr(service, "stop$default$2")())


def _connect_server_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark Connect server (PySpark's own, ``local[2]``, assay's defaults) started as a process
    of its own; yields its ``sc://`` URL and stops it."""
    import pyspark

    from assay.engine.spark import DEFAULT_CONF

    home = Path(pyspark.__file__).parent
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = DEFAULT_CONF | {
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
    }
    log = tmp_path_factory.mktemp("spark-connect") / "server.log"
    command = [str(home / "bin" / "spark-submit"), "--master", "local[2]"]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    command += ["--class", "org.apache.spark.sql.connect.service.SparkConnectServer", "spark-internal"]
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=log.parent)
    try:
        deadline = time.monotonic() + 180
        while True:  # until the server listens (it takes a JVM's start, about 10 s)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the Spark Connect server did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.2)
        yield f"sc://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


_COMMANDS = """
import contextlib, io, json, sys, time
from assay.cli import main
done, results = [], sys.argv[1]
if len(sys.argv) > 2:  # one session on that master for every command (they find it active)
    from assay.engine.spark import build_session
    session = build_session(sys.argv[2])
for argv in json.load(sys.stdin):
    out, err = io.StringIO(), io.StringIO()
    sys.argv = ["assay", *argv]
    code, start = 0, time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main()
        except SystemExit as stop:
            code = int(stop.code or 0)
    done.append({"code": code, "out": out.getvalue(), "err": err.getvalue(),
                 "seconds": time.perf_counter() - start})
with open(results, "w") as file:
    json.dump(done, file)
"""


def run_assay_commands(
    commands: list[list[str]], env: dict[str, str] | None = None, session_on: str | None = None
) -> list[dict[str, Any]]:
    """Run ``assay ARGS...`` for each argument list, in order, in one fresh Python process (one
    import of PySpark for all of them); each gives ``{"code", "out", "err"}``. With
    ``session_on`` (a master URL), the process first builds a SparkSession there, which every
    ``--engine spark`` command uses (docs/engines.md: a session already running is used): one
    application, its executors started and warmed once, for all the commands."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.json"
        done = subprocess.run(
            [sys.executable, "-c", _COMMANDS, str(path), *([session_on] if session_on else [])],
            input=json.dumps(commands),
            capture_output=True,
            text=True,
            env=os.environ | (env or {}),
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        results: list[dict[str, Any]] = json.loads(path.read_text())
    return results
