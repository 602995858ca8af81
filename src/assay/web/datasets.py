"""A dataset as the control plane shows it: its overview (why its score is what it is, owners,
schedule and freshness promise, certification checklist), its Quality tab (expectations grouped
by quality dimension, each with its latest outcomes), its profile (column statistics, value sets,
pending new-value decisions), and one expectation's history (the metric, its band, its failures).

Everything is read from the store and the check document; nothing here touches the data.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from assay.errors import ConfigError
from assay.web.catalog import dataset_entry, subject
from assay.web.paging import Page
from assay.web.plane import NotFound, Plane, one_transaction

STRIP = 15
"""How many of an expectation's latest runs its strip shows."""

DIMENSIONS = ("freshness", "volume", "completeness", "uniqueness", "validity")

STATE_ORDER = ("failed", "system_error", "config_error", "skipped", "passed")
"""Which outcome a run's cell shows when an expectation judged several groups in it: a failure is
a statement about the data and comes first; then what could not run; then skips; passed only
when every group passed."""

# How an outcome cell of a strip is drawn: its word, and a symbol that does not need colour.
MARKS = {
    "passed": "✓",
    "failed": "✗",
    "config_error": "⚙",
    "system_error": "!",
    "skipped": "–",
}


@one_transaction
def overview(plane: Plane, name: str) -> dict[str, Any]:
    """The dataset's overview page as JSON."""
    from assay.platform.lineage.graph import downstream, upstream
    from assay.platform.scores import score_dataset

    s = subject(plane, name)
    now = plane.clock()
    score = score_dataset(s, plane.store, now=now)
    activity = plane.store.activity([name]).get(name)
    entry = dataset_entry(plane, s, score, activity, now)
    document = s.document
    out: dict[str, Any] = {
        **entry,
        "why": list(score.why),
        "components": score.components,
        "author": None if document is None else document.dataset.author,
        "source": None if document is None else document.dataset.source.describe(),
        "consumers": [] if document is None else [c.model_dump() for c in document.dataset.consumers],
        # what it reads and what reads it: the lineage graph's, declared and learned (lineage.md)
        "upstream": upstream(plane.store, name),
        "downstream": downstream(plane.store, name),
        "columns_described": {} if document is None else dict(document.dataset.columns),
        "schedules": [] if document is None else _schedules(document),
        "sla": [] if document is None else _sla(document),
        "certification": _certification(plane, s, score, now),
        "incidents": [
            _incident_line(i)
            for i in plane.store.incidents(
                dataset=name, states=["open", "acknowledged", "muted"], layers=True
            )
        ],
        "recent_runs": [r.to_dict() for r in plane.store.run_page(dataset=name, limit=5)[0]],
        "changes": [a.to_dict() for a in plane.store.audit_trail(dataset=name, limit=10)[0]],
        "now": now.isoformat(),
    }
    return out


@one_transaction
def quality(plane: Plane, name: str) -> dict[str, Any]:
    """The Quality tab: the document's expectations grouped by quality dimension, each with its
    latest :data:`STRIP` outcomes, observed against expected, mode, severity and owner; then the
    rules of DQDL runs and of the gate, when the dataset has them."""
    from assay.platform.incidents import dimension_of

    s = subject(plane, name)
    document = s.document
    groups: dict[str, list[dict[str, Any]]] = {d: [] for d in DIMENSIONS}
    if document is not None:
        outcomes = _by_expectation(plane, name)
        team = document.dataset.owners.team or document.dataset.owners.contact
        for e in document.expectations:
            dimension = dimension_of(e.metric, e.rule, e.dimension)
            runs = outcomes.get(e.id, [])
            latest = runs[-1][1] if runs else []
            groups.setdefault(dimension, []).append(
                {
                    "id": e.id,
                    "description": e.description,
                    "metric": e.metric,
                    "expect": e.expect,
                    # a freshness is an age in seconds: the page shows it as a duration
                    "unit": "seconds" if e.metric and e.reference.metric == "freshness" else None,
                    "rule": e.rule,
                    "by": list(e.by),
                    "severity": e.severity,
                    "mode": e.mode,
                    "owner": e.owner or team,
                    "tags": list(e.tags),
                    "strip": [_cell(at, run_id, cell) for (at, run_id), cell in runs],
                    "latest": [p.to_dict() for p in latest],
                    "failing_groups": sum(1 for p in latest if p.group and p.outcome == "failed"),
                }
            )
    return {
        "dataset": name,
        "has_document": document is not None,
        "document": None if s.path is None else plane.relative(s.path),
        "dimensions": [{"dimension": d, "expectations": items} for d, items in groups.items() if items],
        "rules": _dqdl_rules(plane, name),
        "gate": _gate_rules(plane, name),
        "marks": MARKS,
    }


