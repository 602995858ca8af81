"""The catalog's kept entries: each dataset's score and what the catalog filters, sorts and rolls
up on, kept in the store so that a page of 10,000 datasets is one indexed query.

An entry is a cache with a conscience: every store write to a score's inputs (a load, a run, a
check outcome, a profile, an incident, a read, a badge) calls :func:`mark_stale` in the same
transaction, which marks the entry ``stale`` and bumps its ``version``. A refresh
(:mod:`assay.platform.entries`) reads the versions, computes the scores from scratch and writes
each entry back only where the version did not move meanwhile: a kill between the write and the
refresh leaves the entry stale (the next read refreshes it), never wrong.

:class:`CatalogRecords` is mixed into :class:`~assay.store.metrics.MetricStore`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay.store import schema
from assay.store.value_sets import lock_dataset

FIX_FIRST = 10
"""How many datasets a rollup's ``fix_first`` lists (the page shows three): at 10,000 datasets a
full list per group made the catalog's JSON 2 MB."""

ROLLUP_KEYS = ("tag", "schema", "owner")

KEPT_FOR = timedelta(days=1)
"""How long a kept score stands without a write to its inputs: a score is of its day
(``assay score`` keeps one a day), so an entry computed the day before is computed again."""


class _Store(Protocol):
    def _transaction(self) -> AbstractContextManager[Connection]: ...


@dataclass(frozen=True)
class Entry:
    """One dataset's kept entry, as :meth:`CatalogRecords.write_entries` keeps it."""

    name: str
    score: float
    health: float
    enrichment: float
    importance: float
    tier: int | None = None
    team: str | None = None
    owner: str | None = None
    description: str | None = None
    schema_name: str = "(none)"
    tags: tuple[str, ...] = ()
    badge: str | None = None
    open_incidents: int = 0
    last_run_at: datetime | None = None
    loaded_at: datetime | None = None
    document: str | None = None
    computed_at: datetime | None = None
    search: str = field(default="", compare=False)


@dataclass(frozen=True)
class Filters:
    """What a catalog page is filtered by (each None: no filter); ``q``'s words must all appear
    in the name, description, team or tags."""

    q: str | None = None
    tier: int | None = None
    tag: str | None = None
    owner: str | None = None
    badge: str | None = None
    min_score: float | None = None
    max_score: float | None = None
    leave: tuple[str, ...] = ()  # names never listed (the workspace's events)


def mark_stale(connection: Connection, dataset_id: int) -> None:
    """Mark ``dataset_id``'s entry stale in the caller's transaction (the write that changes one
    of its score's inputs). Once per transaction: a refresh keeps its entry only if the version
    did not move while it computed, and one increment per committed transaction tells it so as
    well as several (a day's fill or a run marks the same dataset from each of its writes)."""
    if not schema.first_in_transaction(connection, ("stale", dataset_id)):
        return
    # the dataset's turn before its entry's row: every writer takes the two in this order (a
    # transaction holding the entry's row and waiting for the turn met one doing the reverse)
    lock_dataset(connection, dataset_id)
    table = schema.catalog_entries
    insert = schema.upsert(connection, table).values(dataset_id=dataset_id, stale=True, version=1)
    connection.execute(
        insert.on_conflict_do_update(
            index_elements=[table.c.dataset_id], set_={"stale": True, "version": table.c.version + 1}
        )
    )


def _joined() -> Any:
    """Every dataset with its entry, if any (a dataset without one is stale)."""
    return schema.datasets.outerjoin(
        schema.catalog_entries, schema.catalog_entries.c.dataset_id == schema.datasets.c.id
    )


