"""The object-storage part of docs/operations.md ("Deployment", "Object storage") run as written
against the session's S3 server: its ``storage:``/``sources:`` settings become the workspace's
assay.yaml, and each command of its console block runs with the store's endpoint, the buckets of
this test and a credentials profile in place of the documented ones."""

from __future__ import annotations

import gzip
import re
import shlex
from importlib import resources
from pathlib import Path

import pytest

from _invoke import completed
from gate.conftest import HEADER, RULES
from s3server import ACCESS_KEY, SECRET_KEY, S3Bucket
from storage.test_inputs import FEBRUARY

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
ENDPOINT = "http://minio.internal:9000"


def _part() -> tuple[str, str]:
    """The yaml and console blocks of the object-storage part."""
    text = DOC.read_text()
    part = text[text.index("#### Object storage") :]
    part = part[: part.index("\n#### ", 1)]  # up to the next part of the section
    yaml = re.search(r"^```yaml\n(.*?)^```", part, re.MULTILINE | re.DOTALL)
    console = re.search(r"^```console\n(.*?)^```", part, re.MULTILINE | re.DOTALL)
    assert yaml and console, "the object-storage part lost its settings or its commands"
    return yaml.group(1), console.group(1)


def test_the_documented_settings_and_commands_run_as_written(
    s3_bucket: S3Bucket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drops, platform = f"{s3_bucket.name}-drops", f"{s3_bucket.name}-runs"
    client = s3_bucket.server.client()
    for bucket in (drops, platform):
        client.create_bucket(Bucket=bucket)

    def ours(text: str) -> str:
        text = text.replace(ENDPOINT, s3_bucket.server.endpoint)
        return text.replace("s3://dq-drops", f"s3://{drops}").replace("s3://dq-platform", f"s3://{platform}")

    demo = resources.files("assay.demo") / "data"
    orders = gzip.compress((demo / "orders.csv").read_bytes())
    client.put_object(Bucket=drops, Key="shop/orders.csv.gz", Body=orders)
    client.put_object(Bucket=drops, Key="shop/customers.csv", Body=(demo / "customers.csv").read_bytes())
    client.put_object(Bucket=drops, Key="bureau/feb.csv", Body="\n".join([HEADER, *FEBRUARY, ""]).encode())
    (tmp_path / "orders.dqdl").write_bytes((demo / "orders.dqdl").read_bytes())
    (tmp_path / "rules.csv").write_text(RULES)
    settings, commands = _part()
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "assay.yaml").write_text(ours(settings))
    # the documented profile, in a credentials file of the test's own; no keys in the environment
    credentials = tmp_path / "credentials"
    credentials.write_text(
        f"[dq-platform]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n"
    )
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_REGION"):
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)

    lines = ours(commands).splitlines()
    ran = 0
    for i, line in enumerate(lines):
        if not line.startswith("$ "):
            continue
        words = shlex.split(line[2:].split(" # ")[0])
        exits = int(m.group(1)) if (m := re.search(r"# exits (\d+)", line)) else 0
        after = lines[i + 1 :]
        shown = after[: next((k for k, s in enumerate(after) if s.startswith("$ ")), len(after))]
        if words[0] == "export":
            for assignment in words[1:]:
                name, _, value = assignment.partition("=")
                monkeypatch.setenv(name, value)
            continue
        assert words[0] == "assay", line
        done = completed(*words[1:])
        assert done.returncode == exits, f"{line}\n{done.stdout}\n{done.stderr}"
        for expected in shown:
            for word in expected.split():
                if "…" not in word:
                    assert word in done.stdout, f"{line}: {word!r} not in\n{done.stdout}"
        ran += 1
    assert ran == 2
    runs = client.list_objects_v2(Bucket=platform).get("Contents", [])
    keys = sorted(item["Key"] for item in runs)
    assert [k.split("/")[0] for k in keys] == ["dq_error", "runs"], keys