@one_transaction
def profile(plane: Plane, name: str, *, page: Page | None = None) -> dict[str, Any]:
    """The dataset's latest profile (the drift monitor's: every column's statistics and what it
    was judged against), its value sets, a page of its pending new-value decisions, and what is
    held out of later baselines until a person accepts it (``held``)."""
    subject(plane, name)
    page = page or Page()
    found = plane.store.latest_profile(name)
    columns: list[dict[str, Any]] = []
    if found is not None:
        judged: dict[str, list[Any]] = defaultdict(list)
        for j in found["judgements"]:
            judged[j.column].append(j)
        metrics = found["metrics"]
        for column, type_ in found["columns"]:

            def metric(key: str, column: str = column) -> float | None:
                value = metrics.get(("Column", column, key))
                return None if value is None else float(value)

            columns.append(
                {
                    "column": column,
                    "type": type_,
                    "null_rate": metric("NullRate"),
                    "nulls": metric("NullCount"),
                    "blanks": metric("BlankCount"),
                    "distinct": metric("DistinctValuesCount") or metric("ApproxDistinctValuesCount"),
                    "min": metric("Minimum"),
                    "max": metric("Maximum"),
                    "mean": metric("Mean"),
                    "alerts": [
                        {"kind": j.kind, "severity": j.severity, "message": j.message}
                        for j in judged.get(column, [])
                        if j.severity
                    ],
                }
            )
        volume = [j for j in judged.get("", []) if j.kind == "volume"]
    else:
        volume = []
    ids, total = plane.store.decision_page(
        dataset=name, status="pending", limit=page.limit, offset=page.offset
    )
    from assay.web.operations import decision_json

    decisions = [decision_json(plane.store.decision(i)) for i in ids]
    return {
        "dataset": name,
        "load": None
        if found is None
        else {
            "logical_date": None if found["logical_date"] is None else found["logical_date"].isoformat(),
            "rows": found["row_count"],
            "volume": [{"severity": j.severity, "message": j.message} for j in volume],
        },
        "columns": columns,
        "value_sets": [{"column": c, "values": n} for c, n in plane.store.value_sets(name).items()],
        "decisions": page.wrap(decisions, total=total),
        # what raised a hard alert or failed an expectation and waits for a person
        "held": [m.to_dict() for m in plane.store.baseline_marks(name, states=("held",))],
    }


