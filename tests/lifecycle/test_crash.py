"""Crash safety of a gate run (issue 8, section 2): ``assay gate`` is killed with SIGKILL at every
write boundary, run twice at once, run on two files for one month at once, and starved of disk,
on SQLite and on PostgreSQL; afterwards nothing is lost, nothing is duplicated, history equals a
clean run's, the rows a person is asked to decide equal the rows held, and every gate run of the
table balances (``assay gate audit``: each row of its batch in exactly one of its outputs). The
runs that are killed, starved or raced are processes of their own; the runs after them run in
this process."""

from __future__ import annotations

import json
import resource
import signal
from collections.abc import Callable

import pytest

from _invoke import completed
from assay.platform.runs.faults import POINTS
from lifecycle.world import ACCOUNTS, Observation, World, february

BACKENDS = ("sqlite", "postgres")


@pytest.fixture(scope="module", params=BACKENDS)
def make_world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[], World]:
    """A fresh world (workspace and store, January committed) each call."""
    server = request.getfixturevalue("postgres_server") if request.param == "postgres" else None

    def make() -> World:
        root = tmp_path_factory.mktemp("world")
        url = f"sqlite:///{root / 'ws' / 'assay.db'}" if server is None else server.create_database()
        return World.make(root, url)

    return make


@pytest.fixture(scope="module")
def clean(make_world: Callable[[], World]) -> Observation:
    """What a clean run of the faulty February leaves."""
    world = make_world()
    done = world.gate_here(world.file("feb.csv", february()))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["total"], summary["passed"], summary["quarantined"], summary["held"]) == (20, 15, 3, 2)
    seen = world.observe()
    assert seen.accounted() == len(ACCOUNTS)
    assert seen.decisions == [("FROZEN", 2)] and seen.current_loads == 1
    return seen


