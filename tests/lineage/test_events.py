"""Every run emits OpenLineage events (docs/openlineage.md): START when it begins, COMPLETE or FAIL
when it ends, for the data it read (and the gate's table it wrote), with the assertions it judged
and the metrics it measured; sent by the official client as the client is configured, to a real
local HTTP receiver that checks each event (tests/lineage/_openlineage.py), or to a file.

One shop's orders, ten a day; one order has a negative amount. Each flow's document says one
thing that holds (there are rows) and one that does not (no amount below 0)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _demo_workspace import cli_env
from _invoke import completed
from _receivers import Listener
from _shop import CONTRACT, HEADER, RULES_GATE
from lineage._openlineage import Receiver

DAY = "2026-11-02"
RULES_DQDL = 'Rules = [ RowCount > 0, ColumnValues "amount" >= 0 ]\n'
CHECKS = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: shop.orders
  source: {path: "../data/*.csv"}
monitor: {not_categorical: [status]}
profiles:
  - id: daily
    slice: {column: day}
    metrics: [row_count, {min: [amount]}]
expectations:
  - {id: no-negative-amounts, metric: daily.min(amount), expect: ">= 0", severity: error}
  - {id: some-orders, metric: daily.row_count, expect: ">= 1", severity: warning}
"""


def make_world(root: Path, documents: dict[str, str]) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "events").mkdir()
    (root / "checks").mkdir()
    rows = []
    for i in range(10):
        amount = -5 if i == 3 else 10 * (i + 1)
        rows.append({"shop": "S1", "order_id": f"O-{i}", "day": DAY, "status": "PAID", "amount": amount})
    lines = [HEADER, *(",".join(str(r[c]) for c in HEADER.split(",")) for r in rows)]
    (root / "data" / f"{DAY}.csv").write_text("\n".join(lines) + "\n")
    events = [{"event_id": r["order_id"], "at": f"{DAY}T10:00:00Z", **r} for r in rows]
    (root / "events" / f"{DAY}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    for name, text in documents.items():
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.stop()


@pytest.fixture
def world(tmp_path: Path) -> Path:
    return make_world(tmp_path / "shop", {"rules.dqdl": RULES_DQDL, "rules.csv": RULES_GATE})


@pytest.fixture
def http(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> Receiver:
    """Events go to the receiver, as the client's simplest configuration says."""
    monkeypatch.setenv("OPENLINEAGE_URL", receiver.url)
    return receiver


def run(*args: str) -> subprocess.CompletedProcess[str]:
    done = completed(*args)
    assert done.returncode in (0, 1), done.stderr
    assert "OpenLineage" not in done.stderr, done.stderr
    return done


def check_run(root: Path, path: str = "checks/orders.yaml") -> dict[str, Any]:
    done = run("check", "run", str(root / path), "--at", DAY, "--now", f"{DAY}T23:00:00Z",
               "--json", "-", "--workspace", str(root))  # fmt: skip
    payload: dict[str, Any] = json.loads(done.stdout)
    return payload


def dqdl_run(root: Path) -> dict[str, Any]:
    done = run("dqdl", "run", str(root / "rules.dqdl"), "--data", str(root / "data" / f"{DAY}.csv"),
               "--dataset", "shop.orders", "--now", f"{DAY}T07:00:00Z", "--json", "-",
               "--workspace", str(root))  # fmt: skip
    payload: dict[str, Any] = json.loads(done.stdout)
    return {**payload, "run_id": last_run(root)}  # the DQDL JSON is Glue's: the id is in runs/


def last_run(root: Path) -> str:
    """The id of the workspace's latest run (its ``runs/<id>.json``)."""
    return max((root / "runs").glob("*.json"), key=lambda p: p.stat().st_mtime_ns).stem


def two(receiver: Receiver, run_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The run's START and its end event, checked by the receiver, nothing refused."""
    assert receiver.refused == []
    events = receiver.of_run(run_id)
    assert [e["eventType"] for e in events][:1] == ["START"] and len(events) == 2, events
    return events[0], events[1]


def assertions(event: dict[str, Any]) -> dict[str, dict[str, Any]]:
    [read] = event["inputs"]
    return {a["name"]: a for a in read["inputFacets"]["dataQualityAssertions"]["assertions"]}


def test_a_check_run_says_which_expectations_held(world: Path, http: Receiver) -> None:
    (world / "checks" / "orders.yaml").write_text(CHECKS)
    payload = check_run(world)
    start, end = two(http, payload["run_id"])  # the run's own id is the events' runId
    assert end["eventType"] == "COMPLETE" and end["eventTime"] >= start["eventTime"]
    assert start["job"] == end["job"] and end["job"]["namespace"] == "assay"
    assert end["job"]["name"] == "check.shop.orders"
    [read] = end["inputs"]
    # the data where it is (the pattern's folder), and the dataset assay knows it as
    assert (read["namespace"], read["name"]) == ("file", str(world / "data"))
    assert read["facets"]["symlinks"]["identifiers"] == [
        {"namespace": "assay", "name": "shop.orders", "type": "TABLE"}
    ]
    found = assertions(end)
    assert {name: a["success"] for name, a in found.items()} == {
        "no-negative-amounts": False,
        "some-orders": True,
    }
    assert found["no-negative-amounts"]["column"] == "amount"
    assert found["no-negative-amounts"]["assertion"] == "min"
    assert found["no-negative-amounts"]["actual"] == "-5.0"
    measured = read["inputFacets"]["dataQualityMetrics"]
    assert measured["rowCount"] == 10
    assert measured["columnMetrics"]["amount"]["min"] == -5
    assert measured["columnMetrics"]["amount"]["nullCount"] == 0
    # the START names the data before anything is judged
    assert "inputFacets" not in start["inputs"][0] or not start["inputs"][0]["inputFacets"]


def test_a_dqdl_run_says_which_rules_held(world: Path, http: Receiver) -> None:
    payload = dqdl_run(world)
    _, end = two(http, payload["run_id"])
    assert end["job"]["name"] == "dqdl.shop.orders"
    [read] = end["inputs"]
    assert (read["namespace"], read["name"]) == ("file", str(world / "data" / f"{DAY}.csv"))
    found = assertions(end)
    assert {name: a["success"] for name, a in found.items()} == {
        "RowCount > 0": True,
        'ColumnValues "amount" >= 0': False,
    }
    assert found['ColumnValues "amount" >= 0']["column"] == "amount"
    assert found['ColumnValues "amount" >= 0']["contentType"] == "dqdl"
    measured = read["inputFacets"]["dataQualityMetrics"]
    assert measured["rowCount"] == 10 and measured["columnMetrics"]["amount"]["min"] == -5


def test_a_gate_run_names_the_table_it_wrote_and_how_many_rows(world: Path, http: Receiver) -> None:
    options = "--contributor S1 --table shop.orders --key order_id --order day --contributor-column shop"
    done = run("gate", str(world / "data" / f"{DAY}.csv"), "--rules", str(world / "rules.csv"),
               *options.split(), "--json", "--workspace", str(world))  # fmt: skip
    summary = json.loads(done.stdout)
    assert (summary["passed"], summary["quarantined"]) == (9, 1)
    start, end = two(http, summary["run_id"])
    assert end["eventType"] == "COMPLETE" and end["job"]["name"] == "gate.shop.orders"
    assert start["outputs"] == []  # the table is named once the run has it (its first run creates it)
    [written] = end["outputs"]
    assert written["outputFacets"]["outputStatistics"]["rowCount"] == 9  # the rows committed
    # the Iceberg table by its location, as the OpenLineage Spark integration names one
    assert written["namespace"] == "file" and written["name"].startswith(str(world / "warehouse"))
    assert written["facets"]["symlinks"]["identifiers"][0]["name"] == "shop.orders"
    [read] = end["inputs"]
    assert read["inputFacets"]["dataQualityMetrics"]["rowCount"] == 10
    assert {a["name"]: a["success"] for a in assertions(end).values()} == {"R01": False}


def test_profile_and_event_runs_send_theirs_too(world: Path, http: Receiver) -> None:
    run("profile", str(world / "data" / f"{DAY}.csv"), "--dataset", "shop.orders",
               "--load-date", DAY, "--json", "--workspace", str(world))  # fmt: skip
    _, end = two(http, last_run(world))
    assert end["eventType"] == "COMPLETE" and end["job"]["name"] == "profile.shop.orders"
    measured = end["inputs"][0]["inputFacets"]["dataQualityMetrics"]
    assert measured["rowCount"] == 10 and measured["columnMetrics"]["amount"]["nullCount"] == 0
    (world / "checks" / "orders.yaml").write_text(CONTRACT)
    payload = check_run(world)
    _, end = two(http, payload["run_id"])
    assert end["job"]["name"] == "event.shop.order_placed"
    found = {name: a["success"] for name, a in assertions(end).items()}
    assert found and False in found.values(), found  # amount in [0, 1e9]: not the refund


def test_a_run_that_fails_sends_fail_with_its_error(world: Path, receiver: Receiver) -> None:
    # a platform failure on the run's read (ASSAY_FAIL_ATTEMPTS: the retry tests' hook), in a
    # process of its own (the hook counts attempts per process)
    data = str(world / "data" / f"{DAY}.csv")
    command = [sys.executable, "-m", "assay", "dqdl", "run", str(world / "rules.dqdl"), "--data", data,
               "--dataset", "shop.orders", "--workspace", str(world)]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=120, check=False,
        env=cli_env(OPENLINEAGE_URL=receiver.url, ASSAY_FAIL_ATTEMPTS="1"),
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    failed = [e for e in receiver.events if e["eventType"] == "FAIL"]
    assert len(failed) == 1 and receiver.refused == []
    _, end = two(receiver, failed[0]["run"]["runId"])
    assert end["run"]["facets"]["errorMessage"]["message"].endswith(
        "read: attempt 1 failed on purpose (ASSAY_FAIL_ATTEMPTS=1)"
    )
    assert end["run"]["facets"]["errorMessage"]["programmingLanguage"] == "PYTHON"


def test_the_file_transport_writes_each_event_as_a_line(world: Path) -> None:
    (world / "assay.yaml").write_text(
        "lineage:\n  transport: {type: file, log_file_path: lineage/events.jsonl, append: true}\n"
    )
    first, second = dqdl_run(world), dqdl_run(world)
    lines = (world / "lineage" / "events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    from lineage._openlineage import problems

    assert [problems(e) for e in events] == [[], [], [], []]
    assert [(e["run"]["runId"], e["eventType"]) for e in events] == [
        (first["run_id"], "START"),
        (first["run_id"], "COMPLETE"),
        (second["run_id"], "START"),
        (second["run_id"], "COMPLETE"),
    ]


def test_a_receiver_that_is_down_fails_no_run(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    closed = Listener()  # a port nobody answers on once it is closed
    port = closed.port
    closed.socket.close()
    # the client's transport in its environment variables; no retry: it fails at once
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "http")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__RETRY", '{"total": 0}')
    done = completed("dqdl", "run", str(world / "rules.dqdl"), "--data", str(world / "data" / f"{DAY}.csv"),
                     "--dataset", "shop.orders", "--json", "-", "--workspace", str(world))  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = last_run(world)
    warned = [line for line in done.stderr.splitlines() if line.startswith("warning: OpenLineage")]
    assert len(warned) == 2 and "the START event was not delivered: ConnectionError" in warned[0]
    assert "the COMPLETE event was not delivered" in warned[1]
    kept = json.loads((world / "runs" / f"{run_id}.json").read_text())
    assert kept["rules"] and len(kept["lineage"]["warnings"]) == 2


def test_a_receiver_that_never_answers_holds_a_run_no_longer_than_its_timeout(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    silent = Listener()  # accepts connections and answers nothing
    monkeypatch.setenv("OPENLINEAGE_URL", f"http://127.0.0.1:{silent.port}")
    (world / "assay.yaml").write_text("lineage: {timeout: 0.5}\n")
    try:
        data = str(world / "data" / f"{DAY}.csv")
        done = completed("dqdl", "run", str(world / "rules.dqdl"), "--data", data,
                         "--dataset", "shop.orders", "--workspace", str(world))  # fmt: skip
    finally:
        silent.socket.close()  # the client's thread, still waiting, gives up
    assert done.returncode == 0, done.stderr
    assert "did not deliver the run's events within 0.5 s" in done.stderr


def test_nothing_configured_sends_nothing_and_imports_no_client(world: Path, receiver: Receiver) -> None:
    before = len(receiver.events)
    data = str(world / "data" / f"{DAY}.csv")
    script = (
        "import sys\n"
        "from assay.cli import main\n"
        f"sys.argv = ['assay', 'dqdl', 'run', {str(world / 'rules.dqdl')!r}, '--data', "
        f"{data!r}, '--dataset', 'shop.orders', '--workspace', {str(world)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('imported' if any(m.startswith('openlineage') for m in sys.modules) else 'not imported')\n"
    )
    env = {k: v for k, v in cli_env().items() if not k.startswith("OPENLINEAGE")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          cwd=world, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "not imported"
    assert len(receiver.events) == before
    assert not (world / "lineage").exists()


def test_a_workspace_can_switch_lineage_off(world: Path, http: Receiver) -> None:
    (world / "assay.yaml").write_text("lineage: {enabled: false}\n")
    payload = dqdl_run(world)
    assert http.of_run(payload["run_id"]) == []


def test_a_mistake_in_lineage_settings_names_the_file_and_field(world: Path, http: Receiver) -> None:
    (world / "assay.yaml").write_text("lineage: {timeout: soon}\n")
    done = completed("dqdl", "run", str(world / "rules.dqdl"), "--data", str(world / "data" / f"{DAY}.csv"),
                     "--dataset", "shop.orders", "--workspace", str(world))  # fmt: skip
    assert done.returncode == 2
    assert f"{world / 'assay.yaml'}: lineage.timeout:" in done.stderr
