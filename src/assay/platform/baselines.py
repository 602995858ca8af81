"""One clean history: a load whose metric raised a hard alert or failed an expectation stays out
of every later baseline until a person accepts it.

Each flow says here what its failures keep out (:func:`profile_holds`, :func:`check_holds`,
:func:`rule_holds`); the store keeps them as ``held`` marks (:mod:`assay.store.baselines`) and
every history read leaves them out. A person then decides, audited in the same transaction:

- :func:`accept` (``assay accept``, the web's "Accept" button): the load is normal after all and
  comes back in; with ``new_normal`` the load starts a new level: it and the held loads after it
  come in, and every load before it leaves that metric's baselines;
- an incident's resolution (:func:`settle_incident`): ``false_alarm`` accepts its loads,
  ``new_normal`` accepts them as a new normal from its first failure, ``real_issue`` and
  ``expected_change`` keep them out for good.

>>> [h.pattern for h in profile_holds([("null_rate", "dep_time", "hard"), ("volume", None, "soft")])]
[('Column', 'dep_time', '*')]
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any

from assay.errors import ConfigError
from assay.store.baselines import Hold, Mark
from assay.store.checks import group_key

_PROFILE_KEY = re.compile(r"profile:(?P<kind>[a-z_]+)(?:\((?P<column>.*)\))?", re.DOTALL)


def profile_holds(alerts: Iterable[tuple[str, str | None, str]]) -> list[Hold]:
    """A profile's hard alerts (``(kind, column, severity)``): a column's keep every metric of
    that column out, a load's (volume) the load's own metrics (and with its row count, every
    rate over its rows). A soft alert is worth a look, not an incident: it keeps nothing out."""
    return [
        Hold(kind, "Column", column) if column else Hold(kind, "Dataset")
        for kind, column, severity in alerts
        if severity == "hard"
    ]


def check_holds(
    outcomes: Sequence[Mapping[str, Any]],
    reads: Mapping[str, Sequence[tuple[str, str, str]]],
    unread: Collection[tuple[str, str]] = (),
) -> list[Hold]:
    """A check run's enforced failures (of one profile): each keeps out the metrics
    it read (``reads``: expectation id → its metric keys; a metric expectation's ``by:`` group is
    taken from its outcome). Advisory expectations tell nobody, so they keep nothing out, and
    neither does a failure against a history that was empty (``unread``: (expectation, group
    instance)): it failed for want of a past, and holding it would keep the history empty.

    >>> check_holds([{"expectation": "rows", "outcome": "failed", "mode": "enforce", "group": None}],
    ...             {"rows": [("Dataset", "*", "row_count")]})
    [Hold(kind='rows', entity='Dataset', instance='*', name='row_count')]
    """
    holds = []
    for item in outcomes:
        if item.get("outcome") != "failed" or item.get("mode") != "enforce":
            continue
        expectation = str(item["expectation"])
        for entity, instance, name in reads.get(expectation, ()):
            if item.get("group"):
                entity, instance = "Group", group_key(item["group"])
            if (expectation, instance) not in unread:
                holds.append(Hold(expectation, entity, instance, name))
    return holds


def rule_holds(rules: Iterable[tuple[str, str, Iterable[tuple[str, str, str]]]]) -> list[Hold]:
    """A DQDL run's failed rules (``(rule text, outcome, the metric keys it read)``): each keeps
    the metrics it read out.

    >>> rule_holds([("RowCount > avg(last(3))", "failed", [("Dataset", "*", "RowCount")])])
    [Hold(kind='RowCount > avg(last(3))', entity='Dataset', instance='*', name='RowCount')]
    """
    return [
        Hold(text, entity, instance, name)
        for text, outcome, keys in rules
        if outcome == "failed"
        for entity, instance, name in keys
    ]


def rule_keys(compiled: Any) -> list[tuple[str, str, str]]:
    """The metric keys a compiled DQDL rule stores and reads (:class:`~assay.rules.compiler.CompiledRule`)."""
    return [
        (spec.stored.entity, spec.stored.instance, spec.stored.name)
        for plan in compiled.leaves.values()
        for spec in plan.metrics
    ]


# --- what people decide ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Accepted:
    """What an acceptance did: the marks it took back in, and how many loads left the baselines
    of their metrics (a new normal's earlier loads)."""

    dataset: str
    marks: list[Mark]
    left_out: int
    new_normal: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "accepted": [m.to_dict() for m in self.marks],
            "left_out_of_baselines": self.left_out,
            "new_normal": self.new_normal,
        }


def accept(
    store: Any,
    dataset: str,
    *,
    on: date,
    by: str,
    now: datetime,
    column: str | None = None,
    kind: str | None = None,
    new_normal: bool = False,
    note: str | None = None,
) -> Accepted:
    """Accept the held loads of ``dataset`` dated ``on`` (only ``column``'s, only ``kind``'s when
    given) back into the baselines; with ``new_normal`` as the first load of a new level: the held
    loads after it of the same metrics come in too, and the loads before it leave those metrics'
    baselines. With its audit row (``baseline.accept``), in one transaction, whoever calls.

    Nothing held there is a :class:`ConfigError` naming what is held.
    """
    with store.transaction():
        held = store.baseline_marks(dataset, states=("held",))
        chosen = [
            m
            for m in held
            if (m.logical_date or m.logical_time.date()) == on
            and (column is None or m.hold.instance == column)
            and (kind is None or m.hold.kind == kind)
        ]
        left = 0
        if chosen and new_normal:
            chosen += [
                m
                for m in held
                if m not in chosen
                and any(
                    m.hold == c.hold and m.partition == c.partition and m.logical_time > c.logical_time
                    for c in chosen
                )
            ]
            left = _new_normal(store, dataset, _starts(chosen), by=by, now=now, note=note)
        elif new_normal and (soft := _soft_starts(store, dataset, on, column, kind)):
            left = _new_normal(store, dataset, soft, by=by, now=now, note=note)
        elif not chosen:
            raise ConfigError(_nothing_held(dataset, on, column, kind, held))
        store.settle_marks(chosen, "accepted", by=by, at=now, note=note)
        done = Accepted(dataset, _decided(chosen, by, now, note), left, new_normal)
        store.audit(
            by,
            "baseline.accept",
            f"{dataset}@{on.isoformat()}",
            dataset=dataset,
            detail={
                "load_date": on.isoformat(),
                "column": column,
                "kind": kind,
                "new_normal": new_normal,
                "accepted": len(chosen),
                "left_out_of_baselines": left,
                "note": note,
            },
        )
    return done


