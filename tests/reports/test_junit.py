"""``--junit FILE`` on ``dqdl run``, ``check run`` and ``gate`` (issue 32, "CI reports"): one
JUnit file per command, a test case per rule or expectation, read back and compared with the
``--json`` of the same run; valid for the CI viewers' schema (tests/reports/_junit_schema.py)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from _demo_workspace import cli_env
from _invoke import completed
from assay.demo.events import feed
from assay.platform.reports.junit import Case, Result, Suite, to_xml
from assay.platform.runs.faults import REPORT_POINTS
from reports._junit_schema import outcome, valid

ORDERS = 'id,name,amount,email\n1,a<b,5,x@y.org\n2,c&d,7,\n3,"say ""hi""",-1,z@y.org\n'

RULESET = """Rules = [
    RowCount > 0,
    ColumnValues "name" in ["a<b", "c&d", "it's"],
    ColumnValues "amount" > 0,
    ColumnValues "email" != EMPTY,
    ReferentialIntegrity "id" "ref.id" = 1.0
]
"""

DOCUMENT = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: shop.orders, source: {path: ../orders.csv}}
profiles:
  - id: daily
    metrics:
      - row_count
      - null_rate: [email, ghost]
      - mean: [amount]
expectations:
  - {id: has-rows, metric: daily.row_count, expect: "> 0"}
  - {id: small-mean, metric: daily.mean(amount), expect: "< 2", severity: warning}
  - {id: amount-mean, metric: daily.mean(amount), expect: "< 1", severity: critical}
  - {id: growing, metric: daily.row_count, expect: "> 0.5 * avg(last(3))", min_history: 3}
  - {id: ghost-nulls, metric: daily.null_rate(ghost), expect: "= 0"}
  - {id: names, rule: 'ColumnValues "name" in ["a<b", "c&d"]', profile: daily}
  - {id: big-mean, metric: daily.mean(amount), expect: "> 100", mode: advisory}
