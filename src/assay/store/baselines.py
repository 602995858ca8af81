"""The store's side of one clean history: what of a load later baselines do not read.

A load whose metric raised a hard alert or failed an expectation gets a **mark** naming the
metrics it keeps out (a metric key whose parts may be ``*``: ``Column dep_time *`` is every
metric of the column, ``* * *`` the whole load) and what raised it (``kind``: a monitor
judgement's kind, a check expectation's id, a DQDL rule's text). A mark is ``held`` (out until a
person decides), ``accepted`` (a person took the load back in) or ``left_out`` (a person kept it
out: a real issue, an expected one-off change, or a load before a new normal).

Every history read leaves out what a ``held`` or ``left_out`` mark matches: the monitor's window
(:mod:`assay.monitor.history`), a check document's ``last(k)`` (:meth:`metric_series`), a DQDL
rule's ``last(k)`` (:meth:`history` with ``baseline=True``) and the loads proposals are mined
from. :func:`kept` is that test as one SQL condition, :func:`matches` the same test in Python.

:class:`BaselineRecords` is mixed into :class:`~assay.store.metrics.MetricStore`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay.errors import ConfigError
from assay.store import schema

STATES = ("held", "accepted", "left_out")
OUT = ("held", "left_out")
"""The states that keep a mark's metrics out of later baselines."""
ANY = "*"


@dataclass(frozen=True)
class Hold:
    """What a failure keeps out: ``kind`` raised it; ``entity``, ``instance``, ``name`` (each may
    be ``*``) are the metrics.

    >>> Hold("null_rate", "Column", "dep_time").covers("Column", "dep_time", "NullCount")
    True
    """

    kind: str
    entity: str = ANY
    instance: str = ANY
    name: str = ANY

    def covers(self, entity: str, instance: str, name: str) -> bool:
        return matches((self.entity, self.instance, self.name), (entity, instance, name))

    @property
    def pattern(self) -> tuple[str, str, str]:
        return (self.entity, self.instance, self.name)


@dataclass(frozen=True)
class Mark:
    """One stored mark of one load."""

    id: int
    load_id: int
    logical_date: date | None
    logical_time: datetime
    partition: str
    hold: Hold
    state: str
    run_id: str | None
    at: datetime
    decided_by: str | None = None
    decided_at: datetime | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "load_date": (self.logical_date or self.logical_time.date()).isoformat(),
            "logical_time": self.logical_time.isoformat(),
            "partition": self.partition,
            "kind": self.hold.kind,
            "metric": ".".join(self.hold.pattern),
            "column": self.hold.instance if self.hold.entity == "Column" else None,
            "state": self.state,
            "run_id": self.run_id,
            "decided_by": self.decided_by,
            "note": self.note,
        }


def matches(pattern: tuple[str, str, str], key: tuple[str, str, str]) -> bool:
    """Whether a mark's metric pattern covers a metric key (``*`` matches any part).

    >>> matches(("*", "*", "row_count"), ("Group", "region=EU", "row_count"))
    True
    """
    return all(p in (ANY, k) for p, k in zip(pattern, key, strict=True))


def kept(load_id: Any, entity: Any, instance: Any, name: Any) -> sa.ColumnElement[bool]:
    """The SQL condition "this metric of this load is in the baselines" (column expressions)."""
    m = schema.baseline_marks
    return ~sa.exists().where(
        m.c.load_id == load_id,
        m.c.state.in_(OUT),
        sa.or_(m.c.entity == ANY, m.c.entity == entity),
        sa.or_(m.c.instance == ANY, m.c.instance == instance),
        sa.or_(m.c.name == ANY, m.c.name == name),
    )


def whole_load_kept(load_id: Any) -> sa.ColumnElement[bool]:
    """The SQL condition "no mark keeps this whole load out"."""
    return kept(load_id, ANY, ANY, ANY)


def any_out(load_id: Any) -> sa.ColumnElement[bool]:
    """The SQL condition "a mark keeps some metric of this load out"."""
    m = schema.baseline_marks
    return sa.exists().where(m.c.load_id == load_id, m.c.state.in_(OUT))


