"""Importance reads the reads assay sees: an export of a gated table is one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _demo_workspace import copy
from _invoke import assay


def test_an_export_is_a_recorded_read_that_raises_importance_not_the_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = copy(tmp_path / "ws")

    def scored() -> dict[str, object]:
        assert assay("score", "silver.accounts", "--json", "--workspace", str(workspace)) == 0
        [item] = json.loads(capsys.readouterr().out)
        return dict(item)

    before = scored()
    out = tmp_path / "accounts.parquet"
    assert assay("table", "export", "silver.accounts", str(out), "--workspace", str(workspace)) == 0
    capsys.readouterr()
    after = scored()
    assert after["components"]["reads"] == before["components"]["reads"] + 1  # type: ignore[index]
    assert after["importance"] > before["importance"]  # type: ignore[operator]
    assert after["score"] == before["score"]