@one_transaction
def expectation(plane: Plane, name: str, expectation_id: str, *, group: str | None = None) -> dict[str, Any]:
    """One expectation's page: its definition, the metric's recorded series for one group with
    the band each run was judged against and its outcome (the chart), the groups it has, the
    evidence rows of its latest failure, and the outcome states over time."""
    from assay.platform.incidents import dimension_of
    from assay.store.checks import group_key, parse_group_key

    s = subject(plane, name)
    document = s.document
    declared = None
    if document is not None:
        declared = next((e for e in document.expectations if e.id == expectation_id), None)
    wanted = _group(group)
    key = group_key(wanted)
    points, keys = plane.store.expectation_series(name, expectation_id, group_key=key)
    if wanted is None and keys and "" not in keys:
        # judged per group only (``by:``): the page opens on its first group
        key = keys[0]
        wanted = parse_group_key(key)
        points, keys = plane.store.expectation_series(name, expectation_id, group_key=key)
    if declared is None and not points and not keys:
        raise NotFound(f"no expectation {expectation_id!r} of dataset {name!r}")
    if not points and keys and key not in keys:
        raise NotFound(f"expectation {expectation_id!r} has no group {group!r}")
    series = [_chart_point(p) for p in points]
    failed = [p for p in points if p.outcome == "failed"]
    evidence = (failed[-1].detail or {}) if failed else {}
    states: dict[str, int] = defaultdict(int)
    for p in points:
        states[p.outcome] += 1
    definition = None
    if declared is not None:
        definition = {
            "metric": declared.metric,
            "expect": declared.expect,
            "rule": declared.rule,
            "by": list(declared.by),
            "severity": declared.severity,
            "mode": declared.mode,
            "owner": declared.owner or document.dataset.owners.team,
            "description": declared.description,
            "min_history": declared.min_history,
            "dimension": dimension_of(declared.metric, declared.rule, declared.dimension),
            "history": declared.history,
        }
    return {
        "dataset": name,
        "expectation": expectation_id,
        "definition": definition,
        "group": wanted,
        "groups": [
            {"key": k, "group": parse_group_key(k), "label": _label(parse_group_key(k))} for k in keys
        ],
        "series": series,
        "states": dict(states),
        "evidence": {
            "at": failed[-1].at.isoformat() if failed else None,
            "message": failed[-1].message if failed else None,
            "samples": list(evidence.get("samples") or []),
            "explained_by": list(evidence.get("explained_by") or []),
        },
    }


# --- helpers ---------------------------------------------------------------------------------------


def _by_expectation(plane: Plane, name: str) -> dict[str, list[tuple[tuple[datetime, str], list[Any]]]]:
    """Each expectation's latest runs, oldest first: ((at, run id), its outcomes in that run)."""
    found: dict[str, dict[tuple[datetime, str], list[Any]]] = defaultdict(dict)
    for p in plane.store.recent_outcomes(name, runs=STRIP):
        found[p.expectation].setdefault((p.at, p.run_id), []).append(p)
    return {e: sorted(runs.items(), key=lambda item: item[0][0])[-STRIP:] for e, runs in found.items()}


def _cell(at: datetime, run_id: str, points: list[Any]) -> dict[str, Any]:
    state = min((p.outcome for p in points), key=STATE_ORDER.index)
    shown = next(p for p in points if p.outcome == state)
    return {
        "at": at.isoformat(),
        "run_id": run_id,
        "outcome": state,
        "mark": MARKS[state],
        "groups": len([p for p in points if p.group]),
        "message": shown.message,
        "reason": shown.reason,
    }


def _chart_point(p: Any) -> dict[str, Any]:
    expected = p.expected or {}
    values = expected.get("values") or []
    low = expected.get("low", min(values) if values else None)
    high = expected.get("high", max(values) if values else None)
    return {
        "at": p.at.isoformat(),
        "run_id": p.run_id,
        "observed": p.observed,
        "low": low,
        "high": high,
        "outcome": p.outcome,
        "mode": p.mode,
        "message": p.message,
        "reason": p.reason,
    }


def _group(text: str | None) -> dict[str, str] | None:
    """``region=EU,venue=XPAR`` as a group; None or '' is the total."""
    if not text:
        return None
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"group {text!r}: write KEY=VALUE, several separated by commas")
        out[key.strip()] = value
    return out


def _label(group: dict[str, Any] | None) -> str:
    return "total" if not group else ", ".join(f"{k}={v}" for k, v in group.items())


