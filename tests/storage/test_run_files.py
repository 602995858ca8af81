"""``storage:`` in assay.yaml puts a workspace's ``runs/`` and ``dq_error/`` under ``s3://``
prefixes: the gate's quarantine file and its run summary are objects with keys of the run's own,
and a run killed while publishing them, finished again by ``assay recover``, leaves each once."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from _invoke import completed
from gate.conftest import HEADER, RULES
from s3server import S3Bucket
from storage.test_inputs import FEBRUARY, JANUARY


def _world(tmp_path: Path, bucket: S3Bucket) -> tuple[Path, list[str]]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "assay.yaml").write_text(
        f"storage:\n  runs: {bucket.url('ws/runs')}\n  dq_error: {bucket.url('ws/dq_error')}\n"
    )
    rules = tmp_path / "rules.csv"
    rules.write_text(RULES)
    for name, rows in (("jan.csv", JANUARY), ("feb.csv", FEBRUARY)):
        (tmp_path / name).write_text("\n".join([HEADER, *rows]) + "\n")
    args = ["--rules", str(rules), "--contributor", "B1", "--contributor-type", "bank"]
    args += ["--table", "silver.accounts", "--key", "account_id", "--order", "statement_date"]
    args += ["--contributor-column", "contributor_id", "--workspace", str(workspace), "--json"]
    return workspace, args


def _gate(batch: Path, args: list[str]) -> dict[str, Any]:
    done = completed("gate", str(batch), *args)
    assert done.returncode in (0, 1), done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def test_the_quarantine_file_and_the_run_summaries_are_objects(s3_bucket: S3Bucket, tmp_path: Path) -> None:
    workspace, args = _world(tmp_path, s3_bucket)
    january = _gate(tmp_path / "jan.csv", args)
    february = _gate(tmp_path / "feb.csv", args)
    run = february["run_id"]
    day = february["started_at"][:10]
    quarantine = f"ws/dq_error/date={day}/contributor=B1/{run}.csv"
    assert february["quarantine_file"] == s3_bucket.url(quarantine)
    assert s3_bucket.keys("ws/") == sorted(
        [quarantine, f"ws/runs/{january['run_id']}.json", f"ws/runs/{run}.json"]
    )
    rows = s3_bucket.get(quarantine).decode().splitlines()
    assert len(rows) == 1 + february["quarantined"] == 4
    assert json.loads(s3_bucket.get(f"ws/runs/{run}.json"))["passed"] == february["passed"] == 3
    assert not (workspace / "runs").exists() and not (workspace / "dq_error").exists()


def test_a_run_killed_while_publishing_is_finished_with_each_object_once(
    s3_bucket: S3Bucket, tmp_path: Path
) -> None:
    """Killed once both objects are written and before its staging folder is gone: recovery
    publishes again, onto the same keys."""
    workspace, args = _world(tmp_path, s3_bucket)
    _gate(tmp_path / "jan.csv", args)
    before = set(s3_bucket.keys("ws/"))
    killed = subprocess.run(
        [sys.executable, "-m", "assay", "gate", str(tmp_path / "feb.csv"), *args],
        env={**os.environ, "ASSAY_CRASH_AT": "after-summary"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    recovered = completed("recover", "--workspace", str(workspace), "--json")
    assert recovered.returncode == 0, recovered.stderr
    (run,) = [item["run_id"] for item in json.loads(recovered.stdout)["recovered"]]
    added = sorted(set(s3_bucket.keys("ws/")) - before)
    assert [key.rsplit("/", 1)[-1] for key in added] == [f"{run}.csv", f"{run}.json"]
    assert len(s3_bucket.get(added[0]).decode().splitlines()) == 4  # the header and 3 rows, whole
    assert json.loads(s3_bucket.get(added[1]))["quarantined"] == 3


def test_the_web_shows_and_serves_a_quarantine_kept_in_the_bucket(
    s3_bucket: S3Bucket, tmp_path: Path
) -> None:
    from fastapi.testclient import TestClient

    from assay.web.app import create_app
    from web.conftest import Api, open_plane, users_of

    workspace, args = _world(tmp_path, s3_bucket)
    february = _gate(tmp_path / "feb.csv", args)
    plane = open_plane(workspace)
    try:
        with TestClient(create_app(plane=plane), follow_redirects=False) as client:
            api = Api(client, users_of(plane)["viewer"])
            run = api.get(f"/gate/runs/{february['run_id']}", per_page=10).json()
            assert run["quarantine"]["total"] == february["quarantined"] == 2
            assert {row[1] for row in run["quarantine"]["items"]} == {"F01", "parse_error"}
            download = api.get(f"/gate/runs/{february['run_id']}/quarantine.csv")
            assert download.status_code == 200
            assert (
                download.text.splitlines()[1:]
                == s3_bucket.get(february["quarantine_file"].split("/", 3)[3]).decode().splitlines()[1:]
            )
    finally:
        plane.close()


def test_rows_held_for_a_rejected_value_are_quarantined_in_the_bucket(
    s3_bucket: S3Bucket, tmp_path: Path
) -> None:
    """A decision releases held rows outside any run: its quarantine goes where the runs' do."""
    workspace, args = _world(tmp_path, s3_bucket)
    (workspace / "checks").mkdir()
    (workspace / "checks" / "silver.accounts.yaml").write_text("domain_columns: [account_status]\n")
    _gate(tmp_path / "jan.csv", args)
    february = _gate(tmp_path / "feb.csv", args)
    assert february["held"] == 2  # A2's ADMIN_CHANGE and A4's FROZEN were never seen in January
    published = []
    for decision in february["decisions"]:
        done = completed("decisions", "reject", str(decision), "--by", "ana", "--workspace", str(workspace))
        assert done.returncode == 0, done.stderr
        (key,) = [k for k in s3_bucket.keys("ws/dq_error/") if f"/decision-{decision}-" in k]
        assert s3_bucket.url(key) in done.stdout
        published.append(key)
    rows = [r for k in published for r in csv.DictReader(io.StringIO(s3_bucket.get(k).decode()))]
    assert sorted(r["account_id"] for r in rows) == ["A2", "A4"]
    assert all("rejected" in r["dq_reasons"] for r in rows)
    assert not (workspace / "dq_error").exists()
