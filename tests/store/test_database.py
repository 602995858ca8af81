"""Opening a store: URLs, the default workspace file, migrations, and errors a user can read."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext

import assay.store
from assay.errors import ConfigError, PlatformError
from assay.store import MetricKey, MetricStore, schema
from assay.store.database import HEAD_REVISION
from pgserver import PostgresServer, free_port

TABLES = {
    "datasets",
    "loads",
    "metrics",
    "runs",
    "outcomes",
    "load_columns",
    "load_values",
    "value_sets",
    "schedule_ticks",
    "judgements",
    "decisions",
    "decision_sources",
    "check_outcomes",
    "incidents",
    "incident_events",
    "notifications",
    "run_stages",
    "scores",
    "certifications",
    "proposals",
    "proposal_events",
    "reads",
    "users",
    "web_sessions",
    "login_codes",
    "audit",
    "baseline_marks",
    "catalog_entries",
    "catalog_tags",
    "lineage_edges",
    "incident_layers",
}
MAY_1 = datetime(2024, 5, 1, tzinfo=UTC)


@pytest.fixture
def engine(store_url: str) -> Iterator[sa.Engine]:
    """A plain engine on the store's database, to look at it from outside the store."""
    plain = sa.create_engine(store_url)
    yield plain
    plain.dispose()


def versions(engine: sa.Engine) -> list[str]:
    with engine.connect() as connection:
        return list(
            connection.execute(
                sa.select(sa.column("version_num")).select_from(sa.table(schema.VERSION_TABLE))
            ).scalars()
        )


def alembic_config(connection: sa.Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(assay.store.__file__).parent / "migrations"))
    config.attributes["connection"] = connection
    return config


def test_open_creates_the_schema_from_empty(store_url: str, engine: sa.Engine) -> None:
    assert sa.inspect(engine).get_table_names() == []
    MetricStore.open(store_url).close()
    assert set(sa.inspect(engine).get_table_names()) == TABLES | {schema.VERSION_TABLE}
    assert versions(engine) == [HEAD_REVISION]


def test_migrations_create_what_the_code_expects(store: MetricStore, engine: sa.Engine) -> None:
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"version_table": schema.VERSION_TABLE})
        differences = compare_metadata(context, schema.metadata)
    assert differences == []


def test_migrations_downgrade_to_empty_and_back(store: MetricStore, engine: sa.Engine) -> None:
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), "base")
    assert set(sa.inspect(engine).get_table_names()) <= {schema.VERSION_TABLE}
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "head")
    assert set(sa.inspect(engine).get_table_names()) >= TABLES


def test_opening_again_keeps_the_data(store_url: str, engine: sa.Engine) -> None:
    with MetricStore.open(store_url) as store:
        load = store.create_load("orders", logical_time=MAY_1)
        store.save_metrics(load, {MetricKey.dataset("RowCount"): 3.0})
    with MetricStore.open(store_url) as store:
        assert store.metrics_of(load) == {MetricKey.dataset("RowCount"): 3.0}
    assert versions(engine) == [HEAD_REVISION]


def test_a_schema_newer_than_the_code_is_a_platform_error(store: MetricStore, engine: sa.Engine) -> None:
    with engine.begin() as connection:
        connection.execute(
            sa.update(sa.table(schema.VERSION_TABLE, sa.column("version_num"))).values(version_num="9999")
        )
    with pytest.raises(PlatformError, match=r"cannot migrate the metric store .*9999"):
        MetricStore.open(store.url)


def test_a_database_failure_after_open_is_a_platform_error(store: MetricStore, engine: sa.Engine) -> None:
    with engine.begin() as connection:
        schema.outcomes.drop(connection)
    with pytest.raises(PlatformError, match=r"metric store .*outcomes"):
        store.runs()


def test_default_store_is_a_file_in_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "deep" / "workspace"
    with MetricStore.open(workspace=workspace) as store:
        store.ensure_dataset("orders")
        assert store.url == f"sqlite+pysqlite:///{workspace / 'assay.db'}"
    assert (workspace / "assay.db").is_file()