def _schedules(document: Any) -> list[dict[str, Any]]:
    return [
        {"profile": p.id, "schedule": p.schedule, "timezone": p.timezone, "lag": p.lag}
        for p in document.profiles
        if p.schedule
    ]


def _sla(document: Any) -> list[dict[str, Any]]:
    """What the dataset promises about its freshness: its freshness expectations."""
    from assay.platform.incidents import dimension_of

    return [
        {
            "expectation": e.id,
            "metric": e.metric or e.rule,
            "expect": e.expect,
            "severity": e.severity,
            "mode": e.mode,
        }
        for e in document.expectations
        if dimension_of(e.metric, e.rule, e.dimension) == "freshness"
    ]


def _certification(plane: Plane, s: Any, score: Any, now: datetime) -> dict[str, Any]:
    """The badge as it stands and the checklist at the clock (judged, not recorded: only
    ``assay certify`` moves a badge)."""
    from assay.platform.certify import criteria

    history = plane.store.badge_history(s.name)
    current = history[-1] if history else None
    checklist: list[dict[str, Any]] = []
    note = None
    if s.document is None:
        note = "no check document: certification reads the owner, description, tier and checks from one"
    else:
        checklist = [c.to_dict() for c in criteria(s, plane.store, now=now, score=score)]
    return {
        "badge": None if current is None else current.badge,
        "since": None if current is None else current.at.isoformat(),
        "checklist": checklist,
        "note": note,
        "history": [
            {"badge": h.badge, "at": h.at.isoformat(), "by": h.by, "reason": h.reason} for h in history
        ],
    }


def _incident_line(i: Any) -> dict[str, Any]:
    return {
        "id": i.id,
        "expectation": i.expectation,
        "dimension": i.dimension,
        "group": i.group,
        "state": i.state,
        "severity": i.severity,
        "opened_at": i.opened_at.isoformat(),
        "message": i.message,
    }


def _dqdl_rules(plane: Plane, name: str) -> list[dict[str, Any]]:
    """The rules of the dataset's DQDL runs (``assay dqdl run --dataset``), each with its latest
    outcomes, grouped under the rule's text."""
    from assay.platform.incidents import dimension_of

    strips: dict[str, list[dict[str, Any]]] = {}
    for run, rows in plane.store.rule_outcomes(name, runs=STRIP):
        for row in rows:
            strips.setdefault(row.rule, []).append(
                {
                    "at": run.started_at.isoformat(),
                    "run_id": run.id,
                    "outcome": row.outcome,
                    "mark": MARKS.get(row.outcome, "?"),
                    "message": row.message,
                }
            )
    return [
        {"rule": rule, "dimension": dimension_of(None, rule), "strip": cells}
        for rule, cells in strips.items()
    ]


def _gate_rules(plane: Plane, name: str) -> list[dict[str, Any]]:
    """The gate's rules on the table, each with its row counts in the latest gate runs."""
    runs, _ = plane.store.run_page(dataset=name, kind="gate", state="completed", limit=STRIP)
    rules: dict[str, dict[str, Any]] = {}
    for run in reversed(runs):
        summary = run.summary or {}
        for rule_id, counts in (summary.get("rules") or {}).items():
            item = rules.setdefault(
                rule_id,
                {
                    "rule": rule_id,
                    "severity": counts.get("severity"),
                    "category": counts.get("category"),
                    "strip": [],
                },
            )
            failed = int(counts.get("failed") or 0)
            checked = int(counts.get("passed") or 0) + failed
            state = "failed" if failed else ("passed" if checked else "skipped")
            item["strip"].append(
                {
                    "at": run.started_at.isoformat(),
                    "run_id": run.id,
                    "contributor": summary.get("contributor"),
                    "outcome": state,
                    "mark": MARKS[state],
                    "message": f"{failed} of {checked} rows failed"
                    if checked
                    else "not checked (no baseline)",
                }
            )
    return list(rules.values())
