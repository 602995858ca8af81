"""The store's side of check documents: metric series for judging, outcomes, and their history.

:class:`CheckRecords` is mixed into :class:`~assay.store.metrics.MetricStore`. A check run keeps
its metrics as loads of the dataset (one per profile; ``partition`` is the profile's id, so two
profiles never read each other's history) and its outcomes in ``check_outcomes``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay.store import schema
from assay.store.baselines import kept, whole_load_kept
from assay.store.catalog import mark_stale
from assay.store.records import STAGES

Series = dict[tuple[str, str, str], list[tuple[datetime, float | None]]]
"""(entity, instance, name) → the stored values, most recent first, with their logical times."""


class _Store(Protocol):
    def _transaction(self) -> AbstractContextManager[Connection]: ...

    def _ensure_dataset(self, connection: Connection, name: str) -> int: ...


class CheckRecords:
    """Check-related methods of the metric store."""

    def metric_series(
        self: _Store,
        dataset: str,
        *,
        partition: str,
        names: Collection[str],
        before: datetime,
        entities: Collection[str] = ("Dataset", "Group"),
        limit: int | None = None,
        loads: int | None = None,
        baseline: bool = True,
    ) -> Series:
        """Every stored value of the metrics ``names`` of ``dataset``'s ``partition`` on current
        loads strictly before ``before`` that no mark keeps out of baselines
        (:mod:`assay.store.baselines`; every current load with ``baseline=False``), in ONE store
        query, grouped by metric and instance, most recent first (``limit`` values each at most;
        only from the ``loads`` most recent loads, when given: a judgement that reads 7 values
        never reads a year).

        >>> from datetime import UTC
        >>> from assay.store import MetricKey, MetricStore
        >>> with MetricStore.open("sqlite://") as store:
        ...     for day in (1, 2):
        ...         at = datetime(2026, 1, day, tzinfo=UTC)
        ...         load = store.create_load("t", partition="daily", logical_time=at)
        ...         store.save_metrics(load, {MetricKey.dataset("row_count"): 10.0 * day})
        ...     series = store.metric_series("t", partition="daily", names={"row_count"},
        ...                                  before=datetime(2026, 1, 3, tzinfo=UTC))
        >>> [value for _, value in series[("Dataset", "*", "row_count")]]
        [20.0, 10.0]
        """
        if not names:
            return {}
        loads_table, metrics = schema.loads, schema.metrics
        query = (
            sa.select(
                metrics.c.entity,
                metrics.c.instance,
                metrics.c.name,
                loads_table.c.logical_time,
                metrics.c.value,
            )
            .select_from(schema.datasets.join(loads_table).join(metrics))
            .where(
                schema.datasets.c.name == dataset,
                loads_table.c.partition == partition,
                loads_table.c.status == "current",
                kept(loads_table.c.id, metrics.c.entity, metrics.c.instance, metrics.c.name)
                if baseline
                else sa.true(),
                loads_table.c.logical_time < before,
                metrics.c.name.in_(sorted(names)),
                metrics.c.entity.in_(sorted(entities)),
            )
            .order_by(loads_table.c.logical_time.desc(), loads_table.c.id.desc())
        )
        out: Series = defaultdict(list)
        with self._transaction() as connection:
            if loads is not None:
                recent = (
                    sa.select(loads_table.c.id)
                    .select_from(schema.datasets.join(loads_table))
                    .where(
                        schema.datasets.c.name == dataset,
                        loads_table.c.partition == partition,
                        loads_table.c.status == "current",
                        whole_load_kept(loads_table.c.id) if baseline else sa.true(),
                        loads_table.c.logical_time < before,
                    )
                    .order_by(loads_table.c.logical_time.desc(), loads_table.c.id.desc())
                    .limit(loads)
                )
                ids = [row[0] for row in connection.execute(recent)]
                query = query.where(metrics.c.load_id.in_(ids))
            for entity, instance, name, at, value in connection.execute(query):
                values = out[(entity, instance, name)]
                if limit is None or len(values) < limit:
                    values.append((at, value))
        return dict(out)

    def save_check_outcomes(
        self: _Store, run_id: str, dataset: str, at: datetime, outcomes: Sequence[Mapping[str, Any]]
    ) -> None:
        """Record a check run's outcomes (each a mapping of the run JSON's outcome fields)."""
        with self._transaction() as connection:
            dataset_id = self._ensure_dataset(connection, dataset)
            rows = [
                {
                    "run_id": run_id,
                    "position": position,
                    "dataset_id": dataset_id,
                    "at": at,
                    "expectation": item["expectation"],
                    "group_key": group_key(item.get("group")),
                    "outcome": item["outcome"],
                    "severity": item["severity"],
                    "mode": item["mode"],
                    "owner": item.get("owner"),
                    "observed": item.get("observed"),
                    "expected": item.get("expected"),
                    "message": item.get("message"),
                    "reason": item.get("reason"),
                    "attempts": item.get("attempts", 1),
                    "detail": {
                        "explained_by": item.get("explained_by") or [],
                        "samples": item.get("samples") or [],
                        "flagged": item.get("flagged"),
                    },
                }
                for position, item in enumerate(outcomes)
            ]
            if rows:
                connection.execute(sa.insert(schema.check_outcomes), rows)
            mark_stale(connection, dataset_id)

    def check_runs(self: _Store, dataset: str) -> list[dict[str, Any]]:
        """Every recorded check run of ``dataset`` (dry runs are never recorded), oldest first by
        logical time, each with its outcomes in position order: ``run_id``, ``at``, ``state``,
        ``summary``, ``stages`` (the stages it passed), ``outcomes`` (the run JSON's outcome
        fields)."""
        runs, outcomes = schema.runs, schema.check_outcomes
        with self._transaction() as connection:
            dataset_id = connection.execute(
                sa.select(schema.datasets.c.id).where(schema.datasets.c.name == dataset)
            ).scalar_one_or_none()
            if dataset_id is None:
                return []
            found = connection.execute(
                sa.select(runs.c.id, runs.c.state, runs.c.summary, runs.c.started_at, runs.c.counts)
                .where(runs.c.dataset_id == dataset_id, runs.c.kind == "check", runs.c.state != "running")
                .order_by(runs.c.started_at, runs.c.id)
            ).all()
            rows = connection.execute(
                sa.select(outcomes)
                .where(outcomes.c.dataset_id == dataset_id)
                .order_by(outcomes.c.run_id, outcomes.c.position)
            ).all()
            stages: dict[str, list[str]] = defaultdict(list)
            passed = connection.execute(
                sa.select(schema.run_stages.c.run_id, schema.run_stages.c.stage).where(
                    schema.run_stages.c.run_id.in_([row[0] for row in found])
                )
            ).all()
            for run_id, stage in sorted(passed, key=lambda r: (r[0], STAGES.index(r[1]))):
                stages[run_id].append(stage)
        by_run: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            detail = row.detail or {}
            by_run[row.run_id].append(
                {
                    "expectation": row.expectation,
                    "group": parse_group_key(row.group_key),
                    "outcome": row.outcome,
                    "severity": row.severity,
                    "mode": row.mode,
                    "owner": row.owner,
                    "observed": row.observed,
                    "expected": row.expected,
                    "message": row.message,
                    "reason": row.reason,
                    "attempts": row.attempts,
                    "explained_by": detail.get("explained_by") or [],
                    "samples": detail.get("samples") or [],
                }
            )
        out = []
        for run_id, state, summary, started_at, counts in found:
            summary = summary or {}
            out.append(
                {
                    "run_id": run_id,
                    "at": summary.get("at") or (counts or {}).get("at"),
                    "state": state,
                    "started_at": started_at,
                    "summary": summary.get("summary"),
                    "stages": stages.get(run_id, []),
                    "outcomes": by_run.get(run_id, []),
                }
            )
        out.sort(key=lambda run: (str(run["at"]), run["started_at"], run["run_id"]))
        return out


def group_key(group: Mapping[str, Any] | None) -> str:
    """A group as the store keys it: canonical JSON, ``""`` for the total.

    >>> group_key({"venue": "XETR", "region": "EU"}), group_key(None)
    ('{"region":"EU","venue":"XETR"}', '')
    """
    if not group:
        return ""
    import json

    return json.dumps(dict(group), sort_keys=True, separators=(",", ":"), default=str)


def parse_group_key(key: str) -> dict[str, Any] | None:
    """The group a :func:`group_key` names (None for the total)."""
    if not key:
        return None
    import json

    parsed: dict[str, Any] = json.loads(key)
    return parsed
