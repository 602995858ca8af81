"""One `assay demo --json` per test run, shared by the CLI and documentation tests: the demo
writes the files the documented examples use (a ruleset and its data, a control CSV, a schema,
gated tables, a profiled dataset with a pending decision). Tests copy it before changing it.

Under pytest-xdist the workers share one build (tests/_shared.py): the first to need it builds
it, the others read the workspace and what the command printed."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import assay
from _shared import once

SOURCES = Path(assay.__file__).resolve().parents[1]


def cli_env(**extra: str) -> dict[str, str]:
    """The environment of an `assay` subprocess that runs these sources (not another installed copy)."""
    env = {**os.environ, "PYTHONPATH": str(SOURCES), "COLUMNS": "200", **extra}
    env.pop("ASSAY_WORKSPACE", None)
    env.pop("ASSAY_STORE_URL", None)
    return env


@functools.cache
def built() -> tuple[Path, dict[str, Any]]:
    """The demo's workspace and what `assay demo --json` printed."""
    folder = once("demo", _build)
    return folder / "assay-demo", json.loads((folder / "printed.json").read_text())


def _build(folder: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assay", "demo", "--workspace", str(folder / "assay-demo"), "--json"],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (folder / "printed.json").write_text(done.stdout)


def copy(target: Path) -> Path:
    """A copy of the demo's workspace at ``target``, for a test that changes it."""
    workspace, _ = built()
    shutil.copytree(workspace, target)
    return target
