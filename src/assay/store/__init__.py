"""The metric store: every measurement assay makes, kept so that rules can compare with the past.

SQLAlchemy Core over SQLite (a file in the workspace, the default) or PostgreSQL; the schema is
created and upgraded by the Alembic migrations shipped in ``assay/store/migrations``.

>>> from datetime import UTC, datetime
>>> from assay.store import MetricKey, MetricStore
>>> with MetricStore.open("sqlite://") as store:
...     load = store.create_load("orders", logical_time=datetime(2024, 5, 1, tzinfo=UTC))
...     store.save_metrics(load, {MetricKey.dataset("RowCount"): 120.0})
"""

from typing import TYPE_CHECKING

from assay.store.records import (
    ENTITIES,
    LOAD_STATUSES,
    OUTCOMES,
    RUN_KINDS,
    RUN_STATES,
    HistoryPoint,
    MetricKey,
    OutcomeRecord,
    RunRecord,
)

if TYPE_CHECKING:
    from assay.store.metrics import MetricStore

__all__ = [
    "ENTITIES",
    "LOAD_STATUSES",
    "OUTCOMES",
    "RUN_KINDS",
    "RUN_STATES",
    "HistoryPoint",
    "MetricKey",
    "MetricStore",
    "OutcomeRecord",
    "RunRecord",
]


def __getattr__(name: str) -> object:
    # The store's engine (SQLAlchemy, Alembic) is imported on first use, so that evaluating rules
    # without a store does not pay for it (0.2 s and ~40 MB at start-up).
    if name == "MetricStore":
        from assay.store.metrics import MetricStore

        return MetricStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
