"""One `assay demo --json` per test run, shared by the CLI and documentation tests: the demo
writes the files the documented examples use (a ruleset and its data, a control CSV, a schema,
gated tables, a profiled dataset with a pending decision). Tests copy it before changing it.

Under pytest-xdist the workers share one build: the first to need it builds it in a folder named
after the run (``PYTEST_XDIST_TESTRUNUID``) while holding a lock, the others wait for the lock and
read what it printed; the controller removes the folder at the end (tests/conftest.py)."""

from __future__ import annotations

import atexit
import fcntl
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


def shared_root(run: str | None = None) -> Path | None:
    """The folder the workers of one pytest-xdist run (this one's, by default) share the demo in,
    or None without xdist."""
    run = run or os.environ.get("PYTEST_XDIST_TESTRUNUID")
    return Path(tempfile.gettempdir()) / f"assay-demo-{run}" if run else None


@functools.cache
def built() -> tuple[Path, dict[str, Any]]:
    """The demo's workspace and what `assay demo --json` printed."""
    root = shared_root()
    if root is None:
        root = Path(tempfile.mkdtemp(prefix="assay-demo-"))
        atexit.register(shutil.rmtree, root, True)
        return _build(root)
    root.mkdir(exist_ok=True)
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed, even if the build fails
        printed = root / "printed.json"
        if printed.exists():
            return root / "assay-demo", json.loads(printed.read_text())
        workspace, done = _build(root)
        printed.write_text(json.dumps(done))
        return workspace, done


def _build(root: Path) -> tuple[Path, dict[str, Any]]:
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
