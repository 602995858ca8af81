"""The pipeline the Airflow tests run with dag.test() (tests/airflow/test_airflow.py): each
operator on the workspace ASSAY_WORKSPACE names, and what follows each one's end."""

from __future__ import annotations

import datetime as dt
import os

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

from assay.integrations.airflow import AssayCheckOperator, AssayGateOperator, AssayProfileOperator

WS = os.environ["ASSAY_WORKSPACE"]
DOC = f"{WS}/checks/orders.yaml"

with DAG("assay_pipeline", schedule=None, start_date=dt.datetime(2026, 1, 1), catchup=False) as dag:
    # day 1's orders are fine: the run's JSON goes to XCom; check_fail runs after it, so that this
    # run sees the workspace as the CLI run the test compares it with
    check_ok = AssayCheckOperator(
        task_id="check_ok", document=DOC, at="2026-11-01", now="2026-11-01T07:00:00Z", fail_on="error"
    )
    after_ok = EmptyOperator(task_id="after_ok")
    # no `at`: the DAG run's logical date, 2026-11-02, whose order O3 has a negative amount
    check_fail = AssayCheckOperator(
        task_id="check_fail", document=DOC, now="2026-11-02T07:00:00Z", fail_on="error", retries=2
    )
    after_fail = EmptyOperator(task_id="after_fail")
    check_ok >> [after_ok, check_fail]
    check_fail >> after_fail
    # no rows on 2026-10-01: the run evaluated nothing
    check_nothing = AssayCheckOperator(
        task_id="check_nothing",
        document=DOC,
        at="2026-10-01",
        now="2026-10-01T07:00:00Z",
        skip_on_nothing=True,
    )
    check_nothing >> EmptyOperator(task_id="after_nothing")
    # event contract files, as `check run` takes them
    AssayCheckOperator(
        task_id="check_events",
        document=f"{WS}/contracts/placed.yaml",
        at="2026-11-02",
        now="2026-11-02T23:00:00Z",
        fail_on="error",
    )
    # the user's mistakes: the command's exit 2
    AssayCheckOperator(task_id="bad_word", document=DOC, fail_on="fatal", retries=2)
    AssayCheckOperator(task_id="bad_document", document=f"{WS}/checks/broken.yaml", retries=2)
    # the independent branch: the gate and the profile of day 2
    AssayGateOperator(
        task_id="gate",
        batch=f"{WS}/data/2026-11-02.csv",
        rules=f"{WS}/rules.csv",
        contributor="S1",
        table="shop.gated",
        key="order_id",
        order="day",
        contributor_column="shop",
        summary=f"{WS}/summaries/gate.json",
    ) >> EmptyOperator(task_id="after_gate")
    AssayProfileOperator(task_id="profile", input_file=f"{WS}/data/2026-11-02.csv", dataset="shop.profiled")
    # the same batch, stricter: a row quarantined is a critical finding
    AssayGateOperator(
        task_id="gate_strict",
        batch=f"{WS}/data/2026-11-02.csv",
        rules=f"{WS}/rules.csv",
        contributor="S1",
        table="shop.strict",
        key="order_id",
        order="day",
        contributor_column="shop",
        fail_on="critical",
        retries=2,
    )
    # a file of no rows: the gate and the profile evaluated nothing
    empty = f"{WS}/empty/2026-11-02.csv"
    AssayGateOperator(
        task_id="gate_empty",
        batch=empty,
        rules=f"{WS}/rules.csv",
        contributor="S1",
        table="shop.empty",
        key="order_id",
        order="day",
        contributor_column="shop",
        skip_on_nothing=True,
    )
    AssayProfileOperator(
        task_id="profile_empty", input_file=empty, dataset="shop.empty", skip_on_nothing=True
    )
