"""Schedules: ``assay run --due`` and ``assay scheduler`` run each profile's checks at its ticks.

The world is the trades example the demo ships (``checks/trades.yaml``: profile ``daily`` on
``30 6 * * *``; 30 daily Parquet files of November 2026). Runs go through the real CLI, in this
process or, for concurrency and signals, in subprocesses; the store is the workspace's SQLite
file, or a database on the test session's PostgreSQL server.
"""

from __future__ import annotations

import json
import selectors
import signal
import subprocess
import sys
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from _demo_workspace import cli_env
from _invoke import assay
from assay.demo import trades
from assay.platform.schedule import latest_tick, next_tick
from assay.store import MetricStore
from pgserver import postgres_server, postgres_url  # noqa: F401


@pytest.fixture
def world(tmp_path: Path) -> Path:
    trades.generate(tmp_path)
    return tmp_path


def due(world: Path, now: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, Any]]:
    code = assay("run", "--due", "--now", now, "--workspace", str(world), "--json", *extra)
    printed = capsys.readouterr().out
    return code, json.loads(printed)


def test_a_tick_runs_once_for_the_day_its_lag_names(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, first = due(world, "2026-11-29T07:00:00Z", capsys)
    assert code == 0
    [run] = first["runs"]
    # the demo's profile has lag: 1: the morning tick checks the day before
    assert (run["document"], run["profile"], run["tick"], run["at"]) == (
        "checks/trades.yaml", "daily", "2026-11-29T06:30:00+00:00", "2026-11-28",
    )  # fmt: skip
    assert run["claimed"] and run["state"] == "completed" and run["summary"]["passed"] > 0
    assert first["next_tick"] == "2026-11-30T06:30:00+00:00"
    # later the same day: that tick has run; nothing is due
    code, again = due(world, "2026-11-29T23:59:00Z", capsys)
    assert code == 0 and again["runs"] == []
    with MetricStore.open(workspace=world) as store:
        [tick] = store.ticks()
        runs = [r for r in store.runs(kind="check")]
    assert (tick.state, tick.run_id, tick.logical_date) == ("completed", run["run_id"], date(2026, 11, 28))
    assert [r.id for r in runs] == [run["run_id"]]
    # what the scheduled run recorded is what `assay check run --at 2026-11-28` records
    assert (
        assay("check", "history", str(world / "checks" / "trades.yaml"), "--workspace", str(world), "--json")
        == 0
    )
    history = json.loads(capsys.readouterr().out)
    assert [r["at"] for r in history["runs"]] == ["2026-11-28"] and history["runs"][0]["outcomes"]


def test_missed_ticks_are_caught_up_once(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert due(world, "2026-11-25T07:00:00Z", capsys)[0] == 0
    # the scheduler was down for four days: one run, for the latest tick, not four
    code, back = due(world, "2026-11-29T12:00:00Z", capsys)
    assert code == 0
    assert [(r["at"], r["state"]) for r in back["runs"]] == [("2026-11-28", "completed")]
    with MetricStore.open(workspace=world) as store:
        assert [t.logical_date.isoformat() for t in store.ticks()] == ["2026-11-24", "2026-11-28"]


def test_ticks_are_read_in_the_schedules_time_zone() -> None:
    # New York: 06:00 local is 11:00 UTC in winter, 10:00 in summer
    assert latest_tick(
        "0 6 * * *", "America/New_York", datetime(2026, 1, 15, 10, 59, tzinfo=UTC)
    ) == datetime(2026, 1, 14, 11, 0, tzinfo=UTC)
    assert latest_tick("0 6 * * *", "America/New_York", datetime(2026, 7, 15, 10, 0, tzinfo=UTC)) == datetime(
        2026, 7, 15, 10, 0, tzinfo=UTC
    )
    assert next_tick("0 6 * * *", "America/New_York", datetime(2026, 7, 15, 10, 0, tzinfo=UTC)) == datetime(
        2026, 7, 16, 10, 0, tzinfo=UTC
    )
    # a night that skips 02:00-03:00 (New York, 2026-03-08): the 02:30 run happens at 03:00 local
    assert latest_tick("30 2 * * *", "America/New_York", datetime(2026, 3, 8, 12, 0, tzinfo=UTC)) == datetime(
        2026, 3, 8, 7, 0, tzinfo=UTC
    )


def test_the_logical_date_is_the_ticks_date_where_the_schedule_lives_less_the_lag(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = world / "checks" / "trades.yaml"
    text = document.read_text()
    assert 'schedule: "30 6 * * *"' in text
    # 06:30 in Auckland (UTC+13 in November) is 17:30 UTC the day before
    document.write_text(
        text.replace('schedule: "30 6 * * *"', 'schedule: "30 6 * * *"\n    timezone: Pacific/Auckland')
    )
    code, done = due(world, "2026-11-29T18:00:00Z", capsys)
    assert code == 0
    [run] = done["runs"]
    assert (run["tick"], run["at"], run["timezone"]) == (
        "2026-11-29T17:30:00+00:00",
        "2026-11-29",  # 30 November in Auckland, less the profile's lag of one day
        "Pacific/Auckland",
    )


def test_without_a_lag_a_tick_checks_its_own_date(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = world / "checks" / "trades.yaml"
    text = document.read_text()
    assert "\n    lag: 1 " in text
    document.write_text(text.replace("\n    lag: 1 ", "\n    lag: 0 "))
    code, done = due(world, "2026-11-29T07:00:00Z", capsys)
    assert code == 0
    assert [(r["tick"], r["at"]) for r in done["runs"]] == [("2026-11-29T06:30:00+00:00", "2026-11-29")]
    # a lag without a schedule is a mistake in the document, said on its line
    document.write_text(text.replace('schedule: "30 6 * * *"', "timezone: UTC"))
    assert assay("check", "validate", str(document)) == 2
    printed = capsys.readouterr().err
    assert "lag is the days from a schedule's tick back to its slice: add a schedule" in printed


def test_mistakes_in_a_schedule_are_the_documents_mistakes(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = world / "checks" / "trades.yaml"
    text = document.read_text()
    document.write_text(
        text.replace('schedule: "30 6 * * *"', 'schedule: "30 25 * * *"\n    timezone: Mars/Olympus')
    )
    assert assay("check", "validate", str(document)) == 2
    printed = capsys.readouterr().err
    assert "'30 25 * * *' is not a cron expression" in printed
    assert "'Mars/Olympus' is not a time zone" in printed
    line = next(n for n, text in enumerate(document.read_text().splitlines(), 1) if "schedule:" in text)
    assert f"trades.yaml:{line}:" in printed  # the schedule's line
    # a pass skips the broken document, says why, and exits 1; another document still runs
    other = world / "checks" / "other.yaml"
    other.write_text(text.replace("name: payments.trades", "name: payments.trades_copy"))
    code = assay("run", "--due", "--now", "2026-11-29T07:00:00Z", "--workspace", str(world))
    captured = capsys.readouterr()
    assert code == 1
    assert "not a cron expression" in captured.err
    assert "checks/other.yaml daily at 2026-11-28" in captured.out and "completed" in captured.out
    # files of other kinds in checks/ (a dataset's profile configuration) are not documents
    (world / "checks" / "vendor_trades.yaml").write_text("columns: {venue: {categorical: true}}\n")
    assert "vendor_trades" not in capsys.readouterr().err


def test_run_needs_due(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert assay("run", "--workspace", str(world)) == 2
    assert "assay run needs --due" in capsys.readouterr().err


def _pass_in_subprocess(world: Path, store: str | None) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "assay", "run", "--due", "--now", "2026-11-29T07:00:00Z",
               "--workspace", str(world), "--json"]  # fmt: skip
    if store is not None:
        command += ["--store", store]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env())


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_two_schedulers_at_once_run_each_tick_once(
    world: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    store = request.getfixturevalue("postgres_url") if backend == "postgres" else None
    other = world / "checks" / "other.yaml"  # two scheduled documents: two ticks to race for
    other.write_text(
        (world / "checks" / "trades.yaml").read_text().replace("name: payments.trades", "name: other")
    )
    passes = [_pass_in_subprocess(world, store) for _ in range(2)]
    printed = []
    for process in passes:
        out, errors = process.communicate(timeout=300)
        assert process.returncode == 0, errors
        printed.append(json.loads(out))
    started = [r for p in printed for r in p["runs"] if r["claimed"]]
    assert sorted(r["document"] for r in started) == ["checks/other.yaml", "checks/trades.yaml"]
    assert all(r["state"] == "completed" for r in started)
    with MetricStore.open(store, workspace=world) as metric_store:
        assert len(metric_store.ticks()) == 2
        assert len(metric_store.runs(kind="check")) == 2


def test_the_scheduler_runs_what_is_due_and_stops_cleanly_on_sigterm(world: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "scheduler", "--workspace", str(world), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(),
    )  # fmt: skip
    try:
        line = _first_line(process, deadline=time.monotonic() + 300)
        first = json.loads(line)
        [run] = first["runs"]  # today's 06:30 tick (or yesterday's, before 06:30 UTC)
        assert run["claimed"] and run["state"] == "completed"
        assert datetime.fromisoformat(run["tick"]) <= datetime.fromisoformat(first["now"])
        assert datetime.fromisoformat(first["next_tick"]) > datetime.fromisoformat(first["now"])
        process.send_signal(signal.SIGTERM)  # it is waiting for the next tick
        out, errors = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, errors
    assert "SIGTERM: stopping after the current run" in errors and "stopped after 1 pass(es)" in errors
    assert out == ""  # no second pass
    with MetricStore.open(workspace=world) as store:
        assert [t.state for t in store.ticks()] == ["completed"]


def _first_line(process: subprocess.Popen[str], deadline: float) -> str:
    """The first line the process prints, waiting for it until ``deadline`` (never after)."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if selector.select(timeout=deadline - time.monotonic()):
                return process.stdout.readline()
            if process.poll() is not None:
                break
    raise AssertionError(f"no pass printed; stderr: {process.stderr.read() if process.stderr else ''}")
