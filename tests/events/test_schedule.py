"""Event contracts on a schedule: ``assay run --due`` runs each event's last complete window at
its ticks, once, beside the table documents."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from _invoke import assay
from assay.demo.events import feed, write_contracts
from assay.store import MetricStore

SCHEDULED = 'window: {grain: hour, schedule: "5 * * * *"}'


@pytest.fixture
def world(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    feed(root / "events", start=date(2026, 11, 2), days=1, per_hour=12)
    path = write_contracts(root / "checks", "../events/*.jsonl")
    path.write_text(path.read_text().replace("window: {grain: hour}", SCHEDULED))
    return root


def due(root: Path, now: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    code = assay("run", "--due", "--now", now, "--workspace", str(root), "--json")
    return code, json.loads(capsys.readouterr().out)


def test_each_tick_runs_the_last_complete_window_once(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, first = due(world, "2026-11-02T10:07:00Z", capsys)
    assert code == 0
    [run] = first["runs"]  # type: ignore[misc]
    assert run["dataset"] == "trade_executed.v3" and run["profile"] == "window"
    assert run["tick"] == "2026-11-02T10:05:00+00:00" and run["at"] == "2026-11-02"
    assert run["state"] == "completed" and run["claimed"] is True
    assert run["summary"]["failed"] == 0 and run["summary"]["passed"] > 0
    assert first["next_tick"] == "2026-11-02T11:05:00+00:00"
    code, again = due(world, "2026-11-02T10:30:00Z", capsys)  # the same tick: nothing due
    assert code == 0 and again["runs"] == []
    code, later = due(world, "2026-11-02T11:06:00Z", capsys)
    assert code == 0 and [r["tick"] for r in later["runs"]] == ["2026-11-02T11:05:00+00:00"]  # type: ignore[index]
    with MetricStore.open(workspace=world) as store:
        windows = [
            run.summary["window"]["start"]
            for run in store.runs("trade_executed.v3", limit=10, kind="check")
            if run.summary
        ]
    assert sorted(windows) == ["2026-11-02T09:00:00+00:00", "2026-11-02T10:00:00+00:00"]


def test_a_broken_contract_file_is_a_problem_of_the_pass_not_its_end(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contracts = world / "checks" / "events.yaml"
    contracts.write_text(contracts.read_text().replace('schedule: "5 * * * *"', 'schedule: "5 25 * * *"', 1))
    code, found = due(world, "2026-11-02T10:07:00Z", capsys)
    assert code == 1 and found["runs"] == []
    assert any("is not a cron expression" in p for p in found["problems"])  # type: ignore[union-attr]


def test_contracts_outside_the_workspace_run_and_keep_the_days_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "elsewhere"
    feed(data / "events", start=date(2026, 11, 2), days=1, per_hour=12)
    contracts = write_contracts(data / "checks", "../events/*.jsonl")
    workspace = tmp_path / "ws"  # its checks/ folder holds no contract
    code = assay(
        "check", "run", str(contracts), "--at", "2026-11-02T10:00", "--now", "2026-11-02T11:05:00Z",
        "--workspace", str(workspace), "--json", "-",
    )  # fmt: skip
    assert code == 0 and json.loads(capsys.readouterr().out)["state"] == "completed"
    with MetricStore.open(workspace=workspace) as store:
        [kept] = store.score_history("event", "trade_executed.v3")
    assert kept.day == date(2026, 11, 2)
