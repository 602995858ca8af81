"""The store's side of profiling: load schemas and value counts, value sets, judgements, decisions.

:class:`ProfileRecords` is mixed into :class:`~assay.store.metrics.MetricStore`; it relies on
the store's ``_transaction``, ``_ensure_dataset`` and ``_require_load`` helpers.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay.errors import ConfigError
from assay.store import schema
from assay.store.schema import upsert, utcnow

DECISION_STATUSES = ("pending", "accepted", "rejected")


@dataclass(frozen=True)
class LoadInfo:
    """A current load of a dataset: the window of a drift judgement is a list of these."""

    id: int
    logical_date: date | None
    logical_time: datetime
    row_count: int | None


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


@dataclass(frozen=True)
class Decision:
    id: int
    dataset: str
    column: str
    value: str
    status: str
    rows: int
    opened_at: datetime
    decided_at: datetime | None
    decided_by: str | None
    note: str | None
    first_date: date | None = None


class _Store(Protocol):
    def _transaction(self) -> AbstractContextManager[Connection]: ...

    def _ensure_dataset(self, connection: Connection, name: str) -> int: ...

    def _require_load(self, connection: Connection, load_id: int) -> int: ...

    def decision(self, decision_id: int) -> Decision: ...

    def decisions(self, dataset: str | None = None, status: str | None = None) -> list[Decision]: ...

    def decision_status(self, dataset: str, column: str) -> dict[str, str]: ...

    def value_set(
        self, dataset: str, column: str, *, before: date | None = None
    ) -> dict[str, tuple[date | None, date | None]]: ...


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
        from assay.engine.types import (
            require_canonical,
        )  # here: most commands that open a store run no engine

        for name, kind in columns:
            require_canonical(name, kind)
        with self._transaction() as connection:
            dataset_id = self._require_load(connection, load_id)
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
                _refresh_value_sets(connection, dataset_id, sorted({*held, *pairs}))
            else:
                _extend_value_sets(connection, dataset_id, load_id, pairs)

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

    def load_schema(self: _Store, load_id: int) -> list[tuple[str, str]]:
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(schema.load_columns.c.name, schema.load_columns.c.type)
                .where(schema.load_columns.c.load_id == load_id)
                .order_by(schema.load_columns.c.position)
            )
            return [(row.name, row.type) for row in rows]

    def known_types(self: _Store, dataset: str, before: date, names: Sequence[str]) -> dict[str, str]:
        """The type each of ``names`` had in the latest current load of ``dataset`` before
        ``before`` that said one: a load with no value in a column stores its type as
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
                    schema.loads.c.partition == "",
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
                    LoadInfo(int(r.id), r.logical_date, r.logical_time, r.row_count),
                    Judgement(r.column, r.kind, r.observed, r.low, r.high, r.severity, r.message, r.detail),
                )
                for r in connection.execute(query)
            ]

    # --- decisions -------------------------------------------------------------------------

    def open_decision(
        self: _Store,
        dataset: str,
        column: str,
        value: str,
        rows: int,
        load_id: int | None,
        *,
        source: str | None = None,
    ) -> int:
        """Open a decision on a new value, or add rows to the pending one; returns its id.

        ``source`` names where the rows came from (``profile:2026-03-04``, ``gate:<run id>``):
        the same source coming again replaces its rows instead of adding them. Two processes
        opening the same decision at once get the same id.
        """
        source = source or f"once:{uuid.uuid4().hex}"
        with self._transaction() as connection:
            dataset_id = self._ensure_dataset(connection, dataset)
            lock_dataset(connection, dataset_id)
            connection.execute(
                upsert(connection, schema.decisions).on_conflict_do_nothing(
                    index_elements=[
                        schema.decisions.c.dataset_id,
                        schema.decisions.c.column,
                        schema.decisions.c.value,
                    ]
                ),
                {
                    "dataset_id": dataset_id,
                    "column": column,
                    "value": value,
                    "status": "pending",
                    "first_load_id": load_id,
                    "opened_at": utcnow(),
                },
            )
            found = connection.execute(
                sa.select(schema.decisions.c.id, schema.decisions.c.status).where(
                    schema.decisions.c.dataset_id == dataset_id,
                    schema.decisions.c.column == column,
                    schema.decisions.c.value == value,
                )
            ).one()
            if found.status == "pending":
                insert = upsert(connection, schema.decision_sources).values(
                    decision_id=found.id, source=source, rows=int(rows)
                )
                connection.execute(
                    insert.on_conflict_do_update(
                        index_elements=[
                            schema.decision_sources.c.decision_id,
                            schema.decision_sources.c.source,
                        ],
                        set_={"rows": insert.excluded.rows},
                    )
                )
            return int(found.id)

    def settle_decisions(self: _Store, dataset: str, source: str, keep: Sequence[int]) -> int:
        """Withdraw ``source``'s rows from the dataset's pending decisions other than ``keep``
        (the source came again without their value: a load date profiled again from a corrected
        file). A pending decision left with no source at all is closed; returns how many were."""
        with self._transaction() as connection:
            dataset_id = self._ensure_dataset(connection, dataset)
            lock_dataset(connection, dataset_id)
            pending = sa.select(schema.decisions.c.id).where(
                schema.decisions.c.dataset_id == dataset_id,
                schema.decisions.c.status == "pending",
                schema.decisions.c.id.not_in(list(keep)),
            )
            connection.execute(
                sa.delete(schema.decision_sources).where(
                    schema.decision_sources.c.source == source,
                    schema.decision_sources.c.decision_id.in_(pending),
                )
            )
            orphans = pending.where(
                ~sa.exists().where(schema.decision_sources.c.decision_id == schema.decisions.c.id)
            )
            closed = [int(row.id) for row in connection.execute(orphans)]
            if closed:
                connection.execute(sa.delete(schema.decisions).where(schema.decisions.c.id.in_(closed)))
            return len(closed)

    def known_values(
        self: _Store, dataset: str, column: str, *, before: date | None = None
    ) -> dict[str, tuple[date | None, date | None]]:
        """The values of ``column`` that count as known: held by a current load (first seen before
        ``before`` when given) and not waiting on a decision or rejected by one. A pending value
        stays new until someone decides it, however many loads bring it.

        >>> from datetime import UTC
        >>> from assay.store import MetricStore
        >>> with MetricStore.open("sqlite://") as store:
        ...     load = store.create_load("t", logical_time=datetime(2024, 5, 1, tzinfo=UTC))
        ...     store.save_profile(load, [("venue", "string")], {"venue": {"XLON": 3, "XNEW": 1}})
        ...     _ = store.open_decision("t", "venue", "XNEW", 1, load)
        ...     sorted(store.known_values("t", "venue"))
        ['XLON']
        """
        values = self.value_set(dataset, column, before=before)
        status = self.decision_status(dataset, column)
        return {v: seen for v, seen in values.items() if status.get(v, "accepted") == "accepted"}

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

    def decisions(self: _Store, dataset: str | None = None, status: str | None = None) -> list[Decision]:
        with self._transaction() as connection:
            query = (
                sa.select(
                    schema.decisions,
                    _ROWS,
                    schema.datasets.c.name.label("dataset"),
                    schema.loads.c.logical_date,
                )
                .select_from(
                    schema.decisions.join(schema.datasets).outerjoin(
                        schema.loads, schema.loads.c.id == schema.decisions.c.first_load_id
                    )
                )
                .order_by(schema.decisions.c.id)
            )
            if dataset is not None:
                query = query.where(schema.datasets.c.name == dataset)
            if status is not None:
                query = query.where(schema.decisions.c.status == status)
            return [_decision(row) for row in connection.execute(query)]

    def decision(self: _Store, decision_id: int) -> Decision:
        with self._transaction() as connection:
            row = connection.execute(
                sa.select(
                    schema.decisions,
                    _ROWS,
                    schema.datasets.c.name.label("dataset"),
                    schema.loads.c.logical_date,
                )
                .select_from(
                    schema.decisions.join(schema.datasets).outerjoin(
                        schema.loads, schema.loads.c.id == schema.decisions.c.first_load_id
                    )
                )
                .where(schema.decisions.c.id == decision_id)
            ).first()
            if row is None:
                raise ConfigError(f"there is no decision {decision_id}; `assay decisions list` shows them")
            return _decision(row)

    def decide(self: _Store, decision_id: int, status: str, *, by: str, note: str | None = None) -> Decision:
        """Accept or reject a pending decision, recording who and when.

        >>> from assay.store import MetricStore
        >>> with MetricStore.open("sqlite://") as store:
        ...     d = store.open_decision("trades", "venue", "XNEW", 12, None)
        ...     store.decide(d, "accepted", by="ana").status
        'accepted'
        """
        if status not in ("accepted", "rejected"):
            raise ConfigError(f"a decision is 'accepted' or 'rejected', not {status!r}")
        current = self.decision(decision_id)
        if current.status != "pending":
            when = (
                current.decided_at.strftime("%Y-%m-%d %H:%M UTC") if current.decided_at else "an unknown time"
            )
            raise ConfigError(
                f"decision {decision_id} was already {current.status} by {current.decided_by} at {when}"
            )
        with self._transaction() as connection:
            connection.execute(
                sa.update(schema.decisions)
                .where(schema.decisions.c.id == decision_id)
                .values(status=status, decided_by=by, decided_at=utcnow(), note=note)
            )
        return self.decision(decision_id)

    def decide_all(
        self: _Store,
        dataset: str,
        status: str,
        *,
        by: str,
        column: str | None = None,
        note: str | None = None,
    ) -> list[Decision]:
        """Accept or reject every pending decision of ``dataset`` (of one ``column`` when given)
        in one transaction; returns the decisions taken, in id order (none: an empty list).

        >>> from assay.store import MetricStore
        >>> with MetricStore.open("sqlite://") as store:
        ...     for value in ("XNEW", "XOTHER"):
        ...         _ = store.open_decision("trades", "venue", value, 3, None)
        ...     [d.value for d in store.decide_all("trades", "accepted", by="ana", column="venue")]
        ['XNEW', 'XOTHER']
        """
        if status not in ("accepted", "rejected"):
            raise ConfigError(f"a decision is 'accepted' or 'rejected', not {status!r}")
        with self._transaction() as connection:
            dataset_id = connection.execute(
                sa.select(schema.datasets.c.id).where(schema.datasets.c.name == dataset)
            ).scalar()
            if dataset_id is None:
                raise ConfigError(f"the store has no dataset '{dataset}'")
            lock_dataset(connection, int(dataset_id))
            pending = sa.select(schema.decisions.c.id).where(
                schema.decisions.c.dataset_id == dataset_id, schema.decisions.c.status == "pending"
            )
            if column is not None:
                pending = pending.where(schema.decisions.c.column == column)
            ids = [int(row.id) for row in connection.execute(pending.order_by(schema.decisions.c.id))]
            if ids:
                connection.execute(
                    sa.update(schema.decisions)
                    .where(schema.decisions.c.id.in_(ids))
                    .values(status=status, decided_by=by, decided_at=utcnow(), note=note)
                )
        return [self.decision(i) for i in ids]

    def decision_status(self: _Store, dataset: str, column: str) -> dict[str, str]:
        """value → status of every decision on a column."""
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(schema.decisions.c.value, schema.decisions.c.status)
                .select_from(schema.decisions.join(schema.datasets))
                .where(schema.datasets.c.name == dataset, schema.decisions.c.column == column)
            )
            return {row.value: row.status for row in rows}


