"""The lineage graph on each store backend: declared and learned edges walked as one graph,
transitively, each dataset once even through a cycle."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from assay.platform.lineage.graph import downstream, upstream
from assay.store import MetricStore

AT = datetime(2026, 12, 1, 6, tzinfo=UTC)


@pytest.fixture(params=("sqlite", "postgres"))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MetricStore]:
    url = f"sqlite:///{tmp_path / 'assay.db'}"
    if request.param == "postgres":
        url = request.getfixturevalue("postgres_url")
    with MetricStore.open(url) as opened:
        yield opened


def test_declared_and_learned_edges_make_one_graph_walked_through_a_cycle(store: MetricStore) -> None:
    store.declare_upstream("silver.orders", ["bronze.orders"], at=AT)
    assert store.learn_edges([("silver.orders", "gold.revenue")], job="dbt.gold", at=AT) == 1
    assert upstream(store, "gold.revenue") == ["silver.orders", "bronze.orders"]
    assert downstream(store, "bronze.orders") == ["silver.orders", "gold.revenue"]
    # a job that writes back into bronze closes a cycle: each dataset once, never itself
    store.learn_edges([("gold.revenue", "bronze.orders")], job="backfill", at=AT)
    assert downstream(store, "bronze.orders") == ["silver.orders", "gold.revenue"]
    assert upstream(store, "bronze.orders") == ["gold.revenue", "silver.orders"]
    # a document that stops declaring an edge drops it; learned edges stay
    store.declare_upstream("silver.orders", [], at=AT)
    assert upstream(store, "silver.orders") == []
    assert [(e.upstream, e.downstream, e.origin, e.job) for e in store.lineage_edges()] == [
        ("gold.revenue", "bronze.orders", "openlineage", "backfill"),
        ("silver.orders", "gold.revenue", "openlineage", "dbt.gold"),
    ]
