"""Learned lineage: the OpenLineage run events other tools send to ``assay serve``
(``POST /api/v1/lineage``, as Marquez receives them) teach the graph which datasets each job
read to write which (docs/lineage.md, "Learned from OpenLineage").

An event is parsed strictly where assay reads it (``eventTime`` with its time zone, ``producer``,
``schemaURL``, ``run.runId``, ``job.namespace`` and ``job.name``, each input's and output's
``namespace`` and ``name``) and left alone elsewhere: the facets assay does not read may hold
anything the spec allows. A mistake is a :class:`~assay.errors.ConfigError` naming the field.

Each OpenLineage dataset (namespace, name) maps to an assay dataset by its ``symlinks`` facet
when one of its identifiers names a dataset of the workspace (assay's own events carry one), else
by where the data lives: the identity of a check document's source
(:func:`assay.platform.lineage.naming.identity`, as assay's events name it). A dataset that maps
to none is not in the graph (the answer lists it as ``unmapped``); every input that maps is an
edge to every output that maps, kept with the job and the event's time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from assay.errors import ConfigError
from assay.platform.lineage.naming import Identity

MAX_DATASETS = 1000
"""The most inputs plus outputs one event may name: a bound on the edges one request writes
(inputs times outputs), far above what a job reads and writes."""


class _Open(BaseModel):
    # the spec lets producers add facets and fields; assay reads only those declared here
    model_config = ConfigDict(extra="allow", frozen=True)


_Text = Field(min_length=1, max_length=2000)


class Identifier(_Open):
    namespace: str = _Text
    name: str = _Text


class Symlinks(_Open):
    identifiers: tuple[Identifier, ...] = ()


class DatasetFacets(_Open):
    symlinks: Symlinks | None = None


class EventDataset(_Open):
    namespace: str = _Text
    name: str = _Text
    facets: DatasetFacets = DatasetFacets()


class Job(_Open):
    namespace: str = _Text
    name: str = _Text


class Run(_Open):
    runId: str = _Text


class RunEvent(_Open):
    """The parts of an OpenLineage RunEvent that lineage reads."""

    eventTime: AwareDatetime
    producer: str = _Text
    schemaURL: str = _Text
    run: Run
    job: Job
    eventType: Literal["START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"] | None = None
    inputs: tuple[EventDataset, ...] = ()
    outputs: tuple[EventDataset, ...] = ()


def parse_event(raw: bytes) -> RunEvent:
    """An OpenLineage RunEvent from a request's body; a ConfigError naming each mistake.

    >>> parse_event(b'{"eventTime": "2026-12-01T06:00:00Z", "producer": "p", "schemaURL": "s"}')
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: run: Field required; job: Field required
    >>> parse_event(b"[1]")
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: an OpenLineage RunEvent is a JSON object, not a list
    """
    try:
        found = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConfigError(f"the body is not JSON: {error}") from None
    if not isinstance(found, dict):
        raise ConfigError(f"an OpenLineage RunEvent is a JSON object, not a {_json_type(found)}")
    try:
        event = RunEvent.model_validate(found)
    except ValidationError as error:
        problems = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()]
        raise ConfigError("; ".join(problems[:10])) from None
    if len(event.inputs) + len(event.outputs) > MAX_DATASETS:
        raise ConfigError(f"an event may name at most {MAX_DATASETS} inputs and outputs")
    return event


def identities(documents: Iterable[tuple[Path, Any]], workspace: Path) -> dict[Identity, str]:
    """Where each check document's dataset lives, as OpenLineage names it → the dataset's name."""
    from assay.platform.lineage.facts import document_identity

    out: dict[Identity, str] = {}
    for path, document in documents:
        out.setdefault(document_identity(document, path, workspace), document.dataset.name)
    return out


def learn(store: Any, event: RunEvent, known: Mapping[Identity, str]) -> dict[str, Any]:
    """Record ``event``'s edges (every mapped input to every mapped output) with its job and
    time; what was learned, and the datasets that map to none of ``known``'s."""
    names = set(known.values())
    unmapped: list[str] = []

    def mapped(items: Iterable[EventDataset]) -> list[str]:
        out = []
        for item in items:
            name = _assay_name(item, known, names)
            if name is None:
                unmapped.append(f"{item.namespace}/{item.name}")
            elif name not in out:
                out.append(name)
        return out

    inputs, outputs = mapped(event.inputs), mapped(event.outputs)
    edges = [(up, down) for up in inputs for down in outputs if up != down]
    job = f"{event.job.namespace}/{event.job.name}"
    store.learn_edges(edges, job=job, at=event.eventTime)
    return {
        "job": job,
        "edges": [{"upstream": up, "downstream": down} for up, down in edges],
        "unmapped": unmapped,
    }


def _assay_name(item: EventDataset, known: Mapping[Identity, str], names: set[str]) -> str | None:
    links = item.facets.symlinks.identifiers if item.facets.symlinks is not None else ()
    for link in links:
        if link.name in names:
            return link.name
    return known.get((item.namespace, item.name))


def _json_type(value: Any) -> str:
    return {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")
