"""Config and system errors into the outbox: neither opens an incident (they are not statements
about the data); each is sent once as :mod:`assay.platform.incidents` says."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from assay.platform.incidents.keys import NAMESPACE, SYSTEM_ERROR_EVERY, Context
from assay.platform.routing import Facts
from assay.store.checks import group_key


def errors(
    store: Any,
    outcomes: Sequence[Mapping[str, Any]],
    context: Context,
    *,
    at: datetime,
    run_id: str,
    now: datetime,
) -> int:
    """The run's config and system errors into the outbox, each once as the module says."""
    added = 0
    system_sent = False
    for item in outcomes:
        outcome = item.get("outcome")
        if item.get("mode") != "enforce" or outcome not in ("config_error", "system_error"):
            continue
        if outcome == "system_error" and system_sent:
            continue
        expectation = str(item["expectation"])
        message = str(item.get("message") or "")
        config = outcome == "config_error"
        group = group_key(item.get("group"))
        added += _enqueue_error(
            store,
            kind=str(outcome),
            dataset=context.dataset,
            source=context.source,
            expectation=expectation,
            message=message,
            payload={
                "id": str(uuid.uuid5(NAMESPACE, f"{outcome}/{run_id}/{expectation}/{group}")),
                "expectation": expectation if config else None,
                "group": item.get("group"),
                "severity": item.get("severity"),
                "message": message if config else f"{context.source}: {message}",
                "run_id": run_id,
            },
            route=context.route,
            facts=context.facts(str(outcome), item.get("severity"), expectation, str(outcome)),
            day=at.date(),
            now=now,
        )
        system_sent = system_sent or outcome == "system_error"
    return added


def run_error(
    store: Any,
    *,
    kind: str,
    dataset: str,
    source: str,
    message: str,
    run_id: str,
    route: Callable[[Facts], list[tuple[str, str | None]]],
    tags: tuple[str, ...] = (),
    tier: int | None = None,
    flow: str | None = None,
    now: datetime,
) -> int:
    """A run that failed before judging anything (a config or system error of the whole run):
    its notification into the outbox, once as the module says; how many rows were added."""
    return _enqueue_error(
        store,
        kind=kind,
        dataset=dataset,
        source=source,
        expectation=None,
        message=message,
        payload={"id": str(uuid.uuid5(NAMESPACE, f"{kind}/{run_id}")), "message": message, "run_id": run_id},
        route=route,
        facts=Facts(kind, None, dataset, None, tags, tier, flow, kind),
        day=now.date(),
        now=now,
    )


def _enqueue_error(
    store: Any,
    *,
    kind: str,
    dataset: str,
    source: str,
    expectation: str | None,
    message: str,
    payload: Mapping[str, Any],
    route: Callable[[Facts], list[tuple[str, str | None]]],
    facts: Facts,
    day: date,
    now: datetime,
) -> int:
    """One config or system error into the outbox unless it was sent already: a config error
    once per (dataset, expectation, message), a system error once per source per
    :data:`SYSTEM_ERROR_EVERY`. ``payload`` gives the fields that differ from the defaults."""
    if kind == "config_error":
        digest = hashlib.sha256(message.encode()).hexdigest()[:16]
        key, since = f"config_error/{dataset}/{expectation or '*'}/{digest}", None
    else:
        key, since = f"system_error/{source}", now - SYSTEM_ERROR_EVERY
    if store.notified(key, since=since):
        return 0
    routed = route(facts)
    if not routed:
        return 0
    body = {
        "id": payload["id"],
        "kind": kind,
        "dataset": dataset,
        "expectation": None,
        "group": None,
        "severity": None,
        "outcome": kind,
        "observed": None,
        "expected": None,
        "incident_id": None,
        **payload,
    }
    return int(store.enqueue(body, routed, now=now, day=day, dedupe_key=key))
