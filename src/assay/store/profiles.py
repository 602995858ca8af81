"""The store's side of profiling: load schemas and value counts, value sets, judgements. (The
new-value decisions a profile opens are :mod:`assay.store.decisions`; how value sets are kept,
:mod:`assay.store.value_sets`; their names are importable from here too.)

:class:`ProfileRecords` is mixed into :class:`~assay.store.metrics.MetricStore`; it relies on
the store's ``_transaction``, ``_ensure_dataset`` and ``_require_load`` helpers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay.store import schema
from assay.store.catalog import mark_stale
from assay.store.decisions import DECISION_STATUSES, Decision
from assay.store.value_sets import extend_value_sets, lock_dataset, refresh_after, refresh_value_sets

__all__ = [
    "DECISION_STATUSES",
    "UNKNOWN",
    "Decision",
    "Judgement",
    "LoadInfo",
    "ProfileRecords",
    "lock_dataset",
    "refresh_after",
]


@dataclass(frozen=True)
class LoadInfo:
    """A current load of a dataset: the window of a drift judgement is a list of these."""

    id: int
    logical_date: date | None
    logical_time: datetime
    row_count: int | None
    partition: str = ""  # a check document's profile id; "" for assay profile's loads


UNKNOWN = "unknown"  # the stored type of a column that had no value in a load: no type evidence


@dataclass(frozen=True)
class Judgement:
    """What one metric of one load was judged against, and the alert it raised (``severity``)."""

    column: str  # "" for the whole load
    kind: str  # null_rate | new_value | volume | range | schema
    observed: float | None
    low: float | None
    high: float | None
    severity: str | None  # None: within the band; "soft" | "hard": an alert
    message: str | None = None
    detail: Mapping[str, Any] | None = None


class _Store(Protocol):
    def _transaction(self) -> AbstractContextManager[Connection]: ...

    def _ensure_dataset(self, connection: Connection, name: str) -> int: ...

    def _require_load(self, connection: Connection, load_id: int) -> int: ...


class ProfileRecords:
    """Profile-related methods of the metric store."""

    def save_profile(
        self: _Store,
        load_id: int,
        columns: Sequence[tuple[str, str]],
        values: Mapping[str, Mapping[str, int]],
    ) -> None:
        """Record a load's schema (names and types, in order) and the value counts of its
        categorical columns, and fold the values into the dataset's value sets.

        >>> from datetime import UTC
        >>> from assay.store import MetricStore
        >>> day = date(2024, 5, 1)
        >>> with MetricStore.open("sqlite://") as store:
        ...     load = store.create_load("t", logical_time=datetime(2024, 5, 1, tzinfo=UTC), logical_date=day)
        ...     store.save_profile(load, [("venue", "string")], {"venue": {"XLON": 3}})
        ...     sorted(store.value_set("t", "venue"))
        ['XLON']
        """
        # imported here: most commands that open a store run no engine
        from assay.engine.types import require_canonical

        for name, kind in columns:
            require_canonical(name, kind)
        with self._transaction() as connection:
            dataset_id = self._require_load(connection, load_id)
            mark_stale(connection, dataset_id)
            connection.execute(sa.delete(schema.load_columns).where(schema.load_columns.c.load_id == load_id))
            # values an earlier save of this load held, which today's may not: recomputed below
            held = [
                (str(row.column), str(row.value))
                for row in connection.execute(
                    sa.select(schema.load_values.c.column, schema.load_values.c.value).where(
                        schema.load_values.c.load_id == load_id
                    )
                )
            ]
            connection.execute(sa.delete(schema.load_values).where(schema.load_values.c.load_id == load_id))
            if columns:
                connection.execute(
                    sa.insert(schema.load_columns),
                    [
                        {"load_id": load_id, "position": i, "name": n, "type": t}
                        for i, (n, t) in enumerate(columns)
                    ],
                )
            rows = [
                {"load_id": load_id, "column": column, "value": value, "count": int(count)}
                for column, counts in values.items()
                for value, count in counts.items()
            ]
            if rows:
                connection.execute(sa.insert(schema.load_values), rows)
            pairs = [(str(r["column"]), str(r["value"])) for r in rows]
            if held:
                refresh_value_sets(connection, dataset_id, sorted({*held, *pairs}))
            else:
                extend_value_sets(connection, dataset_id, load_id, pairs)

    def value_set(
        self: _Store, dataset: str, column: str, *, before: date | None = None
    ) -> dict[str, tuple[date | None, date | None]]:
        """Every value ``column`` of ``dataset`` has held in current loads (first seen before
        ``before`` when given), with the dates of its first and last load."""
        with self._transaction() as connection:
            query = (
                sa.select(
                    schema.value_sets.c.value, schema.value_sets.c.first_date, schema.value_sets.c.last_date
                )
                .select_from(schema.value_sets.join(schema.datasets))
                .where(schema.datasets.c.name == dataset, schema.value_sets.c.column == column)
            )
            if before is not None:
                query = query.where(schema.value_sets.c.first_date < before)
            return {row.value: (row.first_date, row.last_date) for row in connection.execute(query)}

    def load_for_date(self: _Store, dataset: str, logical_date: date, *, partition: str = "") -> list[int]:
        """The current loads of ``dataset`` for a logical date (normally none or one)."""
        with self._transaction() as connection:
            query = (
                sa.select(schema.loads.c.id)
                .select_from(schema.loads.join(schema.datasets))
                .where(
                    schema.datasets.c.name == dataset,
                    schema.loads.c.partition == partition,
                    schema.loads.c.logical_date == logical_date,
                    schema.loads.c.status == "current",
                )
            )
            return [int(row.id) for row in connection.execute(query)]

    def window(self: _Store, dataset: str, before: date, *, partition: str = "") -> list[LoadInfo]:
        """The current loads of ``dataset`` with a logical date before ``before``, most recent first."""
        with self._transaction() as connection:
            query = (
                sa.select(
                    schema.loads.c.id,
                    schema.loads.c.logical_date,
                    schema.loads.c.logical_time,
                    schema.loads.c.row_count,
                )
                .select_from(schema.loads.join(schema.datasets))
                .where(
                    schema.datasets.c.name == dataset,
                    schema.loads.c.partition == partition,
                    schema.loads.c.status == "current",
                    schema.loads.c.logical_date < before,
                )
                .order_by(schema.loads.c.logical_date.desc(), schema.loads.c.id.desc())
            )
            return [
                LoadInfo(int(r.id), r.logical_date, r.logical_time, r.row_count)
                for r in connection.execute(query)
            ]

    def load_metrics(
        self: _Store, load_ids: Sequence[int]
    ) -> dict[int, dict[tuple[str, str, str], float | None]]:
        """The metrics of several loads at once: load id → {(entity, instance, name): value}."""
        found: dict[int, dict[tuple[str, str, str], float | None]] = {load: {} for load in load_ids}
        if not load_ids:
            return found
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(schema.metrics).where(schema.metrics.c.load_id.in_(list(load_ids)))
            )
            for row in rows:
                found[row.load_id][(row.entity, row.instance, row.name)] = row.value
        return found

    def load_values(
        self: _Store, load_ids: Sequence[int], columns: Sequence[str]
    ) -> dict[int, dict[str, dict[str, int]]]:
        """The value counts several loads kept for ``columns``: load id → {column: {value: count}}
        (a column a load kept no values of is absent from its entry).

        >>> from datetime import UTC
        >>> from assay.store import MetricStore
        >>> with MetricStore.open("sqlite://") as store:
        ...     load = store.create_load("t", logical_time=datetime(2024, 5, 1, tzinfo=UTC))
        ...     store.save_profile(load, [("venue", "string")], {"venue": {"XLON": 3}})
        ...     store.load_values([load], ["venue", "side"]) == {load: {"venue": {"XLON": 3}}}
        True
        """
        found: dict[int, dict[str, dict[str, int]]] = {load: {} for load in load_ids}
        if not load_ids or not columns:
            return found
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(schema.load_values).where(
                    schema.load_values.c.load_id.in_(list(load_ids)),
                    schema.load_values.c.column.in_(list(columns)),
                )
            )
            for row in rows:
                found[row.load_id].setdefault(row.column, {})[row.value] = int(row._mapping["count"])
        return found

    def load_schema(self: _Store, load_id: int) -> list[tuple[str, str]]:
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(schema.load_columns.c.name, schema.load_columns.c.type)
                .where(schema.load_columns.c.load_id == load_id)
                .order_by(schema.load_columns.c.position)
            )
            return [(row.name, row.type) for row in rows]

    def known_types(
        self: _Store, dataset: str, before: date, names: Sequence[str], *, partition: str = ""
    ) -> dict[str, str]:
        """The type each of ``names`` had in the latest current load of ``dataset``'s
        ``partition`` before ``before`` that said one: a load with no value in a column stores its type as
        ``unknown`` (:data:`UNKNOWN`) and says nothing about it.

        >>> from datetime import UTC
        >>> from assay.store import MetricStore
        >>> with MetricStore.open("sqlite://") as store:
        ...     for day, kind in ((1, "double"), (2, UNKNOWN)):
        ...         load = store.create_load("w", logical_time=datetime(2024, 5, day, tzinfo=UTC),
        ...                                  logical_date=date(2024, 5, day))
        ...         store.save_profile(load, [("gust", kind)], {})
        ...     store.known_types("w", date(2024, 5, 3), ["gust", "other"])
        {'gust': 'double'}
        """
        if not names:
            return {}
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(schema.load_columns.c.name, schema.load_columns.c.type)
                .select_from(schema.load_columns.join(schema.loads).join(schema.datasets))
                .where(
                    schema.datasets.c.name == dataset,
                    schema.loads.c.partition == partition,
                    schema.loads.c.status == "current",
                    schema.loads.c.logical_date < before,
                    schema.load_columns.c.name.in_(sorted(set(names))),
                    schema.load_columns.c.type != UNKNOWN,
                )
                .order_by(schema.loads.c.logical_date.desc(), schema.loads.c.id.desc())
            )
            found: dict[str, str] = {}
            for row in rows:
                found.setdefault(str(row.name), str(row.type))
            return found

    def save_judgements(self: _Store, load_id: int, judgements: Sequence[Judgement]) -> None:
        """Record what a load was judged against (replacing an earlier judgement of it)."""
        with self._transaction() as connection:
            self._require_load(connection, load_id)
            connection.execute(sa.delete(schema.judgements).where(schema.judgements.c.load_id == load_id))
            if judgements:
                connection.execute(
                    sa.insert(schema.judgements),
                    [
                        {
                            "load_id": load_id,
                            "column": j.column,
                            "kind": j.kind,
                            "observed": _finite(j.observed),
                            "low": _finite(j.low),
                            "high": _finite(j.high),
                            "severity": j.severity,
                            "message": j.message,
                            "detail": dict(j.detail) if j.detail is not None else None,
                        }
                        for j in judgements
                    ],
                )

    def judgements(
        self: _Store, dataset: str, *, column: str | None = None, kind: str | None = None
    ) -> list[tuple[LoadInfo, Judgement]]:
        """The judgements of a dataset's current loads, oldest load first."""
        with self._transaction() as connection:
            query = (
                sa.select(
                    schema.loads.c.id,
                    schema.loads.c.logical_date,
                    schema.loads.c.logical_time,
                    schema.loads.c.row_count,
                    schema.loads.c.partition,
                    schema.judgements,
                )
                .select_from(schema.judgements.join(schema.loads).join(schema.datasets))
                .where(schema.datasets.c.name == dataset, schema.loads.c.status == "current")
                .order_by(schema.loads.c.logical_date, schema.loads.c.id)
            )
            if column is not None:
                query = query.where(schema.judgements.c.column == column)
            if kind is not None:
                query = query.where(schema.judgements.c.kind == kind)
            return [
                (
                    LoadInfo(int(r.id), r.logical_date, r.logical_time, r.row_count, str(r.partition or "")),
                    Judgement(r.column, r.kind, r.observed, r.low, r.high, r.severity, r.message, r.detail),
                )
                for r in connection.execute(query)
            ]

    def categorical_columns(self: _Store, dataset: str) -> set[str]:
        """The columns of ``dataset`` that were profiled as categorical in some current load."""
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(schema.value_sets.c.column)
                .distinct()
                .select_from(schema.value_sets.join(schema.datasets))
                .where(schema.datasets.c.name == dataset)
            )
            return {str(row.column) for row in rows}


def _finite(value: float | None) -> float | None:
    if value is None or value != value or value in (float("inf"), float("-inf")):
        return None
    return float(value)
