"""MetricKey, OutcomeRecord and RunRecord: names, constructors and validation."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from assay.errors import ConfigError
from assay.store import MetricKey, OutcomeRecord, RunRecord

NOW = datetime(2024, 5, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("key", "display"),
    [
        (MetricKey.dataset("RowCount"), "Dataset.*.RowCount"),
        (MetricKey.dataset("CustomSQL", instance="big_orders"), "Dataset.big_orders.CustomSQL"),
        (MetricKey.column("item", "Completeness"), "Column.item.Completeness"),
        (MetricKey.column("address.city", "Completeness"), "Column.address.city.Completeness"),
        (MetricKey.column("status", "ColumnValues.Compliance"), "Column.status.ColumnValues.Compliance"),
        (MetricKey.multicolumn(["a", "b"], "ColumnCorrelation"), "Multicolumn.a,b.ColumnCorrelation"),
    ],
)
def test_display_keys_follow_glue(key: MetricKey, display: str) -> None:
    assert key.key == display


def test_keys_are_values() -> None:
    assert MetricKey.column("item", "Completeness") == MetricKey("Column", "item", "Completeness")
    assert len({MetricKey.dataset("RowCount"), MetricKey("Dataset", "*", "RowCount")}) == 1


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: MetricKey("Table", "*", "RowCount"), "unknown metric entity 'Table'"),
        (lambda: MetricKey.column("", "Completeness"), "needs both an instance and a name"),
        (lambda: MetricKey.dataset(""), "needs both an instance and a name"),
        (lambda: MetricKey.multicolumn(["a"], "ColumnCorrelation"), "at least two columns"),
        (lambda: MetricKey.multicolumn("ab", "ColumnCorrelation"), "not a string"),
        (lambda: MetricKey.multicolumn(["a,b", "c"], "ColumnCorrelation"), "contain a comma"),
    ],
)
def test_bad_keys_are_config_errors(build: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build()  # type: ignore[operator]


def test_run_keeps_outcomes_as_a_tuple() -> None:
    run = RunRecord(str(uuid.uuid4()), "dqdl", "orders", None, "completed", NOW, outcomes=[])
    assert run.outcomes == ()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"id": "run-1"}, "not a UUID"),
        ({"kind": "audit"}, "unknown run kind 'audit'"),
        ({"state": "done"}, "unknown run state 'done'"),
        ({"started_at": datetime(2024, 5, 1)}, "no time zone"),
        ({"finished_at": datetime(2024, 5, 1)}, "no time zone"),
    ],
)
def test_bad_runs_are_config_errors(changes: dict[str, object], message: str) -> None:
    fields: dict[str, object] = {
        "id": str(uuid.uuid4()),
        "kind": "dqdl",
        "dataset": "orders",
        "load_id": None,
        "state": "completed",
        "started_at": NOW,
    }
    with pytest.raises(ConfigError, match=message):
        RunRecord(**{**fields, **changes})  # type: ignore[arg-type]


def test_unknown_outcome_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown rule outcome 'Passed'"):
        OutcomeRecord("RowCount > 0", "Passed")  # Glue's string stays at the DQDL edge