class _Store(Protocol):
    def _transaction(self) -> AbstractContextManager[Connection]: ...

    def _ensure_dataset(self, connection: Connection, name: str) -> int: ...


class BaselineRecords:
    """Baseline methods of the metric store."""

    def hold_out_of_baselines(
        self: _Store, load_id: int, holds: Iterable[Hold], *, run_id: str | None, at: datetime
    ) -> int:
        """Mark what of load ``load_id`` raised a failure as ``held`` out of later baselines (a
        mark the load holds already, in any state, is kept as it is); how many were added.

        >>> from datetime import UTC
        >>> from assay.store import MetricStore
        >>> with MetricStore.open("sqlite://") as store:
        ...     at = datetime(2026, 1, 1, tzinfo=UTC)
        ...     load = store.create_load("t", logical_time=at)
        ...     store.hold_out_of_baselines(load, [Hold("volume", "Dataset", "*", "*")], run_id=None, at=at)
        1
        """
        wanted = list(dict.fromkeys(holds))
        if not wanted:
            return 0
        m = schema.baseline_marks
        with self._transaction() as connection:
            there = {
                (r.kind, r.entity, r.instance, r.name)
                for r in connection.execute(
                    sa.select(m.c.kind, m.c.entity, m.c.instance, m.c.name).where(m.c.load_id == load_id)
                )
            }
            rows = [
                {
                    "load_id": load_id,
                    "kind": h.kind,
                    "entity": h.entity,
                    "instance": h.instance,
                    "name": h.name,
                    "state": "held",
                    "run_id": run_id,
                    "at": at,
                }
                for h in wanted
                if (h.kind, *h.pattern) not in there
            ]
            if rows:
                connection.execute(sa.insert(m), rows)
            return len(rows)

    def baseline_marks(
        self: _Store,
        dataset: str,
        *,
        states: Collection[str] = STATES,
        load_ids: Collection[int] | None = None,
        run_ids: Collection[str] | None = None,
    ) -> list[Mark]:
        """The marks of ``dataset``'s current loads (only of ``load_ids`` or of loads measured by
        ``run_ids`` when given), oldest load first."""
        m, loads = schema.baseline_marks, schema.loads
        query = (
            sa.select(m, loads.c.logical_date, loads.c.logical_time, loads.c.partition)
            .select_from(m.join(loads).join(schema.datasets))
            .where(
                schema.datasets.c.name == dataset, loads.c.status == "current", m.c.state.in_(list(states))
            )
            .order_by(loads.c.logical_time, loads.c.id, m.c.id)
        )
        if load_ids is not None:
            query = query.where(m.c.load_id.in_(sorted(load_ids)))
        if run_ids is not None:
            query = query.where(loads.c.run_id.in_(sorted(run_ids)))
        with self._transaction() as connection:
            return [_mark(row) for row in connection.execute(query)]

    def out_of_baselines(
        self: _Store, load_ids: Collection[int]
    ) -> dict[int, list[tuple[str, tuple[str, str, str]]]]:
        """For each of ``load_ids`` with any, the metric patterns its marks keep out, each with
        its state (``held``: no person has decided; ``left_out``: a person did)."""
        if not load_ids:
            return {}
        m = schema.baseline_marks
        out: dict[int, list[tuple[str, tuple[str, str, str]]]] = {}
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(m.c.load_id, m.c.state, m.c.entity, m.c.instance, m.c.name).where(
                    m.c.load_id.in_(sorted(load_ids)), m.c.state.in_(OUT)
                )
            )
            for row in rows:
                out.setdefault(int(row.load_id), []).append((row.state, (row.entity, row.instance, row.name)))
        return out

    def settle_marks(
        self: _Store,
        marks: Sequence[Mark],
        state: str,
        *,
        by: str,
        at: datetime,
        note: str | None = None,
    ) -> None:
        """A person's decision on ``marks``: ``accepted`` (back in) or ``left_out``."""
        if state not in STATES[1:]:
            raise ConfigError(f"a decision on a baseline is accepted or left_out, not {state!r}")
        if not marks:
            return
        m = schema.baseline_marks
        with self._transaction() as connection:
            connection.execute(
                m.update()
                .where(m.c.id.in_(sorted(x.id for x in marks)))
                .values(state=state, decided_by=by, decided_at=at, note=note)
            )

    def leave_out_before(
        self: _Store,
        dataset: str,
        holds: Iterable[Hold],
        *,
        partition: str,
        before: datetime,
        by: str,
        at: datetime,
        note: str | None = None,
    ) -> int:
        """A new normal: every current load of ``dataset``'s ``partition`` logically before
        ``before`` leaves the baselines of ``holds`` (a ``left_out`` mark each); how many loads."""
        wanted = list(dict.fromkeys(holds))
        loads, m = schema.loads, schema.baseline_marks
        with self._transaction() as connection:
            dataset_id = self._ensure_dataset(connection, dataset)
            ids = [
                int(r[0])
                for r in connection.execute(
                    sa.select(loads.c.id).where(
                        loads.c.dataset_id == dataset_id,
                        loads.c.partition == partition,
                        loads.c.status == "current",
                        loads.c.logical_time < before,
                    )
                )
            ]
            if not ids or not wanted:
                return 0
            there = {
                (int(r.load_id), r.kind, r.entity, r.instance, r.name, r.state)
                for r in connection.execute(
                    sa.select(m.c.load_id, m.c.kind, m.c.entity, m.c.instance, m.c.name, m.c.state).where(
                        m.c.load_id.in_(ids)
                    )
                )
            }
            rows = [
                {
                    "load_id": load,
                    "kind": h.kind,
                    "entity": h.entity,
                    "instance": h.instance,
                    "name": h.name,
                    "state": "left_out",
                    "at": at,
                    "decided_by": by,
                    "decided_at": at,
                    "note": note,
                }
                for load in ids
                for h in wanted
                if (load, h.kind, *h.pattern, "left_out") not in there
            ]
            if rows:
                connection.execute(sa.insert(m), rows)
            return len({row["load_id"] for row in rows})

    def leave_loads_out(
        self: _Store,
        dataset: str,
        kind: str,
        *,
        run_ids: Iterable[str] = (),
        before: datetime | None = None,
        by: str,
        at: datetime,
    ) -> int:
        """Every current load of ``dataset`` measured by ``run_ids`` (or logically before
        ``before``) leaves every later baseline whole (a ``left_out`` mark on the load); how
        many loads were not out whole already."""
        loads, m = schema.loads, schema.baseline_marks
        with self._transaction() as connection:
            dataset_id = self._ensure_dataset(connection, dataset)
            which = (
                loads.c.logical_time < before
                if before is not None
                else loads.c.run_id.in_(sorted(set(run_ids)))
            )
            ids = [
                int(r[0])
                for r in connection.execute(
                    sa.select(loads.c.id).where(
                        loads.c.dataset_id == dataset_id,
                        which,
                        loads.c.status == "current",
                        whole_load_kept(loads.c.id),
                    )
                )
            ]
            if ids:
                connection.execute(
                    sa.insert(m),
                    [
                        {
                            "load_id": load,
                            "kind": kind,
                            "entity": ANY,
                            "instance": ANY,
                            "name": ANY,
                            "state": "left_out",
                            "at": at,
                            "decided_by": by,
                            "decided_at": at,
                        }
                        for load in ids
                    ],
                )
            return len(ids)


def _mark(row: Any) -> Mark:
    return Mark(
        int(row.id),
        int(row.load_id),
        row.logical_date,
        row.logical_time,
        row.partition,
        Hold(row.kind, row.entity, row.instance, row.name),
        row.state,
        row.run_id,
        row.at,
        row.decided_by,
        row.decided_at,
        row.note,
    )


__all__ = [
    "ANY",
    "OUT",
    "STATES",
    "BaselineRecords",
    "Hold",
    "Mark",
    "any_out",
    "kept",
    "matches",
    "whole_load_kept",
]
