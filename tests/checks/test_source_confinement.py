"""A document reads only what its workspace allows (docs/checks.md, "Where a source may be"):
files inside the workspace or a folder ``sources: paths:`` of assay.yaml names, servers that
``sources: servers:`` declares. A refused source is a config_error naming the rule; nothing is
listed, read or connected to first, so the answer tells an author nothing about what is there."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from _invoke import completed
from _receivers import Listener
from assay.engine.duckdb import DuckDBEngine

DOC = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset: {{name: shop.orders, source: {source}}}
profiles:
  - id: daily
    metrics: [row_count, {{count_where: {{name: big, condition: "amount > 1", sample_rows: 5}}}}]
expectations:
  - {{id: rows, metric: daily.row_count, expect: "> 0"}}
  - {{id: big, metric: daily.big, expect: "= 0"}}
"""

SECRET = "id,amount\n1,9999\n2,4242\n"


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with a document folder and its own data, and a secret file outside it."""
    workspace = tmp_path / "ws"
    (workspace / "checks").mkdir(parents=True)
    (workspace / "data").mkdir()
    (workspace / "data" / "orders.csv").write_text("id,amount\n1,1\n2,3\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.csv").write_text(SECRET)
    return workspace, outside


def _run(workspace: Path, source: str) -> tuple[int, dict, str]:
    document = workspace / "checks" / "orders.yaml"
    document.write_text(DOC.format(source=source))
    done = completed(
        "check", "run", str(document), "--workspace", str(workspace), "--at", "2026-12-01", "--json", "-"
    )
    return done.returncode, json.loads(done.stdout), done.stderr


def test_a_file_inside_the_workspace_is_read(world: tuple[Path, Path]) -> None:
    workspace, _ = world
    code, result, _ = _run(workspace, "{path: ../data/orders.csv}")
    assert code == 0
    assert {o["expectation"]: o["outcome"] for o in result["outcomes"]} == {"rows": "passed", "big": "failed"}


@pytest.mark.parametrize(
    "source",
    [
        "{{path: {outside}/secret.csv}}",  # absolute
        "{{path: ../../elsewhere/secret.csv}}",  # relative, up and out
        "{{path: '{outside}/*'}}",  # a glob that would list a folder
        "{{path: '../data/../../elsewhere/*.csv'}}",  # in, then out
        "{{duckdb: {{path: '{outside}/db.duckdb', table: t}}}}",
    ],
)
def test_a_file_outside_the_workspace_is_a_config_error_that_shows_nothing_of_it(
    world: tuple[Path, Path], source: str
) -> None:
    workspace, outside = world
    code, result, _ = _run(workspace, source.format(outside=outside))
    assert code == 0  # the author's mistake, reported in the run's outcomes
    for outcome in result["outcomes"]:
        assert outcome["outcome"] == "config_error"
        assert "outside the workspace's data folders" in outcome["message"]
        assert "sources: paths:" in outcome["message"]  # names the rule and how to change it
    text = json.dumps(result)
    assert "9999" not in text and "4242" not in text and 'secret.csv"' not in text.replace(" ", "")


def test_a_symlink_inside_the_workspace_that_points_out_is_refused(world: tuple[Path, Path]) -> None:
    workspace, outside = world
    (workspace / "data" / "link.csv").symlink_to(outside / "secret.csv")
    _code, result, _ = _run(workspace, "{path: '../data/*.csv'}")
    assert all("link.csv" in o["message"] for o in result["outcomes"])
    assert "9999" not in json.dumps(result)


def test_an_admin_allows_another_folder_in_assay_yaml(world: tuple[Path, Path]) -> None:
    workspace, outside = world
    (workspace / "assay.yaml").write_text(f"sources:\n  paths: [{outside}]\n")
    code, result, _ = _run(workspace, f"{{path: {outside}/secret.csv}}")
    assert code == 0 and result["state"] == "completed"
    assert {o["expectation"]: o["outcome"] for o in result["outcomes"]} == {"rows": "passed", "big": "failed"}


def test_a_mistake_in_the_sources_part_of_assay_yaml_is_named(world: tuple[Path, Path]) -> None:
    workspace, _ = world
    (workspace / "assay.yaml").write_text("sources:\n  path: [/srv]\n")
    _code, result, _ = _run(workspace, "{path: ../data/orders.csv}")
    assert all("sources.path" in o["message"] for o in result["outcomes"])


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


def test_an_undeclared_server_is_refused_before_any_connection(
    world: tuple[Path, Path], listener: Listener
) -> None:
    workspace, _ = world
    port = listener.port
    source = f'{{postgres: {{url: "postgresql://x@127.0.0.1:{port}/db", table: public.t}}}}'
    _code, result, _ = _run(workspace, source)
    for outcome in result["outcomes"]:
        assert f"server 127.0.0.1:{port} is not one the workspace allows" in outcome["message"]
        assert "sources: servers:" in outcome["message"]
    assert listener.connections() == 0
    plan = completed("check", "plan", str(workspace / "checks" / "orders.yaml"), "--json")
    assert "is not one the workspace allows" in json.loads(plan.stdout)["profiles"][0]["error"]
    assert listener.connections() == 0


def test_a_declared_server_is_connected_to(world: tuple[Path, Path], listener: Listener) -> None:
    workspace, _ = world
    port = listener.port
    (workspace / "assay.yaml").write_text(f"sources:\n  servers: ['127.0.0.1:{port}']\n")
    source = f'{{postgres: {{url: "postgresql://x@127.0.0.1:{port}/db?connect_timeout=1", table: public.t}}}}'
    _code, result, _ = _run(workspace, source)
    # the listener never answers PostgreSQL's protocol: the run is the platform's failure, and it tried
    assert result["state"] == "system_error"
    assert listener.connections() >= 1


def test_a_duckdb_source_that_is_a_sqlite_file_is_named_and_loads_no_extension(
    world: tuple[Path, Path],
) -> None:
    workspace, _ = world
    with sqlite3.connect(workspace / "data" / "shop.db") as connection:
        connection.execute("create table t (a int)")
    _code, result, _ = _run(workspace, "{duckdb: {path: ../data/shop.db, table: t}}")
    for outcome in result["outcomes"]:
        assert "is not a DuckDB database file (it is a SQLite database)" in outcome["message"]
        assert str(workspace / "data" / "shop.db") in outcome["message"]
    (workspace / "data" / "notes.db").write_text("hello")
    _code, result, _ = _run(workspace, "{duckdb: {path: ../data/notes.db, table: t}}")
    assert all("notes.db is not a DuckDB database file:" in o["message"] for o in result["outcomes"])


def test_a_real_duckdb_database_inside_the_workspace_is_read(world: tuple[Path, Path]) -> None:
    workspace, _ = world
    with duckdb.connect(str(workspace / "data" / "shop.duckdb")) as connection:
        connection.execute("create table orders as select * from (values (1, 1), (2, 3)) v(id, amount)")
    _code, result, _ = _run(workspace, "{duckdb: {path: ../data/shop.duckdb, table: orders}}")
    assert result["state"] == "completed", result
    assert {o["expectation"]: o["outcome"] for o in result["outcomes"]} == {"rows": "passed", "big": "failed"}


def test_no_duckdb_connection_of_assay_installs_or_loads_an_extension_by_itself() -> None:
    engine = DuckDBEngine()
    try:
        settings = engine.con.execute(
            "select current_setting('autoinstall_known_extensions'), "
            "current_setting('autoload_known_extensions'), current_setting('allow_community_extensions')"
        ).fetchone()
    finally:
        engine.close()
    assert settings == (False, False, False)
