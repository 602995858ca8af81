"""The durable queue (procrastinate, in the PostgreSQL store): schedulers enqueue, workers run.

A workspace of 20 scheduled documents on small files, five mornings of passes by two schedulers
racing each other (``assay run --due --queue`` in subprocesses), then two ``assay worker --burst``
processes draining the queue side by side: 100 runs, each tick run exactly once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from _demo_workspace import cli_env
from _invoke import assay
from assay.store import MetricStore
from checks._due import due_world
from pgserver import postgres_server, postgres_url  # noqa: F401

DOCUMENTS = 20
MORNINGS = 5


def _world(root: Path) -> Path:
    return due_world(root, DOCUMENTS)


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "assay", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )


def test_two_workers_run_100_scheduled_runs_exactly_once(tmp_path: Path, postgres_url: str) -> None:  # noqa: F811
    world = _world(tmp_path / "ws")
    store = ["--workspace", str(world), "--store", postgres_url]
    queued = 0
    for day in range(1, MORNINGS + 1):
        now = f"2026-11-{day:02d}T07:00:00Z"
        passes = [_start("run", "--due", "--queue", "--now", now, "--json", *store) for _ in range(2)]
        for process in passes:
            out, err = process.communicate(timeout=300)
            assert process.returncode == 0, err
            printed = json.loads(out)
            queued += sum(1 for r in printed["runs"] if r["claimed"])
            assert all(r["state"] in (None, "queued") for r in printed["runs"])
    assert queued == DOCUMENTS * MORNINGS  # each tick claimed by one of the two schedulers
    workers = [_start("worker", "--burst", "--json", *store) for _ in range(2)]
    ran: list[dict[str, object]] = []
    for process in workers:
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err
        ran += json.loads(out)["jobs"]
    assert len(ran) == DOCUMENTS * MORNINGS and all(r["ran"] and r["state"] == "completed" for r in ran)
    assert len({r["run_id"] for r in ran}) == DOCUMENTS * MORNINGS
    with MetricStore.open(postgres_url, workspace=world) as metric_store:
        ticks = metric_store.ticks()
        runs = metric_store.runs(kind="check", limit=1000)
    assert len(ticks) == DOCUMENTS * MORNINGS and {t.state for t in ticks} == {"completed"}
    assert Counter(r.dataset for r in runs) == {f"shop.table{n}": MORNINGS for n in range(DOCUMENTS)}
    assert {t.run_id for t in ticks} == {r.id for r in runs}


def test_a_job_deferred_twice_runs_once(
    tmp_path: Path,
    postgres_url: str,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    world = _world(tmp_path / "ws")
    store = ["--workspace", str(world), "--store", postgres_url]
    assert assay("run", "--due", "--queue", "--now", "2026-11-01T07:00:00Z", "--json", *store) == 0
    capsys.readouterr()
    # the same ticks put on the queue again, as a scheduler killed between claim and enqueue would
    # have them re-deferred: the worker runs each once and finds the second job's tick taken
    from assay.platform.queue import Job, app, enqueue

    with MetricStore.open(postgres_url, workspace=world) as metric_store:
        ticks = metric_store.ticks()
    queue_app = app(postgres_url)
    with queue_app.open():
        again = [
            enqueue(
                queue_app,
                Job(str(world), t.document, t.profile, t.tick.isoformat(), t.logical_date.isoformat()),
            )
            for t in ticks
        ]
    assert again == [False] * DOCUMENTS  # still waiting on the queue: the queueing lock refuses a copy
    done = _start("worker", "--burst", "--json", *store)
    out, err = done.communicate(timeout=600)
    assert done.returncode == 0, err
    assert sum(job["ran"] for job in json.loads(out)["jobs"]) == DOCUMENTS
    # a tick finished is never run again, even if its job comes back
    from assay.platform.queue import run_job

    first = ticks[0]
    repeat = run_job(
        postgres_url, Job(str(world), first.document, first.profile, first.tick.isoformat(), "2026-11-01")
    )
    assert not repeat.ran
    with MetricStore.open(postgres_url, workspace=world) as metric_store:
        assert len(metric_store.runs(kind="check", limit=1000)) == DOCUMENTS


def test_the_queue_needs_the_postgresql_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = _world(tmp_path / "ws")
    assert assay("worker", "--burst", "--workspace", str(world)) == 2
    assert "PostgreSQL store" in capsys.readouterr().err
    assert assay("run", "--due", "--queue", "--workspace", str(world)) == 2
    assert "PostgreSQL store" in capsys.readouterr().err


def test_a_worker_killed_during_a_run_has_its_tick_queued_again_and_resumed(
    tmp_path: Path,
    postgres_url: str,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    world = _world(tmp_path / "ws")
    for n in range(1, DOCUMENTS):  # one document: one job
        (world / "checks" / f"table{n}.yaml").unlink()
    store = ["--workspace", str(world), "--store", postgres_url]
    assert assay("run", "--due", "--queue", "--now", "2026-11-01T07:00:00Z", "--json", *store) == 0
    capsys.readouterr()
    # the worker is killed (SIGKILL) right after its run stored what it measured
    killed = subprocess.run(
        [sys.executable, "-m", "assay", "worker", "--burst", *store],
        capture_output=True, text=True, env=cli_env(ASSAY_CRASH_AT="after-measure"), timeout=300, check=False,
    )  # fmt: skip
    assert killed.returncode == -9, killed.stderr
    with MetricStore.open(postgres_url, workspace=world) as metric_store:
        [tick] = metric_store.ticks()
    assert tick.state == "running" and (tick.message or "").startswith("worker ")
    # the next pass finds the worker gone and queues the tick again; a worker runs it, resumed
    assert assay("run", "--due", "--queue", "--now", "2026-11-01T08:00:00Z", "--json", *store) == 0
    passed = json.loads(capsys.readouterr().out)
    assert [job["document"] for job in passed["requeued"]] == ["checks/table0.yaml"] and passed["runs"] == []
    done = _start("worker", "--burst", "--json", *store)
    out, err = done.communicate(timeout=300)
    assert done.returncode == 0, err
    [job] = json.loads(out)["jobs"]
    assert job["ran"] and job["state"] == "completed"
    with MetricStore.open(postgres_url, workspace=world) as metric_store:
        [tick] = metric_store.ticks()
        runs = metric_store.runs(kind="check", limit=10)
        record = json.loads((world / "runs" / f"{job['run_id']}.json").read_text())
    assert (tick.state, tick.run_id) == ("completed", job["run_id"])
    assert sorted(r.state for r in runs) == ["completed", "system_error"]
    assert record["resumed_from"] and record["queries"]["measure"] == 0