"""

CONTROL = '''rule_id,contributor_type,category,severity,rule,description
C01,all,completeness,critical,"IsComplete ""account_id""",Every record names its account
F01,all,financial,critical,credit_limit >= 0 AND credit_limit < 100000,"A limit is >= 0 & < 100,000"
T01,all,trend,critical,credit_limit = prev_credit_limit OR account_status = 'ADMIN_CHANGE',Limit stability
D02,all,domain,warning,"ColumnValues ""account_status"" in [""ACTIVE"",""ADMIN_CHANGE""]",Known statuses
A02,all,aggregate,critical,"RowCount >= 0.8 * last()",The extract is not truncated
'''
HEADER = "contributor_id,account_id,statement_date,account_status,credit_limit"


@pytest.fixture
def world(tmp_path: Path) -> Path:
    (tmp_path / "orders.csv").write_text(ORDERS)
    (tmp_path / "orders.dqdl").write_text(RULESET)
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "orders.yaml").write_text(DOCUMENT)
    return tmp_path


def cases(root: Any) -> dict[str, tuple[str, Any]]:
    return {case.attrib["name"]: outcome(case) for case in root.iter("testcase")}


def test_dqdl_run_writes_a_case_per_rule_as_its_json_says(world: Path) -> None:
    out, report = world / "out.json", world / "report.xml"
    done = completed(
        "dqdl", "run", str(world / "orders.dqdl"), "--data", str(world / "orders.csv"),
        "--dataset", "shop.orders", "--workspace", str(world / "ws"), "--json", str(out),
        "--junit", str(report), "--fail-on", "failed",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # written whatever the exit code
    payload = json.loads(out.read_text())
    root = valid(report)
    [suite] = root.iter("testsuite")
    assert suite.attrib["name"] == "shop.orders"
    properties = {p.attrib["name"]: p.attrib["value"] for p in suite.iter("property")}
    assert properties["data"] == str(world / "orders.csv") and len(properties["run_id"]) == 36
    found = cases(root)
    # every rule once, in the JSON's words: rule text with <, &, and quotes survives as written
    assert list(found) == [r["rule"] for r in payload["rules"]]
    words = {"Passed": "passed", "Failed": "failure", "Error": "error"}
    assert {name: tag for name, (tag, _) in found.items()} == {
        r["rule"]: words[r["outcome"]] for r in payload["rules"]
    }
    assert sorted(tag for tag, _ in found.values()) == ["error", "failure", "failure", "failure", "passed"]
    for rule in payload["rules"]:
        _, element = found[rule["rule"]]
        if element is not None:
            assert element.attrib["message"] == rule["message"]
    _, amount = found['ColumnValues "amount" > 0']
    assert "Column.amount.ColumnValues.Compliance = 0.666" in amount.text
    assert "expected: low 1.0" in amount.text  # observed against expected


def test_check_run_writes_a_case_per_expectation_with_severity_and_reasons(world: Path) -> None:
    out, report = world / "out.json", world / "report.xml"
    done = completed(
        "check", "run", str(world / "checks" / "orders.yaml"), "--at", "2026-11-30",
        "--now", "2026-12-01T03:00:00Z", "--workspace", str(world), "--json", str(out),
        "--junit", str(report), "--fail-on", "critical",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    payload = json.loads(out.read_text())
    root = valid(report)
    [suite] = root.iter("testsuite")
    properties = {p.attrib["name"]: p.attrib["value"] for p in suite.iter("property")}
    assert (suite.attrib["name"], properties["run_id"]) == ("shop.orders", payload["run_id"])
    found = cases(root)
    assert list(found) == [o["expectation"] for o in payload["outcomes"]]
    words = {"passed": "passed", "failed": "failure", "config_error": "error", "skipped": "skipped"}
    assert {n: tag for n, (tag, _) in found.items()} == {
        o["expectation"]: words[o["outcome"]] for o in payload["outcomes"]
    }
    summary = payload["summary"]
    advisory = summary["advisory"]
    assert int(suite.attrib["failures"]) == summary["failed"] + advisory["failed"] == 4
    assert int(suite.attrib["errors"]) == summary["config_error"] == 1
    assert int(suite.attrib["skipped"]) == summary["skipped"] == 1
    assert found["has-rows"][0] == "passed"
    # a warning's failure is a failure, typed: the exit code (--fail-on) decides what stops CI
    assert (found["small-mean"][1].attrib["type"], found["amount-mean"][1].attrib["type"]) == (
        "warning",
        "critical",
    )
    assert found["big-mean"][1].attrib["type"] == "advisory"
    assert found["amount-mean"][1].attrib["message"].startswith("mean(amount) = 3.667, expected < 1")
    assert "expected: high 1.0" in found["amount-mean"][1].text
    skipped = found["growing"][1]
    assert skipped.attrib["type"] == "warming_up" and "3 needed" in skipped.attrib["message"]
    assert found["ghost-nulls"][1].attrib["type"] == "config_error"
    assert "ghost" in found["ghost-nulls"][1].attrib["message"]
    assert found["names"][1].attrib["message"] == next(
        o["message"] for o in payload["outcomes"] if o["expectation"] == "names"
    )


def test_gate_writes_a_case_per_rule_skips_failures_and_its_own_quarantines(tmp_path: Path) -> None:
    (tmp_path / "rules.csv").write_text(CONTROL)
    ws = tmp_path / "ws"

    def gate(day: str, *rows: str) -> tuple[int, dict[str, Any], Any]:
        batch, report = tmp_path / f"{day}.csv", tmp_path / f"{day}.xml"
        batch.write_text("\n".join([HEADER, *(f"B1,{r}" if r[0] == "A" else r for r in rows)]) + "\n")
        done = completed(
            "gate", str(batch), "--rules", str(tmp_path / "rules.csv"), "--contributor", "B1",
            "--table", "silver.accounts", "--key", "account_id", "--order", "statement_date",
            "--contributor-column", "contributor_id", "--workspace", str(ws), "--json",
            "--junit", str(report), "--fail-on", "critical",
        )  # fmt: skip
        return done.returncode, json.loads(done.stdout), valid(report)

    accounts = [f"A{i},{{day}},ACTIVE,{1000 * i}" for i in range(1, 6)]
    code, payload, root = gate("2026-01-31", *(a.format(day="2026-01-31") for a in accounts))
    assert code == 0
    found = cases(root)
    rules = {f"{rule_id}: {stats['dqdl']}": rule_id for rule_id, stats in payload["rules"].items()}
    assert set(found) == set(rules)
    by_id = {rules[name]: result for name, result in found.items()}
    # the first month: no account has a previous record, so the trend rule judged no row
    assert by_id["T01"][0] == "skipped" and "5 row(s) skipped" in by_id["T01"][1].attrib["message"]
    assert {i for i, (tag, _) in by_id.items() if tag == "passed"} == {"C01", "F01", "D02", "A02"}

    day = "2026-02-28"
    rows = [
        f"A1,{day},ACTIVE,1500",  # the limit moved: T01
        f"A2,{day},WEIRD,2000",  # an unknown status: D02, a warning
        f"A3,{day},ACTIVE,-5",  # F01 (and T01)
        f"A4,{day},ACTIVE,4000",
        f"A5,{day},ACTIVE,5000",
        "B1,A6,not a date,ACTIVE,1,extra",  # a malformed line: the gate's own parse_error
    ]
    code, payload, root = gate(day, *rows)
    assert code == 1
    found = cases(root)
    rules = {f"{rule_id}: {stats['dqdl']}": rule_id for rule_id, stats in payload["rules"].items()}
    assert set(found) == set(rules) | {"parse_error"}
    by_id = {rules.get(name, name): result for name, result in found.items()}
    assert by_id["F01"][1].attrib == {"message": "1 of 5 row(s) failed (quarantined)", "type": "critical"}
    assert by_id["T01"][1].attrib["message"] == "2 of 5 row(s) failed (quarantined)"
    assert by_id["D02"][1].attrib == {
        "message": "1 of 5 row(s) failed (committed and warned)",
        "type": "warning",
    }
    assert by_id["parse_error"][0] == "failure"
    assert by_id["parse_error"][1].attrib["message"].startswith("1 row(s) quarantined: line 7")
    assert (by_id["C01"][0], by_id["A02"][0]) == ("passed", "passed")
    [suite] = root.iter("testsuite")
    properties = {p.attrib["name"]: p.attrib["value"] for p in suite.iter("property")}
    assert (properties["run_id"], properties["quarantined"]) == (
        payload["run_id"],
        str(payload["quarantined"]),
    )

    # a truncated month fails the dataset-level rule, the month named
    code, payload, root = gate("2026-03-31", "A4,2026-03-31,ACTIVE,4000")
    failed = {n.split(":")[0]: e for n, (tag, e) in cases(root).items() if tag == "failure"}
    assert list(failed) == ["A02"] and code == 1
    assert failed["A02"].attrib["message"].startswith("2026-03-31: ")
    assert (
        failed["A02"]
        .attrib["message"]
        .endswith(next(iter(payload["groups"]))["dataset_rules"][-1]["message"])
    )


def test_a_command_stopped_by_a_mistake_writes_one_error_in_place_of_an_earlier_file(world: Path) -> None:
    report = world / "report.xml"
    report.write_text(
        "<testsuites><testsuite name='yesterday' tests='0' failures='0' errors='0'/></testsuites>"
    )
    broken = world / "checks" / "orders.yaml"
    broken.write_text(DOCUMENT.replace('expect: "> 0"', 'expect: "> "').replace("profiles:", "profils:"))
    done = completed("check", "run", str(broken), "--workspace", str(world), "--junit", str(report))
    assert done.returncode == 2
    root = valid(report)
    [(name, (tag, element))] = cases(root).items()
    assert (name, tag, element.attrib["type"]) == ("check run", "error", "config_error")
    # every mistake the command printed, each with its place
    assert element.attrib["message"].splitlines() == done.stderr.splitlines()[:-1]
    assert all(line.startswith(f"{broken}:") for line in element.attrib["message"].splitlines())
    assert [s.attrib["name"] for s in root.iter("testsuite")] == [str(broken)]

    (world / "bad.dqdl").write_text("Rules = [ RowCount > ]\n")
    done = completed(
        "dqdl", "run", str(world / "bad.dqdl"), "--data", str(world / "orders.csv"), "--junit", str(report)
    )
    assert done.returncode == 2
    [(name, (tag, element))] = cases(valid(report)).items()
    assert (name, tag, element.attrib["type"]) == ("dqdl run", "error", "config_error")
    assert f"error: {element.attrib['message']}" in done.stderr

    done = completed(
        "gate", str(world / "orders.csv"), "--rules", str(world / "none.csv"), "--contributor", "B1",
        "--workspace", str(world / "ws"), "--junit", str(report),
    )  # fmt: skip
    assert done.returncode == 2
    [(name, (tag, element))] = cases(valid(report)).items()
    assert (name, tag) == ("gate", "error") and f"error: {element.attrib['message']}" in done.stderr


def test_a_run_in_system_error_writes_its_errors_and_exits_3(world: Path) -> None:
    # a memory limit DuckDB cannot measure under: the platform's failure, not the data's
    (world / "assay.yaml").write_text("engine:\n  memory_limit: 1MB\n  max_temp_directory_size: 1KB\n")
    out, report = world / "out.json", world / "report.xml"
    done = completed(
        "check", "run", str(world / "checks" / "orders.yaml"), "--workspace", str(world),
        "--only", "has-rows", "--json", str(out), "--junit", str(report),
    )  # fmt: skip
    assert done.returncode == 3
    assert json.loads(out.read_text())["state"] == "system_error"
    [(name, (tag, element))] = cases(valid(report)).items()
    assert (name, tag, element.attrib["type"]) == ("has-rows", "error", "system_error")
    assert "Out of Memory" in element.attrib["message"]


EVENT = """apiVersion: assay/v1
kind: EventContract
event:
  name: {name}
  source: {{path: "../events/*.jsonl"}}
  key: event_id
  event_time: event_ts
  ingest_time: ingested_at
  payload: payload
  producer: {{team: trading-core}}
consumer: {{team: surveillance}}
fields:
  venue: {{non_empty: {{min_rate: 0.7}}}}
  amount: {{present: true}}
"""


def test_event_contracts_on_two_events_are_two_suites(tmp_path: Path) -> None:
    feed(tmp_path / "events", start=date(2026, 11, 10), days=1, per_hour=10)
    (tmp_path / "checks").mkdir()
    files = [tmp_path / "checks" / f"{name}.yaml" for name in ("trades.v1", "orders.v1")]
    for path in files:
        path.write_text(EVENT.format(name=path.stem))
    out, report = tmp_path / "out.json", tmp_path / "report.xml"
    done = completed(
        "check", "run", *map(str, files), "--at", "2026-11-10T05:00:00Z", "--now", "2026-11-10T06:05:00Z",
        "--workspace", str(tmp_path), "--json", str(out), "--junit", str(report),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    runs = json.loads(out.read_text())["events"]
    suites = list(valid(report).iter("testsuite"))
    assert [s.attrib["name"] for s in suites] == [r["dataset"] for r in runs] and len(runs) == 2
    for suite, run in zip(suites, runs, strict=True):
        assert [c.attrib["name"] for c in suite.iter("testcase")] == [
            o["expectation"] for o in run["outcomes"]
        ]
        assert {c.attrib["classname"] for c in suite.iter("testcase")} == {run["dataset"]}


def test_a_command_killed_while_writing_leaves_the_earlier_file_whole(world: Path) -> None:
    report = world / "report.xml"
    yesterday = datetime(2026, 12, 4, 6, tzinfo=UTC)
    earlier = to_xml([Suite("yesterday", (Case("yesterday", "RowCount > 0"),), yesterday, 0.5)])
    report.write_text(earlier)
    command = [
        sys.executable, "-m", "assay", "dqdl", "run", str(world / "orders.dqdl"),
        "--data", str(world / "orders.csv"), "--junit", str(report),
    ]  # fmt: skip
    # SIGKILL once the new file is written beside the report, before it replaces it
    [point] = REPORT_POINTS
    killed = subprocess.run(
        command, env=cli_env(ASSAY_CRASH_AT=point), capture_output=True, text=True, timeout=120
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert report.read_text() == earlier  # never half a file: the earlier one, whole
    assert [s.attrib["name"] for s in valid(report).iter("testsuite")] == ["yesterday"]
    assert completed(*command[3:]).returncode == 0  # the next run replaces it
    assert len(list(valid(report).iter("testcase"))) == len(RULESET.splitlines()) - 2


def test_text_xml_cannot_hold_is_shown_and_the_rest_survives() -> None:
    text = "a < b & \"c\" 'd' > e\x01\x1f\ttab\nline"
    case = Case("shop.orders", text, Result.FAILURE, text, "warning", text)
    root = ET.fromstring(to_xml([Suite("shop.orders", (case,))]).encode())
    shown = "a < b & \"c\" 'd' > e\\x01\\x1f\ttab\nline"
    [testcase] = root.iter("testcase")
    failure = testcase.find("failure")
    assert failure is not None
    assert (testcase.attrib["name"], failure.attrib["message"], failure.text) == (shown, shown, shown)