def _starts(marks: Iterable[Mark]) -> list[tuple[str, Hold, datetime]]:
    """Where a new normal starts on held loads: each mark's partition, hold and logical time."""
    return [(m.partition, m.hold, m.logical_time) for m in marks]


def _soft_starts(
    store: Any, dataset: str, on: date, column: str | None, kind: str | None
) -> list[tuple[str, Hold, datetime]]:
    """Where a new normal starts on a load that holds nothing: its alerts were soft (a soft alert
    keeps nothing out, :func:`profile_holds`), yet the person says its level is the new one, so
    the metrics those alerts judged (``column``'s, ``kind``'s when given) start again from it, as
    for a held load. Empty when the load raised no alert there."""
    return [
        (info.partition, hold, info.logical_time)
        for info, judgement in store.judgements(dataset, column=column, kind=kind)
        if info.logical_date == on and judgement.severity is not None
        for hold in profile_holds([(judgement.kind, judgement.column, "hard")])
    ]


def _new_normal(
    store: Any,
    dataset: str,
    starts: Iterable[tuple[str, Hold, datetime]],
    *,
    by: str,
    now: datetime,
    note: str | None,
) -> int:
    """The loads before each metric's first new-normal load (``starts``: its partition, its
    hold, the load's logical time) leave that metric's baselines."""
    first: dict[tuple[str, Hold], datetime] = {}
    for partition, hold, since in starts:
        key = (partition, hold)
        first[key] = min(first.get(key, since), since)
    left = 0
    why = note or "before a new normal"
    for (partition, hold), since in first.items():
        left += store.leave_out_before(
            dataset, [hold], partition=partition, before=since, by=by, at=now, note=why
        )
    return left


def _decided(marks: Sequence[Mark], by: str, now: datetime, note: str | None) -> list[Mark]:
    return [replace(m, state="accepted", decided_by=by, decided_at=now, note=note) for m in marks]


def _nothing_held(dataset: str, on: date, column: str | None, kind: str | None, held: Sequence[Mark]) -> str:
    where = "".join([f", column {column}" if column else "", f", kind {kind}" if kind else ""])
    dates = sorted({(m.logical_date or m.logical_time.date()).isoformat() for m in held})
    known = f"; held loads: {', '.join(dates[-10:])}" if dates else "; no load of it is held"
    return f"dataset '{dataset}' has no load held out of its baselines on {on.isoformat()}{where}{known}"


def settle_incident(store: Any, incident: Any, cause: str, *, by: str, now: datetime) -> tuple[int, int]:
    """What an incident's resolution does to its loads' baselines (call inside its transaction):
    ``false_alarm`` accepts them, ``new_normal`` accepts them as a new normal from its first
    failure, ``real_issue`` and ``expected_change`` keep them out for good. Returns how many loads
    left the baselines and how many marks were accepted."""
    runs = store.incident_run_ids(incident.id)
    kind, column = incident_kind(incident.expectation)
    marks = [
        m
        for m in store.baseline_marks(incident.dataset, states=("held",), run_ids=runs)
        if m.hold.kind == kind and (column is None or m.hold.instance == column)
    ]
    if cause == "false_alarm":
        store.settle_marks(marks, "accepted", by=by, at=now, note=cause)
        return 0, len(marks)
    if cause == "new_normal":
        if not marks:  # nothing held (a flow that holds nothing): the loads before it leave whole
            left = store.leave_loads_out(
                incident.dataset, incident.expectation, before=incident.opened_at, by=by, at=now
            )
            return left, 0
        left = _new_normal(store, incident.dataset, _starts(marks), by=by, now=now, note=cause)
        store.settle_marks(marks, "accepted", by=by, at=now, note=cause)
        return left, len(marks)
    if marks:
        store.settle_marks(marks, "left_out", by=by, at=now, note=cause)
        return len({m.load_id for m in marks}), 0
    if cause == "expected_change":  # nothing held: its loads leave whole, as they always did
        return store.leave_loads_out(incident.dataset, incident.expectation, run_ids=runs, by=by, at=now), 0
    return 0, 0


def incident_kind(expectation: str) -> tuple[str, str | None]:
    """The mark ``kind`` (and column) an incident's key holds: a profile's ``profile:<kind>(<column>)``,
    else the expectation id or the DQDL rule itself.

    >>> incident_kind("profile:null_rate(dep_time)"), incident_kind("profile:volume"), incident_kind("rows")
    (('null_rate', 'dep_time'), ('volume', None), ('rows', None))
    """
    found = _PROFILE_KEY.fullmatch(expectation)
    if found is None:
        return expectation, None
    return found["kind"], found["column"]


__all__ = [
    "Accepted",
    "accept",
    "check_holds",
    "incident_kind",
    "profile_holds",
    "rule_holds",
    "rule_keys",
    "settle_incident",
]
