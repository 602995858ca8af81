"""One scenario through the platform's five flows (issue 29, "Done when"): a shop's orders arrive a
day at a time, and on the second day one order has a negative amount and a never-seen status.
``assay dqdl run --dataset``, ``assay profile``, ``assay gate``, ``assay check run`` on a check
document and ``assay check run`` on an event contract (the same orders as events) each judge the
second day, and for each flow the platform does the same things:

a. the run is a record in the store with its state and its timing (started, finished, the
   summary's ``seconds``);
b. the failing load opens an incident, and ``assay notify deliver`` sends ONE routed notification
   per incident to a real local HTTP receiver;
c. a person acknowledges the incident from the CLI (``--by``) and resolves it on the web (the API,
   in process): one audit row each, written by the platform's service;
d. a system error is retried: the first attempt of each retried step fails
   (``ASSAY_FAIL_ATTEMPTS=1``, :func:`assay.platform.runs.faults.fallible`), the run, given
   ``--retries 1 --backoff 0``, completes with both attempts in its summary;
e. a run killed (SIGKILL) at each write boundary the flow passes (``ASSAY_CRASH_AT``) and run again
   leaves one current load whose completed run has the clean run's outcomes, the incident and its
   notification once, and nothing running, pending or staged.

Each flow has a workspace of its own, its first day run once for the module (``before``); a
process of its own is started only where a kill or an environment hook needs one, and every other
run is in this process."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from _demo_workspace import cli_env
from _invoke import completed
from _receivers import Receiver
from _shop import CHECKS, CONTRACT, HEADER, RULES_GATE
from assay.lake.iceberg import Warehouse
from assay.platform.runs.faults import FAIL_ENV, POINTS
from assay.store import MetricStore
from assay.store.records import RunRecord
from assay.web.app import create_app
from assay.web.plane import Plane, Settings
from web.conftest import Api, users_of

FIRST, SECOND = "2026-11-01", "2026-11-02"
NOW = datetime.fromisoformat(f"{SECOND}T23:00:00+00:00")
ROUTES = """channels:
  owners: {{type: webhook, url: "{url}/{flow}"}}
routes:
  - {{when: {{outcome: failed}}, to: [owners]}}
"""
RULES_DQDL = 'Rules = [ ColumnValues "amount" >= 0 ]\n'
DRIVEN = ("after-start", "after-measure", "before-commit", "after-settle", "after-summary")
"""The write boundaries a flow on the driver passes (it stages no file: no ``after-publish``)."""
COMMITTED = ("after-commit", "after-settle", "after-publish", "after-summary")
"""Killed here, a run has passed its commit point: the next run finishes it (completed)."""


def orders(day: str) -> list[dict[str, Any]]:
    """Ten orders of ``day``; on the second day O3 is a refund entered as a sale: a negative
    amount and a status never seen before."""
    found = []
    for i in range(10):
        amount, status = 10 * (i + 1), "PAID" if i % 2 else "SHIPPED"
        if day == SECOND and i == 3:
            amount, status = -5, "LOST"
        found.append(
            {"shop": "S1", "order_id": f"O{day[-2:]}-{i}", "day": day, "status": status, "amount": amount}
        )
    return found


@dataclass(frozen=True)
class Flow:
    """One of the five flows: its dataset, the documents it reads, its command for a day, what a
    run's summary says it judged, and the write boundaries it passes."""

    name: str
    dataset: str
    documents: dict[str, str]
    command: Callable[[Path, str], list[str]]
    judged: Callable[[dict[str, Any]], Any]
    points: tuple[str, ...] = DRIVEN


def _check_outcomes(summary: dict[str, Any]) -> Any:
    return sorted((o["expectation"], json.dumps(o.get("group")), o["outcome"]) for o in summary["outcomes"])


def _csv(root: Path, day: str) -> str:
    return str(root / "data" / f"{day}.csv")


def _dqdl(root: Path, day: str) -> list[str]:
    options = f"--dataset shop.orders --now {day}T07:00:00Z --json -"
    return ["dqdl", "run", str(root / "rules.dqdl"), "--data", _csv(root, day), *options.split()]


def _profile(root: Path, day: str) -> list[str]:
    return ["profile", _csv(root, day), *f"--dataset shop.orders --load-date {day} --json".split()]


