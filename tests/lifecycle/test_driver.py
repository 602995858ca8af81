"""The one run driver (:mod:`assay.platform.runs.driver`): retries with attempts recorded, dry runs
that write nothing, timing and query counts, and a user's mistake recorded as ``config_error``.
The flows here are small real ones over a real DuckDB engine and a real SQLite store."""

from __future__ import annotations

import ast
from pathlib import Path

import assay.platform.runs as runs

RUNS = Path(runs.__file__).parent


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at file level or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_recovery_does_not_import_the_run() -> None:
    """run → recover, never back: the run recovers its dataset's dead runs on entry, and recovery
    works on what a run leaves on disk (its staging, in :mod:`.staging`), not on the run."""
    assert "assay.platform.runs.run" not in _imports(RUNS / "recover.py")
