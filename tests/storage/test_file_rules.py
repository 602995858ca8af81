"""File rules on ``s3://`` objects, as Glue runs them on S3: an object, a prefix, a glob; sizes and
times from the objects' metadata, checksums streamed, ``uriRegex`` on the URL. Each rule judges the
objects as it judges the same files on disk."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa

from assay.dqdl import evaluate
from s3server import S3Bucket

FILES = {"a.csv": b"x,y\n1,2\n", "b.csv": b"x,y\n3,4\n", "c.txt": b"x,y\n1,2\n"}


def _judged(root: str, other: str) -> list[tuple[str, str | None]]:
    good = hashlib.sha256(FILES["a.csv"]).hexdigest()
    text = "Rules = [ " + ", ".join([
        f'FileSize "{root}" < 1 KB',
        f'FileSize "{root}" > 8 B',  # each object is 8 bytes: none is larger
        f'FileFreshness "{root}" > (now() - 1 days)',
        f'FileUniqueness "{root}" > 0.9',  # a.csv and c.txt hold the same bytes
        f'FileUniqueness "{root}" > 0.9 with uriRegex = "\\.csv$"',
        f'FileMatch "{root}/a.csv" "{other}/a.csv"',
        f'FileMatch "{root}/a.csv" in ["{good}"]',
        f'FileMatch "{root}" "{other}" with matchFileName = "true"',
    ]) + " ]"  # fmt: skip
    result = evaluate(text, pa.table({"x": [1]}), now=datetime.now(UTC).isoformat())
    return [(r.outcome, r.message) for r in result.rules]


def test_file_rules_judge_objects_as_they_judge_files(s3_bucket: S3Bucket, tmp_path: Path) -> None:
    for folder in ("drop", "copy"):
        (tmp_path / folder).mkdir()
        for name, body in FILES.items():
            (tmp_path / folder / name).write_bytes(body)
            s3_bucket.put(f"{folder}/{name}", body)
    on_disk = _judged(str(tmp_path / "drop"), str(tmp_path / "copy"))
    remote = _judged(s3_bucket.url("drop"), s3_bucket.url("copy"))
    assert [o for o, _ in remote] == [o for o, _ in on_disk]
    assert [o for o, _ in remote] == [
        "Passed",
        "Failed",
        "Passed",
        "Failed",
        "Passed",
        "Passed",
        "Passed",
        "Passed",
    ]


def test_a_missing_object_is_named(s3_bucket: S3Bucket) -> None:
    (outcome, message) = _judged(s3_bucket.url("none"), s3_bucket.url("none"))[0]
    assert outcome == "Error" and f"'{s3_bucket.url('none')}' does not exist" in (message or "")
