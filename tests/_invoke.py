"""``assay`` run in process as a user's shell runs it: arguments in, exit code out (errors mapped
to exit codes by :func:`assay.cli.main`, as they are for the installed command)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys

from assay.cli import main


def assay(*args: str) -> int:
    """Run ``assay ARGS...`` in this process and return its exit code; output goes to the
    process's stdout and stderr (read them with pytest's ``capsys``)."""
    argv, sys.argv = sys.argv, ["assay", *args]
    try:
        main()
    except SystemExit as done:
        return int(done.code or 0)
    finally:
        sys.argv = argv
    return 0


def completed(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``assay ARGS...`` in this process and return what ``subprocess.run(..., text=True,
    capture_output=True)`` of the command returns: its exit code, stdout and stderr. For the runs
    of a test that are not about the process (the run again after a crash, the reference run):
    a process's start is most of a small run's time."""
    # a crash point asked for here would kill the test's own process
    assert "ASSAY_CRASH_AT" not in os.environ
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = assay(*args)
    return subprocess.CompletedProcess(["assay", *args], code, out.getvalue(), err.getvalue())
