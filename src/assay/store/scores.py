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
from assay.store.catalog import mark_stale
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


@dataclass(frozen=True)
class ScoreInputs:
    """What scoring reads of every dataset in one window, read at once (:meth:`ScoreRecords.score_inputs`);
    it answers a score's reads (``outcomes_between``, ``load_runs_between``, ``reads_between``,
    ``latest_schema``) as the store would, for that window."""

    since: datetime
    until: datetime
    outcomes: dict[str, list[OutcomeRow]]
    load_runs: dict[str, set[str]]
    reads: dict[str, list[tuple[str, str | None]]]
    schemas: dict[str, list[tuple[str, str]]]

    def _window(self, since: datetime, until: datetime) -> None:
        if (since, until) != (self.since, self.until):
            raise ValueError(
                f"these inputs were read for ({self.since}, {self.until}], not ({since}, {until}]"
            )

    def outcomes_between(self, dataset: str, since: datetime, until: datetime) -> list[OutcomeRow]:
        self._window(since, until)
        return self.outcomes.get(dataset, [])

    def load_runs_between(self, dataset: str, since: datetime, until: datetime) -> set[str]:
        self._window(since, until)
        return self.load_runs.get(dataset, set())

    def reads_between(self, dataset: str, since: datetime, until: datetime) -> list[tuple[str, str | None]]:
        self._window(since, until)
        return self.reads.get(dataset, [])

    def latest_schema(self, dataset: str) -> list[tuple[str, str]]:
        return self.schemas.get(dataset, [])


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
        completed runs only (a run still running or rolled back has none), oldest first; then
        the rules of its DQDL and gate runs."""
        with self._transaction() as connection:
            return _outcomes(connection, since, until, [dataset]).get(dataset, [])

    def load_runs_between(self: _Store, dataset: str, since: datetime, until: datetime) -> set[str]:
        """The runs (any flow) that stored a current load of ``dataset`` with a logical time in
        ``(since, until]``: every run that read the dataset's data in that window."""
        with self._transaction() as connection:
            return _load_runs(connection, since, until, [dataset]).get(dataset, set())

    def latest_schema(self: _Store, dataset: str) -> list[tuple[str, str]]:
        """The columns of ``dataset``'s most recent current profiled load (the drift monitor's,
        partition ``""``), or ``[]`` when it was never profiled."""
        with self._transaction() as connection:
            return _schemas(connection, [dataset]).get(dataset, [])

    def score_inputs(
        self: _Store, since: datetime, until: datetime, names: Sequence[str] | None = None
    ) -> ScoreInputs:
        """Everything a score reads, for every dataset at once (or the datasets ``names``), in
        five queries: what a list of many datasets' scores (the catalog's refresh, ``assay
        score``) reads instead of five queries per dataset. It answers the per-dataset reads for
        the same window."""
        chosen = None if names is None else list(names)
        with self._transaction() as connection:
            return ScoreInputs(
                since,
                until,
                _outcomes(connection, since, until, chosen),
                _load_runs(connection, since, until, chosen),
                _reads(connection, since, until, chosen),
                _schemas(connection, chosen),
            )

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
            mark_stale(connection, dataset_id)
            connection.execute(
                sa.insert(schema.reads).values(
                    dataset_id=dataset_id, kind=kind, by=by, at=at, detail=dict(detail) if detail else None
                )
            )

    def reads_between(
        self: _Store, dataset: str, since: datetime, until: datetime
    ) -> list[tuple[str, str | None]]:
        """The recorded reads of ``dataset`` in ``(since, until]``: (kind, by) each."""
        with self._transaction() as connection:
            return _reads(connection, since, until, [dataset]).get(dataset, [])

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

    def badges(self: _Store, names: Sequence[str] | None = None) -> dict[str, BadgeRow]:
        """Every dataset's current badge (its latest change), or the datasets ``names``', in one
        query."""
        table = schema.certifications
        latest = sa.select(
            table,
            sa.func.row_number()
            .over(partition_by=table.c.dataset_id, order_by=table.c.seq.desc())
            .label("n"),
        ).subquery()
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(schema.datasets.c.name, latest)
                .join(latest, latest.c.dataset_id == schema.datasets.c.id)
                .where(latest.c.n == 1, _named(None if names is None else list(names)))
            ).all()
        return {r.name: BadgeRow(int(r.seq), r.badge, r.at, r.by, r.reason, r.criteria) for r in rows}

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
            mark_stale(connection, dataset_id)
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


# --- what a score reads, for some datasets (names) or all (None), each in one query ------------------


def _named(names: Sequence[str] | None) -> sa.ColumnElement[bool]:
    return sa.true() if names is None else schema.datasets.c.name.in_(list(names))


