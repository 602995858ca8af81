"""`assay history --column C` shows the rate its null-rate band judged: nulls plus blanks by
default, nulls only with ``null_rate: {blanks: false}``. It once showed the null rate (0.0)
beside a band and a hard alert computed on 15 blank cells of 50 (0.30)."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pytest

from assay.monitor import DatasetConfig, history
from assay.platform import flows
from assay.store import MetricStore
from test_cli import run


def _loads(tmp_path: Path) -> list[Path]:
    """Seven daily CSVs of 50 rows; on the seventh, 15 statuses are blank."""
    paths = []
    for i in range(7):
        statuses = ["open", "closed"] * 25
        if i == 6:
            statuses[:15] = [""] * 15
        path = tmp_path / f"s{i}.csv"
        path.write_text("id,status\n" + "".join(f"{n},{s}\n" for n, s in enumerate(statuses)))
        paths.append(path)
    return paths


def _profile_all(store: MetricStore, tmp_path: Path, config: DatasetConfig | None = None) -> None:
    for i, path in enumerate(_loads(tmp_path)):
        flows.profile(
            path,
            dataset="s",
            load_date=date(2024, 1, 1) + timedelta(days=i),
            store=store,
            config=config,
            workspace=tmp_path,
        )


def test_the_value_beside_the_band_is_the_rate_it_judged(tmp_path: Path) -> None:
    with MetricStore.open(workspace=tmp_path / "ws") as store:
        _profile_all(store, tmp_path)
        points = history(store, "s", column="status")
        last = points[-1]
        assert (last.value, last.low, last.high, last.severity) == (0.3, 0.0, 0.0, "hard")
        assert "15 missing (0 nulls, 15 blanks)" in (last.message or "")
        assert [p.value for p in points[:-1]] == [0.0] * 6
        # the stored metric is still the null rate, and no band judged it
        nulls = history(store, "s", column="status", metric="NullRate")
        assert [p.value for p in nulls] == [0.0] * 7 and all(
            p.low is None and p.severity is None for p in nulls
        )


def test_with_blanks_false_the_value_is_the_null_rate(tmp_path: Path) -> None:
    config = DatasetConfig.model_validate({"null_rate": {"blanks": False}})
    with MetricStore.open(workspace=tmp_path / "ws") as store:
        _profile_all(store, tmp_path, config)
        points = history(store, "s", column="status")
        assert [p.value for p in points] == [0.0] * 7 and points[-1].severity is None


def test_a_load_judged_without_a_null_rate_band_shows_its_missing_rate(tmp_path: Path) -> None:
    config = DatasetConfig.model_validate({"columns": {"status": {"checks": {"null_rate": False}}}})
    with MetricStore.open(workspace=tmp_path / "ws") as store:
        _profile_all(store, tmp_path, config)
        points = history(store, "s", column="status")
        assert points[-1].value == 0.3 and points[-1].low is None and points[-1].severity is None


def test_the_cli_prints_and_plots_the_judged_rate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ws = str(tmp_path / "ws")
    for i, path in enumerate(_loads(tmp_path)):
        day = (date(2024, 1, 1) + timedelta(days=i)).isoformat()
        run(capsys, "profile", str(path), "--dataset", "s", "--load-date", day, "--workspace", ws)
    plot = tmp_path / "status.png"
    code, out, _ = run(
        capsys, "history", "s", "--column", "status", "--workspace", ws, "--json", "--plot", str(plot)
    )
    assert code == 0
    last = json.loads(out)["points"][-1]
    assert (last["value"], last["high"], last["severity"]) == (0.3, 0.0, "hard")
    code, out, _ = run(capsys, "history", "s", "--column", "status", "--workspace", ws)
    assert code == 0 and "MissingRate" in out and "0.3" in out
