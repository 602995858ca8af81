"""The Dagster resource that opens assay's workspace and store, as the ``assay`` command opens them.

Its three fields are the command's options of the same names: ``workspace`` (``--workspace``:
else ``ASSAY_WORKSPACE``, else ``.assay``), ``store`` (``--store``: else ``ASSAY_STORE_URL``, else
the workspace's SQLite file) and ``engine`` (``--engine``, ``duckdb``). The names are resolved by
the functions the command calls (:class:`assay.workspace.Workspace`, :func:`assay.workspace.store_url`),
when a run starts, so that a deployment's environment decides as it does for the command.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path

import dagster as dg

from assay.platform.checks.document import Document
from assay.platform.checks.outcomes import CheckResult
from assay.store import MetricStore
from assay.workspace import Workspace, store_url


class AssayResource(dg.ConfigurableResource["AssayResource"]):
    """assay's workspace and metric store for Dagster's asset checks.

    >>> AssayResource(workspace="/srv/dq").open_workspace().root.as_posix()
    '/srv/dq'
    """

    workspace: str | None = None
    store: str | None = None
    engine: str = "duckdb"

    def open_workspace(self) -> Workspace:
        """The workspace ``--workspace`` names (else ``ASSAY_WORKSPACE``, else ``.assay``)."""
        return Workspace(self.workspace)

    @contextmanager
    def open_store(self) -> Iterator[MetricStore]:
        """The metric store, open: ``--store``, else ``ASSAY_STORE_URL``, else the workspace's
        SQLite file (the workspace's folder is created on first use, as by ``check run``)."""
        space = self.open_workspace()
        space.ensure()
        with MetricStore.open(store_url(self.store), workspace=space.root) as store:
            yield store

    def run_check(
        self,
        document: Document,
        path: Path,
        *,
        at: str | date | datetime | None = None,
        only: Sequence[str] = (),
    ) -> CheckResult:
        """One run of a check document, recorded in the store: ``assay check run PATH --at AT
        --only ...`` (the same function, :func:`assay.platform.runs.check.run_document`)."""
        from assay.platform.runs.check import run_document

        with self.open_store() as store:
            return run_document(
                document,
                path,
                at=at,
                store=store,
                workspace=self.open_workspace(),
                only=tuple(only),
                engine=self.engine,
            )
