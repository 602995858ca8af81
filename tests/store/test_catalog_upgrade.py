"""A store at the previous schema (0011), upgraded: every dataset it knows gets a kept entry
(its catalog score), stale until the first refresh computes it, on both backends."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config

import assay.store
from assay.platform.entries import Filters, Subject, refresh_stale
from assay.platform.scores import score_dataset
from assay.store import MetricStore

NOW = datetime(2026, 12, 1, 6, tzinfo=UTC)


def _alembic(connection: sa.Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(assay.store.__file__).parent / "migrations"))
    config.attributes["connection"] = connection
    return config


def test_a_store_upgraded_from_the_previous_schema_gets_every_dataset_scored(store_url: str) -> None:
    engine = sa.create_engine(store_url)
    with engine.begin() as connection:
        command.upgrade(_alembic(connection), "0011")
        connection.execute(
            sa.text("INSERT INTO datasets (name, created_at) VALUES ('old.one', :t)"), {"t": NOW}
        )
        connection.execute(
            sa.text(
                "INSERT INTO loads (dataset_id, partition, logical_time, logical_date, status, created_at) "
                "SELECT id, '', :t, :d, 'current', :t FROM datasets"
            ),
            {"t": NOW - timedelta(hours=2), "d": date(2026, 11, 30)},
        )
    engine.dispose()
    with MetricStore.open(store_url) as store:  # migrates to head
        assert store.stale_entries(NOW) == {"old.one": None}
        assert refresh_stale(store, {}, now=NOW) == 1
        total, kept = store.catalog_page(Filters(), sort="name", descending=False, offset=0, limit=5)
        assert total == 1 and kept[0].name == "old.one"
        assert kept[0].score == score_dataset(Subject("old.one"), store, now=NOW).score
        assert kept[0].loaded_at is not None and store.stale_entries(NOW) == {}