@pytest.mark.parametrize("point", POINTS)
def test_a_run_killed_at_each_write_boundary_is_finished_or_undone(
    point: str, make_world: Callable[[], World], clean: Observation
) -> None:
    world = make_world()
    batch = world.file("feb.csv", february())
    killed = world.gate(batch, crash_at=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    again = world.gate_here(batch)
    assert again.returncode == 0, again.stderr
    seen = world.observe()
    assert seen == clean
    assert seen.running == 0 and seen.pending_loads == 0 and seen.staged == []
    assert world.unbalanced() == []  # the killed run and the run after it each account for every row


def test_the_same_file_twice_at_once_lands_once(make_world: Callable[[], World], clean: Observation) -> None:
    world = make_world()
    batch = world.file("feb.csv", february())
    first, second = world.start(batch), world.start(batch)
    outs = [process.communicate(timeout=300) for process in (first, second)]
    assert [first.returncode, second.returncode] == [0, 0], outs
    summaries = [json.loads(out) for out, _ in outs]
    assert sorted(bool(s["duplicate_of"]) for s in summaries) == [False, True]
    assert world.observe() == clean
    assert world.unbalanced() == []


def test_two_files_for_one_month_at_once_leave_one_month(make_world: Callable[[], World]) -> None:
    world = make_world()
    faulty, fixed = world.file("feb.csv", february()), world.file("feb-fixed.csv", february("clean"))
    first, second = world.start(faulty), world.start(fixed)
    outs = [process.communicate(timeout=300) for process in (first, second)]
    assert [first.returncode, second.returncode] == [0, 0], outs
    seen = world.observe()
    accounts = sorted(account for account, _ in seen.committed)
    assert len(accounts) == len(set(accounts)), "a key committed twice"
    assert seen.current_loads == 1 and seen.running == 0 and seen.pending_loads == 0
    if len(accounts) == len(ACCOUNTS):  # the fixed file landed last: the faulty one's holds are withdrawn
        assert seen.held == {} and seen.decisions == []
        assert seen.row_counts == [20.0]  # the month's history is the fixed file's
    else:  # the faulty file landed last
        assert len(accounts) == 15 and seen.held == {"A06": 1, "A07": 1} and seen.decisions == [("FROZEN", 2)]
        assert seen.row_counts == [19.0]  # the faulty file's readable rows (A05's line is a parse error)


@pytest.mark.parametrize("limit", [4_096, 65_536, 1_048_576])
def test_a_full_disk_is_a_system_error_that_loses_nothing(
    limit: int, make_world: Callable[[], World], clean: Observation
) -> None:
    world = make_world()
    batch = world.file("feb.csv", february())

    def small_disk() -> None:  # writes past ``limit`` bytes fail with EFBIG, as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    starved = world.gate(batch, preexec_fn=small_disk)
    assert starved.returncode in (0, 3), starved.stderr
    if starved.returncode == 3:
        assert starved.stderr.startswith("error: ") and "internal error" not in starved.stderr
        assert "Traceback" not in starved.stderr
    again = world.gate_here(batch)
    assert again.returncode == 0, again.stderr
    assert world.observe() == clean
    assert world.unbalanced() == []


def test_a_failure_after_the_commit_keeps_the_month_and_the_next_run_repairs_it(
    make_world: Callable[[], World], clean: Observation
) -> None:
    world = make_world()
    batch = world.file("feb.csv", february())
    runs = world.workspace / "runs"
    for summary in runs.iterdir():
        summary.unlink()
    runs.rmdir()
    runs.write_text("not a folder")  # writing runs/<id>.json fails after the commit
    broken = world.gate_here(batch)
    assert broken.returncode == 3 and "is committed" in broken.stderr and "runs" in broken.stderr
    assert "internal error" not in broken.stderr
    assert len(world.observe().committed) == 15  # the committed month stays committed
    runs.unlink()
    again = world.gate_here(batch)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["duplicate_of"]
    assert world.observe() == clean
    assert len(list(runs.glob("*.json"))) == 2  # the repaired run and the duplicate (January's was removed)
    assert world.unbalanced() == []


def test_a_run_killed_after_its_commit_is_finished_by_assay_recover(
    make_world: Callable[[], World], clean: Observation
) -> None:
    world = make_world()
    batch = world.file("feb.csv", february())
    assert world.gate(batch, crash_at="after-commit").returncode == -signal.SIGKILL
    recovered = completed(
        "recover", "--workspace", str(world.workspace), "--store", world.store_url, "--json"
    )
    assert recovered.returncode == 0, recovered.stderr
    (item,) = json.loads(recovered.stdout)["recovered"]
    assert item["action"] == "finished"
    assert world.observe() == clean
    assert world.unbalanced() == []


def test_a_refused_month_killed_while_measured_is_never_history(make_world: Callable[[], World]) -> None:
    world = make_world()
    truncated = [line for line in february("clean").splitlines()[:6]]  # the header and 5 of 20 accounts
    killed = world.gate(world.file("feb-short.csv", "\n".join(truncated) + "\n"), crash_at="after-measure")
    assert killed.returncode == -signal.SIGKILL
    # March is truncated too: judged against January's 20 rows it is refused, never against the
    # killed run's 5 (a load of a run that did not commit is no one's history)
    march = "\n".join(line.replace("2025-02-28", "2025-03-31") for line in truncated) + "\n"
    done = world.gate_here(world.file("mar-short.csv", march))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["passed"] == 0 and summary["groups"][0]["rejected"]
    (rule,) = summary["groups"][0]["dataset_rules"]
    assert (rule["rule_id"], rule["outcome"]) == ("A02", "failed")


def test_a_run_killed_after_its_commit_tells_its_incidents_once_when_recovered(
    make_world: Callable[[], World],
) -> None:
    """The killed run's quarantined and held rows are incidents as its own commit would have made
    them (recovery judges them in the transaction that finishes it), and the file sent again is
    a duplicate that changes none of them."""
    from assay.store import MetricStore

    world = make_world()
    batch = world.file("feb.csv", february())
    assert world.gate(batch, crash_at="after-commit").returncode == -signal.SIGKILL
    with MetricStore.open(world.store_url) as store:
        assert store.incidents() == []
    assert world.gate_here(batch).returncode == 0  # recovers the killed run first, then a duplicate
    with MetricStore.open(world.store_url) as store:
        found = sorted((i.expectation, i.failures, i.state) for i in store.incidents())
    assert ("gate:held", 1, "open") in found and len(found) >= 2
    assert all(failures == 1 for _, failures, _ in found)
