"""A check run killed (SIGKILL) at each of its write boundaries, then run again: the day ends with
exactly one recorded completed run, one current load of metrics, and the outcomes of a clean run;
the killed run is a recorded ``system_error`` (or, killed after its commit, complete). The killed
run is a process of its own; the others run in this process."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from _invoke import completed
from assay.demo import trades
from assay.store import MetricStore

DAYS = 8
LAST = trades.days(DAYS)[-1]
POINTS = ("after-start", "after-measure", "before-commit", "after-settle", "after-summary")
SRC = Path(__file__).resolve().parents[2] / "src"


def arguments(root: Path, day: object) -> list[str]:
    return [
        "check", "run", str(root / "checks" / "trades.yaml"), "--at", str(day),
        "--now", trades.clock(day).isoformat(), "--workspace", str(root), "--json", str(root / "out.json"),  # type: ignore[arg-type]
    ]  # fmt: skip


def check(root: Path, day: object, crash: str) -> subprocess.CompletedProcess[str]:
    """The run killed at ``crash``: a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "ASSAY_CRASH_AT": crash}
    command = [sys.executable, "-m", "assay", *arguments(root, day)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, check=False)


def check_here(root: Path, day: object) -> subprocess.CompletedProcess[str]:
    """A run that is not killed (the history, the clean run, the run again): in this process."""
    return completed(*arguments(root, day))


@pytest.fixture(scope="module")
def before(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("crash")
    trades.generate(root, DAYS)
    for day in trades.days(DAYS)[:-1]:
        assert check_here(root, day).returncode == 0
    return root


@pytest.fixture(scope="module")
def clean_root(before: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("clean") / "ws"
    shutil.copytree(before, root)
    assert check_here(root, LAST).returncode == 0
    return root


@pytest.fixture(scope="module")
def clean(clean_root: Path) -> list[tuple[str, object, str]]:
    return _outcomes(clean_root)


@pytest.fixture(scope="module")
def clean_drift(clean_root: Path) -> tuple[list[tuple[str, str | None, str]], list[tuple[str, str]]]:
    return _drift(clean_root)


def _outcomes(root: Path) -> list[tuple[str, object, str]]:
    run = json.loads((root / "out.json").read_text())
    return [(o["expectation"], o["group"], o["outcome"]) for o in run["outcomes"]]


def _drift(root: Path) -> tuple[list[tuple[str, str | None, str]], list[tuple[str, str]]]:
    """The run's drift alerts, and the dataset's incidents the drift monitor opened (key, state)."""
    run = json.loads((root / "out.json").read_text())
    with MetricStore.open(workspace=root) as store:
        found = store.incidents(dataset="payments.trades")
    return (
        sorted((a["kind"], a["column"], a["severity"]) for a in run["drift"]),
        sorted((i.expectation, i.state) for i in found if i.expectation.startswith("profile:")),
    )


@pytest.mark.parametrize("point", POINTS)
def test_a_check_run_killed_at_each_write_boundary(
    point: str,
    before: Path,
    clean: list[tuple[str, object, str]],
    clean_drift: tuple[list[tuple[str, str | None, str]], list[tuple[str, str]]],
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(before, root)
    killed = check(root, LAST, crash=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    (root / "out.json").unlink(missing_ok=True)
    again = check_here(root, LAST)
    assert again.returncode == 0, again.stderr
    assert _outcomes(root) == clean
    rerun = json.loads((root / "out.json").read_text())
    alerts, opened = _drift(root)
    if point in ("after-measure", "before-commit"):  # killed measured, not judged: resumed
        assert rerun["queries"]["measure"] == 0 and rerun["resumed_from"]
        # a resumed run has no column profile of its slice, so no drift judgement (docs/checks.md)
        assert alerts == [] and opened == []
    else:  # nothing measured to resume from (or the killed run committed): measured afresh
        assert rerun["queries"]["measure"] == 1 and "resumed_from" not in rerun
        # the drift monitor's alerts as a clean run's, and each incident once (XPAR gone, volume)
        assert (alerts, opened) == clean_drift
        assert ("vanished_value", "venue", "hard") in alerts
    with MetricStore.open(workspace=root) as store:
        runs = [r for r in store.check_runs("payments.trades") if r["at"] == str(LAST)]
        states = sorted(r["state"] for r in runs)
        series = store.metric_series(
            "payments.trades",
            partition="daily",
            names={"row_count"},
            before=trades.clock(LAST),
            baseline=False,  # every load, a failed one too
        )
    completed = 2 if point in ("after-settle", "after-summary") else 1  # killed after its commit
    assert states == ["completed"] * completed + ["system_error"] * (len(states) - completed)
    assert len(states) == 2  # the killed run is recorded either way
    # one current load per day: a run of the same day again replaced the earlier one
    assert len(series[("Dataset", "*", "row_count")]) == DAYS
