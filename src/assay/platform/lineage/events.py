"""A run's OpenLineage events, built with the official client's classes and sent through its
transport: START when the run begins, COMPLETE or FAIL when it ends (docs/openlineage.md).

Imported only when lineage is configured (:func:`assay.platform.lineage.settings`): this module
imports the client. Delivery never fails a run and never holds it for long: the events go out in
order on a thread of their own, the START while the run works; at its end the run waits at most
``timeout`` seconds for them. What was not delivered (the receiver down, a transport that cannot
be made) is a warning: a line on stderr and, for a run that recorded a summary, its
``runs/<id>.json``'s ``lineage.warnings``.
"""

from __future__ import annotations

import os
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    data_quality_assertions_dataset,
    data_quality_metrics_input_dataset,
    error_message_run,
    job_type_job,
    output_statistics_output_dataset,
    processing_engine_run,
    symlinks_dataset,
)

import assay
from assay.platform.lineage.facts import JOB_KINDS, Dataset, Facts, facts
from assay.platform.lineage.settings import Settings

PRODUCER = f"urn:assay:{assay.__version__}"
"""Who made the events (the spec asks for a URI; assay has no home page to name)."""
RUN_IDS = uuid.UUID("4c1d6a52-9e7b-4f0a-8d2e-0b7e3a5f9c11")
"""The namespace of the UUID a run whose caller named it otherwise gets (always the same one)."""
SYMLINK_TYPE = "TABLE"
_CLIENT_PREFIX = "OPENLINEAGE__"
_MAKING = threading.Lock()


def run_uuid(run_id: str) -> str:
    """The OpenLineage ``runId`` of an assay run: its own id, a UUID (v4) as every run's is,
    so that the events and the run's record join; another name, made a UUID the same way each time.

    >>> run_uuid("0b6a3c1e-2f4d-4a5b-9c8d-7e6f5a4b3c2d")
    '0b6a3c1e-2f4d-4a5b-9c8d-7e6f5a4b3c2d'
    >>> run_uuid("nightly") == run_uuid("nightly") != run_uuid("weekly")
    True
    """
    try:
        return str(uuid.UUID(run_id))
    except ValueError:
        return str(uuid.uuid5(RUN_IDS, run_id))


