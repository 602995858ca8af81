"""What one store transaction remembers (a dataset's id, its entry marked stale) lasts to its end
and no further: a rolled-back transaction's new dataset is not remembered, and a transaction of
many writes to one dataset moves its entry's version once."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime

import pytest

from assay.store import MetricStore, RunRecord

AT = datetime(2026, 3, 2, 6, tzinfo=UTC)


class Stop(Exception):
    pass


def test_a_dataset_made_in_a_rolled_back_transaction_is_made_again(store: MetricStore) -> None:
    with pytest.raises(Stop), store.transaction():
        store.create_load("shop.orders", logical_time=AT, logical_date=date(2026, 3, 2), row_count=3)
        raise Stop
    assert store.entry_versions(["shop.orders"]) == {}  # no such dataset
    with store.transaction():  # the same pooled connection: the id is read again, not remembered
        load = store.create_load("shop.orders", logical_time=AT, logical_date=date(2026, 3, 2), row_count=3)
        store.save_profile(load, [("id", "int64")], {})
    assert store.metrics_of(load) == {}
    assert store.entry_versions(["shop.orders"])["shop.orders"] is not None


def test_many_writes_in_one_transaction_move_the_entry_version_once(store: MetricStore) -> None:
    def day(n: int) -> None:
        load = store.create_load("shop.orders", logical_time=AT, logical_date=date(2026, 3, n), row_count=3)
        store.save_profile(load, [("id", "int64")], {})
        store.record_run(RunRecord(str(uuid.uuid4()), "check", "shop.orders", load, "completed", AT))
        store.record_score("dataset", "shop.orders", date(2026, 3, n), 90.0)

    with store.transaction():
        day(1)
        day(2)
    versions = [store.entry_versions(["shop.orders"])["shop.orders"] or 0]
    with store.transaction():
        day(3)
    versions.append(store.entry_versions(["shop.orders"])["shop.orders"] or 0)
    day(4)  # the same writes, each its own transaction
    versions.append(store.entry_versions(["shop.orders"])["shop.orders"] or 0)
    assert versions[1] == versions[0] + 1
    assert versions[2] - versions[1] >= 3  # apart, the writes each mark it (so the once is the memo)
