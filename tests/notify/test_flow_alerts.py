"""Every flow's failures reach people the same way (issue 29): a gate run that quarantines rows, a
profile's hard alert and a ``by:`` failure each open an incident and send ONE notification,
routed by ``assay.yaml`` (and the dataset's check document), to a real local HTTP receiver; a
second run with the same failure updates the incident and sends nothing new."""

from __future__ import annotations

import json
import random
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from _invoke import assay
from _receivers import Receiver
from assay.platform.flows import profile
from assay.store import MetricStore
from gate.conftest import Bench

ROUTES = """channels:
  owners:  {{type: webhook, url: "{url}/owners"}}
  digests: {{type: webhook, url: "{url}/digests"}}
routes:
  - {{when: {{outcome: failed, severity: [critical, error]}}, to: [owners]}}
  - {{when: {{outcome: failed, severity: warning}}, to: [digests], digest: daily}}
"""
ACCOUNTS = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: silver.accounts
  source: {path: "../data/*.csv"}
  owners: {team: bureau-data, contact: ana@example.com}
monitor: {domain_columns: [account_status]}
"""


def deliver(root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = assay("notify", "deliver", "--workspace", str(root), "--json")
    done: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == 0, done
    return done


def bodies(receiver: Receiver, path: str = "/owners") -> list[dict[str, Any]]:
    return [r["body"] for r in receiver.requests if r["path"] == path]


@pytest.fixture
def bench(tmp_path: Path, receiver: Receiver) -> Any:
    with MetricStore.open(workspace=tmp_path / "ws") as store:
        found = Bench(tmp_path, store)
        found.workspace.mkdir(parents=True, exist_ok=True)
        (found.workspace / "assay.yaml").write_text(ROUTES.format(url=receiver.url))
        (found.workspace / "checks").mkdir()
        (found.workspace / "checks" / "silver.accounts.yaml").write_text(ACCOUNTS)
        yield found


def bad_january(bench: Bench, *, reorder: bool = False) -> Path:
    """Five good accounts and A6, whose limit does not add up (F01, critical: quarantined)."""
    rows = [f"B1,A{i},2025-01-31,ACTIVE,{i}000,{i}000,0" for i in range(1, 6)]
    rows.append("B1,A6,2025-01-31,ACTIVE,9000,6000,0")
    return bench.csv(*(reversed(rows) if reorder else rows))


def test_a_gate_run_that_quarantines_rows_notifies_the_owners_once_per_incident(
    bench: Bench, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    first = bench.gate(bad_january(bench))
    assert first.summary.quarantined == 1
    assert first.summary.to_dict()["incidents"]["opened"] == 1
    deliver(bench.workspace, capsys)
    [opened] = bodies(receiver)
    assert opened["kind"] == "incident_opened" and opened["dataset"] == "silver.accounts"
    assert opened["expectation"] == "gate:F01" and opened["group"] == {"contributor": "B1"}
    assert opened["severity"] == "critical" and opened["observed"] == 1
    assert "1 of 6 row(s) quarantined" in opened["message"] and "F01" in opened["message"]
    assert str(first.quarantine_file) in opened["message"]
    detail = opened["detail"]
    assert detail["flow"] == "gate" and detail["quarantine_file"] == str(first.quarantine_file)
    assert detail["counts"] == {"total": 6, "committed": 5, "quarantined": 1, "held": 0}
    assert detail["rules"] == [
        {"rule_id": "F01", "rows": 1, "rule": "credit_limit = product_limit + temporary_limit"}
    ]
    [incident] = bench.store.incidents()
    assert incident.owner == "bureau-data" and incident.dimension == "validity"

    # the same failure again (the month resent in another order): the incident counts it, nobody
    # is told again; and the very same file is a duplicate, judged by nobody
    second = bench.gate(bad_january(bench, reorder=True))
    assert second.summary.quarantined == 1 and second.summary.duplicate_of is None
    assert second.summary.to_dict()["incidents"] == {
        "opened": 0, "escalated": 0, "resolved": 0, "notifications": 0,
    }  # fmt: skip
    again = bench.gate(bad_january(bench))
    assert again.summary.duplicate_of is not None
    deliver(bench.workspace, capsys)
    assert len(bodies(receiver)) == 1
    [incident] = bench.store.incidents()
    assert incident.failures == 2 and incident.state == "open"


def test_a_refused_file_and_held_rows_open_their_own_incidents(
    bench: Bench, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    january = {f"A{i}": i * 1000 for i in range(1, 11)}
    bench.gate(bench.month("B1", "2025-01-31", january))
    truncated = bench.gate(bench.month("B1", "2025-02-28", {"A1": 1000, "A2": 2000}))  # A02 refuses it
    assert truncated.summary.passed == 0 and truncated.summary.quarantined == 2
    deliver(bench.workspace, capsys)
    [refused] = bodies(receiver)
    assert refused["expectation"] == "gate:A02" and "refused the whole file" in refused["message"]
    assert refused["detail"]["counts"]["quarantined"] == 2
    frozen = bench.gate(bench.month("B1", "2025-02-28", january, status={"A3": "FROZEN"}))
    assert frozen.summary.held == 1 and frozen.summary.decisions
    deliver(bench.workspace, capsys)
    _, held = bodies(receiver)
    assert held["expectation"] == "gate:held" and held["observed"] == 1
    assert (
        str(frozen.summary.held_file) in held["message"]
        and held["detail"]["decisions"] == frozen.summary.decisions
    )


def nulls(table: pa.Table, share: float, seed: int) -> pa.Table:
    r = random.Random(seed)
    fills = [None if r.random() < share else v for v in table.column("fill").to_pylist()]
    return table.set_column(1, "fill", pa.array(fills, pa.int64()))


def test_a_profile_with_a_hard_null_rate_alert_opens_an_incident_and_notifies(
    tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "assay.yaml").write_text(ROUTES.format(url=receiver.url))
    start = date(2026, 1, 5)
    with MetricStore.open(workspace=root) as store:
        for i in range(8):
            day = pa.table({"trade_id": [f"T{i}-{n}" for n in range(200)], "fill": list(range(200))})
            broken = nulls(day, 0.3, i) if i == 7 else day
            result = profile(
                broken, dataset="trades", load_date=start + timedelta(days=i), store=store, workspace=root
            )
        assert ("null_rate", "fill", "hard") in [(a.kind, a.column, a.severity) for a in result.alerts]
        [incident] = store.incidents()
        assert (incident.dimension, incident.expectation) == ("completeness", "profile:null_rate(fill)")
        run = store.run(store.runs("trades", limit=1)[0].id)
        assert (run.summary or {})["incidents"]["opened"] == 1
    deliver(root, capsys)
    [opened] = bodies(receiver)
    assert opened["kind"] == "incident_opened" and opened["expectation"] == "profile:null_rate(fill)"
    assert opened["detail"]["flow"] == "profile" and opened["severity"] == "error"


BY_REGION = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: shop.orders
  source: {path: "../data/*.csv"}
  owners: {team: shop-data}
profiles:
  - id: daily
    slice: {column: day}
    dimensions: [region]
    metrics: [row_count]
expectations:
  - {id: region-volume, metric: daily.row_count, by: [region], expect: "> 400", severity: error}
"""


