"""MetricStore on every backend: datasets, loads, metrics, history, runs and outcomes."""

from __future__ import annotations

import math
import uuid
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from assay.errors import ConfigError
from assay.store import HistoryPoint, MetricKey, MetricStore, OutcomeRecord, RunRecord, schema

MAY_1 = datetime(2024, 5, 1, tzinfo=UTC)
ROW_COUNT = MetricKey.dataset("RowCount")
COMPLETENESS = MetricKey.column("item", "Completeness")


def may(day: int, hour: int = 0) -> datetime:
    return MAY_1 + timedelta(days=day - 1, hours=hour)


def load_with(store: MetricStore, logical_time: datetime, value: float | None, *, partition: str = "") -> int:
    load = store.create_load("orders", partition=partition, logical_time=logical_time)
    store.save_metrics(load, {ROW_COUNT: value})
    return load


# datasets and loads


def test_ensure_dataset_is_idempotent(store: MetricStore) -> None:
    orders = store.ensure_dataset("orders")
    assert store.ensure_dataset("orders") == orders
    assert store.ensure_dataset("customers") != orders


@pytest.mark.parametrize("name", ["", "x" * 201])
def test_dataset_names_are_bounded(store: MetricStore, name: str) -> None:
    with pytest.raises(ConfigError, match="must have 1 to 200 characters"):
        store.ensure_dataset(name)


def test_create_load_registers_the_dataset(store: MetricStore) -> None:
    first = store.create_load(
        "orders",
        partition="c42",
        logical_time=may(1),
        logical_date=date(2024, 5, 1),
        source_path="/data/orders/2024-05-01.csv",
        source_sha256="ab" * 32,
        row_count=1200,
    )
    second = store.create_load("orders", logical_time=may(2))
    assert second > first
    assert store.ensure_dataset("orders") == 1


def test_naive_logical_time_is_refused(store: MetricStore) -> None:
    with pytest.raises(ConfigError, match="no time zone"):
        store.create_load("orders", logical_time=datetime(2024, 5, 1))


# metrics


def test_metrics_round_trip(store: MetricStore) -> None:
    load = store.create_load("orders", logical_time=may(1))
    values = {
        ROW_COUNT: 1200.0,
        COMPLETENESS: 0.98,
        MetricKey.column("address.city", "Completeness"): 1.0,
        MetricKey.column("status", "ColumnValues.Compliance"): 0.5,
        MetricKey.multicolumn(["height", "weight"], "ColumnCorrelation"): -0.25,
        MetricKey.dataset("CustomSQL", instance="big_orders"): 3.0,
        MetricKey.column("price", "Maximum"): math.inf,
        MetricKey.column("price", "Minimum"): -math.inf,
        MetricKey.column("note", "Entropy"): None,
    }
    store.save_metrics(load, values)
    assert store.metrics_of(load) == values


def test_metrics_are_kept_per_load(store: MetricStore) -> None:
    first = load_with(store, may(1), 10.0)
    second = load_with(store, may(2), 20.0)
    assert store.metrics_of(first) == {ROW_COUNT: 10.0}
    assert store.metrics_of(second) == {ROW_COUNT: 20.0}


def test_nan_is_stored_as_none(store: MetricStore) -> None:
    load = store.create_load("orders", logical_time=may(1))
    store.save_metrics(load, {COMPLETENESS: math.nan})
    assert store.metrics_of(load) == {COMPLETENESS: None}


def test_saving_a_key_again_overwrites_it(store: MetricStore) -> None:
    load = store.create_load("orders", logical_time=may(1))
    store.save_metrics(load, {ROW_COUNT: 10.0, COMPLETENESS: 0.5})
    store.save_metrics(load, {ROW_COUNT: 11.0})
    store.save_metrics(load, {COMPLETENESS: None})
    assert store.metrics_of(load) == {ROW_COUNT: 11.0, COMPLETENESS: None}


def test_saving_nothing_changes_nothing(store: MetricStore) -> None:
    load = store.create_load("orders", logical_time=may(1))
    store.save_metrics(load, {})
    assert store.metrics_of(load) == {}