def _outcomes(
    connection: Connection, since: datetime, until: datetime, names: Sequence[str] | None
) -> dict[str, list[OutcomeRow]]:
    require_aware(since, "since")
    require_aware(until, "until")
    outcomes, runs, datasets = schema.check_outcomes, schema.runs, schema.datasets
    rows = connection.execute(
        sa.select(
            datasets.c.name,
            outcomes.c.run_id,
            outcomes.c.at,
            outcomes.c.expectation,
            outcomes.c.outcome,
            outcomes.c.mode,
            outcomes.c.severity,
            outcomes.c.reason,
        )
        .select_from(outcomes.join(datasets).join(runs, runs.c.id == outcomes.c.run_id))
        .where(_named(names), outcomes.c.at > since, outcomes.c.at <= until, runs.c.state != "running")
        .order_by(outcomes.c.at, outcomes.c.run_id, outcomes.c.position)
    ).all()
    # the rules of DQDL and gate runs (Glue's outcomes, kept in `outcomes`), at the logical time
    # of the latest current load the run stored (a gate run whose rules are all row rules stores
    # its months' loads at settling, not as the run's load): enforced, severity error, named by
    # their rule text (a gate rule's is its label ``dqdl``, its name its id)
    loads, rules = schema.loads, schema.outcomes
    # the named datasets' loads only: grouped over every load of the store, a dataset page took
    # a second at 10,000 datasets x 90 days (bench/scale.py)
    mine = (
        sa.true() if names is None else loads.c.dataset_id.in_(sa.select(datasets.c.id).where(_named(names)))
    )
    stored = (
        sa.select(loads.c.run_id, sa.func.max(loads.c.logical_time).label("at"))
        .where(loads.c.status == "current", loads.c.run_id.is_not(None), mine)
        .group_by(loads.c.run_id)
        .subquery()
    )
    own = loads.alias("own")  # the run's load, for a run whose loads name no run
    at = sa.type_coerce(sa.func.coalesce(stored.c.at, own.c.logical_time), schema.UTCDateTime())
    dqdl = connection.execute(
        sa.select(
            datasets.c.name, rules.c.run_id, at.label("at"), rules.c.rule, rules.c.outcome, rules.c.labels
        )
        .select_from(
            rules.join(runs, runs.c.id == rules.c.run_id)
            .join(datasets, datasets.c.id == runs.c.dataset_id)
            .outerjoin(stored, stored.c.run_id == runs.c.id)
            .outerjoin(own, sa.and_(own.c.id == runs.c.load_id, own.c.status == "current"))
        )
        .where(_named(names), at > since, at <= until, runs.c.state != "running")
        .order_by(at, rules.c.run_id, rules.c.position)
    ).all()
    found: dict[str, list[OutcomeRow]] = {}
    for r in rows:
        found.setdefault(r.name, []).append(
            OutcomeRow(r.run_id, r.at, r.expectation, r.outcome, r.mode, r.severity, r.reason)
        )
    for d in dqdl:
        text = (d.labels or {}).get("dqdl") or d.rule
        found.setdefault(d.name, []).append(
            OutcomeRow(d.run_id, d.at, text, d.outcome, "enforce", "error", rule=True)
        )
    return found


def _load_runs(
    connection: Connection, since: datetime, until: datetime, names: Sequence[str] | None
) -> dict[str, set[str]]:
    loads = schema.loads
    rows = connection.execute(
        sa.select(schema.datasets.c.name, loads.c.run_id)
        .select_from(loads.join(schema.datasets))
        .where(
            _named(names),
            loads.c.logical_time > since,
            loads.c.logical_time <= until,
            loads.c.status == "current",
            loads.c.run_id.is_not(None),
        )
        .distinct()
    ).all()
    found: dict[str, set[str]] = {}
    for name, run_id in rows:
        found.setdefault(name, set()).add(str(run_id))
    return found


def _reads(
    connection: Connection, since: datetime, until: datetime, names: Sequence[str] | None
) -> dict[str, list[tuple[str, str | None]]]:
    reads = schema.reads
    rows = connection.execute(
        sa.select(schema.datasets.c.name, reads.c.kind, reads.c.by)
        .select_from(reads.join(schema.datasets))
        .where(_named(names), reads.c.at > since, reads.c.at <= until)
        .order_by(reads.c.id)
    ).all()
    found: dict[str, list[tuple[str, str | None]]] = {}
    for name, kind, by in rows:
        found.setdefault(name, []).append((kind, by))
    return found


def _schemas(connection: Connection, names: Sequence[str] | None) -> dict[str, list[tuple[str, str]]]:
    """Each dataset's columns in its most recent current profiled load (partition ``""``)."""
    loads, columns = schema.loads, schema.load_columns
    latest = (
        sa.select(
            schema.datasets.c.name,
            loads.c.id,
            sa.func.row_number()
            .over(partition_by=loads.c.dataset_id, order_by=(loads.c.logical_time.desc(), loads.c.id.desc()))
            .label("n"),
        )
        .select_from(loads.join(schema.datasets))
        .where(
            _named(names),
            loads.c.partition == "",
            loads.c.status == "current",
            sa.exists().where(columns.c.load_id == loads.c.id),
        )
        .subquery()
    )
    rows = connection.execute(
        sa.select(latest.c.name, columns.c.name.label("column"), columns.c.type)
        .join(latest, latest.c.id == columns.c.load_id)
        .where(latest.c.n == 1)
        .order_by(latest.c.name, columns.c.position)
    ).all()
    found: dict[str, list[tuple[str, str]]] = {}
    for name, column, type_ in rows:
        found.setdefault(name, []).append((column, type_))
    return found
