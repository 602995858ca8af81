"""The Airflow operators and sensor (docs/airflow.md), run by Airflow's own ``dag.test()`` on a
real workspace: the DAGs of ``dags/`` and the example DAG of docs/airflow.md, all run once by
``_driver.py`` in a process of its own (see its docstring for why), which writes what each run
left in Airflow's database; each test reads that, and the driver's log for the messages."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from _demo_workspace import cli_env
from _invoke import completed
from _shop import CHECKS, CONTRACT, HEADER, RULES_GATE
from assay.store import MetricStore

HERE = Path(__file__).parent
DOCS = HERE.parent.parent / "docs" / "airflow.md"


@dataclass(frozen=True)
class Runs:
    found: dict[str, Any]  # what _driver.py wrote: each DAG run's tasks, their states, tries and XComs
    log: str  # what the driver's process printed (Airflow's logs, every task's error)
    workspace: Path
    before: Path  # a copy of the workspace before any DAG ran

    def tasks(self, dag_id: str) -> dict[str, Any]:
        tasks: dict[str, Any] = self.found[dag_id]["tasks"]
        return tasks

    def states(self, dag_id: str) -> dict[str, str]:
        return {task: ti["state"] for task, ti in self.tasks(dag_id).items()}


def workspace(root: Path) -> Path:
    """The shop's orders of 2026-11-01 (fine) and 2026-11-02 (O3 has a negative amount), the
    check document, the gate's rules and a broken document."""
    (root / "checks").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "checks" / "orders.yaml").write_text(CHECKS)
    (root / "checks" / "broken.yaml").write_text("kind: DatasetChecks\ndataset: {name: x\n")
    (root / "rules.csv").write_text(RULES_GATE)
    (root / "empty").mkdir()
    (root / "empty" / "2026-11-02.csv").write_text(HEADER + "\n")
    (root / "contracts").mkdir()
    (root / "contracts" / "placed.yaml").write_text(CONTRACT)
    (root / "events").mkdir()
    placed = [{"event_id": f"e{i}", "at": f"2026-11-02T0{i}:00:00Z", "amount": 10 * i} for i in range(5)]
    (root / "events" / "2026-11-02.jsonl").write_text("".join(json.dumps(e) + "\n" for e in placed))
    for day in ("2026-11-01", "2026-11-02"):
        lines = [HEADER]
        for i in range(10):
            amount = -5 if day.endswith("02") and i == 3 else 10 * (i + 1)
            lines.append(f"S1,O{day[-2:]}-{i},{day},{'PAID' if i % 2 else 'SHIPPED'},{amount}")
        (root / "data" / f"{day}.csv").write_text("\n".join(lines) + "\n")
    return root


