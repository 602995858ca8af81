"""Dynamic rules and DetectAnomalies read stored history: the same metric, the same dataset and
partition, strictly earlier loads. Metrics are persisted before judging."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest

from assay.dqdl import evaluate
from assay.store import MetricKey, MetricStore

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def rows(n: int, nulls: int = 0) -> pa.Table:
    return pa.table({"id": list(range(n)), "v": [None] * nulls + [1.0] * (n - nulls)})


@pytest.fixture
def store(tmp_path: Path) -> MetricStore:
    with MetricStore.open(workspace=tmp_path) as opened:
        yield opened


def run(store: MetricStore, text: str, table: pa.Table, day: int, **kw: object) -> list[str]:
    result = evaluate(text, table, dataset="orders", store=store, now=T0 + timedelta(days=day), **kw)
    return [r.outcome for r in result.rules]


def test_last_reads_earlier_loads_of_the_same_metric(store: MetricStore) -> None:
    for day, n in enumerate([100, 110, 120]):
        run(store, "Rules = [ RowCount > 0 ]", rows(n), day)
    assert run(store, "Rules = [ RowCount > avg(last(3)) ]", rows(105), 3) == ["Failed"]  # 105 > 110
    assert run(store, "Rules = [ RowCount >= 0.9 * avg(last(3)) ]", rows(115), 4) == ["Passed"]
    # day 4 is history now; day 3 failed, so it stays out of baselines until a person accepts
    # it: most recent first [115, 120, ...]
    assert run(store, "Rules = [ RowCount = index(last(2), 1) + 10 ]", rows(130), 5) == ["Passed"]


def test_history_is_kept_per_partition(store: MetricStore) -> None:
    run(store, "Rules = [ RowCount > 0 ]", rows(500), 0, partition="bank_a")
    run(store, "Rules = [ RowCount > 0 ]", rows(5), 0, partition="bank_b")
    assert run(store, "Rules = [ RowCount >= last() ]", rows(100), 1, partition="bank_b") == ["Passed"]
    assert run(store, "Rules = [ RowCount >= last() ]", rows(100), 1, partition="bank_a") == ["Failed"]


def test_a_where_clause_keeps_its_own_history(store: MetricStore) -> None:
    run(store, 'Rules = [ RowCount > 0, RowCount > 0 where "id < 10" ]', rows(100), 0)
    assert run(store, 'Rules = [ RowCount = last() where "id < 10" ]', rows(100), 1) == ["Passed"]
    assert run(store, "Rules = [ RowCount = last() ]", rows(100), 2) == ["Passed"]


def test_metrics_are_persisted_even_when_the_judgement_errs(store: MetricStore) -> None:
    assert run(store, "Rules = [ RowCount > average(last(3)) ]", rows(7), 0) == ["Error"]
    (load,) = [r.load_id for r in store.runs("orders")]
    assert load is not None
    assert store.metrics_of(load)[MetricKey.dataset("RowCount")] == 7.0


def test_a_load_never_sees_itself_or_later_loads(store: MetricStore) -> None:
    run(store, "Rules = [ RowCount > 0 ]", rows(50), 10)
    # on day 5 the day-10 load is in the future: no history, so last() is 0.0
    assert run(store, "Rules = [ RowCount = last() ]", rows(0), 5) == ["Passed"]
    assert run(store, "Rules = [ RowCount = last() ]", rows(50), 11) == ["Passed"]


def test_detect_anomalies_needs_history_then_flags_a_spike(store: MetricStore) -> None:
    outcomes = [
        run(store, 'Rules = [ DetectAnomalies "RowCount" ]', rows(n), d) for d, n in enumerate([100, 102])
    ]
    assert outcomes == [["Passed"], ["Passed"]]
    for day, n in enumerate([98, 101, 99, 103], start=2):
        assert run(store, 'Rules = [ DetectAnomalies "RowCount" ]', rows(n), day) == ["Passed"]
    result = evaluate(
        'Rules = [ DetectAnomalies "RowCount" ]',
        rows(40),
        dataset="orders",
        store=store,
        now=T0 + timedelta(days=9),
    )
    assert result.rules[0].outcome == "Failed"
    assert "outside the expected range" in (result.rules[0].message or "")


def test_detect_anomalies_on_a_column_metric(store: MetricStore) -> None:
    text = 'Rules = [ DetectAnomalies of Completeness of "v" ]'
    for day in range(5):
        assert run(store, text, rows(100), day) == ["Passed"]
    assert run(store, text, rows(100, nulls=30), 6) == ["Failed"]


def test_a_dynamic_failure_states_the_bound_it_was_compared_with(store: MetricStore) -> None:
    run(store, "Rules = [ RowCount > 0 ]", rows(11), 0)
    result = evaluate(
        "Rules = [ RowCount >= 0.8 * last(), RowCount > 5 ]",
        rows(8),
        dataset="orders",
        store=store,
        now=T0 + timedelta(days=1),
    )
    dynamic, fixed = result.rules
    assert dynamic.outcome == "Failed" and dynamic.message == (
        "Value: 8.0 does not meet the constraint requirement! Expected at least 8.8 (>= 0.8 * last())"
    )
    # the JSON keeps every field and adds the bounds the rule was judged against
    assert dynamic.to_dict()["expected"] == {"low": 8.8} and dynamic.to_dict()["message"] == dynamic.message
    assert fixed.outcome == "Passed" and fixed.to_dict()["expected"] == {"low": 5.0}