def test_unknown_load_is_a_config_error(store: MetricStore) -> None:
    with pytest.raises(ConfigError, match="no load with id 99"):
        store.save_metrics(99, {ROW_COUNT: 1.0})
    with pytest.raises(ConfigError, match="no load with id 99"):
        store.metrics_of(99)


# history


def test_history_is_most_recent_first(store: MetricStore) -> None:
    loads = [load_with(store, may(day), value) for day, value in [(1, 8.0), (3, 4.0), (2, 6.0)]]
    history = store.history("orders", ROW_COUNT, before=may(4))
    assert history == [
        HistoryPoint(loads[1], may(3), None, 4.0),
        HistoryPoint(loads[2], may(2), None, 6.0),
        HistoryPoint(loads[0], may(1), None, 8.0),
    ]


def test_history_is_what_dqdl_last_reads(store: MetricStore) -> None:
    # DQDL.md T21: RowCount history oldest to newest [8, 6, 4].
    for day, value in [(1, 8.0), (2, 6.0), (3, 4.0)]:
        load_with(store, may(day), value)
    last = [point.value for point in store.history("orders", ROW_COUNT, before=may(4), limit=3)]
    assert last == [4.0, 6.0, 8.0]
    assert [point.value for point in store.history("orders", ROW_COUNT, before=may(4), limit=1)] == [4.0]
    assert store.history("orders", ROW_COUNT, before=may(4), limit=0) == []


def test_history_stops_strictly_before_the_cutoff(store: MetricStore) -> None:
    for day in (1, 2, 3):
        load_with(store, may(day), float(day))
    assert [p.value for p in store.history("orders", ROW_COUNT, before=may(3))] == [2.0, 1.0]
    assert [p.value for p in store.history("orders", ROW_COUNT, before=may(3, hour=1))] == [3.0, 2.0, 1.0]
    assert store.history("orders", ROW_COUNT, before=may(1)) == []


def test_history_cutoff_compares_instants_across_time_zones(store: MetricStore) -> None:
    load_with(store, may(2, hour=10), 1.0)
    plus_two = timezone(timedelta(hours=2))
    just_after = datetime(2024, 5, 2, 12, 0, 1, tzinfo=plus_two)
    just_before = datetime(2024, 5, 2, 12, 0, 0, tzinfo=plus_two)
    assert [p.value for p in store.history("orders", ROW_COUNT, before=just_after)] == [1.0]
    assert store.history("orders", ROW_COUNT, before=just_before) == []


def test_history_returns_aware_utc_times(store: MetricStore) -> None:
    tokyo = timezone(timedelta(hours=9))
    load = store.create_load(
        "orders",
        logical_time=datetime(2024, 5, 2, 9, 30, 15, 123456, tzinfo=tokyo),
        logical_date=date(2024, 5, 2),
    )
    store.save_metrics(load, {ROW_COUNT: 5.0})
    (point,) = store.history("orders", ROW_COUNT, before=may(3))
    assert point.logical_time == datetime(2024, 5, 2, 0, 30, 15, 123456, tzinfo=UTC)
    assert point.logical_time.utcoffset() == timedelta(0)
    assert point.logical_date == date(2024, 5, 2)


def test_history_keeps_partitions_apart(store: MetricStore) -> None:
    load_with(store, may(1), 1.0, partition="c1")
    load_with(store, may(2), 2.0, partition="c2")
    load_with(store, may(3), 3.0)
    assert [p.value for p in store.history("orders", ROW_COUNT, partition="c1", before=may(9))] == [1.0]
    assert [p.value for p in store.history("orders", ROW_COUNT, partition="c2", before=may(9))] == [2.0]
    assert [p.value for p in store.history("orders", ROW_COUNT, before=may(9))] == [3.0]


