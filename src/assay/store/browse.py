"""The store's read side for the control plane's pages: pages of runs, each dataset's latest
activity, an expectation's recent outcomes, a dataset's latest profile. Reads only, each in ONE
store transaction, none of them touching the data.

:class:`BrowseRecords` is mixed into :class:`~assay.store.metrics.MetricStore`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay.store import schema
from assay.store.checks import parse_group_key


class _Store(Protocol):
    def _transaction(self) -> AbstractContextManager[Connection]: ...


@dataclass(frozen=True)
class RunRow:
    """One run as a list shows it (without its outcomes)."""

    id: str
    kind: str
    dataset: str | None
    state: str
    started_at: datetime
    finished_at: datetime | None
    summary: dict[str, Any] | None
    counts: dict[str, Any] | None
    error: str | None
    stages: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        summary = self.summary or {}
        seconds = (
            None
            if self.finished_at is None
            else round((self.finished_at - self.started_at).total_seconds(), 3)
        )
        queries = summary.get("queries") if isinstance(summary.get("queries"), dict) else None
        found = summary.get("attempts")
        attempts: list[Any] = found if isinstance(found, list) else []
        return {
            "id": self.id,
            "kind": self.kind,
            "dataset": self.dataset,
            "state": self.state,
            "started_at": self.started_at.isoformat(),
            "finished_at": None if self.finished_at is None else self.finished_at.isoformat(),
            "seconds": seconds,
            "at": summary.get("at") or (self.counts or {}).get("at"),
            "attempts": max([1, *(int(a.get("attempt") or 1) for a in attempts if isinstance(a, dict))]),
            "queries": queries,
            "counts": self.counts,
            "error": self.error,
            "stages": list(self.stages),
            "dry_run": False,
        }


@dataclass(frozen=True)
class Activity:
    """What a list of datasets shows of each: its latest run, latest load and open incidents."""

    last_run: RunRow | None = None
    last_load_time: datetime | None = None
    last_load_date: date | None = None
    last_loaded_at: datetime | None = None
    open_incidents: int = 0


@dataclass(frozen=True)
class OutcomePoint:
    """One recorded outcome of a check document's expectation."""

    run_id: str
    at: datetime
    expectation: str
    group: dict[str, Any] | None
    outcome: str
    severity: str
    mode: str
    owner: str | None
    observed: float | None
    expected: dict[str, Any] | None
    message: str | None
    reason: str | None
    detail: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "at": self.at.isoformat(),
            "expectation": self.expectation,
            "group": self.group,
            "outcome": self.outcome,
            "severity": self.severity,
            "mode": self.mode,
            "owner": self.owner,
            "observed": self.observed,
            "expected": self.expected,
            "message": self.message,
            "reason": self.reason,
        }


