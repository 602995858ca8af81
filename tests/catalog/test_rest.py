"""The gate through an Iceberg REST catalog (issue 31): ``catalog: {type: rest}`` in each
machine's assay.yaml, PyIceberg's REST client talking to a real HTTP server on 127.0.0.1
(tests/icebergrest.py) whose commits check their requirements (409 on a conflict), with the
warehouse in a bucket and the bearer token in an environment variable."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from _invoke import completed
from assay.workspace import Workspace
from catalog.sites import Site, account, batch, keys, once, rest_catalog, start_together
from icebergrest import CREDENTIAL, TOKEN, RestServer
from lifecycle.world import february
from pgserver import PostgresServer
from s3server import S3Bucket

CHECK = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: shared.accounts, source: {iceberg: silver.accounts}}
profiles:
  - id: all
    metrics: [row_count]
expectations:
  - {id: rows, metric: all.row_count, expect: "= 36"}
"""


def test_two_contributors_gated_at_once_through_a_rest_catalog_land_exactly_once(
    tmp_path: Path,
    postgres_server: PostgresServer,
    s3_bucket: S3Bucket,
    iceberg_rest: RestServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ICEBERG_TOKEN", TOKEN)
    store = postgres_server.create_database()
    catalog = rest_catalog(iceberg_rest.uri, s3_bucket.url("lake"), "ICEBERG_TOKEN")
    a, b = Site.make(tmp_path / "a", store, catalog), Site.make(tmp_path / "b", store, catalog)
    first, second = batch(tmp_path, "b1.csv", february(), "B1"), batch(tmp_path, "b2.csv", february(), "B2")
    done = start_together([a.command(first, "B1"), b.command(second, "B2")], tmp_path / "go")
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]
    found = account([a, b], {})
    assert once(found) == keys(first) + keys(second)
    assert s3_bucket.keys("lake/silver/accounts/data/")
    listed = completed("table", "list", "--workspace", str(b.root), "--json")
    assert listed.returncode == 0 and "silver.accounts" in listed.stdout, listed.stderr
    # a check document's iceberg source reads the shared table too, through the same catalog
    (b.root / "checks" / "shared.yaml").write_text(CHECK)
    out = tmp_path / "check.json"
    checked = completed("check", "run", str(b.root / "checks" / "shared.yaml"), "--workspace", str(b.root),
                        "--store", store, "--json", str(out))  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    assert [o["outcome"] for o in json.loads(out.read_text())["outcomes"]] == ["passed"]


def test_a_client_credential_from_its_variable_is_exchanged_for_a_token(
    tmp_path: Path, iceberg_rest: RestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ICEBERG_CREDENTIAL", CREDENTIAL)
    (tmp_path / "assay.yaml").write_text(
        f"catalog:\n  type: rest\n  uri: {iceberg_rest.uri}\n  warehouse: file://{tmp_path}/lake\n"
        "  credential_env: ICEBERG_CREDENTIAL\n"
    )
    rows = pa.table({"id": pa.array([1, 2], pa.int64())})
    with Workspace(tmp_path).warehouse() as warehouse:
        warehouse.create("silver.t", rows.schema, partition_by=[])
        warehouse.commit("silver.t", rows)
    monkeypatch.setenv("ICEBERG_CREDENTIAL", "assay-client:wrong")
    done = completed("table", "list", "--workspace", str(tmp_path))
    assert done.returncode == 2 and "refused the credentials" in done.stderr, done.stderr


def test_a_wrong_token_is_a_config_error_naming_the_variable(
    tmp_path: Path, iceberg_rest: RestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ICEBERG_TOKEN", "not-the-token")
    catalog = rest_catalog(iceberg_rest.uri, f"file://{tmp_path}/lake", "ICEBERG_TOKEN")
    site = Site.make(tmp_path / "a", "sqlite://", catalog)
    done = completed("table", "list", "--workspace", str(site.root))
    assert done.returncode == 2, done.stderr
    assert "refused the credentials" in done.stderr and "token_env" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_rest_server_refuses_a_commit_planned_on_a_table_another_writer_moved(
    tmp_path: Path, iceberg_rest: RestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyiceberg.exceptions import CommitFailedException

    monkeypatch.setenv("ICEBERG_TOKEN", TOKEN)
    (tmp_path / "assay.yaml").write_text(
        f"catalog:\n  type: rest\n  uri: {iceberg_rest.uri}\n  warehouse: file://{tmp_path}/lake\n"
        "  token_env: ICEBERG_TOKEN\n"
    )
    rows = pa.table({"id": pa.array([1], pa.int64())})
    with Workspace(tmp_path).warehouse() as warehouse:
        warehouse.create("silver.t", rows.schema, partition_by=[])
        catalog = warehouse._catalog
        stale, fresh = catalog.load_table("silver.t"), catalog.load_table("silver.t")
        fresh.append(rows)
        with pytest.raises(CommitFailedException, match="Requirement failed: branch main"):
            stale.append(rows)  # planned on the table before the other append: 409
        assert warehouse.commit("silver.t", rows).rows_added == 1  # the platform's commit plans again
        assert warehouse.read("silver.t", {}).num_rows == 2
