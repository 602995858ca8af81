"""Running a dataset's check document from the web: a recorded run, as ``assay check run``
makes one, on the latest logical date the dataset has runs for (or the date asked), at the
plane's clock. The run goes through the one run lifecycle (:class:`assay.platform.runs.run.Run`):
its outcomes, incidents and notifications are recorded with it, and the audit trail says who
started it."""

from __future__ import annotations

from typing import Any

from assay.errors import ConfigError
from assay.web.catalog import subject
from assay.web.plane import Plane


def run_now(plane: Plane, dataset: str, *, by: str, at: str | None = None) -> dict[str, Any]:
    """Run ``dataset``'s check document now; returns the run's JSON (as ``check run --json``)."""
    from assay.platform.runs.check import run_document

    s = subject(plane, dataset)
    if s.document is None or s.path is None:
        raise ConfigError(f"{dataset} has no check document to run: add a check first")
    if at is None:
        dates = plane.store.check_dates(dataset, limit=1)
        at = dates[0][0].date().isoformat() if dates else plane.clock().date().isoformat()
    result = run_document(
        s.document, s.path, at=at, now=plane.clock(), store=plane.store, workspace=plane.workspace
    )
    payload = result.to_dict()
    plane.store.audit(
        by,
        "check.run",
        result.run_id,
        dataset=dataset,
        detail={"at": payload["at"], "state": payload["state"], "summary": payload["summary"]},
    )
    return payload