class CatalogRecords:
    """The catalog's kept entries: what is stale, writing entries back, pages and rollups."""

    def stale_entries(self: _Store, now: datetime) -> dict[str, str | None]:
        """Every dataset whose entry is stale, missing, or computed more than :data:`KEPT_FOR`
        before ``now`` or after it (a score reads the last 30 days before its clock), plus every
        entry computed with a check document: name → the document's stamp as kept (None for
        the ones to refresh whatever their document). At 10,000 fresh datasets without
        documents: an empty answer."""
        entries, datasets = schema.catalog_entries, schema.datasets
        old = sa.or_(entries.c.computed_at <= now - KEPT_FOR, entries.c.computed_at > now)
        due = sa.or_(entries.c.dataset_id.is_(None), entries.c.stale, entries.c.computed_at.is_(None), old)
        rows = _rows(
            self,
            sa.select(datasets.c.name, due.label("due"), entries.c.document)
            .select_from(_joined())
            .where(sa.or_(due, entries.c.document.is_not(None))),
        )
        return {r.name: None if r.due else r.document for r in rows}

    def catalog_state(self: _Store) -> tuple[Any, ...]:
        """What changes whenever a kept entry does: how many there are, how many are stale, the
        sum of their versions (every write bumps one) and the latest computation. One scan of
        the entries' small columns, for :meth:`assay.web.plane.Plane.catalog_summary`'s cache."""
        table = schema.catalog_entries
        query = sa.select(
            sa.func.count(),
            sa.func.sum(table.c.version),
            sa.func.sum(sa.case((table.c.stale, 1), else_=0)),
            sa.func.max(table.c.computed_at),
        )
        with self._transaction() as connection:
            return tuple(connection.execute(query).one())

    def entry_versions(self: _Store, names: Sequence[str]) -> dict[str, int | None]:
        """The current version of each named dataset's entry (None: it has none yet)."""
        entries, datasets = schema.catalog_entries, schema.datasets
        found: dict[str, int | None] = {}
        for chunk in _chunks(names):
            for r in _rows(
                self,
                sa.select(datasets.c.name, entries.c.version)
                .select_from(_joined())
                .where(datasets.c.name.in_(chunk)),
            ):
                found[r.name] = None if r.version is None else int(r.version)
        return found

    def write_entries(self: _Store, entries: Sequence[Entry], versions: Mapping[str, int | None]) -> int:
        """Keep ``entries``, each only if its version is still the one read before computing it
        (a write meanwhile made it stale again: left for the next refresh); how many were kept."""
        table, tags, datasets = schema.catalog_entries, schema.catalog_tags, schema.datasets
        kept = 0
        with self._transaction() as connection:
            names = [e.name for e in entries]
            ids = _ids(connection, names)
            # a dataset only a check document names is listed by the catalog too: registered here
            for name in names:
                if name not in ids:
                    insert = schema.upsert(connection, datasets).values(name=name)
                    connection.execute(insert.on_conflict_do_nothing(index_elements=[datasets.c.name]))
            if len(ids) < len(set(names)):
                ids = _ids(connection, names)
            for e in entries:
                dataset_id, version = ids.get(e.name), versions.get(e.name)
                if dataset_id is None:
                    continue
                values = {k: getattr(e, k) for k in _COLUMNS} | {"stale": False}
                if version is None:
                    insert = schema.upsert(connection, table).values(
                        dataset_id=dataset_id, version=0, **values
                    )
                    done = connection.execute(
                        insert.on_conflict_do_nothing(index_elements=[table.c.dataset_id])
                    )
                else:
                    done = connection.execute(
                        sa.update(table)
                        .where(table.c.dataset_id == dataset_id, table.c.version == version)
                        .values(**values)
                    )
                if not done.rowcount:
                    continue
                kept += 1
                connection.execute(sa.delete(tags).where(tags.c.dataset_id == dataset_id))
                if e.tags:
                    connection.execute(
                        sa.insert(tags), [{"dataset_id": dataset_id, "tag": t} for t in set(e.tags)]
                    )
        return kept

    def catalog_page(
        self: _Store, filters: Filters, *, sort: str, descending: bool, offset: int, limit: int
    ) -> tuple[int, list[Entry]]:
        """How many kept entries match ``filters``, and those at ``offset`` (at most ``limit``)
        in ``sort`` order, ties by name; a stale entry is shown as last kept."""
        entries, datasets = schema.catalog_entries, schema.datasets
        where = _where(filters)
        base = sa.select(sa.func.count()).select_from(_joined()).where(where)
        order = [
            *_SORTS[sort](entries, descending),
            datasets.c.name.desc() if descending else datasets.c.name.asc(),
        ]
        query = (
            sa.select(datasets.c.name, entries)
            .select_from(_joined())
            .where(where)
            .order_by(*order)
            .offset(offset)
            .limit(limit)
        )
        with self._transaction() as connection:
            total = int(connection.execute(base).scalar_one())
            rows = connection.execute(query).all()
            ids = [r.dataset_id for r in rows if r.dataset_id is not None]
            tagged: dict[int, list[str]] = {}
            if ids:
                for dataset_id, tag in connection.execute(
                    sa.select(schema.catalog_tags.c.dataset_id, schema.catalog_tags.c.tag)
                    .where(schema.catalog_tags.c.dataset_id.in_(ids))
                    .order_by(schema.catalog_tags.c.tag)
                ):
                    tagged.setdefault(dataset_id, []).append(tag)
        return total, [_entry(r, tuple(tagged.get(r.dataset_id, ()))) for r in rows]

    def catalog_facets(self: _Store) -> tuple[list[str], list[str]]:
        """Every kept tag and every kept team, sorted: what the catalog's filters offer."""
        entries, tags = schema.catalog_entries, schema.catalog_tags
        with self._transaction() as connection:
            found_tags = list(
                connection.execute(sa.select(tags.c.tag).distinct().order_by(tags.c.tag)).scalars()
            )
            teams = list(
                connection.execute(
                    sa.select(entries.c.team)
                    .where(entries.c.team.is_not(None))
                    .distinct()
                    .order_by(entries.c.team)
                ).scalars()
            )
        return found_tags, teams

    def catalog_rollup(self: _Store, by: str) -> list[dict[str, Any]]:
        """The kept scores rolled up by ``by`` (tag, schema or owner) as
        :func:`assay.platform.scores.rollup` rolls them up: each group's importance-weighted
        mean, its count, and its :data:`FIX_FIRST` datasets to fix first. One grouped query
        and one windowed query, whatever the number of datasets."""
        entries, datasets, tags = schema.catalog_entries, schema.datasets, schema.catalog_tags
        weight = 1.0 + entries.c.importance / 25.0
        source: Any = sa.join(entries, datasets, datasets.c.id == entries.c.dataset_id)
        if by == "tag":
            source = source.outerjoin(tags, tags.c.dataset_id == entries.c.dataset_id)
            group: Any = sa.func.coalesce(tags.c.tag, "(untagged)")
        elif by == "schema":
            group = entries.c.schema_name
        elif by == "owner":
            group = sa.func.coalesce(entries.c.owner, "(no owner)")
        else:
            raise ValueError(f"rollup by must be one of {', '.join(ROLLUP_KEYS)}, not {by!r}")
        scored = entries.c.score.is_not(None)
        priority = (100.0 - entries.c.score) * weight
        ranked = (
            sa.select(
                group.label("g"),
                datasets.c.name,
                entries.c.score,
                entries.c.importance,
                priority.label("priority"),
                sa.func.row_number()
                .over(partition_by=group, order_by=(priority.desc(), datasets.c.name))
                .label("n"),
            )
            .select_from(source)
            .where(scored)
            .subquery()
        )
        with self._transaction() as connection:
            groups = connection.execute(
                sa.select(
                    group.label("g"),
                    (sa.func.sum(entries.c.score * weight) / sa.func.sum(weight)).label("score"),
                    sa.func.count().label("n"),
                )
                .select_from(source)
                .where(scored)
                .group_by(group)
                .order_by(group)
            ).all()
            top = connection.execute(
                sa.select(ranked).where(ranked.c.n <= FIX_FIRST).order_by(ranked.c.g, ranked.c.n)
            ).all()
        fix: dict[str, list[dict[str, Any]]] = {}
        for r in top:
            fix.setdefault(r.g, []).append(
                {
                    "dataset": r.name,
                    "score": r.score,
                    "importance": r.importance,
                    "priority": round(float(r.priority), 1),
                }
            )
        return [
            {
                "by": by,
                "group": g.g,
                "score": round(float(g.score), 1),
                "datasets": int(g.n),
                "fix_first": fix.get(g.g, []),
            }
            for g in sorted(groups, key=lambda g: str(g.g))
        ]