def test_a_by_failure_names_its_groups_and_escalation_says_which_way_it_moved(
    tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ws"
    (root / "checks").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "assay.yaml").write_text(ROUTES.format(url=receiver.url))
    document = root / "checks" / "orders.yaml"
    document.write_text(BY_REGION)

    def check(day: int, eu: int) -> None:
        at = f"2026-11-{day:02d}"
        lines = [f"{at},US"] * 500 + [f"{at},EU"] * eu
        (root / "data" / f"{at}.csv").write_text("day,region\n" + "\n".join(lines) + "\n")
        code = assay("check", "run", str(document), "--at", at, "--workspace", str(root), "--json", "-")
        capsys.readouterr()
        assert code in (0, 1)

    check(1, 100)
    check(2, 300)  # still failing, 3 times the rows: told again, as a rise
    deliver(root, capsys)
    opened, escalated = bodies(receiver)
    assert opened["kind"] == "incident_opened" and opened["groups"] == [{"region": "EU"}]
    assert "region=EU" in opened["message"]
    assert escalated["kind"] == "incident_escalated" and escalated["groups"] == [{"region": "EU"}]
    assert "is worse" not in escalated["message"] and "rose from 100 to 300" in escalated["message"]


def test_a_dqdl_run_with_a_dataset_opens_an_incident_for_its_failing_rule(
    tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "assay.yaml").write_text(ROUTES.format(url=receiver.url))
    rules = tmp_path / "rules.dqdl"
    rules.write_text('Rules = [ RowCount > 5, IsUnique "id" ]')
    data = tmp_path / "orders.csv"
    data.write_text("id,email\n1,a@x\n1,b@x\n3,c@x\n")
    for now in ("2026-11-01T07:00:00Z", "2026-11-02T07:00:00Z"):  # the same failures, a day later
        code = assay(
            "dqdl", "run", str(rules), "--data", str(data), "--dataset", "shop.orders",
            "--now", now, "--workspace", str(root), "--json", "-",
        )  # fmt: skip
        capsys.readouterr()
        assert code in (0, 1)  # the rules failed: the exit code is --fail-on's
    with MetricStore.open(workspace=root) as store:
        found = sorted((i.expectation, i.dimension, i.failures) for i in store.incidents())
        runs = store.runs("shop.orders", limit=2)
        assert [(r.summary or {}).get("incidents", {}).get("opened") for r in runs] == [0, 2]
    assert found == [('IsUnique "id"', "uniqueness", 2), ("RowCount > 5", "volume", 2)]
    deliver(root, capsys)
    assert sorted(b["expectation"] for b in bodies(receiver)) == ['IsUnique "id"', "RowCount > 5"]
    assert {b["detail"]["flow"] for b in bodies(receiver)} == {"dqdl"}


