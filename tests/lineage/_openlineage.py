"""A real OpenLineage receiver for the tests: an HTTP server on 127.0.0.1 that checks every event
it is sent and keeps it, answering 200 to a valid event and 400 to another.

No package on PyPI ships the spec's JSON Schema (OpenLineage.json): not openlineage-python (1.54,
nor 1.20), openlineage-integration-common, openlineage-airflow, openlineage-dbt,
openlineage-dagster, apache-airflow-providers-openlineage (these ship their own facets' schemas
only). So an event is checked in two ways:

1. the spec's required fields, written out here from OpenLineage.json 2-0-2 (BaseEvent: eventTime
   as a date-time, producer and schemaURL as URIs; RunEvent: run.runId a UUID, job.namespace and
   job.name, an eventType of the enum; every dataset's namespace and name; every facet's
   ``_producer`` and ``_schemaURL``);
2. a round trip through the client's generated classes (openlineage.client.generated): the event
   is rebuilt from its JSON with the classes of its facets, which refuse a missing required field
   or an unknown one and check formats (eventTime, runId); the rebuilt event, written by the
   client's Serde, must be the JSON received, ``_schemaURL``s included (each class writes its own).
"""

from __future__ import annotations

import json
import threading
import uuid
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    data_quality_assertions_dataset as assertions,
)
from openlineage.client.facet_v2 import (
    data_quality_metrics_input_dataset as metrics,
)
from openlineage.client.facet_v2 import (
    error_message_run,
    job_type_job,
    output_statistics_output_dataset,
    processing_engine_run,
    symlinks_dataset,
    tags_run,
)
from openlineage.client.serde import Serde

EVENT_TYPES = {"START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"}


def _plain(cls: Any) -> Any:
    return lambda fields: cls(**fields)


FACETS: dict[str, Any] = {
    "dataQualityAssertions": lambda f: assertions.DataQualityAssertionsDatasetFacet(
        assertions=[assertions.Assertion(**a) for a in f.pop("assertions")], **f
    ),
    "dataQualityMetrics": lambda f: metrics.DataQualityMetricsInputDatasetFacet(
        columnMetrics={c: metrics.ColumnMetrics(**m) for c, m in f.pop("columnMetrics").items()}, **f
    ),
    "outputStatistics": _plain(output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet),
    "symlinks": lambda f: symlinks_dataset.SymlinksDatasetFacet(
        identifiers=[symlinks_dataset.Identifier(**i) for i in f.pop("identifiers")], **f
    ),
    "errorMessage": _plain(error_message_run.ErrorMessageRunFacet),
    "processing_engine": _plain(processing_engine_run.ProcessingEngineRunFacet),
    "jobType": _plain(job_type_job.JobTypeJobFacet),
    "tags": lambda f: tags_run.TagsRunFacet(
        tags=[tags_run.TagsRunFacetFields(**t) for t in f.pop("tags")], **f
    ),
}


def required(event: dict[str, Any]) -> list[str]:
    """What the spec requires of a run event that ``event`` lacks."""
    problems = []
    for name in ("eventTime", "producer", "schemaURL", "run", "job"):
        if name not in event:
            problems.append(f"no {name}")
    if problems:
        return problems
    try:
        datetime.fromisoformat(event["eventTime"])
    except ValueError:
        problems.append(f"eventTime {event['eventTime']!r} is no date-time")
    for name in ("producer", "schemaURL"):
        if not urlparse(event[name]).scheme:
            problems.append(f"{name} {event[name]!r} is no URI")
    if event.get("eventType") not in EVENT_TYPES:
        problems.append(f"eventType {event.get('eventType')!r}")
    try:
        uuid.UUID(event["run"]["runId"])
    except (KeyError, ValueError):
        problems.append("run.runId is no UUID")
    for name in ("namespace", "name"):
        if not event["job"].get(name):
            problems.append(f"no job.{name}")
    for side in ("inputs", "outputs"):
        for dataset in event.get(side) or []:
            if not dataset.get("namespace") or not dataset.get("name"):
                problems.append(f"a dataset of {side} without its namespace and name")
    for where, facets in _facets(event):
        for key, facet in facets.items():
            if "_producer" not in facet or "_schemaURL" not in facet:
                problems.append(f"{where} facet {key} without _producer and _schemaURL")
    return problems


def _facets(event: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = [("run", event["run"].get("facets") or {}), ("job", event["job"].get("facets") or {})]
    for side, own in (("inputs", "inputFacets"), ("outputs", "outputFacets")):
        for dataset in event.get(side) or []:
            found += [(side, dataset.get("facets") or {}), (side, dataset.get(own) or {})]
    return found


def rebuilt(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` made again with the client's classes, and written by its Serde."""

    def facets(found: dict[str, Any] | None) -> dict[str, Any]:
        out = {}
        for key, value in (found or {}).items():
            fields = {k: v for k, v in value.items() if k not in ("_producer", "_schemaURL")}
            out[key] = FACETS[key]({**fields, "producer": value["_producer"]})
        return out

    made = RunEvent(
        eventType=RunState(event["eventType"]),
        eventTime=event["eventTime"],
        producer=event["producer"],
        run=Run(runId=event["run"]["runId"], facets=facets(event["run"].get("facets"))),
        job=Job(
            namespace=event["job"]["namespace"],
            name=event["job"]["name"],
            facets=facets(event["job"].get("facets")),
        ),
        inputs=[
            InputDataset(
                namespace=d["namespace"],
                name=d["name"],
                facets=facets(d.get("facets")),
                inputFacets=facets(d.get("inputFacets")),
            )
            for d in event.get("inputs") or []
        ],
        outputs=[
            OutputDataset(
                namespace=d["namespace"],
                name=d["name"],
                facets=facets(d.get("facets")),
                outputFacets=facets(d.get("outputFacets")),
            )
            for d in event.get("outputs") or []
        ],
    )
    return Serde.to_dict(made)


def problems(event: dict[str, Any]) -> list[str]:
    """Why ``event`` is no valid OpenLineage run event (none: it is one)."""
    found = required(event)
    if found:
        return found
    try:
        again = rebuilt(json.loads(json.dumps(event)))
    except (KeyError, TypeError, ValueError) as error:
        return [f"the client's classes refuse it: {type(error).__name__}: {error}"]
    return [] if again == event else ["the client's classes write it otherwise"]


class Receiver:
    """A real HTTP server on 127.0.0.1 receiving OpenLineage events (``url``: where to point
    ``OPENLINEAGE_URL``), each checked by :func:`problems`: ``events`` the valid ones, in the order
    they came, ``refused`` the others with why."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.refused: list[tuple[dict[str, Any], list[str]]] = []
        self.paths: set[str] = set()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                event = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                receiver.paths.add(self.path)
                wrong = problems(event)
                if wrong:
                    receiver.refused.append((event, wrong))
                else:
                    receiver.events.append(event)
                self.send_response(400 if wrong else 200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def of_run(self, run_id: str) -> list[dict[str, Any]]:
        """The events of one run, in the order they came."""
        return [e for e in self.events if e["run"]["runId"] == run_id]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