def test_history_keeps_datasets_and_keys_apart(store: MetricStore) -> None:
    orders = store.create_load("orders", logical_time=may(1))
    customers = store.create_load("customers", logical_time=may(1))
    store.save_metrics(
        orders, {ROW_COUNT: 1.0, COMPLETENESS: 0.5, MetricKey.column("price", "Completeness"): 0.1}
    )
    store.save_metrics(customers, {ROW_COUNT: 2.0})
    assert [p.value for p in store.history("orders", ROW_COUNT, before=may(2))] == [1.0]
    assert [p.value for p in store.history("customers", ROW_COUNT, before=may(2))] == [2.0]
    assert [p.value for p in store.history("orders", COMPLETENESS, before=may(2))] == [0.5]
    assert store.history("customers", COMPLETENESS, before=may(2)) == []
    assert store.history("nobody", ROW_COUNT, before=may(2)) == []


def test_history_skips_loads_without_the_metric(store: MetricStore) -> None:
    with_metric = load_with(store, may(1), 1.0)
    store.create_load("orders", logical_time=may(2))
    only_other = store.create_load("orders", logical_time=may(3))
    store.save_metrics(only_other, {COMPLETENESS: 1.0})
    assert [p.load_id for p in store.history("orders", ROW_COUNT, before=may(4))] == [with_metric]


def test_history_returns_stored_none(store: MetricStore) -> None:
    load_with(store, may(1), 1.0)
    load_with(store, may(2), math.nan)
    assert [p.value for p in store.history("orders", ROW_COUNT, before=may(3))] == [None, 1.0]


def test_history_orders_equal_times_by_arrival(store: MetricStore) -> None:
    first = load_with(store, may(1), 1.0)
    second = load_with(store, may(1), 2.0)
    assert [p.load_id for p in store.history("orders", ROW_COUNT, before=may(2))] == [second, first]


def test_history_refuses_bad_arguments(store: MetricStore) -> None:
    with pytest.raises(ConfigError, match="no time zone"):
        store.history("orders", ROW_COUNT, before=datetime(2024, 5, 1))
    with pytest.raises(ConfigError, match="limit must be 0 or more"):
        store.history("orders", ROW_COUNT, before=may(1), limit=-1)


# runs and outcomes


def run_of(dataset: str | None, load_id: int | None, started_at: datetime, **fields: object) -> RunRecord:
    defaults: dict[str, object] = {"id": str(uuid.uuid4()), "kind": "dqdl", "state": "completed"}
    return RunRecord(dataset=dataset, load_id=load_id, started_at=started_at, **{**defaults, **fields})  # type: ignore[arg-type]


def test_runs_round_trip_with_outcomes(store: MetricStore) -> None:
    load = store.create_load("orders", logical_time=may(1))
    run = run_of(
        "orders",
        load,
        datetime(2024, 5, 1, 2, 0, 0, 250000, tzinfo=timezone(timedelta(hours=2))),
        finished_at=may(1, hour=1),
        summary={
            "score": 0.5,
            "counts": {"Passed": 1, "Failed": 1, "Error": 1},
            "tags": ["daily"],
            "ok": False,
        },
        outcomes=[
            OutcomeRecord("RowCount > 0", "passed", metrics={"Dataset.*.RowCount": 1200.0}),
            OutcomeRecord(
                'Completeness "item" > 0.99',
                "failed",
                message="Value: 0.98 does not meet the constraint requirement!",
                metrics={"Column.item.Completeness": 0.98},
                labels={"team": "fin", "p": "1"},
            ),
            OutcomeRecord("RowCount > avg(last(3))", "config_error", message="no history"),
        ],
    )
    store.record_run(run)
    (stored,) = store.runs("orders")
    assert stored == run
    assert stored.started_at.tzinfo == UTC
    assert stored.finished_at is not None and stored.finished_at.tzinfo == UTC


def test_runs_are_newest_first_and_limited(store: MetricStore) -> None:
    recorded = [run_of("orders", None, may(day)) for day in (2, 3, 1)]
    for run in recorded:
        store.record_run(run)
    assert [run.started_at for run in store.runs()] == [may(3), may(2), may(1)]
    assert [run.started_at for run in store.runs(limit=2)] == [may(3), may(2)]
    assert store.runs(limit=0) == []


