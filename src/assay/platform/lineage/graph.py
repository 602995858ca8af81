"""The lineage graph: which datasets a dataset reads from and which read from it, transitively.

One graph for every flow and the web: the store's edges (:mod:`assay.store.lineage`), declared
by check documents (``dataset.upstream``) and learned from OpenLineage events posted to
``assay serve``, both kinds alike. A walk visits each dataset once, so a cycle (two jobs that
feed each other) ends it instead of looping; the dataset itself is never in its own answer.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any


def upstream(store: Any, dataset: str) -> list[str]:
    """Every dataset ``dataset`` reads from, directly or through others, nearest first.

    >>> from assay.store import MetricStore
    >>> from datetime import UTC, datetime
    >>> at = datetime(2026, 12, 1, tzinfo=UTC)
    >>> with MetricStore.open("sqlite://") as store:
    ...     store.declare_upstream("silver", ["bronze"], at=at)
    ...     _ = store.learn_edges([("silver", "gold"), ("gold", "bronze")], job="etl", at=at)
    ...     upstream(store, "gold"), downstream(store, "bronze")
    (['silver', 'bronze'], ['silver', 'gold'])
    """
    return walk(_edges(store, reverse=True), dataset)


def downstream(store: Any, dataset: str) -> list[str]:
    """Every dataset that reads from ``dataset``, directly or through others, nearest first."""
    return walk(_edges(store, reverse=False), dataset)


def connected_to(store: Any, dataset: str) -> list[str]:
    """Every dataset upstream or downstream of ``dataset`` (upstream first), the edges read once."""
    edges = store.lineage_edges()
    above: dict[str, set[str]] = defaultdict(set)
    below: dict[str, set[str]] = defaultdict(set)
    for edge in edges:
        above[edge.downstream].add(edge.upstream)
        below[edge.upstream].add(edge.downstream)
    up = walk(above, dataset)
    return [*up, *(name for name in walk(below, dataset) if name not in up)]


def walk(edges: Mapping[str, Iterable[str]], start: str) -> list[str]:
    """Breadth first from ``start`` along ``edges``, each dataset once, ``start`` never.

    >>> walk({"a": ["b"], "b": ["c", "a"], "c": ["a"]}, "a")
    ['b', 'c']
    """
    seen, out, frontier = {start}, [], [start]
    while frontier:
        following = []
        for name in frontier:
            for found in sorted(edges.get(name, ())):
                if found not in seen:
                    seen.add(found)
                    out.append(found)
                    following.append(found)
        frontier = following
    return out


def _edges(store: Any, *, reverse: bool) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for edge in store.lineage_edges():
        if reverse:
            out[edge.downstream].add(edge.upstream)
        else:
            out[edge.upstream].add(edge.downstream)
    return out
