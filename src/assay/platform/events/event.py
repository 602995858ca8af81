"""An event as all its contracts read it: they must agree on its source, key, times, payload
and window (ONE query measures them all), and a consumer states its needs of an event once.

>>> [contract] = parse_contracts('''
... apiVersion: assay/v1
... kind: EventContract
... event: {name: trade_executed.v3, source: {path: "events/*.jsonl"}, event_time: event_ts}
... consumer: {team: risk-analytics, tier: 0}
... fields: {venue: {non_empty: true}}
... ''')
>>> contract.expectation
'contract:risk-analytics'
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.platform.checks.document import Problem, read_text
from assay.platform.events.contract import GRAINS, Contract, Producer
from assay.platform.events.document import (
    ContractError,
    Loaded,
    is_event_contract,
    parse_file,
    parse_located,
)


def load_contracts(paths: Iterable[Path | str]) -> list[Loaded]:
    """Every contract of the files at ``paths``, checked one by one and together (the contracts
    of one event must agree on how it is read); a :class:`ContractError` lists every mistake."""
    loaded: list[Loaded] = []
    problems: list[Problem] = []
    for path in paths:
        path = Path(path)
        found, mistakes = parse_file(read_text(path, "event contract"), path)
        loaded.extend(found)
        problems.extend(mistakes)
    problems.extend(check_together(loaded))
    if problems:
        raise ContractError(problems)
    return loaded


def parse_contracts(text: str, *, filename: str = "<contract>") -> list[Contract]:
    """The contracts of one file's text; see :func:`load_contracts`."""
    found = parse_located(text, file=Path(filename))
    problems = check_together(found)
    if problems:
        raise ContractError(problems)
    return [item.contract for item in found]


def _source(item: Loaded) -> Any:
    return item.source_pattern


_SHARED: tuple[tuple[str, Callable[[Loaded], Any]], ...] = (
    ("source", _source),
    ("key", lambda item: item.contract.event.key),
    ("event_time", lambda item: item.contract.event.event_time),
    ("ingest_time", lambda item: item.contract.event.ingest_time),
    ("payload", lambda item: item.contract.event.payload),
)
"""What every contract of one event says the same way: the one query reads the event so."""
_MERGED = ("description", "tier", "producer")
"""What any contract of the event may say, and two that say it must say the same."""


def check_together(loaded: Sequence[Loaded]) -> list[Problem]:
    """The mistakes of contracts that disagree: on how their event is read, on its description,
    tier or producer, on its window; two contracts of one consumer team on one event."""
    problems: list[Problem] = []
    by_event: dict[str, list[Loaded]] = {}
    for item in loaded:
        by_event.setdefault(item.contract.event.name, []).append(item)
    for name, items in by_event.items():
        first = items[0]
        for other in items[1:]:
            where = f"{first.file}:{':'.join(map(str, first.where(('event',))))}"
            for key, read in _SHARED:
                if read(other) != read(first):
                    problems.append(
                        other.problem(
                            ("event", key),
                            f"event {name}: {key} is {read(other)!r} here and {read(first)!r} in the "
                            f"contract at {where}: the contracts of one event are measured by one query "
                            "and must read it the same way",
                        )
                    )
            if other.contract.window.grain != first.contract.window.grain:
                problems.append(
                    other.problem(
                        ("window", "grain"),
                        f"event {name}: window grain {other.contract.window.grain} here and "
                        f"{first.contract.window.grain} at {where}: one event has one window",
                    )
                )
            mine, theirs = other.contract.window, first.contract.window
            if (
                mine.schedule is not None
                and theirs.schedule is not None
                and ((mine.schedule, mine.timezone) != (theirs.schedule, theirs.timezone))
            ):
                problems.append(
                    other.problem(
                        ("window", "schedule"),
                        f"event {name}: schedule {mine.schedule!r} ({mine.timezone}) here and "
                        f"{theirs.schedule!r} ({theirs.timezone}) at {where}: one event runs on one schedule",
                    )
                )
        for key in _MERGED:
            given = [
                (i, getattr(i.contract.event, key))
                for i in items
                if getattr(i.contract.event, key) is not None
            ]
            for item, value in given[1:]:
                if value != given[0][1]:
                    problems.append(
                        item.problem(
                            ("event", key),
                            f"event {name}: {key} differs from the one given at "
                            f"{given[0][0].file}:{':'.join(map(str, given[0][0].where(('event', key))))}",
                        )
                    )
        teams: dict[str, Loaded] = {}
        for item in items:
            team = item.contract.consumer.team
            if team in teams:
                before = teams[team]
                problems.append(
                    item.problem(
                        ("consumer", "team"),
                        f"event {name}: a second contract of consumer {team} (the first is at "
                        f"{before.file}:{':'.join(map(str, before.where(('consumer',))))}); "
                        "a consumer states its needs of an event in one contract",
                    )
                )
            teams.setdefault(team, item)
    return problems


