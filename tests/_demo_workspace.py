"""One `assay demo --json` per test session, shared by the CLI and documentation tests: the demo
writes the files the documented examples use (a ruleset and its data, a control CSV, a schema,
gated tables, a profiled dataset with a pending decision). Tests copy it before changing it."""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import assay

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
    root = Path(tempfile.mkdtemp(prefix="assay-demo-"))
    atexit.register(shutil.rmtree, root, True)
    workspace = root / "assay-demo"
    done = subprocess.run(
        [sys.executable, "-m", "assay", "demo", "--workspace", str(workspace), "--json"],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return workspace, json.loads(done.stdout)


def copy(target: Path) -> Path:
    """A copy of the demo's workspace at ``target``, for a test that changes it."""
    workspace, _ = built()
    shutil.copytree(workspace, target)
    return target
