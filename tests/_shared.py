"""Expensive worlds that several test modules read, built once per test run: the demo's workspace
(tests/_demo_workspace.py), the trades' stored histories (tests/checks/_history.py,
tests/proposals/_history.py).

Under pytest-xdist the workers share one build of each: the first to need it builds it in a
folder of the run (named after ``PYTEST_XDIST_TESTRUNUID``) while holding the build's lock, the
others wait for the lock and read what it built; the controller removes the run's folder at the
end (tests/conftest.py). Without xdist a build goes to a temporary folder of this process.

A build is read, never changed: a test that changes one copies it first."""

from __future__ import annotations

import atexit
import fcntl
import functools
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path


def shared_root(run: str | None = None) -> Path | None:
    """The folder the workers of one pytest-xdist run (this one's, by default) share builds in,
    or None without xdist."""
    run = run or os.environ.get("PYTEST_XDIST_TESTRUNUID")
    return Path(tempfile.gettempdir()) / f"assay-tests-{run}" if run else None


@functools.cache
def _private_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="assay-builds-"))
    atexit.register(shutil.rmtree, root, True)
    return root


def once(name: str, build: Callable[[Path], object]) -> Path:
    """The folder ``name`` that ``build(folder)`` filled, built once per test run.

    >>> folder = once("doctest-once", lambda folder: (folder / "a.txt").write_text("1"))
    >>> (folder / "a.txt").read_text(), once("doctest-once", print) == folder
    ('1', True)
    """
    root = shared_root() or _private_root()
    root.mkdir(exist_ok=True)
    # `done` is written last, beside the folder: a build that failed halfway is built again
    folder, done = root / name, root / f"{name}.built"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed, even if the build fails
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            done.write_text("")
    return folder
