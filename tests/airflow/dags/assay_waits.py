"""The sensor's DAGs and a system error's retry (tests/airflow/test_airflow.py)."""

from __future__ import annotations

import datetime as dt
import os

from airflow.sdk import DAG

from assay.integrations.airflow import AssayCheckOperator, AssayIncidentSensor

WS = os.environ["ASSAY_WORKSPACE"]
START = dt.datetime(2026, 1, 1)

# the incident check_fail opened is open: both ways of waiting time out
with DAG("assay_wait_open", schedule=None, start_date=START, catchup=False) as wait_open:
    waiting = {"dataset": "shop.orders", "poke_interval": 0.1, "timeout": 0.5}
    AssayIncidentSensor(task_id="deferred", expectation="no-negative-amounts", **waiting)
    AssayIncidentSensor(task_id="poking", deferrable=False, **waiting)

# resolved while the deferred sensor waits (the test's thread resolves it once the task is deferred)
with DAG("assay_wait_resolved", schedule=None, start_date=START, catchup=False) as wait_resolved:
    waiting = AssayIncidentSensor(task_id="deferred", dataset="shop.orders", poke_interval=0.1, timeout=30)
    waiting >> AssayIncidentSensor(task_id="poking", dataset="shop.orders", deferrable=False, timeout=5)

# run without a logical date (dag.test(logical_date=None), as a manual run may be): `at` is its run_after
with DAG("assay_no_logical_date", schedule=None, start_date=START, catchup=False) as no_logical_date:
    AssayCheckOperator(task_id="check", document=f"{WS}/checks/orders.yaml")

# a system error (ASSAY_FAIL_ATTEMPTS=1 fails the run's first measure): Airflow retries the task
with DAG("assay_retry", schedule=None, start_date=START, catchup=False) as retry:
    AssayCheckOperator(
        task_id="check",
        document=f"{WS}/checks/orders.yaml",
        at="2026-11-01",
        now="2026-11-01T08:00:00Z",
        retries=1,
        retry_delay=dt.timedelta(0),
    )
