"""Commands that only read a workspace refuse one that does not exist instead of creating it
empty: ``assay history wx --workspace nows`` (a typo) made ``nows/assay.db`` and said the dataset
had no loads, so the typo looked like lost history."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _invoke import completed


@pytest.mark.parametrize(
    "command",
    [
        ["history", "wx"],
        ["decisions", "list"],
        ["table", "list"],
        ["table", "export", "silver.accounts", "x.csv"],
    ],
)
def test_a_read_of_a_workspace_that_does_not_exist_is_refused_and_creates_nothing(
    tmp_path: Path, command: list[str]
) -> None:
    missing = tmp_path / "nows"
    done = completed(*command, "--workspace", str(missing))
    assert done.returncode == 2, done.stderr
    assert f"no workspace at {missing}" in done.stderr
    assert not missing.exists()
    assert "Traceback" not in done.stderr
