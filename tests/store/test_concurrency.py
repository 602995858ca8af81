"""Several OS processes on one store at the same time: the schema is made once, every write lands whole."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from multiprocessing.synchronize import Barrier

import sqlalchemy as sa

from _processes import TIMEOUT_SECONDS, breaking, run_together, spawn
from assay.store import MetricKey, MetricStore, schema

PROCESSES = 2
BATCHES = 20
METRICS_PER_BATCH = 25
MAY_1 = datetime(2024, 5, 1, tzinfo=UTC)


def open_store(url: str, barrier: Barrier, worker: int) -> None:
    barrier.wait()
    MetricStore.open(url).close()


def save_metrics(url: str, barrier: Barrier, worker: int) -> None:
    with breaking(barrier), MetricStore.open(url) as store:
        load = store.create_load(
            "orders", partition=f"p{worker}", logical_time=MAY_1 + timedelta(hours=worker)
        )
        barrier.wait()
        for batch in range(BATCHES):
            store.save_metrics(
                load,
                {
                    MetricKey.column(f"c{batch}_{column}", "Completeness"): float(worker)
                    for column in range(METRICS_PER_BATCH)
                },
            )


def together(target: Callable[[str, Barrier, int], None], url: str) -> None:
    """Run ``target(url, barrier, worker)`` in separate processes and check that each one succeeds."""
    barrier = spawn.Barrier(PROCESSES, timeout=TIMEOUT_SECONDS)
    run_together([spawn.Process(target=target, args=(url, barrier, worker)) for worker in range(PROCESSES)])


def count(engine: sa.Engine, query: sa.Select[int]) -> int:
    with engine.connect() as connection:
        return connection.execute(query).scalar_one()


def test_processes_opening_a_fresh_store_at_once_create_it_once(store_url: str) -> None:
    together(open_store, store_url)
    engine = sa.create_engine(store_url)
    version_rows = sa.select(sa.func.count()).select_from(sa.table(schema.VERSION_TABLE))
    assert count(engine, version_rows) == 1
    assert set(schema.metadata.tables) <= set(sa.inspect(engine).get_table_names())
    engine.dispose()


def test_processes_saving_metrics_at_once_all_land(store_url: str) -> None:
    together(save_metrics, store_url)
    engine = sa.create_engine(store_url)
    per_load = (
        sa.select(schema.metrics.c.load_id, sa.func.count(), sa.func.min(schema.metrics.c.value))
        .group_by(schema.metrics.c.load_id)
        .order_by(sa.func.min(schema.metrics.c.value))
    )
    with engine.connect() as connection:
        counts = [(total, value) for _, total, value in connection.execute(per_load)]
    assert counts == [(BATCHES * METRICS_PER_BATCH, float(worker)) for worker in range(PROCESSES)]
    assert count(engine, sa.select(sa.func.count()).select_from(schema.datasets)) == 1
    engine.dispose()


DAYS_PER_WORKER = 6


def profile_loads(url: str, barrier: Barrier, worker: int) -> None:
    """Profile loads of one dataset: worker 0 the even days, worker 1 the odd ones, each with
    the values the other holds too, and every load from the fourth on with the same new value."""
    import tempfile

    import pyarrow as pa

    from assay.platform import flows

    # each process's runs/ in a folder of its own (the store is the shared part)
    with breaking(barrier), MetricStore.open(url) as store, tempfile.TemporaryDirectory() as workspace:
        barrier.wait()
        for i in range(DAYS_PER_WORKER):
            number = 2 * i + worker
            venues = ["XLON", "XPAR", "XETR"] * 10 + (["XNEW"] * (number + 1) if number >= 4 else [])
            table = pa.table({"venue": venues, "qty": list(range(len(venues)))})
            flows.profile(
                table,
                dataset="trades",
                load_date=MAY_1.date() + timedelta(days=number),
                store=store,
                workspace=workspace,
            )


def test_processes_profiling_at_once_all_land(store_url: str) -> None:
    together(profile_loads, store_url)
    with MetricStore.open(store_url) as store:
        loads = store.window("trades", MAY_1.date() + timedelta(days=100))
        assert len(loads) == PROCESSES * DAYS_PER_WORKER
        metrics = store.load_metrics([load.id for load in loads])
        for load in loads:
            number = (load.logical_date - MAY_1.date()).days
            rows = 30 + (number + 1 if number >= 4 else 0)
            assert metrics[load.id][("Dataset", "*", "RowCount")] == rows
            assert store.load_schema(load.id) == [("venue", "string"), ("qty", "long")]
        values = store.value_set("trades", "venue")
        assert sorted(values) == ["XETR", "XLON", "XNEW", "XPAR"]
        assert values["XLON"] == (MAY_1.date(), MAY_1.date() + timedelta(days=11))
        assert values["XNEW"][0] == MAY_1.date() + timedelta(days=4)
        (decision,) = store.decisions("trades")
        # every load that brought XNEW added its rows to the one decision, none twice
        assert (decision.value, decision.status) == ("XNEW", "pending")
        assert decision.rows == sum(number + 1 for number in range(4, PROCESSES * DAYS_PER_WORKER))


def write_then_lock(url: str, barrier: Barrier, worker: int) -> None:
    """Loads written (each insert's foreign key takes a KEY SHARE lock on the dataset's row, and
    marks its catalog entry stale), then the dataset taken for a turn in the same transaction:
    what a run's persist does, ten times over, two processes on one dataset."""
    with breaking(barrier), MetricStore.open(url) as store:
        barrier.wait()
        for n in range(ROUNDS):
            with store.transaction():
                at = MAY_1 + timedelta(hours=n)
                store.create_load("orders", partition=f"p{worker}", logical_time=at)
                with store.transaction(lock="orders"):
                    load = store.create_load("orders", partition=f"q{worker}", logical_time=at)
                    store.save_metrics(load, {MetricKey.dataset("RowCount"): float(worker)})


ROUNDS = 10


def test_processes_writing_then_taking_one_dataset_take_turns_without_a_deadlock(postgres_url: str) -> None:
    """A transaction takes the dataset's turn (FOR NO KEY UPDATE, which leaves foreign keys
    alone) before it marks the entry stale: with FOR UPDATE and the entry's row lock taken first,
    each of two writers waited for the other and PostgreSQL aborted one ('deadlock detected').
    On PostgreSQL only: SQLite's transactions begin with the write lock, so they never overlap."""
    MetricStore.open(postgres_url).close()
    together(write_then_lock, postgres_url)
    engine = sa.create_engine(postgres_url)
    try:
        assert count(engine, sa.select(sa.func.count()).select_from(schema.loads)) == 2 * PROCESSES * ROUNDS
    finally:
        engine.dispose()
