"""``catalog:`` of assay.yaml (issue 31): every mistake is one ConfigError (exit 2) naming the
file and the field, nothing is opened; and every reader and writer of tables opens the catalog
through the one function that reads it (:meth:`assay.workspace.Workspace.warehouse`)."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest

from _invoke import completed
from assay.lake.iceberg import Warehouse
from assay.workspace import Workspace
from pgserver import free_port

SOURCES = Path(__file__).parents[2] / "src" / "assay"

MISTAKES = {
    "an unknown key": (
        "type: sql\n  uri: sqlite://\n  warehouse: wh\n  bucket: x",
        "catalog.bucket: Extra inputs",
    ),
    "an unknown type": ("type: hive\n  uri: thrift://metastore:9083", "catalog: Input tag 'hive'"),
    "a password in the URL": (
        "type: sql\n  uri: postgresql://ana:secret@db/lake\n  warehouse: wh",
        "catalog.uri: holds a password",
    ),
    "not a URL": (
        "type: sql\n  uri: not a url\n  warehouse: wh",
        "catalog.uri: 'not a url' is not a SQLAlchemy URL",
    ),
    "no warehouse for sql": ("type: sql\n  uri: sqlite://", "catalog.warehouse: Field required"),
    "another scheme": (
        "type: sql\n  uri: sqlite://\n  warehouse: gs://lake/wh",
        "catalog.warehouse: 'gs://lake/wh'",
    ),
    "a REST URL that is not http": (
        "type: rest\n  uri: thrift://x",
        "catalog.uri: 'thrift://x' is not an http",
    ),
    "an unset token variable": (
        "type: rest\n  uri: http://127.0.0.1:9\n  token_env: ASSAY_NO_SUCH_TOKEN",
        "catalog.token_env: the variable ASSAY_NO_SUCH_TOKEN is not set",
    ),
}


@pytest.mark.parametrize("mistake", MISTAKES)
def test_a_mistake_in_catalog_is_a_config_error_naming_the_file_and_field(
    mistake: str, tmp_path: Path
) -> None:
    block, expected = MISTAKES[mistake]
    (tmp_path / "assay.yaml").write_text(f"catalog:\n  {block}\n")
    done = completed("table", "list", "--workspace", str(tmp_path))
    assert done.returncode == 2, done.stderr
    assert f"{tmp_path / 'assay.yaml'}: {expected}" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "warehouse").exists()


def test_without_catalog_the_workspace_keeps_its_own_sqlite_catalog(tmp_path: Path) -> None:
    (tmp_path / "assay.yaml").write_text("sources:\n  paths: []\n")
    with Workspace(tmp_path).warehouse() as warehouse:
        warehouse.create("silver.t", pa.schema([("id", pa.int64())]), partition_by=[])
    assert (tmp_path / "warehouse" / "catalog.db").is_file()


def test_a_sql_catalog_keeps_a_relative_warehouse_in_the_workspace(tmp_path: Path) -> None:
    shared = f"sqlite:///{tmp_path / 'shared.db'}"
    (tmp_path / "assay.yaml").write_text(f"catalog:\n  type: sql\n  uri: {shared}\n  warehouse: lake\n")
    with Workspace(tmp_path).warehouse() as warehouse:
        warehouse.create("silver.t", pa.schema([("id", pa.int64())]), partition_by=[])
        assert warehouse.tables()[0].location == f"file://{tmp_path.resolve()}/lake/silver/t"
    assert (tmp_path / "shared.db").is_file() and not (tmp_path / "warehouse").exists()


def test_every_reader_and_writer_opens_the_catalog_through_the_workspace() -> None:
    """Warehouse.open with a workspace's path alone would read the local SQLite catalog whatever
    assay.yaml says: only Workspace.warehouse calls it."""
    callers = sorted(
        str(path.relative_to(SOURCES))
        for path in SOURCES.rglob("*.py")
        if re.search(r"Warehouse\.open\(", path.read_text()) and path.name not in ("iceberg.py",)
    )
    assert callers == ["workspace.py"]
    assert Warehouse.open.__doc__ and "Workspace.warehouse" in Warehouse.open.__doc__


@pytest.mark.parametrize("kind", ["sql", "rest"])
def test_a_catalog_that_cannot_be_reached_is_a_system_error_naming_it(kind: str, tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    uri = f"postgresql+psycopg://assay@127.0.0.1:{port}/lake" if kind == "sql" else f"http://127.0.0.1:{port}"
    (tmp_path / "assay.yaml").write_text(f"catalog:\n  type: {kind}\n  uri: {uri}\n  warehouse: {tmp_path}\n")
    done = completed("table", "list", "--workspace", str(tmp_path))
    assert done.returncode == 3, done.stderr
    assert f"the Iceberg catalog at {uri}" in done.stderr and "cannot open" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