_COLUMNS = (
    "score",
    "health",
    "enrichment",
    "importance",
    "tier",
    "team",
    "owner",
    "description",
    "schema_name",
    "search",
    "badge",
    "open_incidents",
    "last_run_at",
    "loaded_at",
    "document",
    "computed_at",
)


def _ordered(column: Any, descending: bool) -> list[Any]:
    """Ascending with nulls first (Python's ``None`` as the smallest key), or the reverse."""
    return [sa.nulls_last(column.desc()) if descending else sa.nulls_first(column.asc())]


# How each sort of the catalog orders the entries (ties by name), as the catalog's own sorts did.
_SORTS: dict[str, Any] = {
    "name": lambda t, d: [],
    "score": lambda t, d: _ordered(t.c.score, d),
    "tier": lambda t, d: _ordered(sa.func.coalesce(t.c.tier, 99), d),
    "incidents": lambda t, d: _ordered(t.c.open_incidents, d),
    "last_run": lambda t, d: _ordered(t.c.last_run_at, d),
    # by the latest load's age: the most recent load first, a dataset never loaded last
    "freshness": lambda t, d: [
        sa.nulls_first(t.c.loaded_at.asc()) if d else sa.nulls_last(t.c.loaded_at.desc())
    ],
}
SORTS = tuple(_SORTS)


