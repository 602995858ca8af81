"""``assay`` run in process as a user's shell runs it: arguments in, exit code out (errors mapped
to exit codes by :func:`assay.cli.main`, as they are for the installed command)."""

from __future__ import annotations

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