_ROWS = (
    sa.select(sa.func.coalesce(sa.func.sum(schema.decision_sources.c.rows), 0))
    .where(schema.decision_sources.c.decision_id == schema.decisions.c.id)
    .scalar_subquery()
    .label("rows")
)


def _decision(row: Any) -> Decision:
    return Decision(
        int(row.id),
        row.dataset,
        row.column,
        row.value,
        row.status,
        int(row.rows),
        row.opened_at,
        row.decided_at,
        row.decided_by,
        row.note,
        row.logical_date,
    )


def _finite(value: float | None) -> float | None:
    if value is None or value != value or value in (float("inf"), float("-inf")):
        return None
    return float(value)


def refresh_after(connection: Connection, dataset_id: int, load_ids: Sequence[int]) -> None:
    """Recompute the value sets of the values these loads held, after their status changed."""
    rows = connection.execute(
        sa.select(schema.load_values.c.column, schema.load_values.c.value).where(
            schema.load_values.c.load_id.in_(list(load_ids))
        )
    )
    _refresh_value_sets(connection, dataset_id, [(str(row.column), str(row.value)) for row in rows])


def lock_dataset(connection: Connection, dataset_id: int) -> None:
    """Hold the dataset's row until the transaction ends, so that two processes recomputing its
    value sets or decisions take turns (PostgreSQL; SQLite has one writer at a time anyway).
    Without it both would delete a value's row, both insert it again, and one would fail.
    (:meth:`~assay.store.metrics.MetricStore.transaction` takes the same lock for a whole profile.)"""
    connection.execute(
        sa.select(schema.datasets.c.id).where(schema.datasets.c.id == dataset_id).with_for_update()
    )


