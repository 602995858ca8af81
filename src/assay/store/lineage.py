"""The store's side of lineage: the graph's edges and the layers of incidents.

:class:`LineageRecords` is mixed into :class:`~assay.store.metrics.MetricStore`. The graph's
traversal (upstream, downstream, cycle-safe) is :mod:`assay.platform.lineage.graph`'s; here are
only its rows: a check run declares its dataset's upstream edges in the transaction of its
outcomes, an OpenLineage event posted to ``assay serve`` adds the edges it names, and an
incident's layers are written with the evaluations that made them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay.store import schema
from assay.store.catalog import mark_stale

ORIGINS = ("declared", "openlineage")
"""Where an edge comes from: a check document's ``dataset.upstream``, or an OpenLineage event."""


@dataclass(frozen=True)
class Edge:
    """``upstream`` is read to make ``downstream``, as ``origin`` says (with its ``job``)."""

    upstream: str
    downstream: str
    origin: str
    job: str
    seen_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "upstream": self.upstream,
            "downstream": self.downstream,
            "origin": self.origin,
            "job": self.job or None,
            "seen_at": self.seen_at.isoformat(),
        }


@dataclass
class Layer:
    """One dataset of an incident: when it failed first and last, the runs that failed, and
    its passes in a row since its last failure."""

    incident_id: str
    dataset: str
    first_seen: datetime
    last_seen: datetime
    evaluated_at: datetime
    passes: int = 0
    run_ids: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "first_seen": self.first_seen.isoformat(),
            "last_seen": self.last_seen.isoformat(),
            "passes": self.passes,
            "run_ids": list(self.run_ids),
        }


class _Store(Protocol):
    def _transaction(self) -> AbstractContextManager[Connection]: ...

    def _ensure_dataset(self, connection: Connection, name: str) -> int: ...


class LineageRecords:
    """Lineage edge and incident layer methods of the metric store."""

    # --- edges --------------------------------------------------------------------------------------

    def declare_upstream(self: _Store, dataset: str, upstream: Sequence[str], *, at: datetime) -> None:
        """``dataset``'s declared upstream is ``upstream``: edges it no longer declares go."""
        table = schema.lineage_edges
        with self._transaction() as connection:
            declared = (table.c.downstream == dataset) & (table.c.origin == "declared")
            connection.execute(sa.delete(table).where(declared & table.c.upstream.not_in(list(upstream))))
            _upsert_edges(connection, [(name, dataset, "declared", "") for name in upstream], at)

    def learn_edges(self: _Store, edges: Iterable[tuple[str, str]], *, job: str, at: datetime) -> int:
        """Edges an OpenLineage event of ``job`` names (upstream, downstream); how many."""
        rows = [(up, down, "openlineage", job) for up, down in edges if up != down]
        with self._transaction() as connection:
            _upsert_edges(connection, rows, at)
        return len(rows)

    def lineage_edges(self: _Store) -> list[Edge]:
        """Every edge of the graph, in a stable order."""
        table = schema.lineage_edges
        query = sa.select(table).order_by(table.c.upstream, table.c.downstream, table.c.origin, table.c.job)
        with self._transaction() as connection:
            return [Edge(**row) for row in connection.execute(query).mappings()]

    # --- incident layers ------------------------------------------------------------------------------

    def incident_layers(self: _Store, incident_id: str) -> list[Layer]:
        """The layers of an incident, by their first failure (then by name)."""
        layers = schema.incident_layers
        query = (
            sa.select(layers, schema.datasets.c.name.label("dataset"))
            .select_from(layers.join(schema.datasets))
            .where(layers.c.incident_id == incident_id)
            .order_by(layers.c.first_seen, schema.datasets.c.name)
        )
        with self._transaction() as connection:
            return [_layer(row) for row in connection.execute(query).mappings()]

    def unresolved_layers(self: _Store, datasets: Sequence[str]) -> list[Layer]:
        """The layers on ``datasets`` of every incident that is not resolved."""
        layers, incidents = schema.incident_layers, schema.incidents
        query = (
            sa.select(layers, schema.datasets.c.name.label("dataset"))
            .select_from(
                layers.join(schema.datasets, layers.c.dataset_id == schema.datasets.c.id).join(
                    incidents, layers.c.incident_id == incidents.c.id
                )
            )
            .where(schema.datasets.c.name.in_(list(datasets)), incidents.c.state != "resolved")
            .order_by(layers.c.first_seen)
        )
        with self._transaction() as connection:
            return [_layer(row) for row in connection.execute(query).mappings()]

    def save_layer(self: _Store, layer: Layer) -> None:
        """Insert or update ``layer``."""
        table = schema.incident_layers
        values = {
            "first_seen": layer.first_seen,
            "last_seen": layer.last_seen,
            "evaluated_at": layer.evaluated_at,
            "passes": layer.passes,
            "run_ids": list(layer.run_ids),
        }
        with self._transaction() as connection:
            dataset_id = self._ensure_dataset(connection, layer.dataset)
            insert = schema.upsert(connection, table)
            connection.execute(
                insert.values(
                    incident_id=layer.incident_id, dataset_id=dataset_id, **values
                ).on_conflict_do_update(index_elements=[table.c.incident_id, table.c.dataset_id], set_=values)
            )
            mark_stale(connection, dataset_id)  # its entry counts the incident (open_incidents)


def _upsert_edges(connection: Connection, rows: Sequence[tuple[str, str, str, str]], at: datetime) -> None:
    table = schema.lineage_edges
    insert = schema.upsert(connection, table)
    for upstream, downstream, origin, job in rows:
        connection.execute(
            insert.values(
                upstream=upstream, downstream=downstream, origin=origin, job=job, seen_at=at
            ).on_conflict_do_update(
                index_elements=[table.c.upstream, table.c.downstream, table.c.origin, table.c.job],
                set_={"seen_at": at},
            )
        )


def _layer(row: Any) -> Layer:
    return Layer(
        incident_id=row["incident_id"],
        dataset=row["dataset"],
        first_seen=row["first_seen"],
        last_seen=row["last_seen"],
        evaluated_at=row["evaluated_at"],
        passes=row["passes"],
        run_ids=list(row["run_ids"] or []),
    )
