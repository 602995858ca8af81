"""The metric store: datasets, loads, the metrics measured on them, and runs with their outcomes.

Measurements are written once and read many times: rules that compare a load with its past
(DQDL's ``RowCount > avg(last(5))``, anomaly detection) read :meth:`MetricStore.history` instead
of scanning old data again. Every method that writes runs in one transaction.

>>> from datetime import UTC, datetime
>>> with MetricStore.open("sqlite://") as store:
...     load = store.create_load("orders", logical_time=datetime(2024, 5, 1, tzinfo=UTC))
...     store.save_metrics(load, {MetricKey.dataset("RowCount"): 120.0})
...     store.metrics_of(load)
{MetricKey(entity='Dataset', instance='*', name='RowCount'): 120.0}
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError

from assay.errors import ConfigError, PlatformError
from assay.store import schema
from assay.store.baselines import BaselineRecords, kept
from assay.store.browse import BrowseRecords
from assay.store.catalog import CatalogRecords, mark_stale
from assay.store.checks import CheckRecords
from assay.store.database import describe_error, display_url, open_database, store_url
from assay.store.decisions import DecisionRecords
from assay.store.incidents import IncidentRecords
from assay.store.lineage import LineageRecords
from assay.store.profiles import ProfileRecords
from assay.store.proposals import ProposalRecords
from assay.store.records import (
    LOAD_STATUSES,
    HistoryPoint,
    MetricKey,
    OutcomeRecord,
    RunRecord,
    require_aware,
)
from assay.store.schedules import ScheduleRecords
from assay.store.scores import ScoreRecords
from assay.store.users import UserRecords
from assay.store.value_sets import lock_dataset, refresh_after


class MetricStore(
    ProfileRecords,
    DecisionRecords,
    CheckRecords,
    ScheduleRecords,
    IncidentRecords,
    LineageRecords,
    ScoreRecords,
    ProposalRecords,
    UserRecords,
    BrowseRecords,
    BaselineRecords,
    CatalogRecords,
):
    """Keeps every metric assay measures, keyed by dataset, load and :class:`MetricKey`.

    Open one with :meth:`open` and close it (or use it as a context manager). It holds a
    connection pool, not a connection: one store may serve many calls, and several processes
    may use the same database at once.

    >>> with MetricStore.open("sqlite://") as store:
    ...     store.ensure_dataset("orders")
    1
    """

    def __init__(self, engine: Engine) -> None:
        """Wrap an engine whose database is already migrated; use :meth:`open` instead."""
        self._engine = engine
        self._local = threading.local()  # the connection of the open transaction, per thread

    @classmethod
    def open(cls, url: str | None = None, *, workspace: Path | None = None) -> MetricStore:
        """Open the store at ``url``, creating or upgrading its schema (Alembic ``upgrade head``).

        ``url`` is a SQLAlchemy URL (``sqlite:///path/assay.db``,
        ``postgresql+psycopg://user@host:5432/db``); ``None`` means the SQLite file ``assay.db``
        in ``workspace`` (default ``.assay``), created with its folder if missing. Several
        processes may open the same fresh store at once: the schema is created exactly once.

        Raises :class:`ConfigError` for a URL that is malformed or names an unsupported backend
        or driver, and :class:`PlatformError` when the database cannot be reached after a few
        attempts or cannot be migrated.

        >>> import tempfile
        >>> with MetricStore.open(workspace=Path(tempfile.mkdtemp()) / "ws") as store:
        ...     store.url.endswith("/ws/assay.db")
        True
        """
        return cls(open_database(store_url(url, workspace)))

    @property
    def url(self) -> str:
        """The database URL, with any password hidden.

        >>> with MetricStore.open("sqlite://") as store:
        ...     store.url
        'sqlite+pysqlite://'
        """
        return display_url(self._engine.url)

    @property
    def database_url(self) -> str:
        """The database URL with its password, for another client of the same database (the
        queue of scheduled runs); never printed."""
        return str(self._engine.url.render_as_string(hide_password=False))

    def close(self) -> None:
        """Close the store's connections.

        >>> MetricStore.open("sqlite://").close()
        """
        self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def ensure_dataset(self, name: str) -> int:
        """The id of the dataset called ``name``, registering it first if it is new.

        >>> with MetricStore.open("sqlite://") as store:
        ...     store.ensure_dataset("orders") == store.ensure_dataset("orders")
        True
        """
        with self._transaction() as connection:
            return self._ensure_dataset(connection, name)

    def create_load(
        self,
        dataset: str,
        *,
        partition: str = "",
        logical_time: datetime,
        logical_date: date | None = None,
        source_path: str | None = None,
        source_sha256: str | None = None,
        row_count: int | None = None,
        run_id: str | None = None,
        status: str = "current",
    ) -> int:
        """Record one arrival of data into ``dataset`` (registered if new) and return the load's id.

        ``logical_time`` is the instant the data is "as of" (for a DQDL evaluation, its clock) and
        must be timezone-aware; ``partition`` ``""`` means the dataset is not partitioned. A run
        makes its loads ``pending`` under its ``run_id``: no history reads them (but the run's
        own) until :meth:`settle_loads` settles them when the run commits.

        >>> from datetime import UTC
        >>> with MetricStore.open("sqlite://") as store:
        ...     store.create_load("orders", partition="c42", logical_time=datetime(2024, 5, 1, tzinfo=UTC))
        1
        """
        require_aware(logical_time, "logical_time")
        if status not in LOAD_STATUSES:
            raise ConfigError(f"unknown load status {status!r}: expected one of {', '.join(LOAD_STATUSES)}")
        with self._transaction() as connection:
            dataset_id = self._ensure_dataset(connection, dataset)
            inserted = connection.execute(
                sa.insert(schema.loads).returning(schema.loads.c.id),
                {
                    "dataset_id": dataset_id,
                    "partition": partition,
                    "logical_time": logical_time,
                    "logical_date": logical_date,
                    "source_path": source_path,
                    "source_sha256": source_sha256,
                    "row_count": row_count,
                    "run_id": run_id,
                    "status": status,
                },
            )
            mark_stale(connection, dataset_id)
            return int(inserted.scalar_one())

    def run_loads(self, run_id: str) -> dict[int, str]:
        """The loads a run measured, with their status.

        >>> from datetime import UTC
        >>> with MetricStore.open("sqlite://") as store:
        ...     load = store.create_load("t", logical_time=datetime(2024, 5, 1, tzinfo=UTC),
        ...                              run_id="r1", status="pending")
        ...     store.run_loads("r1")
        {1: 'pending'}
        """
        with self._transaction() as connection:
            rows = connection.execute(
                sa.select(schema.loads.c.id, schema.loads.c.status)
                .where(schema.loads.c.run_id == run_id)
                .order_by(schema.loads.c.id)
            )
            return {int(row.id): str(row.status) for row in rows}

    def settle_loads(self, statuses: Mapping[int, str]) -> None:
        """Give each load its final status in one transaction (a run's commit settling its loads).

        >>> from datetime import UTC
        >>> with MetricStore.open("sqlite://") as store:
        ...     load = store.create_load("t", logical_time=datetime(2024, 5, 1, tzinfo=UTC), status="pending")
        ...     store.settle_loads({load: "current"})
        ...     store.run_loads("none")
        {}
        """
        for status in statuses.values():
            if status not in LOAD_STATUSES:
                raise ConfigError(
                    f"unknown load status {status!r}: expected one of {', '.join(LOAD_STATUSES)}"
                )
        with self._transaction() as connection:
            by_dataset: dict[int, list[int]] = {}
            for load_id, status in statuses.items():
                dataset_id = self._require_load(connection, load_id)
                connection.execute(
                    sa.update(schema.loads).where(schema.loads.c.id == load_id).values(status=status)
                )
                by_dataset.setdefault(dataset_id, []).append(load_id)
            for dataset_id, load_ids in by_dataset.items():
                refresh_after(connection, dataset_id, load_ids)
                mark_stale(connection, dataset_id)

    def set_load_status(self, load_id: int, status: str) -> None:
        """Mark a load ``current``, ``rejected`` (refused by a gate) or ``superseded`` (replaced).

        >>> from datetime import UTC
        >>> with MetricStore.open("sqlite://") as store:
        ...     load = store.create_load("orders", logical_time=datetime(2024, 5, 1, tzinfo=UTC))
        ...     store.set_load_status(load, "rejected")
        """
        if status not in LOAD_STATUSES:
            raise ConfigError(f"unknown load status {status!r}: expected one of {', '.join(LOAD_STATUSES)}")
        with self._transaction() as connection:
            dataset_id = self._require_load(connection, load_id)
            connection.execute(
                sa.update(schema.loads).where(schema.loads.c.id == load_id).values(status=status)
            )
            refresh_after(connection, dataset_id, [load_id])
            mark_stale(connection, dataset_id)

    def supersede(self, dataset: str, logical_date: date, *, partition: str = "", keep: int) -> int:
        """Mark every other current load of the same dataset, partition and logical date as
        superseded by load ``keep``; returns how many were. A month loaded again replaces itself.

        >>> from datetime import UTC
        >>> with MetricStore.open("sqlite://") as store:
        ...     day, at = date(2024, 5, 31), datetime(2024, 5, 31, tzinfo=UTC)
        ...     first = store.create_load("t", logical_time=at, logical_date=day)
        ...     again = store.create_load("t", logical_time=at, logical_date=day)
        ...     store.supersede("t", day, keep=again)
        1
        """
        with self._transaction() as connection:
            dataset_id = self._ensure_dataset(connection, dataset)
            replaced = [
                int(row.id)
                for row in connection.execute(
                    sa.select(schema.loads.c.id).where(
                        schema.loads.c.dataset_id == dataset_id,
                        schema.loads.c.partition == partition,
                        schema.loads.c.logical_date == logical_date,
                        schema.loads.c.id != keep,
                        schema.loads.c.status == "current",
                    )
                )
            ]
            if replaced:
                connection.execute(
                    sa.update(schema.loads).where(schema.loads.c.id.in_(replaced)).values(status="superseded")
                )
                refresh_after(connection, dataset_id, replaced)
                mark_stale(connection, dataset_id)
            return len(replaced)

    def save_metrics(self, load_id: int, values: Mapping[MetricKey, float | None]) -> None:
        """Store ``values`` as metrics of load ``load_id``, all or none; a key saved again is overwritten.

        None means "no value"; NaN is stored as None too (SQLite cannot store NaN, and a NaN
        metric has no value to compare with). Infinities are kept. An unknown ``load_id`` is a
        :class:`ConfigError`.

        >>> from datetime import UTC
        >>> with MetricStore.open("sqlite://") as store:
        ...     load = store.create_load("orders", logical_time=datetime(2024, 5, 1, tzinfo=UTC))
        ...     store.save_metrics(load, {MetricKey.column("item", "Completeness"): float("nan")})
        ...     store.metrics_of(load)
        {MetricKey(entity='Column', instance='item', name='Completeness'): None}
        """
        rows = [
            {
                "load_id": load_id,
                "entity": key.entity,
                "instance": key.instance,
                "name": key.name,
                "value": _finite_or_none(value, allow_infinite=True),
            }
            for key, value in values.items()
        ]
        with self._transaction() as connection:
            self._require_load(connection, load_id)
            if not rows:
                return
            upsert = schema.upsert(connection, schema.metrics)
            connection.execute(
                upsert.on_conflict_do_update(
                    index_elements=[
                        schema.metrics.c.load_id,
                        schema.metrics.c.entity,
                        schema.metrics.c.instance,
                        schema.metrics.c.name,
                    ],
                    set_={"value": upsert.excluded.value},
                ),
                rows,
            )

    def metrics_of(self, load_id: int) -> dict[MetricKey, float | None]:
        """Every metric stored for load ``load_id``; an unknown ``load_id`` is a :class:`ConfigError`.

        >>> from datetime import UTC
        >>> with MetricStore.open("sqlite://") as store:
        ...     load = store.create_load("orders", logical_time=datetime(2024, 5, 1, tzinfo=UTC))
        ...     store.metrics_of(load)
        {}
        """
        query = sa.select(
            schema.metrics.c.entity, schema.metrics.c.instance, schema.metrics.c.name, schema.metrics.c.value
        ).where(schema.metrics.c.load_id == load_id)
        with self._transaction() as connection:
            self._require_load(connection, load_id)
            return {
                MetricKey(row.entity, row.instance, row.name): row.value for row in connection.execute(query)
            }

    def history(
        self,
        dataset: str,
        key: MetricKey,
        *,
        partition: str = "",
        before: datetime,
        limit: int | None = None,
        run: str | None = None,
        baseline: bool = False,
    ) -> list[HistoryPoint]:
        """Past values of one metric of ``dataset``'s ``partition``, most recent first.

        Only current loads (not pending, rejected or superseded) whose ``logical_time`` is
        strictly earlier than ``before`` count, and the pending loads of ``run`` itself (a gate
        judging several months of one batch reads its earlier months); loads that never stored
        the metric are skipped; with ``baseline``, so are the loads whose metric a mark keeps out
        of later baselines (:mod:`assay.store.baselines`); a stored None (no value, or NaN) is
        returned as such. DQDL's ``last(k)`` is ``[p.value for p in history(..., limit=k,
        baseline=True)]``. An unknown dataset has no history.

        >>> from datetime import UTC
        >>> with MetricStore.open("sqlite://") as store:
        ...     for day, rows in [(1, 8.0), (2, 6.0), (3, 4.0)]:
        ...         load = store.create_load("orders", logical_time=datetime(2024, 5, day, tzinfo=UTC))
        ...         store.save_metrics(load, {MetricKey.dataset("RowCount"): rows})
        ...     now = datetime(2024, 5, 4, tzinfo=UTC)
        ...     [p.value for p in store.history("orders", MetricKey.dataset("RowCount"), before=now, limit=2)]
        [4.0, 6.0]
        """
        require_aware(before, "history cutoff 'before'")
        if limit is not None and limit < 0:
            raise ConfigError(f"history limit must be 0 or more, got {limit}")
        query = (
            sa.select(
                schema.loads.c.id,
                schema.loads.c.logical_time,
                schema.loads.c.logical_date,
                schema.metrics.c.value,
            )
            .select_from(schema.datasets.join(schema.loads).join(schema.metrics))
            .where(
                schema.datasets.c.name == dataset,
                schema.loads.c.partition == partition,
                schema.loads.c.logical_time < before,
                _readable(run),
                schema.metrics.c.entity == key.entity,
                schema.metrics.c.instance == key.instance,
                schema.metrics.c.name == key.name,
            )
            # Load id breaks ties between loads with the same logical time: the later arrival first.
            .order_by(schema.loads.c.logical_time.desc(), schema.loads.c.id.desc())
            .limit(limit)
        )
        if baseline:
            query = query.where(
                kept(
                    schema.loads.c.id,
                    schema.metrics.c.entity,
                    schema.metrics.c.instance,
                    schema.metrics.c.name,
                )
            )
        with self._transaction() as connection:
            return [HistoryPoint(*row) for row in connection.execute(query)]

    def record_run(self, run: RunRecord) -> None:
        """Store a run with its outcomes; recording the same run id again replaces it.

        ``run.dataset`` is registered if new; ``run.load_id``, when given, must be a load of
        that dataset. NaN and infinities in the summary and the outcomes' metrics become None.

        >>> import uuid
        >>> from datetime import UTC
        >>> run = RunRecord(str(uuid.uuid4()), "dqdl", "orders", None, "completed", datetime.now(UTC))
        >>> with MetricStore.open("sqlite://") as store:
        ...     store.record_run(run)
        ...     store.runs("orders") == [run]
        True
        """
        with self._transaction() as connection:
            dataset_id = None if run.dataset is None else self._ensure_dataset(connection, run.dataset)
            if run.load_id is not None:
                load_dataset = self._require_load(connection, run.load_id)
                if dataset_id is not None and load_dataset != dataset_id:
                    raise ConfigError(
                        f"run {run.id}: load {run.load_id} is not a load of dataset {run.dataset!r}"
                    )
            connection.execute(sa.delete(schema.outcomes).where(schema.outcomes.c.run_id == run.id))
            if dataset_id is not None:
                mark_stale(connection, dataset_id)
            values = {
                "id": run.id,
                "kind": run.kind,
                "dataset_id": dataset_id,
                "load_id": run.load_id,
                "state": run.state,
                "started_at": run.started_at,
                "finished_at": run.finished_at,
                "summary": _json_safe(run.summary, f"run {run.id} summary"),
                "inputs": _json_safe(list(run.inputs), f"run {run.id} inputs") if run.inputs else None,
                "counts": _json_safe(run.counts, f"run {run.id} counts"),
                "error": run.error,
                "owner": run.owner,
            }
            # Updated in place, not deleted and inserted again: other tables (a check run's
            # outcomes) refer to the run's row.
            updated = connection.execute(
                sa.update(schema.runs).where(schema.runs.c.id == run.id).values(values)
            )
            if not updated.rowcount:
                connection.execute(sa.insert(schema.runs), values)
            if run.outcomes:
                connection.execute(
                    sa.insert(schema.outcomes),
                    [
                        {
                            "run_id": run.id,
                            "position": position,
                            "rule": outcome.rule,
                            "outcome": outcome.outcome,
                            "message": outcome.message,
                            "metrics": {
                                name: _finite_or_none(value, allow_infinite=False)
                                for name, value in outcome.metrics.items()
                            },
                            "labels": dict(outcome.labels),
                        }
                        for position, outcome in enumerate(run.outcomes)
                    ],
                )

    def decision_datasets(self, source: str) -> list[str]:
        """The datasets with pending decisions that ``source`` (``gate:<run id>``) brought rows to.

        >>> with MetricStore.open("sqlite://") as store:
        ...     _ = store.open_decision("t", "venue", "XNEW", 3, None, source="gate:r1")
        ...     store.decision_datasets("gate:r1")
        ['t']
        """
        query = (
            sa.select(schema.datasets.c.name)
            .distinct()
            .select_from(schema.decision_sources.join(schema.decisions).join(schema.datasets))
            .where(schema.decision_sources.c.source == source)
            .order_by(schema.datasets.c.name)
        )
        with self._transaction() as connection:
            return [str(row.name) for row in connection.execute(query)]

    def run(self, run_id: str) -> RunRecord | None:
        """The run with this id, or None.

        >>> with MetricStore.open("sqlite://") as store:
        ...     store.run("0b7c5a52-4d0e-4a59-9d43-2f1f1d1f7d6e") is None
        True
        """
        found = self._runs(sa.true(), limit=1, run_id=run_id)
        return found[0] if found else None

    def runs(
        self,
        dataset: str | None = None,
        limit: int = 50,
        *,
        state: str | None = None,
        kind: str | None = None,
    ) -> list[RunRecord]:
        """The ``limit`` most recently started runs, of ``dataset`` or of every dataset, newest first.

        >>> with MetricStore.open("sqlite://") as store:
        ...     store.runs()
        []
        """
        if limit < 0:
            raise ConfigError(f"runs limit must be 0 or more, got {limit}")
        where = sa.and_(
            sa.true() if dataset is None else schema.datasets.c.name == dataset,
            sa.true() if state is None else schema.runs.c.state == state,
            sa.true() if kind is None else schema.runs.c.kind == kind,
        )
        return self._runs(where, limit=limit)

    def _runs(
        self, where: sa.ColumnElement[bool], *, limit: int, run_id: str | None = None
    ) -> list[RunRecord]:
        query = (
            sa.select(schema.runs, schema.datasets.c.name.label("dataset"))
            .select_from(schema.runs.outerjoin(schema.datasets))
            .where(where if run_id is None else sa.and_(where, schema.runs.c.id == run_id))
            .order_by(schema.runs.c.started_at.desc(), schema.runs.c.id.desc())
            .limit(limit)
        )
        with self._transaction() as connection:
            found = connection.execute(query).all()
            outcomes_of: dict[str, list[OutcomeRecord]] = {row.id: [] for row in found}
            outcome_rows = connection.execute(
                sa.select(schema.outcomes)
                .where(schema.outcomes.c.run_id.in_(list(outcomes_of)))
                .order_by(schema.outcomes.c.run_id, schema.outcomes.c.position)
            )
            for row in outcome_rows:
                outcomes_of[row.run_id].append(
                    OutcomeRecord(row.rule, row.outcome, row.message, row.metrics, row.labels)
                )
        return [
            RunRecord(
                id=row.id,
                kind=row.kind,
                dataset=row.dataset,
                load_id=row.load_id,
                state=row.state,
                started_at=row.started_at,
                finished_at=row.finished_at,
                summary=row.summary,
                outcomes=outcomes_of[row.id],
                inputs=row.inputs or (),
                counts=row.counts,
                error=row.error,
                owner=row.owner,
            )
            for row in found
        ]

    @contextmanager
    def transaction(self, *, lock: str | None = None) -> Iterator[None]:
        """Run several store calls as one transaction: all of them land, or none. With ``lock``,
        the dataset of that name is held until the end, so that two processes writing the same
        dataset take turns and each reads what the other committed.

        >>> from datetime import UTC
        >>> with MetricStore.open("sqlite://") as store:
        ...     with store.transaction(lock="orders"):
        ...         load = store.create_load("orders", logical_time=datetime(2024, 5, 1, tzinfo=UTC))
        ...         store.save_metrics(load, {MetricKey.dataset("RowCount"): 120.0})
        ...     len(store.metrics_of(load))
        1
        """
        with self._transaction() as connection:
            if lock is not None:
                lock_dataset(connection, self._ensure_dataset(connection, lock))
            yield

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        """A connection in a transaction: the one :meth:`transaction` opened on this thread, or a
        new one committed at the end of the block."""
        current: Connection | None = getattr(self._local, "connection", None)
        if current is not None:
            yield current
            return
        try:
            with self._engine.begin() as connection:
                self._local.connection = connection
                connection.info[schema.TRANSACTION_MEMO] = {}
                try:
                    yield connection
                finally:
                    self._local.connection = None
                    connection.info.pop(schema.TRANSACTION_MEMO, None)
        except DBAPIError as err:
            raise PlatformError(f"metric store {self.url}: {describe_error(err)}") from err

    def _ensure_dataset(self, connection: Connection, name: str) -> int:
        if not name or len(name) > schema.DATASET_NAME_LENGTH:
            raise ConfigError(f"dataset name {name!r} must have 1 to {schema.DATASET_NAME_LENGTH} characters")
        # A dataset's id, once read in a transaction, holds to its end (datasets are never
        # deleted); kept per transaction only, so a rolled-back insert is never remembered.
        memo = connection.info.get(schema.TRANSACTION_MEMO)
        known = None if memo is None else memo.get(("dataset", name))
        if known is not None:
            return int(known)
        # Insert-or-nothing, then read: two processes registering the same dataset both succeed.
        insert = schema.upsert(connection, schema.datasets)
        connection.execute(
            insert.on_conflict_do_nothing(index_elements=[schema.datasets.c.name]), {"name": name}
        )
        found = connection.execute(sa.select(schema.datasets.c.id).where(schema.datasets.c.name == name))
        dataset_id = int(found.scalar_one())
        if memo is not None:
            memo[("dataset", name)] = dataset_id
        return dataset_id

    def _require_load(self, connection: Connection, load_id: int) -> int:
        """The dataset id of load ``load_id``; a ConfigError when the store has no such load."""
        dataset_id = connection.execute(
            sa.select(schema.loads.c.dataset_id).where(schema.loads.c.id == load_id)
        ).scalar()
        if dataset_id is None:
            raise ConfigError(f"metric store {self.url} has no load with id {load_id}")
        return int(dataset_id)


def _readable(run: str | None) -> sa.ColumnElement[bool]:
    """Which loads a history read sees: the current ones, and ``run``'s own pending ones."""
    current = schema.loads.c.status == "current"
    if run is None:
        return current
    return sa.or_(current, sa.and_(schema.loads.c.status == "pending", schema.loads.c.run_id == run))


def _finite_or_none(value: float | None, *, allow_infinite: bool) -> float | None:
    if value is None or math.isnan(value) or (math.isinf(value) and not allow_infinite):
        return None
    return float(value)


def _json_safe(value: Any, where: str) -> Any:
    """``value`` as plain JSON, NaN and infinities as None: JSON has neither and PostgreSQL refuses them."""
    if isinstance(value, float):
        return _finite_or_none(value, allow_infinite=False)
    if value is None or isinstance(value, str | int):
        return value
    if isinstance(value, Mapping):
        if not all(isinstance(name, str) for name in value):
            raise ConfigError(f"{where}: JSON object keys must be strings, got {list(value)}")
        return {name: _json_safe(item, where) for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(item, where) for item in value]
    raise ConfigError(f"{where}: {type(value).__name__} value {value!r} cannot be stored as JSON")
