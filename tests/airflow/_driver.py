"""Runs the Airflow tests' DAGs with Airflow's own ``dag.test()`` in a process of their own and
writes what each run left in Airflow's database (task states, tries, XComs) as one JSON file.

Usage: ``python _driver.py OUT.json`` with ``AIRFLOW_HOME``, ``AIRFLOW__CORE__DAGS_FOLDER`` (a
folder holding only the DAG files) and ``ASSAY_WORKSPACE`` set (tests/airflow/test_airflow.py).

Its own process, because Airflow fixes its configuration and metadata database at its first
import and, at that import, adds an INFO handler on stdout to the root logger: inside a pytest
worker it would pick whichever home came first and print its logs into other tests' output.
"""

from __future__ import annotations

import datetime as dt
import doctest
import importlib
import io
import json
import os
import sys
import threading
import time
from datetime import UTC
from pathlib import Path
from typing import Any, TextIO

LOGICAL = dt.datetime(2026, 11, 2, tzinfo=UTC)


def outcome(dag: Any, run: Any) -> dict[str, Any]:
    """What a DAG run left: its state, and each task's state, try and XCom return value."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        tasks = {
            ti.task_id: {"state": str(ti.state), "try_number": ti.try_number}
            for ti in run.get_task_instances(session=session)
        }
        rows = session.scalars(XComModel.get_many(run_id=run.run_id, dag_ids=dag.dag_id, key="return_value"))
        for row in rows:
            tasks[row.task_id]["xcom"] = XComModel.deserialize_value(row)
    return {"state": str(run.state), "run_after": run.run_after.isoformat(), "tasks": tasks}


class Watched(io.TextIOBase):
    """This process's stdout, where Airflow's logs go, that also tells when a line holding
    ``marker`` went by (the trigger's log of a poll that found the incident open)."""

    def __init__(self, out: TextIO, marker: str) -> None:
        self.out, self.marker, self.seen = out, marker, threading.Event()

    def write(self, text: str) -> int:
        if self.marker in text:
            self.seen.set()
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()


STDOUT = Watched(sys.stdout, "poll 1: shop.orders still has 1 unresolved incident(s)")


def resolve_when_deferred(found: dict[str, Any]) -> threading.Thread:
    """A thread that waits until the sensor is deferred, its trigger registered in Airflow's
    database (one more trigger row than when it started) and its first poll logged finding the
    incident open, then resolves the dataset's incidents through assay, while the trigger polls."""
    from airflow.models.trigger import Trigger
    from airflow.utils.session import create_session

    def triggers() -> int:
        with create_session() as session:
            return session.query(Trigger).count()

    before = triggers()

    def run() -> None:
        try:
            watch()
        except Exception as error:  # the test shows it: the thread's traceback goes to the log only
            found["error"] = repr(error)

    def watch() -> None:
        from assay.platform.incidents import resolve
        from assay.store import MetricStore

        if not STDOUT.seen.wait(60):  # Airflow's log line, not a time for the trigger to get there
            return
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if triggers() > before:
                with MetricStore.open(workspace=Path(os.environ["ASSAY_WORKSPACE"])) as store:
                    for incident in store.incidents(dataset="shop.orders", states=["open"]):
                        now = dt.datetime.now(UTC)
                        resolve(
                            store, incident.id, by="airflow-test", cause="false_alarm", note=None, now=now
                        )
                        found.setdefault("resolved", []).append(incident.id)
                return
            time.sleep(0.05)  # polling Airflow's database for the deferral, not waiting for time to pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def doctests() -> dict[str, int]:
    """The integration's docstring examples (tests/test_doctests.py leaves them to this process)."""
    import assay.integrations.airflow as package

    failed = {}
    modules = Path(package.__file__).parent.glob("[!_]*.py")
    names = [package.__name__, *(f"{package.__name__}.{p.stem}" for p in modules)]
    for name in names:
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
        failed[name] = result.failed
    return failed


def main(out: Path) -> None:
    sys.stdout = STDOUT  # before Airflow's first import: its logs are written where stdout was then
    from airflow.utils import db

    db.initdb()
    sys.path.insert(0, os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
    results: dict[str, Any] = {"doctests": doctests(), "seconds": {}}

    def test(module: str, name: str, **kwargs: Any) -> None:
        dag = getattr(importlib.import_module(module), name)
        dag_id = dag.dag_id
        started = time.perf_counter()
        run = dag.test(**kwargs)
        results["seconds"][dag_id] = round(time.perf_counter() - started, 2)
        results[dag_id] = outcome(dag, run)

    test("assay_pipeline", "dag", logical_date=LOGICAL)
    test("assay_waits", "wait_open", logical_date=LOGICAL)
    watcher: dict[str, Any] = {}
    thread = resolve_when_deferred(watcher)
    test("assay_waits", "wait_resolved", logical_date=LOGICAL)
    thread.join(5)
    results["watcher"] = watcher
    test("assay_waits", "no_logical_date", logical_date=None)
    os.environ["ASSAY_FAIL_ATTEMPTS"] = "1"
    test("assay_waits", "retry", logical_date=LOGICAL)
    del os.environ["ASSAY_FAIL_ATTEMPTS"]
    test("assay_example", "dag", logical_date=dt.datetime(2026, 11, 1, tzinfo=UTC))
    out.write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
