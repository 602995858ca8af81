"""The store's side of proposals: checks proposed from a dataset's stored history, their
decisions and their trail, and the per-load facts the proposals are mined from.

:class:`ProposalRecords` is mixed into :class:`~assay.store.metrics.MetricStore`; it relies on
the store's ``_transaction`` and ``_ensure_dataset`` helpers. A proposal is ``open`` until a
person accepts or rejects it; every step (``proposed``, ``shown``, ``reopened``, ``accepted``,
``rejected``) is an event with who and when (``proposal_events``). The ``expectation`` column
keeps the expectation and what it needs of its profile: ``{"expectation": {...}, "requires":
{...} | null}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay.errors import ConfigError
from assay.store import schema
from assay.store.baselines import any_out

PROPOSAL_STATES = ("open", "accepted", "rejected")


@dataclass
class ProposalRecord:
    """One proposal as the store keeps it."""

    id: str
    dataset: str
    kind: str
    target: str
    evidence_hash: str
    state: str
    expectation: dict[str, Any]
    requires: dict[str, Any] | None
    evidence: dict[str, Any]
    backtest: dict[str, Any] | None
    dry_run: dict[str, Any] | None
    created_at: datetime
    decided_at: datetime | None = None
    decided_by: str | None = None
    why: str | None = None
    document: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The record as ``assay proposals show --json`` prints it."""
        return {
            "id": self.id,
            "dataset": self.dataset,
            "kind": self.kind,
            "target": self.target,
            "state": self.state,
            "expectation": self.expectation,
            "requires": self.requires,
            "evidence": self.evidence,
            "backtest": self.backtest,
            "dry_run": self.dry_run,
            "evidence_hash": self.evidence_hash,
            "created_at": self.created_at.isoformat(),
            "decided_at": None if self.decided_at is None else self.decided_at.isoformat(),
            "decided_by": self.decided_by,
            "why": self.why,
            "document": self.document,
            "events": self.events,
        }


@dataclass(frozen=True)
class StoredLoad:
    """A current load of a dataset with the facts proposals are mined from."""

    id: int
    logical_date: date
    created_at: datetime
    row_count: int | None
    metrics: dict[tuple[str, str, str], float | None]
    types: dict[str, str]  # column -> canonical type, in the load's column order
    values: dict[str, dict[str, int]]  # categorical column -> value counts
    held: bool = False  # a mark keeps some of it out of later baselines (assay.store.baselines)


class _Store(Protocol):
    def _transaction(self) -> AbstractContextManager[Connection]: ...

    def _ensure_dataset(self, connection: Connection, name: str) -> int: ...


