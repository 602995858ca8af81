"""docs/operations.md, "A shared Iceberg catalog": the part's ``assay.yaml`` blocks and its
commands, read out of the document and run as written against this test's PostgreSQL, S3 and
REST catalog servers (the document's example hosts, keys and URLs replaced by theirs), so the
document cannot drift from what is tested."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from _invoke import completed
from catalog.sites import batch
from icebergrest import TOKEN, RestServer
from lifecycle.world import RULES, february
from pgserver import PostgresServer
from s3server import ACCESS_KEY, REGION, SECRET_KEY, S3Bucket

DOCUMENT = Path(__file__).parents[2] / "docs" / "operations.md"
PART = re.compile(r"^#### A shared Iceberg catalog\n(.*?)(?=^###? )", re.MULTILINE | re.DOTALL)
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
DOCUMENTED_STORE = "postgresql+psycopg://assay@db.internal:5432/assay"


def part() -> tuple[dict[str, str], list[str]]:
    """The part's ``assay.yaml`` blocks by catalog type, and its console lines (continued lines joined)."""
    found = PART.search(DOCUMENT.read_text())
    assert found is not None, "docs/operations.md has no '#### A shared Iceberg catalog'"
    yamls: dict[str, str] = {}
    lines: list[str] = []
    for language, text in FENCE.findall(found.group(1)):
        if language == "yaml":
            kind = re.search(r"^  type: (\w+)$", text, re.MULTILINE)
            assert kind is not None
            yamls[kind.group(1)] = text
        elif language == "console":
            joined = re.sub(r"\\\n\s*", "", text)
            lines += [line[2:] for line in joined.splitlines() if line.startswith("$ ")]
    return yamls, lines


@pytest.mark.parametrize("kind", ["sql", "rest"])
def test_the_documented_shared_catalog_runs_as_written(
    kind: str,
    tmp_path: Path,
    postgres_server: PostgresServer,
    s3_bucket: S3Bucket,
    iceberg_rest: RestServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    yamls, lines = part()
    assert sorted(yamls) == ["rest", "sql"] and len(lines) == 5
    store = postgres_server.create_database()
    ours = {
        DOCUMENTED_STORE: store,
        "s3://lake/warehouse": s3_bucket.url("warehouse"),
        "https://catalog.internal/iceberg": iceberg_rest.uri,
        "https://s3.internal": s3_bucket.server.endpoint,
        "eu-west-1": REGION,
        "AKIAEXAMPLE": ACCESS_KEY,
        "example-secret": SECRET_KEY,
    }

    def local(text: str) -> str:
        for documented, value in ours.items():
            text = text.replace(documented, value)
        return text

    config = yamls[kind]
    assert DOCUMENTED_STORE in yamls["sql"] and "s3://lake/warehouse" in config
    monkeypatch.setenv("ICEBERG_TOKEN", TOKEN)
    monkeypatch.chdir(tmp_path)
    for machine in ("machine-a", "machine-b"):
        (tmp_path / machine).mkdir()
        (tmp_path / machine / "assay.yaml").write_text(local(config))
    (tmp_path / "rules.csv").write_text(RULES)
    batch(tmp_path, "b1.csv", february(), "B1")
    batch(tmp_path, "b2.csv", february(), "B2")
    outputs = []
    for line in lines:
        words = shlex.split(local(line))
        if words[0] == "export":
            for setting in words[1:]:
                name, equals, value = setting.partition("=")
                assert equals, line
                monkeypatch.setenv(name, value)
            continue
        assert words[0] == "assay", line
        done = completed(*words[1:])
        assert done.returncode == 0, (line, done.stderr)
        outputs.append(done.stdout)
    assert "silver.accounts" in outputs[-1] and "36" in outputs[-1]  # both contributors' 18 rows
    assert s3_bucket.keys("warehouse/silver/accounts/data/")
    assert not (tmp_path / "machine-a" / "warehouse").exists()
