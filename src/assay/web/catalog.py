"""The catalog: every dataset and event the workspace knows, each with its score and its parts,
tier, owners, badge, open incidents, freshness and last run; filtered, sorted, cut into pages,
and rolled up by tag and by schema.

Datasets' scores are the store's kept scores (docs/scores.md, "Kept scores"): a page is one
store query, and a read first computes the entries a write left stale (usually none: a run
computes its own). Events, few, are scored at the plane's clock per request.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from assay.errors import ConfigError
from assay.web.paging import Page
from assay.web.plane import Plane, one_transaction

KINDS = ("dataset", "event")


def subjects(plane: Plane) -> list[Any]:
    """Every dataset to list: those with a check document and those the store knows, events left
    out (they have their own entries), as :func:`assay.platform.scores.subjects` finds them."""
    from assay.platform.scores import Subject

    documents = plane.check_documents()
    events = set(plane.events())
    found = {name: Subject(name, document, path) for name, (path, document) in documents.items()}
    for name in plane.store.dataset_names():
        if name not in found and name not in events:
            found[name] = Subject(name)
    return [found[n] for n in sorted(found)]


def subject(plane: Plane, name: str) -> Any:
    """The dataset called ``name`` (a :class:`NotFound` when the workspace knows none)."""
    from assay.platform.scores import Subject
    from assay.web.plane import NotFound

    # one name looked up, not every dataset listed: a dataset page at 10,000 datasets
    found = plane.document(name)
    if found is not None:
        return Subject(name, found[1], found[0])
    if name not in plane.events() and name in plane.store.entry_versions([name]):
        return Subject(name)
    raise NotFound(f"no dataset {name!r}")


def dataset_entry(
    plane: Plane, s: Any, score: Any, activity: Any, now: datetime, badge: str | None = None
) -> dict[str, Any]:
    """One dataset as the catalog lists it (``badge``: its current badge when read already, ""
    for none)."""
    document = s.document
    owners = document.dataset.owners if document is not None else None
    if badge is None:
        history = plane.store.badge_history(s.name)
        badge = history[-1].badge if history else ""
    return {
        "name": s.name,
        "kind": "dataset",
        "description": None if document is None else document.dataset.description,
        "score": _score_parts(score),
        "tier": s.tier,
        "owners": {"team": owners.team, "contact": owners.contact}
        if owners
        else {"team": None, "contact": None},
        "tags": list(s.tags),
        "schema": s.schema,
        "badge": badge or None,
        "open_incidents": activity.open_incidents if activity else 0,
        "freshness": _freshness(activity, now),
        "last_run": _last_run(activity),
        "expectations": 0 if document is None else len(document.expectations),
        "document": None if s.path is None else plane.relative(s.path),
    }


def event_entry(plane: Plane, event: Any, activity: Any, now: datetime) -> dict[str, Any]:
    """One event as the catalog lists it, with its Event Quality Score."""
    from assay.platform.events.score import event_score

    found = event_score(plane.store, plane.root, event.name, now=now, contracts=_contracts(plane))
    return {
        "name": event.name,
        "kind": "event",
        "description": event.description,
        "score": {"score": found["score"], "health": None, "enrichment": None, "importance": None},
        "tier": event.tier,
        "owners": {"team": event.producer, "contact": None},
        "tags": list(event.tags),
        "schema": event.name.rsplit(".", 1)[0] if "." in event.name else "(none)",
        "badge": None,
        "open_incidents": activity.open_incidents if activity else 0,
        "freshness": _freshness(activity, now),
        "last_run": _last_run(activity),
        "expectations": sum(len(i.contract.requirements()) for i in event.contracts),
        "document": plane.relative(event.contracts[0].file) if event.contracts else None,
        "gate": found["gate"],
        "below_gate": found["below_gate"],
    }


@one_transaction
def catalog(
    plane: Plane,
    *,
    q: str | None = None,
    kind: str | None = None,
    tier: int | None = None,
    tag: str | None = None,
    owner: str | None = None,
    badge: str | None = None,
    sort: str = "name",
    descending: bool = False,
    page: Page | None = None,
    min_score: float | None = None,
    max_score: float | None = None,
) -> dict[str, Any]:
    """The catalog's JSON: a page of entries, the filters applied, and the rollups of every
    dataset (not only the page's) by tag and by schema.

    The datasets' entries are read from the store's kept entries (:mod:`assay.platform.entries`):
    the filters, the order and the page are one store query, and only the page's datasets are
    read further. The stale entries are refreshed first (usually none: a run refreshes its own)."""
    from assay.platform.entries import Filters, refresh_stale

    if sort not in SORTS:
        raise ConfigError(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
    if kind is not None and kind not in KINDS:
        raise ConfigError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    page = page or Page()
    now = plane.clock()
    events = plane.events()
    documents = plane.check_documents()
    refresh_stale(plane.store, documents, now=now, leave=list(events))
    scores = (min_score, max_score)
    filters = Filters(q, tier, tag, owner, badge, min_score, max_score, leave=tuple(events))
    shown: list[dict[str, Any]] = []
    if kind != "dataset" and events:
        activity = plane.store.activity(list(events))
        shown = [event_entry(plane, e, activity.get(e.name), now) for e in events.values()]
        shown = [e for e in shown if _matches(e, q, kind, tier, tag, owner, badge, scores)]
    if kind == "event":
        total, rows = 0, []
    elif not shown:
        total, rows = plane.store.catalog_page(
            filters, sort=sort, descending=descending, offset=page.offset, limit=page.limit
        )
    else:  # events are few: merged into the datasets of every page up to this one
        total, rows = plane.store.catalog_page(
            filters, sort=sort, descending=descending, offset=0, limit=page.offset + page.limit
        )
    chosen = [*(_light(r, now) for r in rows), *shown]
    if shown:
        chosen.sort(key=_sort_key(sort), reverse=descending)
        chosen = page.cut(chosen)
    out = page.wrap(_complete(plane, chosen, documents, now), total=total + len(shown))
    out["filters"] = {
        "q": q,
        "kind": kind,
        "tier": tier,
        "tag": tag,
        "owner": owner,
        "badge": badge,
        "sort": sort,
        "descending": descending,
        "min_score": min_score,
        "max_score": max_score,
    }
    (tags, teams), rollups = plane.catalog_summary(lambda: _summary(plane.store))
    out["tags"] = sorted({*tags, *(t for e in shown for t in e["tags"])})
    out["owners"] = sorted({*teams, *(e["owners"]["team"] for e in shown if e["owners"]["team"])})
    out["rollups"] = rollups
    out["now"] = now.isoformat()
    return out


def _summary(store: Any) -> tuple[Any, dict[str, Any]]:
    """The catalog's facets (every tag and team) and its rollups by tag and by schema."""
    return store.catalog_facets(), {
        "tag": store.catalog_rollup("tag"),
        "schema": store.catalog_rollup("schema"),
    }


def _light(entry: Any, now: datetime) -> dict[str, Any]:
    """A kept entry with what ordering it needs (the page's are completed by :func:`_complete`)."""
    age = (
        None
        if entry.loaded_at is None
        else round(max((now - entry.loaded_at).total_seconds() / 3600, 0.0), 1)
    )
    return {
        "name": entry.name,
        "kind": "dataset",
        "entry": entry,
        "description": entry.description,
        "score": {
            "score": entry.score,
            "health": entry.health,
            "enrichment": entry.enrichment,
            "importance": entry.importance,
        },
        "tier": entry.tier,
        "owners": {"team": entry.team},
        "tags": list(entry.tags),
        "badge": entry.badge,
        "open_incidents": entry.open_incidents,
        "freshness": {"age_hours": age},
        "last_run": None if entry.last_run_at is None else {"started_at": entry.last_run_at.isoformat()},
    }


def _complete(
    plane: Plane, chosen: list[dict[str, Any]], documents: dict[str, Any], now: datetime
) -> list[dict[str, Any]]:
    """The page's datasets as :func:`dataset_entry` shows them: their activity read for them alone."""
    from assay.platform.scores import Subject

    names = [e["name"] for e in chosen if e["kind"] == "dataset"]
    activity = plane.store.activity(names) if names else {}
    out = []
    for e in chosen:
        if e["kind"] != "dataset":
            out.append(e)
            continue
        kept = e["entry"]
        path, document = documents.get(kept.name, (None, None))
        out.append(
            dataset_entry(
                plane,
                Subject(kept.name, document, path),
                kept,
                activity.get(kept.name),
                now,
                kept.badge or "",
            )
        )
    return out


def _score_parts(score: Any) -> dict[str, Any]:
    return {
        "score": score.score,
        "health": score.health,
        "enrichment": score.enrichment,
        "importance": score.importance,
    }


def _freshness(activity: Any, now: datetime) -> dict[str, Any]:
    if activity is None or activity.last_loaded_at is None:
        return {"last_load": None, "loaded_at": None, "age_hours": None}
    age = (now - activity.last_loaded_at).total_seconds() / 3600
    return {
        "last_load": None if activity.last_load_date is None else activity.last_load_date.isoformat(),
        "loaded_at": activity.last_loaded_at.isoformat(),
        "age_hours": round(max(age, 0.0), 1),
    }


def _last_run(activity: Any) -> dict[str, Any] | None:
    if activity is None or activity.last_run is None:
        return None
    run = activity.last_run.to_dict()
    shown = {k: run[k] for k in ("id", "kind", "state", "started_at", "finished_at", "at")}
    return {**shown, "evaluated_nothing": _evaluated_nothing(activity.last_run)}


def _evaluated_nothing(run: Any) -> bool:
    """Whether a completed check run judged no enforced expectation (its day's rows never came):
    the catalog shows it as "evaluated nothing", never as a green ``completed``."""
    counts = (run.summary or {}).get("summary")
    if run.kind != "check" or run.state != "completed" or not isinstance(counts, dict):
        return False
    return not (counts.get("passed") or counts.get("failed"))


def _contracts(plane: Plane) -> Sequence[Any]:
    """Every contract of the workspace, as the event score reads them (the files are parsed once)."""
    return [c for e in plane.events().values() for c in e.contracts]


def _matches(
    entry: dict[str, Any],
    q: str | None,
    kind: str | None,
    tier: int | None,
    tag: str | None,
    owner: str | None,
    badge: str | None,
    scores: tuple[float | None, float | None] = (None, None),
) -> bool:
    if q:
        words = q.lower().split()
        text = " ".join(
            str(x or "")
            for x in (entry["name"], entry["description"], entry["owners"]["team"], " ".join(entry["tags"]))
        ).lower()
        if not all(w in text for w in words):
            return False
    if kind and entry["kind"] != kind:
        return False
    if tier is not None and entry["tier"] != tier:
        return False
    if tag and tag not in entry["tags"]:
        return False
    if owner and entry["owners"]["team"] != owner:
        return False
    score = entry["score"]["score"]
    if scores[0] is not None and (score is None or score < scores[0]):
        return False
    if scores[1] is not None and (score is None or score > scores[1]):
        return False
    return not (badge and (entry["badge"] or "none") != badge)


def _age(entry: dict[str, Any]) -> float:
    age = entry["freshness"]["age_hours"]
    return float("inf") if age is None else float(age)


# How each sort orders the entries (ties by name).
_SORT_KEYS: dict[str, Any] = {
    "name": lambda e: (),
    "score": lambda e: (e["score"]["score"],),
    "tier": lambda e: (99 if e["tier"] is None else e["tier"],),
    "incidents": lambda e: (e["open_incidents"],),
    "last_run": lambda e: ((e["last_run"] or {}).get("started_at") or "",),
    "freshness": lambda e: (_age(e),),
}
SORTS = tuple(_SORT_KEYS)


def _sort_key(sort: str) -> Any:
    first = _SORT_KEYS[sort]
    return lambda entry: (*first(entry), entry["name"])