class BrowseRecords:
    """Read-only queries of the control plane's pages."""

    def run_page(
        self: _Store,
        *,
        dataset: str | None = None,
        kind: str | None = None,
        state: str | None = None,
        contributor: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[list[RunRow], int]:
        """A page of runs, newest first, and how many match in all (``contributor``: gate runs
        of that contributor)."""
        runs, datasets = schema.runs, schema.datasets
        where = [
            sa.true() if dataset is None else datasets.c.name == dataset,
            sa.true() if kind is None else runs.c.kind == kind,
            sa.true() if state is None else runs.c.state == state,
            sa.true() if contributor is None else runs.c.summary["contributor"].as_string() == contributor,
        ]
        joined = runs.outerjoin(datasets)
        with self._transaction() as connection:
            total = connection.execute(
                sa.select(sa.func.count()).select_from(joined).where(*where)
            ).scalar_one()
            rows = connection.execute(
                sa.select(runs, datasets.c.name.label("dataset"))
                .select_from(joined)
                .where(*where)
                .order_by(runs.c.started_at.desc(), runs.c.id.desc())
                .limit(limit)
                .offset(offset)
            ).all()
            stages = _stages(connection, [r.id for r in rows])
        return [_run_row(r, stages.get(r.id, ())) for r in rows], int(total)

    def activity(self: _Store, names: Sequence[str] | None = None) -> dict[str, Activity]:
        """Every dataset's latest run, latest current load and open incidents (or only those of
        the datasets ``names``: a catalog page's): three queries."""
        runs, loads, datasets, incidents = schema.runs, schema.loads, schema.datasets, schema.incidents
        chosen = (
            sa.true()
            if names is None
            else datasets.c.id.in_(sa.select(datasets.c.id).where(datasets.c.name.in_(list(names))))
        )
        with self._transaction() as connection:
            latest = (
                sa.select(
                    runs.c.id,
                    sa.func.row_number()
                    .over(
                        partition_by=runs.c.dataset_id, order_by=(runs.c.started_at.desc(), runs.c.id.desc())
                    )
                    .label("n"),
                )
                .where(
                    runs.c.dataset_id.is_not(None),
                    runs.c.dataset_id.in_(sa.select(datasets.c.id).where(chosen)),
                )
                .subquery()
            )
            run_rows = connection.execute(
                sa.select(runs, datasets.c.name.label("dataset"))
                .select_from(runs.join(datasets).join(latest, latest.c.id == runs.c.id))
                .where(latest.c.n == 1)
            ).all()
            load_rows = connection.execute(
                sa.select(
                    datasets.c.name,
                    sa.func.max(loads.c.logical_time, type_=schema.UTCDateTime()).label("logical_time"),
                    sa.func.max(loads.c.logical_date, type_=sa.Date()).label("logical_date"),
                    sa.func.max(loads.c.created_at, type_=schema.UTCDateTime()).label("created_at"),
                )
                .select_from(loads.join(datasets))
                .where(loads.c.status == "current", chosen)
                .group_by(datasets.c.name)
            ).all()
            # a dataset's open incidents: those opened on it and those it is a layer of (counted once)
            layers = schema.incident_layers
            concerned = sa.union(
                sa.select(incidents.c.dataset_id, incidents.c.id.label("incident_id")).where(
                    incidents.c.state != "resolved"
                ),
                sa.select(layers.c.dataset_id, layers.c.incident_id)
                .select_from(layers.join(incidents, layers.c.incident_id == incidents.c.id))
                .where(incidents.c.state != "resolved"),
            ).subquery()
            open_rows = connection.execute(
                sa.select(datasets.c.name, sa.func.count())
                .select_from(concerned.join(datasets, concerned.c.dataset_id == datasets.c.id))
                .where(chosen)
                .group_by(datasets.c.name)
            ).all()
        found: dict[str, dict[str, Any]] = defaultdict(dict)
        for row in run_rows:
            found[row.dataset]["last_run"] = _run_row(row, ())
        for name, logical_time, logical_date, created_at in load_rows:
            found[name]["last_load_time"] = logical_time
            found[name]["last_load_date"] = logical_date
            found[name]["last_loaded_at"] = created_at
        for name, count in open_rows:
            found[name]["open_incidents"] = int(count)
        return {name: Activity(**values) for name, values in found.items()}

    def recent_outcomes(
        self: _Store, dataset: str, *, runs: int = 15, expectation: str | None = None
    ) -> list[OutcomePoint]:
        """The check outcomes of ``dataset``'s latest ``runs`` recorded runs (of one expectation,
        when given), oldest first."""
        outcomes, datasets = schema.check_outcomes, schema.datasets
        with self._transaction() as connection:
            dataset_id = connection.execute(
                sa.select(datasets.c.id).where(datasets.c.name == dataset)
            ).scalar_one_or_none()
            if dataset_id is None:
                return []
            where = [outcomes.c.dataset_id == dataset_id]
            if expectation is not None:
                where.append(outcomes.c.expectation == expectation)
            chosen = (
                sa.select(outcomes.c.run_id, sa.func.max(outcomes.c.at).label("at"))
                .where(*where)
                .group_by(outcomes.c.run_id)
                .order_by(sa.func.max(outcomes.c.at).desc(), outcomes.c.run_id.desc())
                .limit(runs)
                .subquery()
            )
            rows = connection.execute(
                sa.select(outcomes)
                .join(chosen, chosen.c.run_id == outcomes.c.run_id)
                .where(*where)
                .order_by(outcomes.c.at, outcomes.c.run_id, outcomes.c.position)
            ).all()
        return [_point(r) for r in rows]

    def expectation_series(
        self: _Store, dataset: str, expectation: str, *, group_key: str = "", limit: int = 400
    ) -> tuple[list[OutcomePoint], list[str]]:
        """An expectation's recorded outcomes for one group (``""``: the total), oldest first (the
        latest ``limit``), and the group keys it has outcomes for."""
        outcomes, datasets = schema.check_outcomes, schema.datasets
        with self._transaction() as connection:
            dataset_id = connection.execute(
                sa.select(datasets.c.id).where(datasets.c.name == dataset)
            ).scalar_one_or_none()
            if dataset_id is None:
                return [], []
            where = [outcomes.c.dataset_id == dataset_id, outcomes.c.expectation == expectation]
            groups = list(
                connection.execute(
                    sa.select(outcomes.c.group_key).where(*where).distinct().order_by(outcomes.c.group_key)
                ).scalars()
            )
            rows = connection.execute(
                sa.select(outcomes)
                .where(*where, outcomes.c.group_key == group_key)
                .order_by(outcomes.c.at.desc(), outcomes.c.run_id.desc())
                .limit(limit)
            ).all()
        return [_point(r) for r in reversed(rows)], groups

    def run_check_outcomes(self: _Store, run_id: str) -> list[OutcomePoint]:
        """The check outcomes one run recorded, in their order."""
        outcomes = schema.check_outcomes
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(outcomes).where(outcomes.c.run_id == run_id).order_by(outcomes.c.position)
            ).all()
        return [_point(r) for r in rows]

    def contributors(self: _Store) -> list[tuple[str | None, str | None, int]]:
        """The (table, contributor) pairs of gate runs, with how many runs each has."""
        runs, datasets = schema.runs, schema.datasets
        contributor = runs.c.summary["contributor"].as_string()
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(datasets.c.name, contributor, sa.func.count())
                .select_from(runs.outerjoin(datasets))
                .where(runs.c.kind == "gate")
                .group_by(datasets.c.name, contributor)
                .order_by(datasets.c.name, contributor)
            ).all()
        return [(table, who, int(n)) for table, who, n in rows]

    def rule_outcomes(self: _Store, dataset: str, *, runs: int = 15) -> list[tuple[RunRow, list[Any]]]:
        """The DQDL rule outcomes of ``dataset``'s latest ``runs`` completed DQDL runs, oldest first:
        (run, [outcome rows: rule, outcome, message])."""
        table, datasets, outcomes = schema.runs, schema.datasets, schema.outcomes
        with self._transaction() as connection:
            found = connection.execute(
                sa.select(table, datasets.c.name.label("dataset"))
                .select_from(table.join(datasets))
                .where(datasets.c.name == dataset, table.c.kind == "dqdl", table.c.state == "completed")
                .order_by(table.c.started_at.desc(), table.c.id.desc())
                .limit(runs)
            ).all()
            rows = connection.execute(
                sa.select(outcomes.c.run_id, outcomes.c.rule, outcomes.c.outcome, outcomes.c.message)
                .where(outcomes.c.run_id.in_([r.id for r in found]))
                .order_by(outcomes.c.run_id, outcomes.c.position)
            ).all()
        by_run: dict[str, list[Any]] = defaultdict(list)
        for row in rows:
            by_run[row.run_id].append(row)
        return [(_run_row(r, ()), by_run.get(r.id, [])) for r in reversed(found)]

    def latest_profile(self: _Store, dataset: str) -> dict[str, Any] | None:
        """The latest current load of ``dataset`` that the drift monitor profiled (it has a
        stored schema; else the latest a check run profiled): ``{load_id, logical_date,
        row_count, columns: [(name, type)], metrics: {(entity, instance, name): value},
        judgements: [row]}``; None when there is none."""
        loads, datasets, columns = schema.loads, schema.datasets, schema.load_columns
        with self._transaction() as connection:
            load = connection.execute(
                sa.select(loads.c.id, loads.c.logical_date, loads.c.logical_time, loads.c.row_count)
                .select_from(loads.join(datasets))
                .where(
                    datasets.c.name == dataset,
                    loads.c.status == "current",
                    sa.exists().where(columns.c.load_id == loads.c.id),
                )
                # the drift monitor's loads first (partition ""); a check run's profile of its
                # slice (partition: the profile's id) shows only for a dataset with none
                .order_by(
                    sa.case((loads.c.partition == "", 0), else_=1),
                    loads.c.logical_time.desc(),
                    loads.c.id.desc(),
                )
                .limit(1)
            ).first()
            if load is None:
                return None
            schema_rows = connection.execute(
                sa.select(columns.c.name, columns.c.type)
                .where(columns.c.load_id == load.id)
                .order_by(columns.c.position)
            ).all()
            metric_rows = connection.execute(
                sa.select(schema.metrics).where(schema.metrics.c.load_id == load.id)
            ).all()
            judgement_rows = connection.execute(
                sa.select(schema.judgements).where(schema.judgements.c.load_id == load.id)
            ).all()
        return {
            "load_id": int(load.id),
            "logical_date": load.logical_date,
            "logical_time": load.logical_time,
            "row_count": load.row_count,
            "columns": [(r.name, r.type) for r in schema_rows],
            "metrics": {(r.entity, r.instance, r.name): r.value for r in metric_rows},
            "judgements": list(judgement_rows),
        }

    def latest_source(self: _Store, dataset: str) -> str | None:
        """The source path the latest current load of ``dataset`` recorded, or None."""
        loads, datasets = schema.loads, schema.datasets
        with self._transaction() as connection:
            found = connection.execute(
                sa.select(loads.c.source_path)
                .select_from(loads.join(datasets))
                .where(
                    datasets.c.name == dataset, loads.c.status == "current", loads.c.source_path.is_not(None)
                )
                .order_by(loads.c.logical_time.desc(), loads.c.id.desc())
                .limit(1)
            ).scalar_one_or_none()
        return None if found is None else str(found)

    def value_sets(self: _Store, dataset: str) -> dict[str, int]:
        """How many values each categorical column of ``dataset`` has held."""
        sets, datasets = schema.value_sets, schema.datasets
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(sets.c.column, sa.func.count())
                .select_from(sets.join(datasets))
                .where(datasets.c.name == dataset)
                .group_by(sets.c.column)
                .order_by(sets.c.column)
            ).all()
        return {str(column): int(count) for column, count in rows}

    def decision_page(
        self: _Store,
        *,
        dataset: str | None = None,
        column: str | None = None,
        status: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[list[int], int]:
        """The ids of a page of decisions (newest first) and how many match in all."""
        table, datasets = schema.decisions, schema.datasets
        where = [
            sa.true() if dataset is None else datasets.c.name == dataset,
            sa.true() if column is None else table.c.column == column,
            sa.true() if status is None else table.c.status == status,
        ]
        joined = table.join(datasets)
        with self._transaction() as connection:
            total = connection.execute(
                sa.select(sa.func.count()).select_from(joined).where(*where)
            ).scalar_one()
            ids = connection.execute(
                sa.select(table.c.id)
                .select_from(joined)
                .where(*where)
                .order_by(table.c.opened_at.desc(), table.c.id.desc())
                .limit(limit)
                .offset(offset)
            ).scalars()
            return [int(i) for i in ids], int(total)

    def check_dates(self: _Store, dataset: str, *, limit: int = 90) -> list[tuple[datetime, str | None]]:
        """The latest ``limit`` logical times of ``dataset``'s completed check runs, newest first,
        each with the clock (``now``, ISO-8601) of its latest run."""
        runs, outcomes, datasets = schema.runs, schema.check_outcomes, schema.datasets
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(outcomes.c.at, runs.c.summary["now"].as_string(), runs.c.started_at)
                .select_from(outcomes.join(runs, runs.c.id == outcomes.c.run_id).join(datasets))
                .where(datasets.c.name == dataset, runs.c.state == "completed")
                .distinct()
                .order_by(outcomes.c.at.desc(), runs.c.started_at.desc())
            ).all()
        seen: dict[datetime, str | None] = {}
        for at, now, _started in rows:
            if at not in seen:
                if len(seen) >= limit:
                    break
                seen[at] = now
        return list(seen.items())


