"""Accepting a proposal killed between the document's write and the decision's commit: the next
accept rolls the decision forward and the document holds the expectation once."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _demo_workspace import cli_env
from _invoke import completed  # the commands that are not killed run in this process


def killed(*args: str, crash: str) -> subprocess.CompletedProcess[str]:
    """``assay ARGS...`` killed at ``crash``: a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        capture_output=True,
        text=True,
        env=cli_env(ASSAY_CRASH_AT=crash),
        timeout=300,
        check=False,
    )


def test_an_accept_killed_after_writing_the_document_is_finished_by_the_next(
    trades_history: Path, tmp_path: Path
) -> None:
    world = tmp_path / "ws"
    shutil.copytree(trades_history, world)
    ws = ("--workspace", str(world))
    found = json.loads(completed("propose", "payments.trades", "--json", *ws).stdout)
    proposal = next(p for p in found if p["kind"] == "values")
    document = world / "checks" / "trades.yaml"
    accept = killed("proposals", "accept", proposal["id"], "--by", "ana", *ws, crash="after-document")
    assert accept.returncode == -signal.SIGKILL
    expectation_id = proposal["expectation"]["id"]
    assert document.read_text().count(f"id: {expectation_id}") == 1  # written, not committed
    shown = json.loads(completed("proposals", "show", proposal["id"], "--json", *ws).stdout)
    assert shown["proposal"]["state"] == "open"
    again = completed("proposals", "accept", proposal["id"][:8], "--by", "ana", "--json", *ws)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["proposal"]["state"] == "accepted"
    assert document.read_text().count(f"id: {expectation_id}") == 1  # not a second copy
    assert completed("check", "validate", str(document)).returncode == 0