def _where(filters: Filters) -> sa.ColumnElement[bool]:
    entries, tags = schema.catalog_entries, schema.catalog_tags
    clauses: list[sa.ColumnElement[bool]] = []
    for word in (filters.q or "").lower().split():
        clauses.append(
            sa.func.coalesce(entries.c.search, sa.func.lower(schema.datasets.c.name)).contains(
                word, autoescape=True
            )
        )
    if filters.tier is not None:
        clauses.append(entries.c.tier == filters.tier)
    if filters.tag:
        clauses.append(
            sa.exists().where(tags.c.dataset_id == schema.datasets.c.id, tags.c.tag == filters.tag)
        )
    if filters.owner:
        clauses.append(entries.c.team == filters.owner)
    if filters.badge:
        clauses.append(sa.func.coalesce(entries.c.badge, "none") == filters.badge)
    if filters.min_score is not None:
        clauses.append(entries.c.score >= filters.min_score)
    if filters.max_score is not None:
        clauses.append(entries.c.score <= filters.max_score)
    if filters.leave:
        clauses.append(schema.datasets.c.name.not_in(list(filters.leave)))
    return sa.and_(sa.true(), *clauses)


def _entry(row: Any, tags: tuple[str, ...]) -> Entry:
    return Entry(
        name=row.name,
        score=row.score,
        health=row.health,
        enrichment=row.enrichment,
        importance=row.importance,
        tier=row.tier,
        team=row.team,
        owner=row.owner,
        description=row.description,
        schema_name=row.schema_name or "(none)",
        tags=tags,
        badge=row.badge,
        open_incidents=int(row.open_incidents or 0),
        last_run_at=row.last_run_at,
        loaded_at=row.loaded_at,
        document=row.document,
        computed_at=row.computed_at,
        search=row.search or "",
    )


def _ids(connection: Connection, names: Sequence[str]) -> dict[str, int]:
    found = connection.execute(
        sa.select(schema.datasets.c.name, schema.datasets.c.id).where(schema.datasets.c.name.in_(list(names)))
    )
    return {str(name): int(i) for name, i in found}


def _rows(store: _Store, query: Any) -> list[Any]:
    with store._transaction() as connection:
        return list(connection.execute(query).all())


def _chunks(names: Sequence[str], size: int = 500) -> list[Sequence[str]]:
    return [names[i : i + size] for i in range(0, len(names), size)]
