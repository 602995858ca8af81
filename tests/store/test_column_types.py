"""The store keeps a column's type by its canonical name only (engine/types.py), so that the schema
drift judgement and the web compare one vocabulary, whatever engine measured the load."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from assay.errors import ConfigError
from assay.store import MetricStore


def test_the_store_refuses_an_engines_own_type_name() -> None:
    with MetricStore.open("sqlite://") as store:
        load = store.create_load(
            "t", logical_time=datetime(2024, 5, 1, tzinfo=UTC), logical_date=date(2024, 5, 1)
        )
        with pytest.raises(ConfigError) as raised:
            store.save_profile(load, [("id", "long"), ("venue", "VARCHAR")], {})
        assert str(raised.value) == (
            "column venue: type 'VARCHAR' is not a canonical type name; the store keeps 'string' "
            "(assay.engine.types.canonical)"
        )
        assert store.load_schema(load) == []  # nothing of the refused schema was kept
        store.save_profile(load, [("id", "long"), ("venue", "string"), ("at", "decimal(18,3)")], {})
        assert store.load_schema(load) == [("id", "long"), ("venue", "string"), ("at", "decimal(18,3)")]
