"""Killed assay processes lose nothing acknowledged and leave no day unchecked (issue 28, items
6-8): a ``run --due`` pass, a check run and ``assay recover`` are real subprocesses killed with
SIGKILL at named boundaries (:mod:`assay.platform.runs.faults`), on SQLite and on PostgreSQL; the
processes after them run in this process. docs/operations.md ("When a process is killed") states
what each test shows.

The world: one scheduled document on a small CSV per day (``0 6 * * *``, checking the tick's own
date) and an assay.yaml that routes system errors to a real local HTTP receiver."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from _demo_workspace import cli_env
from _invoke import completed
from _receivers import Receiver
from assay.store import MetricStore

DOCUMENT = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: shop.orders
  source: {path: "../data/*.csv"}
profiles:
  - id: daily
    schedule: "0 6 * * *"
    slice: {column: day}
    metrics: [row_count]
expectations:
  - {id: volume, metric: daily.row_count, expect: "> 5", severity: error}
"""
DAY = "2026-11-29"
TICK = f"{DAY}T06:00:00+00:00"
BACKENDS = ("sqlite", "postgres")


class World:
    """A workspace with the scheduled document, its data and its assay.yaml, on a store."""

    def __init__(self, root: Path, store: str | None, receiver: Receiver) -> None:
        self.root = root
        self.store = store
        (root / "checks").mkdir(parents=True)
        (root / "data").mkdir()
        (root / "checks" / "orders.yaml").write_text(DOCUMENT)
        rows = "\n".join(f"{DAY},{i}" for i in range(10))
        (root / "data" / f"{DAY}.csv").write_text(f"day,id\n{rows}\n")
        (root / "assay.yaml").write_text(
            f'channels:\n  platform: {{type: webhook, url: "{receiver.url}/platform"}}\n'
            "routes:\n  - {when: {outcome: system_error}, to: [platform]}\n"
        )

    def options(self) -> list[str]:
        return ["--workspace", str(self.root), *(["--store", self.store] if self.store else [])]

    def killed(self, *args: str, at: str) -> subprocess.CompletedProcess[str]:
        """``assay ARGS...`` killed (SIGKILL) when it reaches the fault point ``at``."""
        done = subprocess.run(
            [sys.executable, "-m", "assay", *args, *self.options()],
            capture_output=True, text=True, env=cli_env(ASSAY_CRASH_AT=at), timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == -signal.SIGKILL, done.stderr
        return done

    def here(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``assay ARGS...`` not killed: in this process."""
        return completed(*args, *self.options())

    def due(self, now: str) -> dict[str, Any]:
        done = self.here("run", "--due", "--now", now, "--json")
        assert done.returncode in (0, 1), done.stderr
        printed: dict[str, Any] = json.loads(done.stdout)
        return printed

    def open(self) -> MetricStore:
        return MetricStore.open(self.store, workspace=self.root)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.stop()


@pytest.fixture(params=BACKENDS)
def make_world(request: pytest.FixtureRequest, tmp_path: Path, receiver: Receiver) -> Callable[[], World]:
    def make() -> World:
        store = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
        return World(tmp_path / "ws", store, receiver)

    return make


# --- a scheduler pass killed --------------------------------------------------------------------

PASS_POINTS = ("after-claim", "after-start", "after-measure", "after-settle")
"""A tick claimed (its run not started), a run started, measured, committed: the tick not finished."""


def _notices(store: MetricStore) -> list[tuple[str, str, str | None]]:
    return [(row.kind, row.channel, row.payload.get("run_id")) for row in store.outbox()]


@pytest.mark.parametrize("point", PASS_POINTS)
def test_a_pass_killed_at_a_boundary_leaves_its_day_to_the_next_pass(
    point: str, make_world: Callable[[], World]
) -> None:
    world = make_world()
    world.killed("run", "--due", "--now", f"{DAY}T07:00:00Z", at=point)
    with world.open() as store:
        [killed] = store.ticks()
    assert killed.state == "claimed" and killed.run_id is not None  # the tick names its run from its claim
    again = world.due(f"{DAY}T07:30:00Z")
    with world.open() as store:
        [tick] = store.ticks()
        runs = {r.id: r for r in store.runs("shop.orders", kind="check")}
        notices = _notices(store)
    assert (tick.state, tick.logical_date.isoformat(), tick.owner) == ("completed", DAY, None)
    assert runs[tick.run_id].state == "completed"  # the tick names the run that checked its day
    [started] = again["runs"]
    assert (started["tick"], started["state"], started["run_id"]) == (TICK, "completed", tick.run_id)
    assert started["orphan_of"]  # the dead pass it took the tick from
    if point == "after-settle":  # its run committed: that run is the day's, the tick is finished
        assert tick.run_id == killed.run_id and list(runs) == [killed.run_id]
        assert again["recovered"] == [] and notices == []
    elif point == "after-claim":  # no run started: the day is checked by a run of the next pass
        assert list(runs) == [tick.run_id] and again["recovered"] == [] and notices == []
    else:  # its run died before its commit: a system error, told to its route; the day run again
        assert runs[killed.run_id].state == "system_error" and tick.run_id != killed.run_id
        assert [r["run_id"] for r in again["recovered"]] == [killed.run_id]
        assert notices == [("system_error", "platform", killed.run_id)]
        # what the killed run measured is judged, not measured again
        resumed = (runs[tick.run_id].summary or {}).get("resumed_from")
        assert resumed == (killed.run_id if point == "after-measure" else None)
    # the next pass: nothing is due, nothing runs again
    assert world.due(f"{DAY}T08:00:00Z")["runs"] == []


@pytest.mark.parametrize("point", ["after-claim", "after-measure"])
def test_assay_recover_runs_a_killed_pass_s_tick_again(point: str, make_world: Callable[[], World]) -> None:
    world = make_world()
    world.killed("run", "--due", "--now", f"{DAY}T07:00:00Z", at=point)
    done = world.here("recover", "--json")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    [ticked] = printed["ticks"]
    assert (ticked["at"], ticked["state"]) == (DAY, "completed")
    with world.open() as store:
        [tick] = store.ticks()
        runs = {r.id: r.state for r in store.runs("shop.orders", kind="check")}
    assert (tick.state, tick.run_id) == ("completed", ticked["run_id"]) and runs[tick.run_id] == "completed"
    assert len(printed["recovered"]) == (1 if point == "after-measure" else 0)
    assert world.due(f"{DAY}T08:00:00Z")["runs"] == []  # the day is done: the next pass runs nothing
    assert world.here("recover").stdout == "nothing to recover\n"


def test_two_passes_at_once_take_a_dead_pass_s_tick_once(make_world: Callable[[], World]) -> None:
    world = make_world()
    world.killed("run", "--due", "--now", f"{DAY}T07:00:00Z", at="after-claim")
    command = [sys.executable, "-m", "assay", "run", "--due", "--now", f"{DAY}T07:30:00Z", "--json"]
    passes = [
        subprocess.Popen(
            [*command, *world.options()],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
        )
        for _ in range(2)
    ]
    ran = []
    for process in passes:
        out, errors = process.communicate(timeout=120)
        assert process.returncode == 0, errors
        ran += json.loads(out)["runs"]
    assert [r["state"] for r in ran] == ["completed"]  # one of the two took it; the other saw it taken
    with world.open() as store:
        assert len(store.runs("shop.orders", kind="check")) == 1


def test_a_killed_pass_s_tick_whose_schedule_is_gone_is_finished_as_a_config_error(
    tmp_path: Path, receiver: Receiver
) -> None:
    world = World(tmp_path / "ws", None, receiver)
    world.killed("run", "--due", "--now", f"{DAY}T07:00:00Z", at="after-claim")
    (world.root / "checks" / "orders.yaml").unlink()
    done = world.here("run", "--due", "--now", f"{DAY}T07:30:00Z")
    assert done.returncode == 1 and "checks/orders.yaml has no schedule 'daily'" in done.stderr
    with world.open() as store:
        [tick] = store.ticks()
    assert (tick.state, tick.owner) == ("config_error", None) and "not run again" in (tick.message or "")


def test_a_tick_held_on_another_host_is_left_alone(make_world: Callable[[], World]) -> None:
    world = make_world()
    tick = datetime.fromisoformat(TICK)
    with world.open() as store:  # a pass on another machine holds the tick: nothing here can tell
        store.claim_tick(
            "checks/orders.yaml", "daily", tick, tick.date(), "shop.orders", owner="elsewhere:1:1"
        )
    assert world.due(f"{DAY}T07:30:00Z")["runs"] == []
    with world.open() as store:
        [held] = store.ticks()
    assert (held.state, held.owner) == ("claimed", "elsewhere:1:1")


def test_a_queue_pass_killed_before_its_enqueue_has_its_tick_queued_again(
    tmp_path: Path, receiver: Receiver, postgres_url: str
) -> None:
    world = World(tmp_path / "ws", postgres_url, receiver)
    world.killed("run", "--due", "--queue", "--now", f"{DAY}T07:00:00Z", at="after-claim")
    done = world.here("run", "--due", "--queue", "--now", f"{DAY}T07:30:00Z", "--json")
    assert done.returncode == 0, done.stderr
    passed = json.loads(done.stdout)
    assert [job["tick"] for job in passed["requeued"]] == [TICK] and passed["runs"] == []
    worker = subprocess.run(
        [sys.executable, "-m", "assay", "worker", "--burst", "--json", *world.options()],
        capture_output=True, text=True, env=cli_env(), timeout=120, check=False,
    )  # fmt: skip
    assert worker.returncode == 0, worker.stderr
    [job] = json.loads(worker.stdout)["jobs"]
    with world.open() as store:
        [tick] = store.ticks()
    assert job["ran"] and (tick.state, tick.run_id) == ("completed", job["run_id"])


# --- a check run killed: its recovery is told ---------------------------------------------------


def test_a_later_pass_recovers_a_dead_run_of_any_dataset_and_tells_its_route(
    make_world: Callable[[], World], receiver: Receiver
) -> None:
    world = make_world()
    assert world.due(f"{DAY}T07:00:00Z")["runs"][0]["state"] == "completed"
    # a run by hand of another day, killed after it measured: no tick names it
    document = str(world.root / "checks" / "orders.yaml")
    world.killed("check", "run", document, "--at", "2026-11-28", at="after-measure")
    with world.open() as store:
        [dead] = [r for r in store.runs("shop.orders", kind="check") if r.state == "running"]
    later = world.due(f"{DAY}T08:00:00Z")  # nothing is due; the dead run is recovered all the same
    assert later["runs"] == [] and [r["run_id"] for r in later["recovered"]] == [dead.id]
    with world.open() as store:
        assert store.run(dead.id).state == "system_error"  # type: ignore[union-attr]
        assert _notices(store) == [("system_error", "platform", dead.id)]
    # the pass delivered it: what a run that failed as a whole sends, its message saying why
    [sent] = [r["body"] for r in receiver.requests if r["path"] == "/platform"]
    assert (sent["kind"], sent["dataset"], sent["run_id"]) == ("system_error", "shop.orders", dead.id)
    assert "stopped before the run's commit" in sent["message"]


def test_recovery_and_its_notice_land_together(make_world: Callable[[], World]) -> None:
    world = make_world()
    document = str(world.root / "checks" / "orders.yaml")
    world.killed("check", "run", document, "--at", DAY, at="after-measure")
    # `assay recover` killed after it recorded the dead run and its notice, before its commit
    world.killed("recover", at="in-recovery")
    with world.open() as store:
        [dead] = store.runs("shop.orders", kind="check")
        assert dead.state == "running" and store.outbox() == []  # neither landed
    done = world.here("recover", "--json")
    assert done.returncode == 0, done.stderr
    assert [r["action"] for r in json.loads(done.stdout)["recovered"]] == ["abandoned"]
    with world.open() as store:
        assert store.run(dead.id).state == "system_error"  # type: ignore[union-attr]
        assert _notices(store) == [("system_error", "platform", dead.id)]  # both, once


# --- runs/<id>.json that could not be written ------------------------------------------------------


@pytest.mark.parametrize("by", ["recover", "the next run"])
def test_a_summary_that_could_not_be_written_is_written_by_recovery(
    by: str, make_world: Callable[[], World]
) -> None:
    world = make_world()
    document = str(world.root / "checks" / "orders.yaml")
    # runs/ is a file, not a folder: writing runs/<id>.json fails even as root (CI runs the tests
    # as root, whom a read-only folder does not stop)
    runs = world.root / "runs"
    runs.write_text("not a folder")
    broken = world.here("check", "run", document, "--at", DAY)
    assert broken.returncode == 3 and "is committed" in broken.stderr, broken.stderr
    assert "the next run or `assay recover` finishes it" in broken.stderr
    with world.open() as store:
        [run] = store.runs("shop.orders", kind="check")
    assert run.state == "completed"
    runs.unlink()  # writable again
    if by == "recover":
        done = world.here("recover", "--json")
        assert done.returncode == 0, done.stderr
        assert [(r["run_id"], r["action"]) for r in json.loads(done.stdout)["recovered"]] == [
            (run.id, "finished")
        ]
    else:
        assert world.here("check", "run", document, "--at", "2026-11-28").returncode == 0
    written = json.loads((runs / f"{run.id}.json").read_text())
    assert written == json.loads(json.dumps(run.summary, default=str))  # what the store holds
    assert not (world.root / "staging" / run.id).exists()
