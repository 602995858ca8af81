"""Value sets kept incrementally agree with value sets recomputed from every load."""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.store import MetricStore, schema
from assay.store.value_sets import refresh_value_sets

VALUES = ("a", "b", "c", "d")
START = date(2026, 3, 2)

# one step: a load of day N holding some values, sometimes saved a second time with other values
steps = st.lists(
    st.tuples(
        st.integers(0, 6),
        st.sets(st.sampled_from(VALUES)),
        st.none() | st.sets(st.sampled_from(VALUES)),
    ),
    min_size=1,
    max_size=12,
)


def snapshot(store: MetricStore) -> set[tuple[str, str, int, int, date | None, date | None]]:
    with store._transaction() as connection:
        return {
            (r.column, r.value, r.first_load_id, r.last_load_id, r.first_date, r.last_date)
            for r in connection.execute(sa.select(schema.value_sets))
        }


def recomputed(store: MetricStore) -> set[tuple[str, str, int, int, date | None, date | None]]:
    """The value sets rebuilt from every current load that holds each value."""
    with store._transaction() as connection:
        dataset_id = connection.execute(sa.select(schema.datasets.c.id)).scalar_one()
        pairs = {
            (str(r.column), str(r.value))
            for table in (schema.load_values, schema.value_sets)
            for r in connection.execute(sa.select(table.c.column, table.c.value))
        }
        refresh_value_sets(connection, dataset_id, sorted(pairs))
    return snapshot(store)


def profile_day(store: MetricStore, day: int, values: set[str], again: set[str] | None) -> None:
    when = START + timedelta(days=day)
    load = store.create_load(
        "t", logical_time=datetime(when.year, when.month, when.day, tzinfo=UTC), logical_date=when
    )
    store.save_profile(load, [("venue", "string")], {"venue": dict.fromkeys(values, 1)})
    if again is not None:
        store.save_profile(load, [("venue", "string")], {"venue": dict.fromkeys(again, 1)})
    store.supersede("t", when, keep=load)


MEMORY = "/dev/shm" if Path("/dev/shm").is_dir() else None


@pytest.fixture(scope="module")
def empty_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite store with its schema and nothing else; each example below starts from a copy of
    it (creating the schema is most of an example's time)."""
    path = tmp_path_factory.mktemp("empty") / "assay.db"
    MetricStore.open(f"sqlite:///{path}").close()
    return path


@settings(max_examples=150, deadline=None)
@given(history=steps)
def test_kept_incrementally_equals_recomputed(
    empty_store: Path, history: list[tuple[int, set[str], set[str] | None]]
) -> None:
    with tempfile.TemporaryDirectory(dir=MEMORY) as folder:  # as "sqlite://", no disk to sync
        path = Path(shutil.copy(empty_store, Path(folder) / "assay.db"))
        with MetricStore.open(f"sqlite:///{path}") as store:
            for day, values, again in history:
                profile_day(store, day, values, again)
            kept = snapshot(store)
            assert kept == recomputed(store)


def test_on_every_backend(store: MetricStore) -> None:
    # out of order, a day replaced, a load saved twice: first and last follow the current loads
    for day, values, again in [
        (3, {"a", "b"}, None),
        (1, {"b"}, None),
        (5, {"a", "c"}, {"c"}),
        (1, {"d"}, None),
    ]:
        profile_day(store, day, values, again)
    assert store.value_set("t", "venue") == {
        "a": (START + timedelta(days=3), START + timedelta(days=3)),
        "b": (START + timedelta(days=3), START + timedelta(days=3)),
        "c": (START + timedelta(days=5), START + timedelta(days=5)),
        "d": (START + timedelta(days=1), START + timedelta(days=1)),
    }
    assert snapshot(store) == recomputed(store)
