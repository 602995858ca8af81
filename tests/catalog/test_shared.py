"""Two gate processes, two workspaces, one catalog (issue 31, "A shared Iceberg catalog"): two
machines each with their own workspace folder and assay.yaml point at the same PostgreSQL catalog
(in the store's own database), the same PostgreSQL store and the same bucket, and run ``assay
gate`` at one instant. Afterwards every input row is committed, quarantined or held exactly once,
counted by key across the table and both machines' files."""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path

from _demo_workspace import cli_env
from _invoke import completed
from catalog.sites import Site, account, batch, keys, once, sql_catalog, start_together
from lifecycle.world import FEBRUARY, february, january
from pgserver import PostgresServer
from s3server import S3Bucket


def machines(tmp_path: Path, server: PostgresServer, bucket: S3Bucket) -> tuple[Site, Site]:
    store = server.create_database()
    catalog = sql_catalog(store, bucket.url("warehouse"))  # the store's database holds the catalog too
    return Site.make(tmp_path / "a", store, catalog), Site.make(tmp_path / "b", store, catalog)


def where(found: Counter[tuple[str, tuple[str, str]]], place: str) -> int:
    return sum(n for (at, _), n in found.items() if at == place)


def test_two_contributors_gated_at_once_into_one_table_land_exactly_once(
    tmp_path: Path, postgres_server: PostgresServer, s3_bucket: S3Bucket
) -> None:
    a, b = machines(tmp_path, postgres_server, s3_bucket)
    first, second = batch(tmp_path, "b1.csv", february(), "B1"), batch(tmp_path, "b2.csv", february(), "B2")
    # the table does not exist yet: both machines create it at once, then both commit
    done = start_together([a.command(first, "B1"), b.command(second, "B2")], tmp_path / "go")
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]
    found = account([a, b], {})
    assert once(found) == keys(first) + keys(second)
    assert (where(found, "committed"), where(found, "quarantined")) == (36, 4)  # 18 and 2 of each
    assert s3_bucket.keys("warehouse/silver/accounts/data/")  # the rows are in the bucket
    assert not (a.root / "warehouse").exists() and not (b.root / "warehouse").exists()


def test_the_same_file_gated_twice_at_once_on_two_machines_lands_once(
    tmp_path: Path, postgres_server: PostgresServer, s3_bucket: S3Bucket
) -> None:
    a, b = machines(tmp_path, postgres_server, s3_bucket)
    done = completed(*a.arguments(batch(tmp_path, "jan.csv", january(), "B1"), "B1"))
    assert done.returncode == 0, done.stderr
    same = batch(tmp_path, "feb.csv", february(), "B1")
    twice = start_together([a.command(same, "B1"), b.command(same, "B1")], tmp_path / "go")
    assert [d.returncode for d in twice] == [0, 0], [d.stderr for d in twice]
    assert sorted(bool(json.loads(d.stdout)["duplicate_of"]) for d in twice) == [False, True]
    found = account([a, b], {"statement_date": FEBRUARY})
    assert once(found) == keys(same)
    assert (where(found, "committed"), where(found, "quarantined"), where(found, "held")) == (15, 3, 2)


def test_a_gate_killed_after_its_commit_while_another_commits_is_exactly_once_after_a_rerun(
    tmp_path: Path, postgres_server: PostgresServer, s3_bucket: S3Bucket
) -> None:
    a, b = machines(tmp_path, postgres_server, s3_bucket)
    first, second = batch(tmp_path, "b1.csv", february(), "B1"), batch(tmp_path, "b2.csv", february(), "B2")
    killed, done = start_together(
        [a.command(first, "B1"), b.command(second, "B2")],
        tmp_path / "go",
        [cli_env(ASSAY_CRASH_AT="after-commit"), cli_env()],
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert done.returncode == 0, done.stderr
    again = completed(*a.arguments(first, "B1"))  # the killed machine runs its file again
    assert again.returncode == 0, again.stderr
    found = account([a, b], {})
    assert once(found) == keys(first) + keys(second)
    assert (where(found, "committed"), where(found, "quarantined")) == (36, 4)