class Emission:
    """One run's events, delivered in order on a thread of their own."""

    def __init__(self, chosen: Settings, flow: Any, run_id: str, workspace: Path) -> None:
        self.settings = chosen
        self.flow = flow
        self.workspace = workspace
        self.run_id = run_uuid(run_id)
        self.kind = JOB_KINDS.get(type(flow).__name__, str(getattr(flow, "kind", "run")))
        self.warnings: list[str] = []
        self._events: list[RunEvent | None] = []
        self._ready = threading.Condition()
        self._client = self._make_client()
        self._thread: threading.Thread | None = None

    # --- the run's two moments ---------------------------------------------------------------

    def start(self) -> None:
        """The START event, sent while the run works."""
        if self._client is None:
            return
        try:
            found = facts(self.flow, self.workspace, finished=False)
            event = self._event(RunState.START, found)
        except Exception as error:  # lineage never fails a run
            self.warnings.append(f"the START event could not be made: {type(error).__name__}: {error}")
            return
        self._thread = threading.Thread(target=self._deliver, name=f"openlineage-{self.run_id}", daemon=True)
        self._thread.start()
        self._send(event)

    def end(self, error: BaseException | None, completed: bool, message: str | None = None) -> list[str]:
        """COMPLETE (``completed``) or FAIL (with ``error``'s message, or the run's ``message``:
        a check run whose every measurement failed ends without raising), then at most
        ``timeout`` seconds' wait for every event; returns the warnings."""
        if self._client is None or self._thread is None:
            return self.warnings
        try:
            found = facts(self.flow, self.workspace, finished=True)
            state = RunState.COMPLETE if error is None and completed else RunState.FAIL
            said = None if state is RunState.COMPLETE else _message(error, message)
            event = self._event(state, found, failure=said)
        except Exception as failure:  # lineage never fails a run
            self.warnings.append(f"the end event could not be made: {type(failure).__name__}: {failure}")
            event = None
        if event is not None:
            self._send(event)
        self._send(None)  # no more events: the thread ends once it has sent them
        self._thread.join(self.settings.timeout)
        if self._thread.is_alive():
            self.warnings.append(
                f"the transport did not deliver the run's events within {self.settings.timeout:g} s "
                "(lineage: timeout: in assay.yaml); the run did not wait longer"
            )
        return list(self.warnings)  # a copy: a late failure of the thread is its own

    # --- building ------------------------------------------------------------------------------

    def _event(self, state: RunState, found: Facts, failure: str | None = None) -> RunEvent:
        run_facets: dict[str, Any] = {
            "processing_engine": processing_engine_run.ProcessingEngineRunFacet(
                version=assay.__version__, name="assay", producer=PRODUCER
            )
        }
        if failure is not None:
            run_facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
                message=failure, programmingLanguage="PYTHON", producer=PRODUCER
            )
        dataset = getattr(self.flow, "dataset", None) or (
            found.inputs[0].identity[1] if found.inputs else "run"
        )
        job = Job(
            namespace=self.settings.namespace,
            name=f"{self.kind}.{dataset}",
            facets={
                "jobType": job_type_job.JobTypeJobFacet(
                    processingType="BATCH", integration="ASSAY", jobType=self.kind.upper(), producer=PRODUCER
                )
            },
        )
        finished = state is not RunState.START
        return RunEvent(
            eventType=state,
            eventTime=datetime.now(UTC).isoformat(),
            run=Run(runId=self.run_id, facets=run_facets),
            job=job,
            inputs=[self._input(d, finished) for d in found.inputs],
            outputs=[self._output(d, finished) for d in found.outputs],
            producer=PRODUCER,
        )

    def _symlinks(self, dataset: Dataset) -> dict[str, Any]:
        if not dataset.known_as:
            return {}
        link = symlinks_dataset.Identifier(
            namespace=self.settings.namespace, name=dataset.known_as, type=SYMLINK_TYPE
        )
        return {"symlinks": symlinks_dataset.SymlinksDatasetFacet(identifiers=[link], producer=PRODUCER)}

    def _input(self, dataset: Dataset, finished: bool) -> InputDataset:
        facets: dict[str, Any] = {}
        if finished and dataset.assertions:
            facets["dataQualityAssertions"] = (
                data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet(
                    assertions=[
                        data_quality_assertions_dataset.Assertion(
                            assertion=a.assertion,
                            success=a.success,
                            column=a.column,
                            severity=a.severity,
                            name=a.name,
                            expected=a.expected,
                            actual=a.actual,
                            content=a.content,
                            contentType=a.content_type,
                        )
                        for a in dataset.assertions
                    ],
                    producer=PRODUCER,
                )
            )
        if finished and (dataset.rows is not None or dataset.columns):
            metrics = data_quality_metrics_input_dataset
            facets["dataQualityMetrics"] = metrics.DataQualityMetricsInputDatasetFacet(
                rowCount=dataset.rows,
                columnMetrics={
                    name: metrics.ColumnMetrics(**values) for name, values in dataset.columns.items()
                },
                producer=PRODUCER,
            )
        namespace, name = dataset.identity
        return InputDataset(
            namespace=namespace, name=name, facets=self._symlinks(dataset), inputFacets=facets
        )

    def _output(self, dataset: Dataset, finished: bool) -> OutputDataset:
        facets: dict[str, Any] = {}
        if finished and dataset.written is not None:
            facets["outputStatistics"] = output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
                rowCount=dataset.written, producer=PRODUCER
            )
        namespace, name = dataset.identity
        return OutputDataset(
            namespace=namespace, name=name, facets=self._symlinks(dataset), outputFacets=facets
        )

    # --- delivering ------------------------------------------------------------------------------

    def _make_client(self) -> OpenLineageClient | None:
        try:
            with _environment_kept():
                if self.settings.transport is not None:
                    transport = dict(self.settings.transport)
                    _folder_of(transport)
                    return OpenLineageClient(config={"transport": transport})
                return OpenLineageClient()
        except Exception as error:  # a transport the client cannot make: no events
            self.warnings.append(f"the client's transport could not be made: {type(error).__name__}: {error}")
            return None

    def _send(self, event: RunEvent | None) -> None:
        with self._ready:
            self._events.append(event)
            self._ready.notify()

    def _deliver(self) -> None:
        client = self._client
        assert client is not None
        while True:
            with self._ready:
                while not self._events:
                    self._ready.wait()
                event = self._events.pop(0)
            if event is None:
                break
            try:
                client.emit(event)
            except Exception as error:  # the receiver's failure is a warning
                self.warnings.append(f"the {_named(event)} event was not delivered: {_said(error)}")
        with suppress(Exception):  # closing a transport that failed says nothing more
            client.close(0)


@contextmanager
def _environment_kept() -> Iterator[None]:
    """The client turns ``OPENLINEAGE_URL`` into ``OPENLINEAGE__TRANSPORT__...`` variables of the
    process's environment when it is made: a long-lived process (the scheduler, the web) would
    keep them after the URL is gone. They are taken out again."""
    with _MAKING:  # two runs of one process (the web's) making clients at once
        before = {k: v for k, v in os.environ.items() if k.startswith(_CLIENT_PREFIX)}
        try:
            yield
        finally:
            for key in [k for k in os.environ if k.startswith(_CLIENT_PREFIX) and k not in before]:
                del os.environ[key]
            os.environ.update(before)


def _message(error: BaseException | None, message: str | None) -> str:
    """What a FAIL says: the run's error as assay reports it (an AssayError's message)."""
    if error is None:
        return message or "the run did not complete"
    return getattr(error, "message", None) or str(error) or type(error).__name__


def _named(event: RunEvent) -> str:
    return event.eventType.value if event.eventType is not None else "run"


def _folder_of(transport: dict[str, Any]) -> None:
    """A local file transport's folder, made (the client writes into a folder that exists)."""
    path = transport.get("log_file_path")
    if transport.get("type") == "file" and isinstance(path, str) and "://" not in path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)


def _said(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return f"{type(error).__name__}: {text[:300]}"


def warn(warnings: list[str], run_id: str) -> None:
    """Each warning as a line on stderr."""
    for warning in warnings:
        sys.stderr.write(f"warning: OpenLineage: run {run_id}: {warning}\n")
