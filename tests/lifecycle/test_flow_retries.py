"""Every flow tries what can fail transiently (reading the source, measuring) through the driver
(issue 29): ``assay dqdl run``, ``assay gate`` and ``assay profile`` take ``--retries`` and
``--backoff`` as ``assay check run`` does, and each run's summary JSON records its ``attempts``
in the shape a check run's has."""

from __future__ import annotations

import json
from pathlib import Path

from _invoke import completed
from lifecycle.world import World, february


def _summary(workspace: Path) -> dict[str, object]:
    (path,) = sorted((workspace / "runs").glob("*.json"), key=lambda p: p.stat().st_mtime)[-1:]
    loaded: dict[str, object] = json.loads(path.read_text())
    return loaded


def _tried(summary: dict[str, object]) -> list[tuple[str, int, object]]:
    attempts = summary["attempts"]
    assert isinstance(attempts, list)
    return [(a["profile"], a["attempt"], a["error"]) for a in attempts]


def test_dqdl_run_records_its_read_and_measure_attempts(tmp_path: Path) -> None:
    data, rules, ws = tmp_path / "orders.csv", tmp_path / "r.dqdl", tmp_path / "ws"
    data.write_text("id\n1\n2\n")
    rules.write_text("Rules = [ RowCount > 0 ]\n")
    done = completed(
        "dqdl", "run", str(rules), "--data", str(data), "--dataset", "orders", "--workspace", str(ws),
        "--retries", "2", "--backoff", "0.5",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _tried(_summary(ws)) == [("read", 1, None), ("measure", 1, None)]


def test_profile_records_its_measure_attempts(tmp_path: Path) -> None:
    data, ws = tmp_path / "day.csv", tmp_path / "ws"
    data.write_text("venue,px\nXLON,1.5\n")
    done = completed(
        "profile", str(data), "--dataset", "trades", "--load-date", "2026-01-05", "--workspace", str(ws),
        "--retries", "1", "--backoff", "0",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _tried(_summary(ws)) == [("profile", 1, None)]


def test_gate_records_its_read_and_measure_attempts_in_its_summary(tmp_path: Path) -> None:
    world = World.make(tmp_path, f"sqlite:///{tmp_path / 'ws' / 'assay.db'}")
    batch = world.file("feb.csv", february())
    done = completed(*world.arguments(batch), "--retries", "1", "--backoff", "0")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert _tried(printed) == [("read", 1, None), ("measure", 1, None)]
    assert _tried(_summary(world.workspace)) == _tried(printed)


def test_no_retry_by_default_and_the_options_are_checked(tmp_path: Path) -> None:
    done = completed("gate", "b.csv", "--rules", "r.csv", "--contributor", "x", "--retries", "-1")
    assert done.returncode == 2 and "--retries" in done.stderr