def _gate(root: Path, day: str) -> list[str]:
    options = (
        "--contributor S1 --table shop.orders --key order_id --order day --contributor-column shop --json"
    )
    return ["gate", _csv(root, day), "--rules", str(root / "rules.csv"), *options.split()]


def _check(root: Path, day: str, now: str) -> list[str]:
    return ["check", "run", str(root / "checks" / "orders.yaml"), *f"--at {day} --now {now} --json -".split()]


FLOWS = {
    flow.name: flow
    for flow in (
        Flow(
            "dqdl",
            "shop.orders",
            {"rules.dqdl": RULES_DQDL},
            _dqdl,
            lambda summary: sorted((r["rule"], r["outcome"]) for r in summary["rules"]),
        ),
        Flow(
            "profile",
            "shop.orders",
            {"checks/shop.orders.yaml": "domain_columns: [status]\n"},
            _profile,
            lambda summary: (
                summary["rows"],
                sorted((a["kind"], a["column"], a["severity"]) for a in summary["alerts"]),
            ),
        ),
        Flow(
            "gate",
            "shop.orders",
            {"rules.csv": RULES_GATE},
            _gate,
            lambda summary: (
                [summary[k] for k in ("total", "passed", "quarantined", "held")],
                sorted(summary["quarantined_by"]),
            ),
            POINTS,
        ),
        Flow(
            "check",
            "shop.orders",
            {"checks/orders.yaml": CHECKS},
            lambda root, day: _check(root, day, f"{day}T07:00:00Z"),
            _check_outcomes,
        ),
        Flow(
            "event",
            "shop.order_placed",
            {"checks/orders.yaml": CONTRACT},
            lambda root, day: _check(root, day, f"{day}T23:00:00Z"),
            _check_outcomes,
        ),
    )
}
KILLS = [(flow.name, point) for flow in FLOWS.values() for point in flow.points]


@dataclass
class World:
    """A flow's workspace: the orders of both days (a CSV and JSON lines a day), the flow's
    documents and an ``assay.yaml`` routing every failure to the receiver's ``/<flow>``."""

    flow: Flow
    root: Path

    def run(self, day: str) -> subprocess.CompletedProcess[str]:
        """The flow's command for ``day``, in this process."""
        done = completed(*self.arguments(day))
        assert done.returncode in (0, 1), done.stderr  # 1: --fail-on reached, the run completed
        return done

    def arguments(self, day: str, *extra: str) -> list[str]:
        return [*self.flow.command(self.root, day), *extra, "--workspace", str(self.root)]

    def process(self, day: str, *extra: str, **env: str) -> subprocess.CompletedProcess[str]:
        """The flow's command for ``day`` as a process of its own, with ``env``."""
        command = [sys.executable, "-m", "assay", *self.arguments(day, *extra)]
        return subprocess.run(
            command, capture_output=True, text=True, env=cli_env(**env), timeout=120, check=False
        )

    def copy(self, to: Path) -> World:
        shutil.copytree(self.root, to)
        return World(self.flow, to)

    def runs(self) -> list[RunRecord]:
        """Every run of the flow's dataset, with its summary, the oldest first."""
        with MetricStore.open(workspace=self.root) as store:
            found = [store.run(r.id) for r in store.runs(self.flow.dataset, limit=100)]
        return sorted((r for r in found if r is not None), key=lambda r: r.started_at)

    def summary(self, run: RunRecord) -> dict[str, Any]:
        """The run's summary as published (``runs/<id>.json``)."""
        found: dict[str, Any] = json.loads((self.root / "runs" / f"{run.id}.json").read_text())
        return found