def _extend_value_sets(
    connection: Connection, dataset_id: int, load_id: int, pairs: Sequence[tuple[str, str]]
) -> None:
    """Fold one newly saved load's (column, value) pairs into the value sets: each value's first
    and last load move to this one when it is earlier or later. The same result as recomputing
    them from every load that holds the values (:func:`_refresh_value_sets`), without reading the
    whole history: a value held by 365 daily loads costs one row here, not 365."""
    lock_dataset(connection, dataset_id)
    load = connection.execute(
        sa.select(schema.loads.c.status, schema.loads.c.logical_date, schema.loads.c.logical_time).where(
            schema.loads.c.id == load_id
        )
    ).one()
    if load.status != "current":
        return  # a load that is not current holds no value
    keys = {load_id: _order_key(load.logical_date, load.logical_time, load_id)}
    when = keys[load_id][0][0]  # this load's date, as the value sets keep it
    for column, chunk in _by_column(pairs):
        known = {
            str(row.value): (int(row.first_load_id), int(row.last_load_id))
            for row in connection.execute(
                sa.select(
                    schema.value_sets.c.value,
                    schema.value_sets.c.first_load_id,
                    schema.value_sets.c.last_load_id,
                ).where(
                    schema.value_sets.c.dataset_id == dataset_id,
                    schema.value_sets.c.column == column,
                    schema.value_sets.c.value.in_(chunk),
                )
            )
        }
        wanted = {load for ends in known.values() for load in ends} - keys.keys()
        if wanted:
            for row in connection.execute(
                sa.select(schema.loads.c.id, schema.loads.c.logical_date, schema.loads.c.logical_time).where(
                    schema.loads.c.id.in_(sorted(wanted))
                )
            ):
                keys[int(row.id)] = _order_key(row.logical_date, row.logical_time, int(row.id))
        fresh = [value for value in chunk if value not in known]
        if fresh:
            connection.execute(
                sa.insert(schema.value_sets),
                [
                    {
                        "dataset_id": dataset_id,
                        "column": column,
                        "value": value,
                        "first_load_id": load_id,
                        "last_load_id": load_id,
                        "first_date": when,
                        "last_date": when,
                    }
                    for value in fresh
                ],
            )
        # a load later than a value's last moves its last; earlier than its first moves its first
        for end, moved in (
            ("last", [v for v, (_, last) in known.items() if keys[load_id] > keys[last]]),
            ("first", [v for v, (first, _) in known.items() if keys[load_id] < keys[first]]),
        ):
            if moved:
                connection.execute(
                    sa.update(schema.value_sets)
                    .where(
                        schema.value_sets.c.dataset_id == dataset_id,
                        schema.value_sets.c.column == column,
                        schema.value_sets.c.value.in_(moved),
                    )
                    .values({f"{end}_load_id": load_id, f"{end}_date": when})
                )