def _stages(connection: Connection, run_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
    from assay.store.records import STAGES

    if not run_ids:
        return {}
    rows = connection.execute(
        sa.select(schema.run_stages.c.run_id, schema.run_stages.c.stage).where(
            schema.run_stages.c.run_id.in_(list(run_ids))
        )
    ).all()
    found: dict[str, list[str]] = defaultdict(list)
    for run_id, stage in rows:
        found[run_id].append(stage)
    return {k: tuple(sorted(v, key=STAGES.index)) for k, v in found.items()}


def _run_row(row: Any, stages: Sequence[str]) -> RunRow:
    return RunRow(
        str(row.id),
        str(row.kind),
        row.dataset,
        str(row.state),
        row.started_at,
        row.finished_at,
        row.summary if isinstance(row.summary, dict) else None,
        row.counts if isinstance(row.counts, dict) else None,
        row.error,
        tuple(stages),
    )


def _point(row: Any) -> OutcomePoint:
    return OutcomePoint(
        str(row.run_id),
        row.at,
        str(row.expectation),
        parse_group_key(row.group_key),
        str(row.outcome),
        str(row.severity),
        str(row.mode),
        row.owner,
        row.observed,
        row.expected if isinstance(row.expected, dict) else None,
        row.message,
        row.reason,
        row.detail if isinstance(row.detail, dict) else None,
    )
