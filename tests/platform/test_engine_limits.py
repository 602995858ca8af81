"""``engine:`` of assay.yaml bounds a run's DuckDB: a memory limit, spilling into the workspace's
``tmp/duckdb/<run id>`` (removed when the run ends), the limits in force in the run's summary."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from datetime import date
from pathlib import Path

import duckdb
import pytest

from _demo_workspace import cli_env
from _invoke import completed
from assay.platform.runs.limits import engine_limits
from assay.store import MetricStore

ROOT = Path(__file__).resolve().parents[2]

ROWS = 1_000_000  # an id a row: the profile's exact count of ids alone needs more than 64 MB


@pytest.fixture(scope="module")
def load(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("load")
    data = folder / "ids.parquet"
    duckdb.connect().sql(
        "SELECT i AS id, hash(i) % 1000 AS k, (hash(i, 'v') % 100000)::DOUBLE / 100 AS v, "
        "DATE '2026-11-30' AS day FROM range($rows) t(i)",
        params={"rows": ROWS},
    ).write_parquet(str(data))
    document = {
        "apiVersion": "assay/v1",
        "kind": "DatasetChecks",
        "dataset": {"name": "big.ids", "source": {"path": str(data)}, "owners": {"team": "t"}},
        "profiles": [
            {
                "id": "load",
                "slice": {"column": "day"},
                "metrics": ["row_count", {"sum": ["v"]}, {"mean": ["k"]}],
            }
        ],
        "expectations": [{"id": "rows", "metric": "load.row_count", "expect": ">= 0"}],
    }
    (folder / "ids.yaml").write_text(json.dumps(document))
    return folder


def _run(load: Path, workspace: Path, engine: str) -> tuple[int, str, dict[str, object]]:
    workspace.mkdir()
    (workspace / "assay.yaml").write_text(f"sources:\n  paths: [{load}]\nengine:\n{engine}")
    done = completed(
        "check", "run", str(load / "ids.yaml"), "--workspace", str(workspace), "--at", "2026-11-30"
    )
    (summary,) = (workspace / "runs").glob("*.json")
    return done.returncode, done.stderr, json.loads(summary.read_text())


def test_a_run_within_a_tiny_memory_limit_spills_into_the_workspace_and_removes_it(
    load: Path, tmp_path: Path
) -> None:
    limited = "  memory_limit: 64MB\n  threads: 1\n"
    # room for 1 MB of spilled blocks is too little: what does not fit in 64 MB goes to disk
    code, stderr, cramped = _run(load, tmp_path / "cramped", limited + "  max_temp_directory_size: 1MB\n")
    assert code == 3, stderr
    assert cramped["state"] == "system_error"
    assert "This limit was set by the 'max_temp_directory_size' setting." in stderr
    assert "PRAGMA" not in stderr  # a setting of assay.yaml, not of a DuckDB session
    # with the disk's room, the same run completes: it spilled into its folder in the workspace
    code, stderr, summary = _run(load, tmp_path / "spilled", limited)
    assert code == 0, stderr
    engine = summary["engine"]
    assert isinstance(engine, dict)
    assert engine["memory_limit"] == "61.0 MiB"  # 64 MB as DuckDB reports it
    assert engine["threads"] == "1"
    folder = Path(engine["temp_directory"])
    assert folder == tmp_path / "spilled" / "tmp" / "duckdb" / str(summary["run_id"])
    assert not (tmp_path / "spilled" / "tmp").exists()  # removed with the run
    assert not (tmp_path / "cramped" / "tmp").exists()  # a failed run's too
    # and it stored what DuckDB without a limit measures, the profile's count of ids included
    expected = (
        duckdb.connect()
        .execute(
            "SELECT count(*), sum(v), avg(k), count(DISTINCT id) FROM read_parquet($p)",
            {"p": str(load / "ids.parquet")},
        )
        .fetchone()
    )
    with MetricStore.open(workspace=tmp_path / "spilled") as store:
        (loaded,) = store.window("big.ids", date(2026, 12, 1), partition="load")
        stored = store.load_metrics([loaded.id])[loaded.id]
    assert expected is not None and expected[0] == ROWS
    assert stored[("Dataset", "*", "row_count")] == expected[0]
    assert stored[("Dataset", "*", "sum(v)")] == pytest.approx(expected[1], rel=1e-12)
    assert stored[("Dataset", "*", "mean(k)")] == pytest.approx(expected[2], rel=1e-12)
    assert stored[("Column", "id", "DistinctValuesCount")] == expected[3]


@pytest.mark.parametrize(
    ("engine", "named"),
    [
        ("  memory_limit: lots\n", "engine.memory_limit: 'lots' is not a size"),
        ("  threads: 0\n", "engine.threads"),
        ("  memory: 2GB\n", "engine.memory"),
    ],
)
def test_a_wrong_engine_setting_is_a_config_error_naming_the_file_and_field(
    load: Path, tmp_path: Path, engine: str, named: str
) -> None:
    code, stderr, summary = _run(load, tmp_path / "ws", engine)
    assert code == 2, stderr
    assert f"{tmp_path / 'ws' / 'assay.yaml'}: {named}" in " ".join(stderr.split())
    assert summary["state"] == "config_error"


def test_the_documented_engine_settings_are_read_as_written(tmp_path: Path) -> None:
    """docs/operations.md's ``engine:`` block, as a workspace's assay.yaml."""
    part = (ROOT / "docs" / "operations.md").read_text().split("### A big load on one machine", 1)[1]
    (block,) = re.findall(r"^```yaml\n(.*?)^```$", part.split("\n## ", 1)[0], re.MULTILINE | re.DOTALL)
    (tmp_path / "assay.yaml").write_text(block)
    limits = engine_limits(tmp_path, "r1")
    assert (limits.memory_limit, limits.threads, limits.max_temp_directory_size) == ("2GB", 2, "50GB")
    assert limits.temp_directory == tmp_path / "tmp" / "duckdb" / "r1"


def test_what_a_killed_run_spilled_is_removed_by_the_next_run_of_its_dataset(
    load: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "assay.yaml").write_text(f"sources:\n  paths: [{load}]\nengine:\n  memory_limit: 256MB\n")
    run = ["check", "run", str(load / "ids.yaml"), "--workspace", str(workspace), "--at", "2026-11-30"]
    killed = subprocess.run(
        [sys.executable, "-m", "assay", *run],
        capture_output=True,
        text=True,
        env=cli_env(ASSAY_CRASH_AT="after-measure"),  # measured, its engine open: SIGKILL
        timeout=120,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    (left,) = (workspace / "tmp" / "duckdb").iterdir()  # the dead run's folder, named by its id
    done = completed(*run)
    assert done.returncode == 0, done.stderr
    with MetricStore.open(workspace=workspace) as store:
        dead = store.run(left.name)
    assert dead is not None and dead.state == "system_error"  # recovery abandoned it ...
    assert not (workspace / "tmp" / "duckdb" / left.name).exists()  # ... and removed what it spilled