class ProposalRecords:
    """Proposal methods of the metric store."""

    # --- what proposals are mined from ----------------------------------------------------------

    def profiled_loads(self: _Store, dataset: str, *, partition: str = "") -> list[StoredLoad]:
        """Every current load of ``dataset``'s ``partition`` (the drift monitor's is ``""``) that
        has a logical date, oldest first, with its metrics, schema and value counts: four store
        queries, however many loads; ``held`` says whether a mark keeps any of a load out of
        later baselines.

        >>> from datetime import UTC
        >>> from assay.store import MetricKey, MetricStore
        >>> with MetricStore.open("sqlite://") as store:
        ...     day = date(2026, 1, 5)
        ...     load = store.create_load("t", logical_time=datetime(2026, 1, 5, tzinfo=UTC),
        ...                              logical_date=day, row_count=3)
        ...     store.save_metrics(load, {MetricKey.dataset("RowCount"): 3.0})
        ...     store.save_profile(load, [("venue", "string")], {"venue": {"XLON": 3}})
        ...     [(x.logical_date, x.row_count, x.types, x.values) for x in store.profiled_loads("t")]
        [(datetime.date(2026, 1, 5), 3, {'venue': 'string'}, {'venue': {'XLON': 3}})]
        """
        loads_table = schema.loads
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(
                    loads_table.c.id,
                    loads_table.c.logical_date,
                    loads_table.c.created_at,
                    loads_table.c.row_count,
                    any_out(loads_table.c.id).label("held"),
                )
                .select_from(loads_table.join(schema.datasets))
                .where(
                    schema.datasets.c.name == dataset,
                    loads_table.c.partition == partition,
                    loads_table.c.status == "current",
                    loads_table.c.logical_date.is_not(None),
                )
                .order_by(loads_table.c.logical_date, loads_table.c.id)
            ).all()
            ids = [int(r.id) for r in rows]
            metrics: dict[int, dict[tuple[str, str, str], float | None]] = {i: {} for i in ids}
            types: dict[int, dict[str, str]] = {i: {} for i in ids}
            values: dict[int, dict[str, dict[str, int]]] = {i: {} for i in ids}
            if ids:
                within = _loads_of_dataset(dataset, partition)
                for m in connection.execute(
                    sa.select(schema.metrics).where(schema.metrics.c.load_id.in_(within))
                ):
                    if m.load_id in metrics:
                        metrics[m.load_id][(m.entity, m.instance, m.name)] = m.value
                for c in connection.execute(
                    sa.select(schema.load_columns)
                    .where(schema.load_columns.c.load_id.in_(within))
                    .order_by(schema.load_columns.c.load_id, schema.load_columns.c.position)
                ):
                    if c.load_id in types:
                        types[c.load_id][c.name] = c.type
                for v in connection.execute(
                    sa.select(schema.load_values).where(schema.load_values.c.load_id.in_(within))
                ):
                    if v.load_id in values:
                        values[v.load_id].setdefault(v.column, {})[v.value] = int(v._mapping["count"])
        return [
            StoredLoad(
                int(r.id),
                r.logical_date,
                r.created_at,
                None if r.row_count is None else int(r.row_count),
                metrics[int(r.id)],
                types[int(r.id)],
                values[int(r.id)],
                bool(r.held),
            )
            for r in rows
        ]

    # --- proposals --------------------------------------------------------------------------------

    def save_proposal(
        self: _Store,
        dataset: str,
        *,
        id: str,
        kind: str,
        target: str,
        evidence_hash: str,
        expectation: Mapping[str, Any],
        requires: Mapping[str, Any] | None,
        evidence: Mapping[str, Any],
        backtest: Mapping[str, Any] | None,
        dry_run: Mapping[str, Any] | None,
        at: datetime,
    ) -> str | None:
        """Record a proposal as shown at ``at``, and return the event it made: ``proposed`` (new),
        ``shown`` (open already: its numbers are updated), ``reopened`` (rejected, and its
        evidence changed since). None: it is not shown, because it was accepted, or rejected on
        the same evidence (nothing is written then).

        >>> from datetime import UTC
        >>> from assay.store import MetricStore
        >>> at = datetime(2026, 12, 1, tzinfo=UTC)
        >>> with MetricStore.open("sqlite://") as store:
        ...     args = dict(id="p1", kind="completeness", target="customer_id", evidence_hash="h1",
        ...                 expectation={"id": "x"}, requires=None, evidence={}, backtest=None,
        ...                 dry_run=None, at=at)
        ...     first, again = store.save_proposal("t", **args), store.save_proposal("t", **args)
        ...     _ = store.decide_proposal("p1", "rejected", by="ana", why="noise", at=at)
        ...     (first, again, store.save_proposal("t", **args),
        ...      store.save_proposal("t", **{**args, "evidence_hash": "h2"}))
        ('proposed', 'shown', None, 'reopened')
        """
        stored = {"expectation": dict(expectation), "requires": None if requires is None else dict(requires)}
        numbers = {
            "evidence_hash": evidence_hash,
            "expectation": stored,
            "evidence": dict(evidence),
            "backtest": None if backtest is None else dict(backtest),
            "dry_run": None if dry_run is None else dict(dry_run),
        }
        table = schema.proposals
        with self._transaction() as connection:
            dataset_id = self._ensure_dataset(connection, dataset)
            found = connection.execute(
                sa.select(table.c.state, table.c.evidence_hash).where(table.c.id == id)
            ).first()
            if found is None:
                connection.execute(
                    sa.insert(table),
                    {
                        "id": id,
                        "dataset_id": dataset_id,
                        "kind": kind,
                        "target": target,
                        "state": "open",
                        "created_at": at,
                        **numbers,
                    },
                )
                event = "proposed"
            elif found.state == "accepted" or (
                found.state == "rejected" and found.evidence_hash == evidence_hash
            ):
                return None
            else:
                reopen = found.state == "rejected"
                changes: dict[str, Any] = dict(numbers)
                if reopen:
                    changes.update(state="open", decided_at=None, decided_by=None, why=None)
                connection.execute(sa.update(table).where(table.c.id == id).values(changes))
                event = "reopened" if reopen else "shown"
            changed = found is not None and found.evidence_hash != evidence_hash
            _add_event(connection, id, event, at, None, {"evidence_hash": evidence_hash, "changed": changed})
            return event

    def proposals(
        self: _Store, *, dataset: str | None = None, state: str | None = None
    ) -> list[ProposalRecord]:
        """The proposals, of one dataset and in one state when given, oldest first (events aside:
        :meth:`proposal` reads them)."""
        if state is not None and state not in PROPOSAL_STATES:
            raise ConfigError(
                f"unknown proposal state {state!r}: expected one of {', '.join(PROPOSAL_STATES)}"
            )
        query = (
            sa.select(schema.proposals, schema.datasets.c.name.label("dataset"))
            .select_from(schema.proposals.join(schema.datasets))
            .order_by(schema.proposals.c.created_at, schema.proposals.c.id)
        )
        if dataset is not None:
            query = query.where(schema.datasets.c.name == dataset)
        if state is not None:
            query = query.where(schema.proposals.c.state == state)
        with self._transaction() as connection:
            return [_record(row) for row in connection.execute(query)]

    def proposal(self: _Store, proposal_id: str) -> ProposalRecord:
        """One proposal with its events, by its full id or a unique prefix of it."""
        with self._transaction() as connection:
            full = _resolve(connection, proposal_id)
            row = connection.execute(
                sa.select(schema.proposals, schema.datasets.c.name.label("dataset"))
                .select_from(schema.proposals.join(schema.datasets))
                .where(schema.proposals.c.id == full)
            ).one()
            record = _record(row)
            events = schema.proposal_events
            record.events = [
                {
                    "seq": int(e.seq),
                    "kind": e.kind,
                    "at": e.at.isoformat(),
                    "by": e.by,
                    "detail": e.detail or {},
                }
                for e in connection.execute(
                    sa.select(events).where(events.c.proposal_id == full).order_by(events.c.seq)
                )
            ]
            return record

    def decide_proposal(
        self: _Store,
        proposal_id: str,
        state: str,
        *,
        by: str,
        at: datetime,
        why: str | None = None,
        document: str | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> str:
        """Accept or reject an open proposal (by its id or a unique prefix), recording who, when
        and why; returns its full id. A proposal decided already is a :class:`ConfigError` that
        says who decided it and when."""
        if state not in ("accepted", "rejected"):
            raise ConfigError(f"a proposal is 'accepted' or 'rejected', not {state!r}")
        if not by:
            raise ConfigError("say who decides: --by NAME (or ASSAY_USER)")
        table = schema.proposals
        with self._transaction() as connection:
            full = _resolve(connection, proposal_id)
            current = connection.execute(
                sa.select(table.c.state, table.c.decided_by, table.c.decided_at).where(table.c.id == full)
            ).one()
            if current.state != "open":
                when = f"{current.decided_at:%Y-%m-%d %H:%M} UTC" if current.decided_at else "an unknown time"
                raise ConfigError(
                    f"proposal {full[:8]} was already {current.state} by {current.decided_by} at {when}"
                )
            connection.execute(
                sa.update(table)
                .where(table.c.id == full)
                .values(state=state, decided_by=by, decided_at=at, why=why, document=document)
            )
            _add_event(connection, full, state, at, by, {**(detail or {}), "why": why, "document": document})
            return full


def _loads_of_dataset(dataset: str, partition: str) -> sa.Select[Any]:
    return (
        sa.select(schema.loads.c.id)
        .select_from(schema.loads.join(schema.datasets))
        .where(
            schema.datasets.c.name == dataset,
            schema.loads.c.partition == partition,
            schema.loads.c.status == "current",
        )
    )


def _resolve(connection: Connection, prefix: str) -> str:
    """A proposal's id from its id or a unique prefix of it (``list`` shows 8 characters)."""
    if not prefix:
        raise ConfigError("give a proposal's id (assay proposals list shows them)")
    found = [
        str(row.id)
        for row in connection.execute(
            sa.select(schema.proposals.c.id).where(schema.proposals.c.id.startswith(prefix, autoescape=True))
        )
    ]
    if len(found) == 1:
        return found[0]
    if not found:
        raise ConfigError(f"no proposal {prefix!r} (assay proposals list shows them)")
    raise ConfigError(f"{prefix!r} names {len(found)} proposals: give more of the id")


def _add_event(
    connection: Connection,
    proposal_id: str,
    kind: str,
    at: datetime,
    by: str | None,
    detail: Mapping[str, Any],
) -> None:
    events = schema.proposal_events
    seq = connection.execute(
        sa.select(sa.func.coalesce(sa.func.max(events.c.seq), 0)).where(events.c.proposal_id == proposal_id)
    ).scalar_one()
    connection.execute(
        sa.insert(events),
        {
            "proposal_id": proposal_id,
            "seq": int(seq) + 1,
            "kind": kind,
            "at": at,
            "by": by,
            "detail": dict(detail),
        },
    )


def _record(row: Any) -> ProposalRecord:
    stored = row.expectation or {}
    return ProposalRecord(
        id=row.id,
        dataset=row.dataset,
        kind=row.kind,
        target=row.target,
        evidence_hash=row.evidence_hash,
        state=row.state,
        expectation=dict(stored.get("expectation") or {}),
        requires=stored.get("requires"),
        evidence=dict(row.evidence or {}),
        backtest=row.backtest,
        dry_run=row.dry_run,
        created_at=row.created_at,
        decided_at=row.decided_at,
        decided_by=row.decided_by,
        why=row.why,
        document=row.document,
    )


__all__ = ["PROPOSAL_STATES", "ProposalRecord", "ProposalRecords", "StoredLoad"]