def make_world(flow: Flow, root: Path, receiver: Receiver) -> World:
    (root / "data").mkdir(parents=True)
    (root / "events").mkdir()
    (root / "checks").mkdir()
    (root / "assay.yaml").write_text(ROUTES.format(url=receiver.url, flow=flow.name))
    for day in (FIRST, SECOND):
        rows = orders(day)
        lines = [HEADER, *(",".join(str(r[c]) for c in HEADER.split(",")) for r in rows)]
        (root / "data" / f"{day}.csv").write_text("\n".join(lines) + "\n")
        events = [{"event_id": r["order_id"], "at": f"{day}T10:00:00Z", **r} for r in rows]
        (root / "events" / f"{day}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    for name, text in flow.documents.items():
        (root / name).write_text(text)
    world = World(flow, root)
    world.run(FIRST)
    return world


@dataclass
class Failed:
    """A flow's world after its failing second day, and what the receiver got for it."""

    world: World
    run: RunRecord
    bodies: list[dict[str, Any]]


class Scenario:
    """The module's worlds, made on first use: each flow's first day (``before``) and, on a copy,
    its failing second day run in this process with its notifications delivered (``failed``)."""

    def __init__(self, tmp: pytest.TempPathFactory, receiver: Receiver) -> None:
        self.tmp = tmp
        self.receiver = receiver
        self._before: dict[str, World] = {}
        self._failed: dict[str, Failed] = {}

    def before(self, name: str) -> World:
        if name not in self._before:
            self._before[name] = make_world(
                FLOWS[name], self.tmp.mktemp(f"{name}-before") / "ws", self.receiver
            )
        return self._before[name]

    def failed(self, name: str) -> Failed:
        if name not in self._failed:
            world = self.before(name).copy(self.tmp.mktemp(f"{name}-failed") / "ws")
            world.run(SECOND)
            delivered = completed("notify", "deliver", "--workspace", str(world.root), "--json")
            assert delivered.returncode == 0, delivered.stderr
            bodies = [r["body"] for r in self.receiver.requests if r["path"] == f"/{name}"]
            self._failed[name] = Failed(world, world.runs()[-1], bodies)
        return self._failed[name]

    def clean(self, name: str) -> Any:
        """What the clean run of the second day judged."""
        failed = self.failed(name)
        return failed.world.flow.judged(failed.world.summary(failed.run))


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    receiver = Receiver()
    yield Scenario(tmp_path_factory, receiver)
    receiver.stop()


# --- a. the run record ------------------------------------------------------------------------------


@pytest.mark.parametrize("flow", FLOWS)
def test_a_run_is_recorded_with_its_state_and_timing(flow: str, scenario: Scenario) -> None:
    failed = scenario.failed(flow)
    run = failed.run
    assert (run.kind, run.dataset, run.state) == (
        "check" if flow == "event" else flow,
        FLOWS[flow].dataset,
        "completed",
    )
    assert run.finished_at is not None and run.started_at <= run.finished_at
    took = (run.finished_at - run.started_at).total_seconds()
    seconds = (run.summary or {}).get("seconds")
    assert isinstance(seconds, dict) and "measure" in seconds, run.summary
    assert all(0 <= s <= took for s in seconds.values()), (seconds, took)
    assert failed.world.summary(run)["seconds"] == seconds  # runs/<id>.json says the same


# --- b. the incident and its one notification ---------------------------------------------------------


@pytest.mark.parametrize("flow", FLOWS)
def test_a_failing_load_opens_an_incident_told_once_to_a_real_receiver(flow: str, scenario: Scenario) -> None:
    failed = scenario.failed(flow)
    with MetricStore.open(workspace=failed.world.root) as store:
        incidents = [i for i in store.incidents() if i.dataset == FLOWS[flow].dataset]
        outbox = store.outbox()
    assert len(incidents) == 1, incidents  # the scenario breaks one thing a flow
    told: dict[str, list[str]] = defaultdict(list)
    for body in failed.bodies:
        told[body["incident_id"]].append(body["kind"])
    assert told == {incidents[0].id: ["incident_opened"]}
    assert [(row.status, row.run_id) for row in outbox] == [("sent", failed.run.id)]
    again = completed("notify", "deliver", "--workspace", str(failed.world.root), "--json")
    assert json.loads(again.stdout)["sent"] == 0  # delivered already: never twice


# --- c. a person's actions, from the CLI and from the web, audited ----------------------------------------


@pytest.mark.parametrize("flow", FLOWS)
def test_acking_from_the_cli_and_resolving_on_the_web_write_one_audit_row_each(
    flow: str, scenario: Scenario
) -> None:
    root = scenario.failed(flow).world.root
    with MetricStore.open(workspace=root) as store:
        [incident] = [i for i in store.incidents() if i.state == "open"]
    acked = completed("incidents", "ack", incident.id, "--by", "ana", "--workspace", str(root))
    assert acked.returncode == 0, acked.stderr
    plane = Plane(Settings(root, now=NOW))
    try:
        with TestClient(create_app(plane=plane)) as client:
            api = Api(client, users_of(plane)["author"])
            answer = api.post(f"/incidents/{incident.id}/resolve", {"cause": "real_issue"})
            assert answer.status_code == 200, answer.text
    finally:
        plane.close()
    with MetricStore.open(workspace=root) as store:
        rows, _ = store.audit_trail(limit=1000)
        resolved = [i for i in store.incidents() if i.id == incident.id]
    trail = sorted((r.action, r.by, r.dataset) for r in rows if r.target == incident.id)
    dataset = FLOWS[flow].dataset
    assert trail == [("incident.ack", "ana", dataset), ("incident.resolve", "author", dataset)]
    assert [i.state for i in resolved] == ["resolved"]


# --- d. a system error retried -------------------------------------------------------------------------


@pytest.mark.parametrize("flow", FLOWS)
def test_a_system_error_is_retried_and_its_attempts_recorded(
    flow: str, scenario: Scenario, tmp_path: Path
) -> None:
    world = scenario.before(flow).copy(tmp_path / "ws")
    done = world.process(SECOND, "--retries", "1", "--backoff", "0", **{FAIL_ENV: "1"})
    assert done.returncode in (0, 1), done.stderr
    run = world.runs()[-1]
    assert run.state == "completed", run.error
    summary = world.summary(run)
    tries: dict[str, list[tuple[int, bool]]] = defaultdict(list)
    for attempt in summary.get("attempts") or []:
        error = attempt["error"]
        assert error is None or FAIL_ENV in error, error  # failed by the hook, and only by it
        tries[attempt["profile"]].append((attempt["attempt"], error is None))
    assert tries, summary.get("attempts")  # the flow's read or measure went through Driver.attempt
    assert all(found == [(1, False), (2, True)] for found in tries.values()), dict(tries)
    assert world.flow.judged(summary) == scenario.clean(flow)


# --- e. killed at each write boundary, and run again -------------------------------------------------------


@pytest.mark.parametrize(("flow", "point"), KILLS)
def test_a_run_killed_at_each_write_boundary_and_run_again_lands_once(
    flow: str, point: str, scenario: Scenario, tmp_path: Path
) -> None:
    clean = scenario.failed(flow)
    world = scenario.before(flow).copy(tmp_path / "ws")
    history = {r.id for r in world.runs()}
    killed = world.process(SECOND, ASSAY_CRASH_AT=point)
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stderr[-2000:])
    world.run(SECOND)

    runs = [r for r in world.runs() if r.id not in history]
    with MetricStore.open(workspace=world.root) as store:
        loads = {r.id: store.run_loads(r.id) for r in runs}
        found = [(i.expectation, i.state, i.id) for i in store.incidents()]
        outbox = [(row.kind, row.incident_id) for row in store.outbox()]
    # the killed run is recorded: undone before its commit, finished after it; the run again completed
    first = "completed" if point in COMMITTED else "system_error"
    assert [r.state for r in runs] == [first, "completed"], [(r.state, r.error) for r in runs]
    assert not [s for found in loads.values() for s in found.values() if s == "pending"]
    owners = [r for r in runs if "current" in loads[r.id].values()]
    assert len(owners) == 1, loads  # one current load of the day: nothing counted twice
    assert world.flow.judged(world.summary(owners[0])) == scenario.clean(flow)
    staging = world.root / "staging"
    assert not staging.exists() or not any(staging.iterdir())
    # the failure is one incident, told once (the run again found it open: no second notice)
    [(expectation, state, incident)] = found
    assert (expectation, state) == (clean.bodies[0]["expectation"], "open")
    assert outbox == [("incident_opened", incident)]
    if flow == "gate":
        assert committed(world.root) == committed(clean.world.root)


def committed(root: Path) -> list[str]:
    """The second day's orders in the gate's table: each committed once."""
    with Warehouse.open(root) as warehouse:
        rows = warehouse.read("shop.orders", {"shop": "S1", "day": date.fromisoformat(SECOND)})
    return sorted(rows.column("order_id").to_pylist())
