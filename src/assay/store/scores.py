"""The store's side of scores and certification: what a score reads (outcomes, runs, reads, the
latest stored schema) and what it keeps (one score per subject and day, a badge's history).

:class:`ScoreRecords` is mixed into :class:`~assay.store.metrics.MetricStore`. Every method reads
or writes in ONE store transaction; none reads the data.
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
from assay.store.records import require_aware

SUBJECTS = ("dataset", "event")
BADGES = ("certified", "at_risk", "not_certified", "revoked")
READ_KINDS = ("export", "api", "query")


class _Store(Protocol):
    def _transaction(self) -> AbstractContextManager[Connection]: ...

    def _ensure_dataset(self, connection: Connection, name: str) -> int: ...


@dataclass(frozen=True)
class OutcomeRow:
    """One recorded outcome, as a score or a badge reads it."""

    run_id: str
    at: datetime
    expectation: str
    outcome: str
    mode: str
    severity: str
    reason: str | None = None
    rule: bool = False  # a DQDL or gate rule (``expectation`` is its text), not a document's


@dataclass(frozen=True)
class ScoreRow:
    day: date
    score: float
    gate: float | None
    below_gate: bool
    detail: dict[str, Any] | None


@dataclass(frozen=True)
class BadgeRow:
    seq: int
    badge: str
    at: datetime
    by: str | None
    reason: str | None
    criteria: list[dict[str, Any]] | None


class ScoreRecords:
    """Score- and certification-related methods of the metric store."""

    def dataset_names(self: _Store) -> list[str]:
        """Every dataset the store knows, by name."""
        with self._transaction() as connection:
            return list(
                connection.execute(
                    sa.select(schema.datasets.c.name).order_by(schema.datasets.c.name)
                ).scalars()
            )

    def outcomes_between(self: _Store, dataset: str, since: datetime, until: datetime) -> list[OutcomeRow]:
        """The check outcomes of ``dataset`` with a logical time in ``(since, until]``, of
        completed runs only (a run still running or rolled back has none), oldest first."""
        require_aware(since, "since")
        require_aware(until, "until")
        outcomes, runs = schema.check_outcomes, schema.runs
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(
                    outcomes.c.run_id,
                    outcomes.c.at,
                    outcomes.c.expectation,
                    outcomes.c.outcome,
                    outcomes.c.mode,
                    outcomes.c.severity,
                    outcomes.c.reason,
                )
                .select_from(outcomes.join(schema.datasets).join(runs, runs.c.id == outcomes.c.run_id))
                .where(
                    schema.datasets.c.name == dataset,
                    outcomes.c.at > since,
                    outcomes.c.at <= until,
                    runs.c.state != "running",
                )
                .order_by(outcomes.c.at, outcomes.c.run_id, outcomes.c.position)
            ).all()
            # the rules of DQDL and gate runs (Glue's outcomes, kept in `outcomes`), at their
            # load's logical time: enforced, severity error, named by their rule text
            loads, rules = schema.loads, schema.outcomes
            dqdl = connection.execute(
                sa.select(rules.c.run_id, loads.c.logical_time, rules.c.rule, rules.c.outcome)
                .select_from(
                    rules.join(runs, runs.c.id == rules.c.run_id)
                    .join(loads, loads.c.id == runs.c.load_id)
                    .join(schema.datasets, schema.datasets.c.id == runs.c.dataset_id)
                )
                .where(
                    schema.datasets.c.name == dataset,
                    loads.c.logical_time > since,
                    loads.c.logical_time <= until,
                    loads.c.status == "current",
                    runs.c.state != "running",
                )
                .order_by(loads.c.logical_time, rules.c.run_id, rules.c.position)
            ).all()
        found = [
            OutcomeRow(r.run_id, r.at, r.expectation, r.outcome, r.mode, r.severity, r.reason) for r in rows
        ]
        found.extend(
            OutcomeRow(r.run_id, r.logical_time, r.rule, r.outcome, "enforce", "error", rule=True)
            for r in dqdl
        )
        return found

    def load_runs_between(self: _Store, dataset: str, since: datetime, until: datetime) -> set[str]:
        """The runs (any flow) that stored a current load of ``dataset`` with a logical time in
        ``(since, until]``: every run that read the dataset's data in that window."""
        loads = schema.loads
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(loads.c.run_id)
                .select_from(loads.join(schema.datasets))
                .where(
                    schema.datasets.c.name == dataset,
                    loads.c.logical_time > since,
                    loads.c.logical_time <= until,
                    loads.c.status == "current",
                    loads.c.run_id.is_not(None),
                )
                .distinct()
            ).scalars()
            return {str(r) for r in rows}

    def latest_schema(self: _Store, dataset: str) -> list[tuple[str, str]]:
        """The columns of ``dataset``'s most recent current profiled load (the drift monitor's,
        partition ``""``), or ``[]`` when it was never profiled."""
        loads = schema.loads
        with self._transaction() as connection:
            load = connection.execute(
                sa.select(loads.c.id)
                .select_from(loads.join(schema.datasets))
                .where(
                    schema.datasets.c.name == dataset,
                    loads.c.partition == "",
                    loads.c.status == "current",
                    sa.exists().where(schema.load_columns.c.load_id == loads.c.id),
                )
                .order_by(loads.c.logical_time.desc(), loads.c.id.desc())
                .limit(1)
            ).scalar_one_or_none()
            if load is None:
                return []
            rows = connection.execute(
                sa.select(schema.load_columns.c.name, schema.load_columns.c.type)
                .where(schema.load_columns.c.load_id == load)
                .order_by(schema.load_columns.c.position)
            ).all()
        return [(r.name, r.type) for r in rows]

    # --- reads ----------------------------------------------------------------------------------

    def record_read(
        self: _Store,
        dataset: str,
        kind: str,
        *,
        at: datetime,
        by: str | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        """Keep one read of ``dataset`` that assay saw (an export, an API read, a query)."""
        if kind not in READ_KINDS:
            raise ValueError(f"read kind must be one of {', '.join(READ_KINDS)}, not {kind!r}")
        require_aware(at, "at")
        with self._transaction() as connection:
            dataset_id = self._ensure_dataset(connection, dataset)
            connection.execute(
                sa.insert(schema.reads).values(
                    dataset_id=dataset_id, kind=kind, by=by, at=at, detail=dict(detail) if detail else None
                )
            )

    def reads_between(
        self: _Store, dataset: str, since: datetime, until: datetime
    ) -> list[tuple[str, str | None]]:
        """The recorded reads of ``dataset`` in ``(since, until]``: (kind, by) each."""
        reads = schema.reads
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(reads.c.kind, reads.c.by)
                .select_from(reads.join(schema.datasets))
                .where(schema.datasets.c.name == dataset, reads.c.at > since, reads.c.at <= until)
            ).all()
        return [(r.kind, r.by) for r in rows]

    # --- scores ---------------------------------------------------------------------------------

    def record_score(
        self: _Store,
        subject: str,
        name: str,
        day: date,
        score: float,
        *,
        gate: float | None = None,
        below_gate: bool = False,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        """Keep ``name``'s score of ``day`` (the last one computed that day replaces an earlier)."""
        if subject not in SUBJECTS:
            raise ValueError(f"subject must be one of {', '.join(SUBJECTS)}, not {subject!r}")
        table = schema.scores
        with self._transaction() as connection:
            connection.execute(
                sa.delete(table).where(table.c.subject == subject, table.c.name == name, table.c.day == day)
            )
            connection.execute(
                sa.insert(table).values(
                    subject=subject,
                    name=name,
                    day=day,
                    score=float(score),
                    gate=gate,
                    below_gate=below_gate,
                    detail=dict(detail) if detail else None,
                )
            )

    def score_history(
        self: _Store, subject: str, name: str, *, before: date | None = None, limit: int = 30
    ) -> list[ScoreRow]:
        """``name``'s kept scores, most recent day first (days before ``before`` only, if given)."""
        table = schema.scores
        query = sa.select(table).where(table.c.subject == subject, table.c.name == name)
        if before is not None:
            query = query.where(table.c.day < before)
        with self._transaction() as connection:
            rows = connection.execute(query.order_by(table.c.day.desc()).limit(limit)).all()
        return [ScoreRow(r.day, r.score, r.gate, bool(r.below_gate), r.detail) for r in rows]

    # --- certification --------------------------------------------------------------------------

    def badge_history(self: _Store, dataset: str) -> list[BadgeRow]:
        """Every change of ``dataset``'s badge, oldest first."""
        table = schema.certifications
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(table)
                .select_from(table.join(schema.datasets))
                .where(schema.datasets.c.name == dataset)
                .order_by(table.c.seq)
            ).all()
        return [BadgeRow(r.seq, r.badge, r.at, r.by, r.reason, r.criteria) for r in rows]

    def change_badge(
        self: _Store,
        dataset: str,
        badge: str,
        *,
        at: datetime,
        by: str | None = None,
        reason: str | None = None,
        criteria: Sequence[Mapping[str, Any]] = (),
    ) -> bool:
        """Record ``dataset``'s badge as ``badge`` from ``at``, unless it is already that badge
        (then nothing is written); returns whether it changed. Serialized per dataset: two
        certifications at once cannot both append the same change."""
        from assay.store.profiles import lock_dataset

        if badge not in BADGES:
            raise ValueError(f"badge must be one of {', '.join(BADGES)}, not {badge!r}")
        require_aware(at, "at")
        table = schema.certifications
        with self._transaction() as connection:
            dataset_id = self._ensure_dataset(connection, dataset)
            lock_dataset(connection, dataset_id)
            last = connection.execute(
                sa.select(table.c.seq, table.c.badge)
                .where(table.c.dataset_id == dataset_id)
                .order_by(table.c.seq.desc())
                .limit(1)
            ).first()
            if last is not None and last.badge == badge:
                return False
            connection.execute(
                sa.insert(table).values(
                    dataset_id=dataset_id,
                    seq=(last.seq + 1) if last is not None else 1,
                    badge=badge,
                    at=at,
                    by=by,
                    reason=reason,
                    criteria=[dict(c) for c in criteria] or None,
                )
            )
            return True
