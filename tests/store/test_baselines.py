"""One clean history in the store (SQLite and PostgreSQL): marks hold what of a load later
baselines do not read, every history read leaves it out, a person takes it back in (or, for a new
normal, the loads before it out), and the marks replace ``loads.in_baseline`` (migration 0011)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config

import assay.store
from assay.errors import ConfigError
from assay.platform.baselines import accept
from assay.store import MetricKey, MetricStore
from assay.store.baselines import Hold

ROWS = MetricKey.dataset("row_count")
NOW = datetime(2026, 2, 1, tzinfo=UTC)


def _days(store: MetricStore, counts: list[float]) -> list[int]:
    """One check-profile load a day from 1 January, with its row count."""
    loads = []
    for day, count in enumerate(counts, start=1):
        at = datetime(2026, 1, day, tzinfo=UTC)
        load = store.create_load("orders", partition="daily", logical_time=at, logical_date=at.date())
        store.save_metrics(load, {ROWS: count})
        loads.append(load)
    return loads


def _series(store: MetricStore) -> list[float | None]:
    found = store.metric_series("orders", partition="daily", names={"row_count"}, before=NOW)
    return [v for _, v in found[("Dataset", "*", "row_count")]]


def _last(store: MetricStore) -> list[float | None]:
    return [p.value for p in store.history("orders", ROWS, partition="daily", before=NOW, baseline=True)]


def test_a_held_metric_leaves_every_history_read_until_accepted(store: MetricStore) -> None:
    loads = _days(store, [10.0, 10.0, 4.0, 10.0])
    store.hold_out_of_baselines(loads[2], [Hold("volume", "Dataset", "*", "row_count")], run_id=None, at=NOW)
    other = MetricKey.dataset("sum(amount)")
    store.save_metrics(loads[2], {other: 7.0})
    assert _series(store) == [10.0, 10.0, 10.0] and _last(store) == [10.0, 10.0, 10.0]
    # what the mark does not name stays in; the plain history (what `assay history` shows) keeps all
    assert [
        p.value for p in store.history("orders", other, partition="daily", before=NOW, baseline=True)
    ] == [7.0]
    assert [p.value for p in store.history("orders", ROWS, partition="daily", before=NOW)][1] == 4.0
    done = accept(store, "orders", on=date(2026, 1, 3), by="ana", now=NOW)
    assert [(m.hold.kind, m.state, m.decided_by) for m in done.marks] == [("volume", "accepted", "ana")]
    assert _series(store) == [10.0, 4.0, 10.0, 10.0] and _last(store) == [10.0, 4.0, 10.0, 10.0]
    trail, _ = store.audit_trail(dataset="orders")
    assert [(r.action, r.target, r.detail["accepted"]) for r in trail] == [
        ("baseline.accept", "orders@2026-01-03", 1)
    ]


def test_a_new_normal_takes_its_load_and_the_held_ones_after_it_and_leaves_the_loads_before(
    store: MetricStore,
) -> None:
    loads = _days(store, [10.0, 10.0, 10.0, 4.0, 4.0])
    for load in loads[3:]:
        store.hold_out_of_baselines(load, [Hold("volume", "Dataset", "*", "row_count")], run_id=None, at=NOW)
    assert _series(store) == [10.0, 10.0, 10.0]
    done = accept(store, "orders", on=date(2026, 1, 4), kind="volume", new_normal=True, by="ana", now=NOW)
    assert len(done.marks) == 2 and done.left_out == 3
    assert _series(store) == [4.0, 4.0] and _last(store) == [4.0, 4.0]
    left = store.baseline_marks("orders", states=("left_out",))
    assert sorted(m.logical_time.day for m in left) == [1, 2, 3]


def test_accepting_what_is_not_held_names_what_is(store: MetricStore) -> None:
    loads = _days(store, [10.0, 4.0])
    store.hold_out_of_baselines(loads[1], [Hold("volume", "Dataset", "*", "row_count")], run_id=None, at=NOW)
    with pytest.raises(
        ConfigError, match="no load held out of its baselines on 2026-01-01; held loads: 2026-01-02"
    ):
        accept(store, "orders", on=date(2026, 1, 1), by="ana", now=NOW)
    with pytest.raises(ConfigError, match="on 2026-01-02, kind null_rate"):
        accept(store, "orders", on=date(2026, 1, 2), kind="null_rate", by="ana", now=NOW)
    assert store.audit_trail(dataset="orders")[0] == []  # nothing was written


def _alembic(connection: sa.Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(assay.store.__file__).parent / "migrations"))
    config.attributes["connection"] = connection
    return config


def test_loads_an_incident_left_out_stay_out_after_the_migration(store: MetricStore, store_url: str) -> None:
    loads = _days(store, [10.0, 4.0, 10.0])
    engine = sa.create_engine(store_url)
    try:
        with engine.begin() as connection:
            command.downgrade(_alembic(connection), "0010")
            connection.execute(
                sa.text("UPDATE loads SET in_baseline = false WHERE id = :id"), {"id": loads[1]}
            )
        with engine.begin() as connection:
            command.upgrade(_alembic(connection), "head")
    finally:
        engine.dispose()
    assert _series(store) == [10.0, 10.0]
    (mark,) = store.baseline_marks("orders")
    assert (mark.load_id, mark.state, mark.hold.pattern) == (loads[1], "left_out", ("*", "*", "*"))
