"""The store's new-value decisions: a value a column had never held, waiting for someone to
accept or reject it, with the rows each source (a profile's load date, a gate run) brought.

:class:`DecisionRecords` is mixed into :class:`~assay.store.metrics.MetricStore`; it relies on the
store's ``_transaction`` and ``_ensure_dataset`` helpers and on its value sets
(:meth:`~assay.store.profiles.ProfileRecords.value_set`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay.errors import ConfigError
from assay.store import schema
from assay.store.schema import upsert, utcnow
from assay.store.value_sets import lock_dataset

DECISION_STATUSES = ("pending", "accepted", "rejected")


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

    def decision(self, decision_id: int) -> Decision: ...

    def decision_status(self, dataset: str, column: str) -> dict[str, str]: ...

    def value_set(
        self, dataset: str, column: str, *, before: date | None = None
    ) -> dict[str, tuple[date | None, date | None]]: ...


class DecisionRecords:
    """Decision-related methods of the metric store."""

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
