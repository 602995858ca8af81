"""The catalog's kept entries, refreshed: each dataset's score (docs/scores.md) and what the
catalog filters and sorts on, computed from scratch for the datasets whose inputs changed and
kept in the store (:mod:`assay.store.catalog`), so that the catalog reads scores instead of
computing 10,000 of them per request (0.4 ms each: four seconds).

Every store write to a score's input marks the dataset's entry stale in its own transaction;
:func:`refresh` recomputes the stale ones and keeps each only if no write marked it again
meanwhile. A check document is an input the store does not see (a file): an entry keeps the
stamp of the document it was computed with, and one whose document changed is refreshed too.

>>> import tempfile
>>> from datetime import UTC, datetime
>>> from assay.store import MetricStore
>>> now = datetime(2026, 12, 1, tzinfo=UTC)
>>> with MetricStore.open("sqlite://") as store:
...     _ = store.create_load("sales.orders", logical_time=now)
...     refresh(store, [Subject("sales.orders")], now=now)
...     store.catalog_page(Filters(), sort="name", descending=False, offset=0, limit=5)[1][0].score
1
0.0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from assay.platform.scores import Subject, score_dataset, window
from assay.store.catalog import Entry, Filters

__all__ = [
    "Filters",
    "Subject",
    "document_stamp",
    "refresh",
    "refresh_named",
    "refresh_stale",
    "score_and_keep",
]

BATCH = 500
"""Datasets refreshed per store read: a refresh of 10,000 reads their inputs in 20 batches."""


def document_stamp(path: Path | None) -> str | None:
    """What a check document was when an entry was computed: its path, change time and size."""
    if path is None:
        return None
    try:
        stat = path.stat()
    except OSError:
        return None
    return f"{path.name}:{stat.st_mtime_ns}:{stat.st_size}"


def refresh(store: Any, subjects: Sequence[Subject], *, now: datetime) -> int:
    """Compute and keep the entries of ``subjects`` at ``now``; how many were kept (an entry a
    write made stale again while it was computed is left for the next refresh)."""
    kept = 0
    for start in range(0, len(subjects), BATCH):
        batch = list(subjects[start : start + BATCH])
        names = [s.name for s in batch]
        versions = store.entry_versions(names)
        inputs = store.score_inputs(*window(now), names)
        badges = store.badges(names)
        activity = store.activity(names)
        entries = [
            _entry(s, score_dataset(s, inputs, now=now), badges.get(s.name), activity.get(s.name), now)
            for s in batch
        ]
        kept += store.write_entries(entries, versions)
    return kept


def refresh_stale(
    store: Any, documents: Mapping[str, tuple[Path, Any]], *, now: datetime, leave: Sequence[str] = ()
) -> int:
    """Refresh every entry that is stale, missing, or computed with another version of its check
    document than ``documents`` holds (each dataset's ``(path, document)``, by name, as the
    workspace holds them now); the names in ``leave`` (events) have no entry."""
    kept = store.stale_entries(now)
    names = set(kept) | set(documents)
    chosen = [
        Subject(name, documents[name][1], documents[name][0]) if name in documents else Subject(name)
        for name in sorted(names - set(leave))
        if name not in kept or kept[name] is None or kept[name] != _stamp(documents.get(name))
    ]
    return refresh(store, chosen, now=now) if chosen else 0


def score_and_keep(
    workspace: Path, store: Any, names: Sequence[str] = (), *, now: datetime | None = None
) -> list[Any]:
    """``assay score``: the scores :func:`~assay.platform.scores.score_all` computes and keeps as
    the day's, and the same datasets' catalog entries kept at the same clock (run daily, it leaves
    the catalog's first read of a day nothing to compute)."""
    from datetime import UTC

    from assay.platform.scores import score_all, subjects

    moment = now or datetime.now(UTC)
    found = score_all(workspace, store, names, now=moment)
    refresh(store, subjects(workspace, store, names), now=moment)
    return found


def _stamp(found: tuple[Path, Any] | None) -> str | None:
    return None if found is None else document_stamp(found[0])


def refresh_named(store: Any, workspace: Path, names: Sequence[str], *, now: datetime) -> int:
    """Refresh the entries of the datasets ``names`` (a run's, after it committed), each with its
    check document found by the workspace's one rule: not every document of the workspace parsed
    (a morning of 10,000 runs would parse 10,000 documents per run)."""
    from assay.platform.checks.document import DocumentError, find_document, load_document

    chosen = []
    for name in names:
        path = find_document(workspace / "checks", name)
        try:
            document = None if path is None else load_document(path)
        except DocumentError:
            document = None  # `assay check validate` says what is wrong; scored without it
        chosen.append(Subject(name, document, path if document is not None else None))
    return refresh(store, chosen, now=now)


def _entry(s: Subject, score: Any, badge: Any, activity: Any, now: datetime) -> Entry:
    document = s.document
    team = document.dataset.owners.team if document is not None else None
    description = document.dataset.description if document is not None else None
    search = " ".join(str(x or "") for x in (s.name, description, team, " ".join(s.tags))).lower()
    return Entry(
        name=s.name,
        score=score.score,
        health=score.health,
        enrichment=score.enrichment,
        importance=score.importance,
        tier=s.tier,
        team=team,
        owner=s.owner,
        description=description,
        schema_name=s.schema,
        tags=s.tags,
        badge=None if badge is None else badge.badge,
        open_incidents=activity.open_incidents if activity else 0,
        last_run_at=activity.last_run.started_at if activity and activity.last_run else None,
        loaded_at=activity.last_loaded_at if activity else None,
        document=document_stamp(s.path),
        computed_at=now,
        search=search,
    )
