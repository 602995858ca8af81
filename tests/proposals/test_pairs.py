"""The profile's pair counts: in the one query, right, and not counted again once mixed."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pyarrow as pa

from assay.engine import DuckDBEngine
from assay.measure.profile import counted_pairs
from assay.measure.profile import profile as measure
from assay.platform import flows
from assay.store import MetricKey, MetricStore

TABLE = pa.table(
    {
        "opened": [1, 2, 3, None, 5],
        "closed": [2, 2, 4, 7, 9],  # never before opened
        "noise": [9, 0, 5, 1, 2],  # both ways
        "far": [100, 101, 102, 103, 104],  # above everything: the ranges order it
    }
)


def test_counted_in_the_one_query() -> None:
    engine = DuckDBEngine()
    engine.register_arrow("t", TABLE)
    load = measure(engine, "t", engine.columns("t"))
    assert engine.queries == 1
    rows = TABLE.to_pylist()
    for pair in load.pairs:
        a, b = pair.first, pair.second
        both = [r for r in rows if r[a] is not None and r[b] is not None]
        assert (pair.less, pair.greater) == (sum(r[a] < r[b] for r in both), sum(r[a] > r[b] for r in both))
    assert [(p.first, p.second) for p in load.pairs][:3] == [
        ("opened", "closed"),
        ("opened", "noise"),
        ("opened", "far"),
    ]


def test_a_mixed_pair_is_not_counted_again_and_disjoint_ranges_are_not_counted(tmp_path: Path) -> None:
    with MetricStore.open("sqlite://") as store:
        for day in (1, 2, 3):
            flows.profile(TABLE, dataset="t", load_date=date(2026, 1, day), store=store, workspace=tmp_path)
        loads = store.window("t", date(2026, 1, 9))
        first, second, third = (store.metrics_of(x.id) for x in reversed(loads))
    less = MetricKey.multicolumn(["opened", "noise"], "LessCount")
    assert first[less] == 2.0 and second[less] is None and third[less] is None  # mixed: no value
    ordered = MetricKey.multicolumn(["opened", "closed"], "GreaterCount")
    assert first[ordered] == second[ordered] == third[ordered] == 0.0
    far = MetricKey.multicolumn(["opened", "far"], "LessCount")
    assert far in first and far not in second  # the ranges said it: not counted
    engine = DuckDBEngine()
    engine.register_arrow("t", TABLE)
    counted, mixed = counted_pairs(
        engine.columns("t"), {(k.entity, k.instance, k.name): v for k, v in first.items()}
    )
    assert (
        ("opened", "closed") in counted and ("opened", "noise") in mixed and ("opened", "far") not in counted
    )