def _order_key(
    logical_date: date | None, logical_time: datetime, load_id: int
) -> tuple[tuple[date, datetime], int]:
    """How loads are ordered in a value set: by logical date, then time, then id."""
    return (logical_date or logical_time.date(), logical_time), load_id


def _refresh_value_sets(connection: Connection, dataset_id: int, pairs: Sequence[tuple[str, str]]) -> None:
    """Recompute the value-set rows of these (column, value) pairs from the current loads that
    hold them: a load saved, replaced or rejected changes where a value was first and last seen."""
    lock_dataset(connection, dataset_id)
    for column, chunk in _by_column(pairs):
        holders = (
            sa.select(
                schema.load_values.c.value,
                schema.loads.c.id,
                schema.loads.c.logical_date,
                schema.loads.c.logical_time,
            )
            .select_from(schema.load_values.join(schema.loads))
            .where(
                schema.loads.c.dataset_id == dataset_id,
                schema.loads.c.status == "current",
                schema.load_values.c.column == column,
                schema.load_values.c.value.in_(chunk),
            )
        )
        seen: dict[str, list[tuple[Any, int]]] = {}
        for row in connection.execute(holders):
            seen.setdefault(row.value, []).append(_order_key(row.logical_date, row.logical_time, row.id))
        connection.execute(
            sa.delete(schema.value_sets).where(
                schema.value_sets.c.dataset_id == dataset_id,
                schema.value_sets.c.column == column,
                schema.value_sets.c.value.in_(chunk),
            )
        )
        rows = []
        for value, loads in seen.items():
            loads.sort()
            (first_key, first_id), (last_key, last_id) = loads[0], loads[-1]
            rows.append(
                {
                    "dataset_id": dataset_id,
                    "column": column,
                    "value": value,
                    "first_load_id": first_id,
                    "last_load_id": last_id,
                    "first_date": first_key[0],
                    "last_date": last_key[0],
                }
            )
        if rows:
            connection.execute(sa.insert(schema.value_sets), rows)


def _by_column(pairs: Sequence[tuple[str, str]], size: int = 500) -> Iterator[tuple[str, list[str]]]:
    grouped: dict[str, list[str]] = {}
    for column, value in pairs:
        grouped.setdefault(column, []).append(value)
    for column, values in grouped.items():
        for start in range(0, len(values), size):
            yield column, values[start : start + size]