def test_runs_filter_by_dataset(store: MetricStore) -> None:
    orders = run_of("orders", None, may(1))
    customers = run_of("customers", None, may(2))
    config_error = run_of(None, None, may(3), state="config_error", summary={"error": "rules.dqdl:3:5: bad"})
    for run in (orders, customers, config_error):
        store.record_run(run)
    assert store.runs("orders") == [orders]
    assert store.runs("customers") == [customers]
    assert store.runs() == [config_error, customers, orders]
    assert store.runs("nobody") == []


def test_recording_a_run_again_replaces_it(store: MetricStore) -> None:
    started = run_of(
        "orders", None, may(1), outcomes=[OutcomeRecord("A", "passed"), OutcomeRecord("B", "passed")]
    )
    store.record_run(started)
    finished = RunRecord(
        id=started.id,
        kind="dqdl",
        dataset="orders",
        load_id=None,
        state="system_error",
        started_at=may(1),
        finished_at=may(1, hour=1),
        outcomes=[OutcomeRecord("A", "system_error", message="engine failed")],
    )
    store.record_run(finished)
    assert store.runs() == [finished]


def test_non_finite_numbers_in_runs_become_none(store: MetricStore) -> None:
    run = run_of(
        "orders",
        None,
        may(1),
        summary={"score": math.nan, "spread": [math.inf, 1.0]},
        outcomes=[OutcomeRecord("Mean 'x' > 0", "failed", metrics={"Column.x.Mean": math.nan})],
    )
    store.record_run(run)
    (stored,) = store.runs()
    assert stored.summary == {"score": None, "spread": [None, 1.0]}
    assert stored.outcomes[0].metrics == {"Column.x.Mean": None}


def test_run_summary_must_be_json(store: MetricStore) -> None:
    with pytest.raises(ConfigError, match=r"datetime value .* cannot be stored as JSON"):
        store.record_run(run_of("orders", None, may(1), summary={"when": may(1)}))
    assert store.runs() == []


def test_run_load_must_belong_to_its_dataset(store: MetricStore) -> None:
    load = store.create_load("orders", logical_time=may(1))
    with pytest.raises(ConfigError, match=f"load {load} is not a load of dataset 'customers'"):
        store.record_run(run_of("customers", load, may(1)))
    with pytest.raises(ConfigError, match="no load with id 99"):
        store.record_run(run_of("orders", 99, may(1)))
    assert store.runs() == []


def test_a_failed_write_leaves_nothing(store: MetricStore, store_url: str) -> None:
    # record_run registers the dataset before it checks the load: both go, or neither.
    with pytest.raises(ConfigError):
        store.record_run(run_of("brand_new", 99, may(1)))
    engine = sa.create_engine(store_url)
    with engine.connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(schema.datasets)).scalar() == 0
    engine.dispose()


def test_history_reads_current_loads_only(store: MetricStore) -> None:
    key = MetricKey.dataset("RowCount")
    loads = []
    for day, value in [(1, 10.0), (2, 20.0), (3, 30.0)]:
        load = store.create_load(
            "t", logical_time=datetime(2024, 5, day, tzinfo=UTC), logical_date=date(2024, 5, day)
        )
        store.save_metrics(load, {key: value})
        loads.append(load)
    store.set_load_status(loads[2], "rejected")
    assert [p.value for p in store.history("t", key, before=datetime(2024, 6, 1, tzinfo=UTC))] == [20.0, 10.0]
    again = store.create_load(
        "t", logical_time=datetime(2024, 5, 2, tzinfo=UTC), logical_date=date(2024, 5, 2)
    )
    store.save_metrics(again, {key: 22.0})
    assert store.supersede("t", date(2024, 5, 2), keep=again) == 1
    assert [p.value for p in store.history("t", key, before=datetime(2024, 6, 1, tzinfo=UTC))] == [22.0, 10.0]
    with pytest.raises(ConfigError, match="unknown load status"):
        store.set_load_status(again, "gone")
