"""An event contract's ``source:`` on S3 (a glob of JSON-lines objects) is read as the same files
on disk are, and confined to ``sources: buckets:`` as a check document's source is."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from _invoke import completed
from assay.demo.events import feed
from events.test_run import CONTRACTS
from s3server import S3Bucket

AT = datetime(2026, 11, 10, 9, tzinfo=UTC)


def _run(workspace: Path, source: str, buckets: list[str] | None = None) -> tuple[int, dict[str, Any], str]:
    (workspace / "checks").mkdir(parents=True, exist_ok=True)
    if buckets is not None:
        (workspace / "assay.yaml").write_text(f"sources:\n  buckets: {json.dumps(buckets)}\n")
    contracts = workspace / "checks" / "events.yaml"
    contracts.write_text(CONTRACTS.format(source=source))
    done = completed(
        "check", "run", str(contracts), "--at", AT.isoformat(), "--now", "2026-11-10T10:05:00+00:00",
        "--workspace", str(workspace), "--json", "-",
    )  # fmt: skip
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}, done.stderr


def _judged(result: dict[str, Any]) -> list[tuple[str, str, Any]]:
    return sorted((o["expectation"], o["outcome"], o.get("observed")) for o in result["outcomes"])


def test_an_event_source_in_a_bucket_is_judged_as_the_same_files_on_disk(
    s3_bucket: S3Bucket, tmp_path: Path
) -> None:
    files = tmp_path / "local" / "events"
    feed(files, start=date(2026, 11, 10), days=1, per_hour=30)
    for path in sorted(files.glob("*.jsonl")):
        s3_bucket.put(f"feed/{path.name}", path.read_bytes())
    code, on_disk, err = _run(tmp_path / "local", "../events/*.jsonl")
    assert code in (0, 1), err
    code, in_bucket, err = _run(tmp_path / "remote", s3_bucket.url("feed/*.jsonl"), [s3_bucket.url("feed")])
    assert code in (0, 1), err
    assert in_bucket["metrics"] == on_disk["metrics"] and in_bucket["metrics"]["row_count"] > 0
    assert _judged(in_bucket) == _judged(on_disk)


def test_an_event_source_outside_the_allowed_prefixes_is_refused(s3_bucket: S3Bucket, tmp_path: Path) -> None:
    """As a check document's refused source: every expectation a config_error naming the fix."""
    s3_bucket.put("feed/a.jsonl", b"{}\n")
    code, result, err = _run(tmp_path / "ws", s3_bucket.url("feed/*.jsonl"), [s3_bucket.url("other")])
    assert code == 0 and "Traceback" not in err, err
    assert result["outcomes"] and all(o["outcome"] == "config_error" for o in result["outcomes"])
    assert all("under no bucket prefix the workspace allows" in o["message"] for o in result["outcomes"])