@dataclass(frozen=True)
class EventSpec:
    """One event as its contracts read it together."""

    name: str
    source: str  # the absolute glob of its files
    key: str | None
    event_time: str
    ingest_time: str | None
    payload: str | None
    grain: str
    producer: Producer | None
    description: str | None
    tier: int  # declared, else the most critical consumer's, else 3
    tags: tuple[str, ...]
    contracts: tuple[Loaded, ...]
    schedule: str | None = None  # when `assay run --due` runs it (cron, in `timezone`)
    timezone: str = "UTC"

    @property
    def seconds(self) -> int:
        return GRAINS[self.grain]

    @property
    def fields(self) -> list[str]:
        """Every field some contract declares, in order of first declaration."""
        seen: dict[str, None] = {}
        for item in self.contracts:
            for name in item.contract.fields:
                seen.setdefault(name, None)
        return list(seen)

    @property
    def files(self) -> list[str]:
        return list(dict.fromkeys(str(item.file) for item in self.contracts))

    def paths(self) -> list[Path]:
        """The source's files, in name order (none: the source is absent)."""
        pattern = self.source
        if glob.has_magic(pattern):
            return sorted(Path(p) for p in glob.glob(pattern) if Path(p).is_file())
        return [Path(pattern)] if Path(pattern).is_file() else []


def events(loaded: Sequence[Loaded]) -> dict[str, EventSpec]:
    """The events of checked contracts (:func:`load_contracts`), by name, in order of first mention."""
    grouped: dict[str, list[Loaded]] = {}
    for item in loaded:
        grouped.setdefault(item.contract.event.name, []).append(item)
    out: dict[str, EventSpec] = {}
    for name, items in grouped.items():
        first = items[0].contract

        def merged(key: str, items: list[Loaded] = items) -> Any:
            return next(
                (getattr(i.contract.event, key) for i in items if getattr(i.contract.event, key) is not None),
                None,
            )

        tiers = [i.contract.consumer.tier for i in items if i.contract.consumer.tier is not None]
        declared = merged("tier")
        out[name] = EventSpec(
            name=name,
            source=items[0].source_pattern,
            key=first.event.key,
            event_time=first.event.event_time,
            ingest_time=first.event.ingest_time,
            payload=first.event.payload,
            grain=first.window.grain,
            schedule=next((i.contract.window.schedule for i in items if i.contract.window.schedule), None),
            timezone=next((i.contract.window.timezone for i in items if i.contract.window.schedule), "UTC"),
            producer=merged("producer"),
            description=merged("description"),
            tier=declared if declared is not None else min(tiers, default=3),
            tags=tuple(dict.fromkeys(t for i in items for t in i.contract.event.tags)),
            contracts=tuple(items),
        )
    return out


def describe(found: Mapping[str, EventSpec]) -> list[dict[str, Any]]:
    """What checked events declare, as ``assay check validate --json`` prints it."""
    return [
        {
            "event": event.name,
            "window": event.grain,
            "tier": event.tier,
            "fields": event.fields,
            "contracts": [
                {"consumer": item.contract.id, "requirements": [r.name for r in item.contract.requirements()]}
                for item in event.contracts
            ],
        }
        for event in found.values()
    ]


def workspace_contracts(root: Path) -> list[Loaded]:
    """The event contracts of a workspace: every ``checks/*.yaml`` saying ``kind: EventContract``."""
    folder = root / "checks"
    if not folder.is_dir():
        return []
    return load_contracts(p for p in sorted(folder.glob("*.yaml")) if p.is_file() and is_event_contract(p))


__all__ = [
    "EventSpec",
    "check_together",
    "describe",
    "events",
    "load_contracts",
    "parse_contracts",
    "workspace_contracts",
]