def test_a_route_to_an_undeclared_channel_is_the_gate_runs_config_error(bench: Bench) -> None:
    """As for a check run: said before anything is read, the run recorded as a config error."""
    from assay.errors import ConfigError

    document = bench.workspace / "checks" / "silver.accounts.yaml"
    document.write_text(ACCOUNTS + "notify:\n  - {to: [pager]}\n")
    with pytest.raises(ConfigError, match=r"undeclared channel.*pager"):
        bench.gate(bad_january(bench))
    [run] = bench.store.runs("silver.accounts", limit=5)
    assert run.state == "config_error" and bench.store.incidents() == []


FLOW_ROUTES = """channels:
  gates:  {{type: webhook, url: "{url}/gates"}}
  owners: {{type: webhook, url: "{url}/owners"}}
routes:
  - {{when: {{flow: gate, outcome: failed}}, to: [gates]}}
  - {{when: {{flow: [check, profile], outcome: failed}}, to: [owners]}}
"""


def test_a_route_for_the_gate_flow_gets_the_gates_incident_and_not_a_check_runs(
    bench: Bench, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    """``when: {flow: gate}`` matches what the gate's run caused; a check run of another dataset
    of the same workspace, failing too, goes by the next route."""
    root = bench.workspace
    (root / "assay.yaml").write_text(FLOW_ROUTES.format(url=receiver.url))
    (root / "data").mkdir()
    document = root / "checks" / "orders.yaml"
    document.write_text(BY_REGION)
    at = "2026-11-01"
    lines = [f"{at},US"] * 500 + [f"{at},EU"] * 100
    (root / "data" / f"{at}.csv").write_text("day,region\n" + "\n".join(lines) + "\n")
    assert bench.gate(bad_january(bench)).summary.quarantined == 1
    code = assay("check", "run", str(document), "--at", at, "--workspace", str(root), "--json", "-")
    capsys.readouterr()
    assert code in (0, 1)
    deliver(root, capsys)
    assert [(b["kind"], b["expectation"]) for b in bodies(receiver, "/gates")] == [
        ("incident_opened", "gate:F01")
    ]
    assert [(b["kind"], b["expectation"]) for b in bodies(receiver, "/owners")] == [
        ("incident_opened", "region-volume")
    ]


def test_three_monthly_loads_quarantined_by_the_same_rule_are_one_notification(
    bench: Bench, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three gate runs of three months of one contributor, each quarantining one row by F01: one
    incident, told once; the later runs count as its failures."""
    for day in ("2025-01-31", "2025-02-28", "2025-03-31"):
        rows = [f"B1,A{i},{day},ACTIVE,{i}000,{i}000,0" for i in range(1, 11)]
        done = bench.gate(bench.csv(*rows, f"B1,X1,{day},ACTIVE,9000,6000,0"))
        assert done.summary.quarantined == 1 and done.summary.duplicate_of is None
    deliver(bench.workspace, capsys)
    assert [(b["kind"], b["expectation"], b["group"]) for b in bodies(receiver)] == [
        ("incident_opened", "gate:F01", {"contributor": "B1"})
    ]
    [incident] = bench.store.incidents()
    assert (incident.failures, incident.state) == (3, "open")


def test_a_check_runs_by_failure_names_every_failing_group(
    tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ws"
    (root / "checks").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "assay.yaml").write_text(ROUTES.format(url=receiver.url))
    document = root / "checks" / "orders.yaml"
    document.write_text(BY_REGION)
    lines = ["2026-11-01,US"] * 500 + ["2026-11-01,EU"] * 100 + ["2026-11-01,APAC"] * 50
    (root / "data" / "2026-11-01.csv").write_text("day,region\n" + "\n".join(lines) + "\n")
    assay("check", "run", str(document), "--at", "2026-11-01", "--workspace", str(root), "--json", "-")
    capsys.readouterr()
    deliver(root, capsys)
    [opened] = bodies(receiver)
    assert opened["groups"] == [{"region": "EU"}, {"region": "APAC"}]
    assert "region=EU" in opened["message"] and "2 groups failed: region=EU, region=APAC" in opened["message"]
