"""One incident across layers: the same failure in connected datasets is one incident, and the
owners of the datasets downstream of it hear of it once (docs/lineage.md).

*The same failure* is the incident's key: the same expectation id, the same quality dimension
(and the same group, for ``divide_by_group``). *Connected* is the lineage graph
(:mod:`assay.platform.lineage.graph`): upstream or downstream, transitively.

- A failure of a dataset that has no unresolved incident of its key joins, as a layer, the
  unresolved incident of that key on a connected dataset (the earliest opened, if several),
  instead of opening its own. It joins whichever way the failure travelled: gold failing at 06:00
  opens the incident, bronze failing at 07:00 joins it as its upstream layer.
- Each layer's owners are told once per incident: where it opened, ``incident_opened`` (as
  always); a dataset downstream of that one, ``downstream_incident``, when the incident opens or
  when it joins, whichever is first; a layer upstream of it, ``incident_opened`` naming its layer.
- A layer resolves with its incident; the incident resolves when every layer has passed
  :data:`~assay.platform.incidents.keys.PASSES_TO_RESOLVE` evaluations in a row.

The notifications have uuid5 ids of (incident, dataset), go through the same routes and outbox
as every other notification, and are written in the run's commit.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from functools import cached_property
from typing import Any

from assay.platform.incidents.keys import NAMESPACE, PASSES_TO_RESOLVE, Context, Evaluation
from assay.platform.lineage.graph import connected_to, downstream
from assay.store.incidents import IncidentRecord
from assay.store.lineage import Layer


def count(
    store: Any, incident: IncidentRecord, dataset: str, failed: bool, *, at: datetime, run_id: str
) -> Layer | None:
    """``dataset``'s evaluation at ``at`` counted on its layer of ``incident`` (made on its first
    failure): a failure restarts its passes, a pass adds one. None: a re-run or a backfill of
    an evaluation it counted already, which counts nothing, as for the incident itself."""
    kept: list[Layer] = store.incident_layers(incident.id)
    found = next((la for la in kept if la.dataset == dataset), None)
    if found is None:
        found = Layer(incident.id, dataset, first_seen=at, last_seen=at, evaluated_at=at)
    elif at <= found.evaluated_at:
        return None
    found.evaluated_at = at
    if failed:
        found.passes, found.last_seen = 0, at
        if run_id not in found.run_ids:
            found.run_ids.append(run_id)
    else:
        found.passes += 1
    store.save_layer(found)
    return found


def settled(store: Any, incident: IncidentRecord) -> bool:
    """Whether every layer of ``incident`` has passed enough evaluations in a row to resolve."""
    return all(la.passes >= PASSES_TO_RESOLVE for la in store.incident_layers(incident.id))


class Neighbourhood:
    """What one run's judging needs of the graph around its dataset, each part read once per
    run and only when an evaluation needs it: a run with nothing failing and no layers reads
    one query's worth."""

    def __init__(self, store: Any, dataset: str) -> None:
        self.store, self.dataset = store, dataset

    @cached_property
    def joined(self) -> dict[tuple[str, str, str], IncidentRecord]:
        """The unresolved incidents, opened on other datasets, the dataset is a layer of."""
        out: dict[tuple[str, str, str], IncidentRecord] = {}
        for found in self.store.unresolved_layers([self.dataset]):
            incident = self.store.incident(found.incident_id)
            if incident.dataset != self.dataset:
                out.setdefault(incident.key, incident)
        return out

    @cached_property
    def below(self) -> list[str]:
        """The datasets downstream of it."""
        return downstream(self.store, self.dataset)

    @cached_property
    def nearby(self) -> dict[tuple[str, str, str], IncidentRecord]:
        """The unresolved incident of each key on a connected dataset (the earliest opened)."""
        connected = connected_to(self.store, self.dataset)
        candidates: dict[str, IncidentRecord] = {}
        for found in self.store.unresolved_layers(connected) if connected else ():
            candidates.setdefault(found.incident_id, self.store.incident(found.incident_id))
        for name in connected:  # an incident opened before layers were kept has no layer rows
            for own in self.store.latest_incidents(name).values():
                if own.state != "resolved":
                    candidates.setdefault(own.id, own)
        out: dict[tuple[str, str, str], IncidentRecord] = {}
        for incident in sorted(candidates.values(), key=lambda i: (i.opened_at, i.id)):
            out.setdefault(incident.key, incident)
        return out

    def incident_of(self, evaluation: Evaluation) -> IncidentRecord | None:
        """The unresolved incident of ``evaluation``'s key the dataset is a layer of, or, for a
        failure, that a connected dataset holds (which it then joins); None: none."""
        found = self.joined.get(evaluation.key)
        if found is not None or evaluation.status != "failed":
            return found
        return self.nearby.get(evaluation.key)


def tell(
    store: Any,
    incident: IncidentRecord,
    datasets: Sequence[str],
    context: Context,
    *,
    run_id: str | None,
    now: datetime,
) -> int:
    """Tell the owners of each of ``datasets`` (downstream of ``incident``'s dataset, or upstream
    layers of it) once: rows added to the outbox. Nothing for a muted incident."""
    if incident.state == "muted":
        return 0
    below = set(downstream(store, incident.dataset))
    added = 0
    for dataset in datasets:
        key = f"layer/{incident.id}/{dataset}"
        if dataset == incident.dataset or store.notified(key):
            continue
        theirs = context if dataset == context.dataset else _other(context, dataset)
        if theirs is None:
            continue
        kind = "downstream_incident" if dataset in below else "incident_opened"
        channels = theirs.route(theirs.facts("failed", incident.severity, incident.expectation, kind))
        if not channels:
            continue
        payload = {
            "id": str(uuid.uuid5(NAMESPACE, key)),
            "kind": kind,
            "dataset": dataset,
            "expectation": incident.expectation,
            "group": incident.group,
            "severity": incident.severity,
            "outcome": "failed",
            "observed": incident.observed,
            "expected": incident.expected,
            "message": _words(incident, dataset, kind),
            "run_id": run_id,
            "incident_id": incident.id,
            "upstream": {
                "incident_id": incident.id,
                "dataset": incident.dataset,
                "expectation": incident.expectation,
                "dimension": incident.dimension,
                "severity": incident.severity,
                "link": f"/incidents/{incident.id}",
            },
        }
        added += int(
            store.enqueue(payload, channels, now=now, day=incident.evaluated_at.date(), dedupe_key=key)
        )
    return added


def _other(context: Context, dataset: str) -> Context | None:
    return None if context.others is None else context.others(dataset)


def _words(incident: IncidentRecord, dataset: str, kind: str) -> str:
    """The message of a layer's notification.

    >>> from datetime import UTC, datetime
    >>> at = datetime(2026, 11, 3, tzinfo=UTC)
    >>> i = IncidentRecord("i", "bronze.orders", "volume", "volume", None, "open", "error", None, at, at,
    ...                    message="daily.row_count = 2, expected > 5")
    >>> _words(i, "gold.orders", "downstream_incident")
    'upstream of gold.orders, bronze.orders fails volume (volume): daily.row_count = 2, expected > 5'
    """
    what = f"{incident.expectation} ({incident.dimension})"
    if kind == "downstream_incident":
        return f"upstream of {dataset}, {incident.dataset} fails {what}: {incident.message}"
    return f"{dataset} fails {what} too, upstream of the incident on {incident.dataset}: {incident.message}"