def example() -> str:
    """The example DAG of docs/airflow.md, as written there."""
    (block,) = re.findall(r"```python\n(.*?)^```", DOCS.read_text(), re.DOTALL | re.MULTILINE)
    return str(block)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    root = tmp_path_factory.mktemp("airflow")
    space = workspace(root / "ws")
    before = root / "before"
    shutil.copytree(space, before)
    home, out = root / "home", root / "found.json"
    dags = home / "dags"  # only DAG files: Airflow parses every file of it
    dags.mkdir(parents=True)
    for dag in (HERE / "dags").glob("*.py"):
        shutil.copy(dag, dags)
    (dags / "assay_example.py").write_text(example())
    env = cli_env(
        AIRFLOW_HOME=str(home),
        AIRFLOW__CORE__DAGS_FOLDER=str(dags),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=f"sqlite:///{home}/airflow.db",
        AIRFLOW__CORE__UNIT_TEST_MODE="False",
        AIRFLOW_VAR_ASSAY_WORKSPACE=str(space),
    )
    env["ASSAY_WORKSPACE"] = str(space)
    done = subprocess.run(
        [sys.executable, str(HERE / "_driver.py"), str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-4000:]
    return Runs(json.loads(out.read_text()), log, space, before)


def _same_run(payload: dict[str, Any]) -> dict[str, Any]:
    """A run's JSON without what differs between two runs of the same load: its id, its timings,
    and the document's path (the CLI's run is on a copy of the workspace)."""
    return {k: v for k, v in payload.items() if k not in ("run_id", "seconds", "document")}


@pytest.mark.parametrize(
    ("task", "document", "at", "now"),
    [
        ("check_ok", "checks/orders.yaml", "2026-11-01", "2026-11-01T07:00:00Z"),
        ("check_events", "contracts/placed.yaml", "2026-11-02", "2026-11-02T23:00:00Z"),
    ],
)
def test_the_check_operator_pushes_the_json_the_cli_writes(
    runs: Runs, task: str, document: str, at: str, now: str
) -> None:
    check = runs.tasks("assay_pipeline")[task]
    assert check["state"] == "success"
    cli = completed(
        "check", "run", str(runs.before / document), "--at", at, "--now", now,
        "--workspace", str(runs.before), "--fail-on", "error", "--json", "-",
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert _same_run(check["xcom"]) == _same_run(json.loads(cli.stdout))
    assert {o["outcome"] for o in check["xcom"]["outcomes"]} == {"passed"}


def test_fail_on_stops_the_downstream_task_not_the_other_branches(runs: Runs) -> None:
    tasks = runs.tasks("assay_pipeline")
    assert runs.found["assay_pipeline"]["state"] == "failed"
    assert runs.states("assay_pipeline") | {"bad_word": "-", "bad_document": "-"} == {
        "check_ok": "success",
        "after_ok": "success",
        "check_events": "success",
        "check_fail": "failed",
        "after_fail": "upstream_failed",
        "check_nothing": "skipped",
        "after_nothing": "skipped",
        "bad_word": "-",
        "bad_document": "-",
        "gate": "success",
        "after_gate": "success",
        "profile": "success",
        "gate_strict": "failed",
        "gate_empty": "skipped",
        "profile_empty": "skipped",
    }
    failed = tasks["check_fail"]
    assert failed["try_number"] == 1  # retries=2, none taken: the same load fails again
    # no `at`: the DAG run's logical date; the run's JSON is in XCom for whoever looks
    assert failed["xcom"]["at"] == "2026-11-02T00:00:00+00:00"
    assert failed["xcom"]["outcomes"][0]["outcome"] == "failed"
    reached = "fail_on=error reached: no-negative-amounts failed (error)"
    assert f"AirflowFailException: assay: {reached}" in runs.log


def test_without_a_logical_date_the_run_is_at_the_dag_runs_run_after(runs: Runs) -> None:
    check = runs.tasks("assay_no_logical_date")["check"]
    assert check["state"] == "success"
    assert check["xcom"]["at"] == runs.found["assay_no_logical_date"]["run_after"]


def test_a_run_that_evaluated_nothing_skips_the_task_and_its_downstream(runs: Runs) -> None:
    nothing = runs.tasks("assay_pipeline")["check_nothing"]
    assert nothing["state"] == "skipped"
    assert {o["outcome"] for o in nothing["xcom"]["outcomes"]} == {"skipped"}
    assert runs.states("assay_pipeline")["after_nothing"] == "skipped"
    assert "reason='assay: the run evaluated nothing (every expectation skipped or in error)'" in runs.log
    # the gate's nothing is an empty batch, the profile's a load without rows
    for task, reason in (("gate_empty", "the batch has no rows"), ("profile_empty", "the load has no rows")):
        assert runs.tasks("assay_pipeline")[task]["state"] == "skipped"
        assert f"reason='assay: {reason}'" in runs.log  # Airflow's "Skipping task." line


def test_a_users_mistake_fails_the_task_without_retry_with_the_cli_message(runs: Runs) -> None:
    tasks = runs.tasks("assay_pipeline")
    broken = runs.workspace / "checks" / "broken.yaml"
    for task, args in (
        ("bad_word", ["--fail-on", "fatal"]),
        ("bad_document", []),
    ):
        assert (tasks[task]["state"], tasks[task]["try_number"]) == ("failed", 1)
        document = broken if task == "bad_document" else runs.before / "checks" / "orders.yaml"
        cli = completed("check", "run", str(document), "--workspace", str(runs.before), *args)
        assert cli.returncode == 2
        message = cli.stderr.splitlines()[0].removeprefix("error: ")
        assert f"AirflowFailException: assay: {message}" in runs.log


def test_a_system_error_is_retried_by_airflow(runs: Runs) -> None:
    check = runs.tasks("assay_retry")["check"]
    # the first try's measure failed (ASSAY_FAIL_ATTEMPTS=1): exit 3's AirflowException, retried
    assert (check["state"], check["try_number"]) == ("success", 2)
    assert "AirflowException: assay: daily: attempt 1 failed on purpose" in runs.log
    assert check["xcom"]["state"] == "completed"


def test_the_gate_operator_pushes_rows_committed_and_quarantined(runs: Runs) -> None:
    gate = runs.tasks("assay_pipeline")["gate"]["xcom"]
    assert (gate["table"], gate["total"], gate["passed"], gate["quarantined"]) == ("shop.gated", 10, 9, 1)
    assert Path(gate["quarantine_file"]).is_file()
    assert gate["rules"]["R01"]["failed"] == 1
    assert json.loads((runs.workspace / "summaries" / "gate.json").read_text()) == gate  # --summary
    strict = runs.tasks("assay_pipeline")["gate_strict"]
    assert (strict["try_number"], strict["xcom"]["quarantined"]) == (1, 1)
    reached = "fail_on=critical reached: 1 row(s) quarantined (critical)"
    assert f"AirflowFailException: assay: {reached}" in runs.log


def test_the_profile_operator_profiles_the_logical_dates_load(runs: Runs) -> None:
    profile = runs.tasks("assay_pipeline")["profile"]["xcom"]
    assert (profile["dataset"], profile["load_date"], profile["rows"]) == ("shop.profiled", "2026-11-02", 10)


def test_the_sensor_times_out_on_an_open_incident_deferred_or_poking(runs: Runs) -> None:
    assert runs.states("assay_wait_open") == {"deferred": "failed", "poking": "failed"}
    shown = (
        r"AirflowSensorTimeout: assay: waited 0\.5 s and shop\.orders{} still has 1 unresolved "
        r"incident\(s\): \w{{8}} no-negative-amounts open"
    )
    assert re.search(shown.format(r" \(no-negative-amounts\)"), runs.log)  # the deferred one
    assert re.search(shown.format(""), runs.log)  # the poking one


def test_the_sensor_succeeds_when_the_incident_is_resolved_while_it_waits(runs: Runs) -> None:
    watcher = runs.found["watcher"]
    assert "error" not in watcher
    (resolved,) = watcher["resolved"]  # by the driver's thread, once the sensor was deferred
    assert runs.states("assay_wait_resolved") == {"deferred": "success", "poking": "success"}
    event = runs.tasks("assay_wait_resolved")["deferred"]["xcom"]
    assert (event["status"], event["dataset"]) == ("resolved", "shop.orders")
    assert event["polls"] >= 2  # the first found it open
    with MetricStore.open(workspace=runs.workspace) as store:
        assert store.incident(resolved).state == "resolved"


def test_the_documented_example_dag_runs(runs: Runs) -> None:
    """docs/airflow.md's example, on 2026-11-01's orders (its incident of the 2nd resolved)."""
    assert runs.states("assay_orders") == dict.fromkeys(
        ("orders_clear", "gate_orders", "check_orders", "profile_orders", "publish"), "success"
    )
    check = runs.tasks("assay_orders")["check_orders"]["xcom"]
    assert (check["at"], check["summary"]["passed"]) == ("2026-11-01", 1)


def test_the_integrations_docstring_examples_run(runs: Runs) -> None:
    assert runs.found["doctests"] and not any(runs.found["doctests"].values())
    # this process never imported Airflow (tests/test_doctests.py leaves its modules out; this
    # folder is no package, so no `airflow` of the tests' own stands in for it)
    assert "airflow" not in sys.modules
