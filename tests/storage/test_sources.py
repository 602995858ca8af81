"""A check document's ``s3://`` source: read like files on disk (an object, a prefix, a glob), and
confined to the bucket prefixes ``sources: buckets:`` of assay.yaml lists. A refused source is a
config_error naming the rule, and no request reaches any server (a listener that answers nothing
stands in for the endpoint and counts connections)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _invoke import completed
from _receivers import Listener
from s3server import S3Bucket

DOC = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset: {{name: shop.orders, source: {{path: '{source}'}}}}
profiles:
  - id: daily
    metrics: [row_count, {{count_where: {{name: big, condition: "amount > 1", sample_rows: 5}}}}]
expectations:
  - {{id: rows, metric: daily.row_count, expect: "> 3"}}
  - {{id: big, metric: daily.big, expect: "= 0"}}
"""
DAYS = {"day1.csv": "id,amount\n1,1\n2,3\n", "day2.csv": "id,amount\n3,1\n4,1\n5,7\n"}


def _run(workspace: Path, source: str, buckets: list[str]) -> dict[str, Any]:
    (workspace / "checks").mkdir(parents=True, exist_ok=True)
    (workspace / "assay.yaml").write_text(f"sources:\n  buckets: {json.dumps(buckets)}\n")
    document = workspace / "checks" / "orders.yaml"
    document.write_text(DOC.format(source=source))
    done = completed(
        "check", "run", str(document), "--workspace", str(workspace), "--at", "2026-12-01", "--json", "-"
    )
    assert done.returncode in (0, 1), done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _judged(result: dict[str, Any]) -> list[tuple[str, str, Any]]:
    return [(o["expectation"], o["outcome"], o["observed"]) for o in result["outcomes"]]


@pytest.mark.parametrize("pattern", ["drops/day*.csv", "drops/", "drops"])
def test_a_glob_or_a_prefix_of_objects_is_read_as_the_same_files_on_disk(
    s3_bucket: S3Bucket, tmp_path: Path, pattern: str
) -> None:
    local = tmp_path / "local"
    (local / "drops").mkdir(parents=True)
    for name, text in DAYS.items():
        (local / "drops" / name).write_text(text)
        s3_bucket.put(f"drops/{name}", text.encode())
    s3_bucket.put("elsewhere/day3.csv", b"id,amount\n9,9\n")  # outside the prefix: not read
    on_disk = _run(local, str(local / "drops" / "day*.csv"), [])
    remote = _run(tmp_path / "remote", s3_bucket.url(pattern), [s3_bucket.url("drops")])
    assert _judged(remote) == _judged(on_disk)
    assert _judged(remote) == [("rows", "passed", 5.0), ("big", "failed", 2.0)]


@pytest.fixture
def listener(monkeypatch: pytest.MonkeyPatch) -> Iterator[Listener]:
    """The AWS endpoint pointed at a port that answers nothing and counts connections."""
    found = Listener()
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{found.port}")
    yield found
    found.close()


@pytest.mark.parametrize(
    "source",
    [
        "s3://other-bucket/drops/day1.csv",  # a bucket not listed
        "s3://dq-drops/dropsy/day1.csv",  # a sibling prefix that starts with the listed one
        "s3://dq-drops/secret/day1.csv",
        "s3://dq-drops/drops/../secret/day1.csv",  # up and out
        "s3://dq-drops/drops/%2e%2e/secret/day1.csv",  # up and out, encoded
        "s3://dq-drops/drops/%2E%2E%2Fsecret/day1.csv",
        "s3://dq-drops/dr*/day1.csv",  # a glob that would list beyond the prefix
        "s3://dq-drops/*",
    ],
)
def test_an_object_outside_the_listed_prefixes_is_refused_before_any_request(
    tmp_path: Path, listener: Listener, source: str
) -> None:
    result = _run(tmp_path / "ws", source, ["s3://dq-drops/drops"])
    assert result["outcomes"]
    for outcome in result["outcomes"]:
        assert outcome["outcome"] == "config_error", outcome
        assert "sources: buckets:" in outcome["message"] or "may not hold" in outcome["message"]
    assert listener.connections() == 0


def test_no_bucket_is_allowed_unless_an_admin_lists_it(tmp_path: Path, listener: Listener) -> None:
    result = _run(tmp_path / "ws", "s3://dq-drops/drops/day1.csv", [])
    assert all("declared: none" in o["message"] for o in result["outcomes"])
    assert listener.connections() == 0


def test_a_mistake_in_the_buckets_list_is_named(tmp_path: Path) -> None:
    result = _run(tmp_path / "ws", "s3://dq-drops/drops/day1.csv", ["/srv/drops"])
    assert all("sources.buckets: '/srv/drops' is not an s3://" in o["message"] for o in result["outcomes"])


def test_a_data_file_given_on_the_command_line_is_not_confined(s3_bucket: S3Bucket, tmp_path: Path) -> None:
    """``--data`` is the user's own choice, as a local path on the command line is."""
    s3_bucket.put("any/where.csv", DAYS["day1.csv"].encode())
    (tmp_path / "assay.yaml").write_text("sources:\n  buckets: []\n")
    (tmp_path / "r.dqdl").write_text("Rules = [ RowCount = 2 ]\n")
    done = completed(
        "dqdl", "run", str(tmp_path / "r.dqdl"), "--data", s3_bucket.url("any/where.csv"),
        "--workspace", str(tmp_path), "--json", "-",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rules"][0]["outcome"] == "Passed"