def test_default_workspace_is_dot_assay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    MetricStore.open().close()
    assert (tmp_path / ".assay" / "assay.db").is_file()


def test_workspace_that_cannot_be_created_is_a_platform_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(PlatformError, match="cannot create the workspace folder"):
        MetricStore.open(workspace=tmp_path / "file" / "workspace")


def test_driverless_postgresql_url_uses_psycopg(postgres_url: str) -> None:
    with MetricStore.open(postgres_url.replace("postgresql+psycopg://", "postgresql://")) as store:
        assert store.url.startswith("postgresql+psycopg://")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("not a url", "'not a url' is not a database URL"),
        ("mysql://assay@db/quality", "backend 'mysql' is not supported"),
        ("postgresql+psycopg2://assay@db/quality", "driver 'psycopg2' is not available"),
    ],
)
def test_bad_urls_are_config_errors(url: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        MetricStore.open(url)


def test_connection_options_the_driver_refuses_are_config_errors(postgres_server: PostgresServer) -> None:
    with pytest.raises(ConfigError, match='refused the connection: invalid connection option "bogus"'):
        MetricStore.open(postgres_server.url() + "?bogus=1")


def test_unreachable_server_is_a_platform_error_without_password() -> None:
    url = f"postgresql+psycopg://assay:secret@127.0.0.1:{free_port()}/quality"
    with pytest.raises(PlatformError, match=r"after 3 attempts: .*Connection refused") as raised:
        MetricStore.open(url)
    assert "secret" not in str(raised.value)
    assert "assay:***@127.0.0.1" in str(raised.value)


def test_unopenable_sqlite_file_is_a_platform_error(tmp_path: Path) -> None:
    with pytest.raises(PlatformError, match="unable to open database file"):
        MetricStore.open(f"sqlite:///{tmp_path / 'missing' / 'assay.db'}")


def test_the_head_revision_is_alembics_head() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from assay.store import database

    config = Config()
    config.set_main_option("script_location", str(database._MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_current_head() == database.HEAD_REVISION


def test_opening_a_store_at_head_does_not_import_alembic(tmp_path: Path) -> None:
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'a.db'}"
    MetricStore.open(url).close()  # created and migrated here
    code = (
        "import sys; from assay.store import MetricStore; "
        f"MetricStore.open({url!r}).close(); print('alembic' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_one_unresolved_incident_per_check_is_a_partial_index_on_both_dialects(
    store: MetricStore, engine: sa.Engine
) -> None:
    """Migration 0007 makes the index partial on PostgreSQL too, though schema.py names only the
    SQLite predicate (so that an SQLite store never imports the PostgreSQL dialect)."""
    with engine.connect() as connection:
        if connection.dialect.name == "postgresql":
            sql = "SELECT indexdef FROM pg_indexes WHERE indexname = 'uq_incidents_unresolved'"
        else:
            sql = "SELECT sql FROM sqlite_master WHERE name = 'uq_incidents_unresolved'"
        definition = connection.execute(sa.text(sql)).scalar_one()
    assert "UNIQUE" in definition.upper()
    assert "WHERE" in definition.upper() and "resolved" in definition


def test_an_sqlite_store_never_imports_the_postgresql_dialect(tmp_path: Path) -> None:
    """Once created (creating runs Alembic, which loads every dialect's DDL), an SQLite store
    reads and writes without the PostgreSQL dialect, which costs 30-40 ms to import."""
    url = "sqlite:///" + str(tmp_path / "assay.db")
    MetricStore.open(url).close()
    program = (
        "import sys\n"
        "from datetime import UTC, datetime\n"
        "from assay.store import MetricKey, MetricStore\n"
        f"with MetricStore.open({url!r}) as store:\n"
        "    load = store.create_load('orders', logical_time=datetime(2024, 5, 1, tzinfo=UTC))\n"
        "    store.save_metrics(load, {MetricKey.dataset('RowCount'): 3.0})\n"
        "    assert store.metrics_of(load) == {MetricKey.dataset('RowCount'): 3.0}\n"
        "print('sqlalchemy.dialects.postgresql' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
