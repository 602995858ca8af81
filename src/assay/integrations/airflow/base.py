"""What every assay operator does around its flow: the run's logical date from the DAG run, the
store and the retries the command's options name, and the task's end from the run's: its JSON
to XCom, then a failure that Airflow retries (a system error), one it does not (``fail_on``
reached, a configuration mistake), or a skip (``skip_on_nothing``).

A run that failed on its data is not retried: the data is wrong, and running the same load again
finds the same failures. A system error (the command's exit 3) is Airflow's to retry with the
task's ``retries``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator, Context
from airflow.sdk.exceptions import AirflowException, AirflowFailException, AirflowSkipException

from assay.errors import AssayError, ConfigError
from assay.workspace import Workspace, store_url

if TYPE_CHECKING:
    from assay.store import MetricStore


@dataclass(frozen=True)
class Finished:
    """A run as the task ends on it: its JSON (the command's ``--json``), what reached
    ``fail_on`` (one phrase each), why it evaluated nothing (None: it evaluated something), and
    its system error (None: it completed)."""

    payload: dict[str, Any]
    failures: list[str] = field(default_factory=list)
    nothing: str | None = None
    error: str | None = None


def logical_date(context: Context) -> datetime:
    """The DAG run's logical date; a run without one (Airflow 3: a manual or asset-triggered run
    may have none, and then the context has no ``logical_date`` key) falls back to its
    ``run_after``, the moment it was due."""
    found = context.get("logical_date")
    if found is not None:
        return found
    run_after: datetime = context["dag_run"].run_after
    return run_after


class AssayOperator(BaseOperator):
    """The options every assay operator shares, named as the commands name them
    (``--workspace``, ``--store``, ``--engine``, ``--spark-master``, ``--fail-on``; the
    command's ``--retries`` and ``--backoff`` are ``run_retries`` and ``run_backoff``, since
    ``retries`` is Airflow's own), and what every one does with its run (:meth:`execute`)."""

    template_fields: tuple[str, ...] = ("workspace", "store", "fail_on")

    def __init__(
        self,
        *,
        workspace: str | None = None,
        store: str | None = None,
        fail_on: str | None = None,
        skip_on_nothing: bool = False,
        engine: str = "duckdb",
        spark_master: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.workspace = workspace
        self.store = store
        self.fail_on = fail_on
        self.skip_on_nothing = skip_on_nothing
        self.engine = engine
        self.spark_master = spark_master

    def run(self, context: Context) -> Finished:
        """Run the flow; a subclass's one method."""
        raise NotImplementedError

    def execute(self, context: Context) -> dict[str, Any]:
        """Run the flow and end the task as its run ended (see the module)."""
        from assay.platform.runs.run import as_assay_error

        try:
            finished = self.run(context)
        except Exception as error:  # the command's main does the same with what it catches
            raise _task_error(as_assay_error(error, "assay")) from error
        if finished.error is not None:
            context["ti"].xcom_push(key="return_value", value=finished.payload)
            raise AirflowException(f"assay: {finished.error}")
        if finished.failures:
            context["ti"].xcom_push(key="return_value", value=finished.payload)
            raise AirflowFailException(
                f"assay: fail_on={self.fail_on} reached: {'; '.join(finished.failures)}"
            )
        if finished.nothing is not None and self.skip_on_nothing:
            context["ti"].xcom_push(key="return_value", value=finished.payload)
            raise AirflowSkipException(f"assay: {finished.nothing}")
        return finished.payload

    def space(self) -> Workspace:
        """The workspace, created when missing as the commands create it."""
        space = Workspace(self.workspace)
        space.ensure()
        return space

    @contextmanager
    def opened(self, space: Workspace) -> Iterator[MetricStore]:
        """The metric store the command's ``--store`` (or ``ASSAY_STORE_URL``) names."""
        from assay.store import MetricStore

        with MetricStore.open(store_url(self.store), workspace=space.root) as metric_store:
            yield metric_store


def _task_error(error: AssayError) -> AirflowException:
    """A configuration mistake (the command's exit 2) fails the task without a retry, with the
    message the command prints; a platform failure (exit 3) is Airflow's to retry."""
    if isinstance(error, ConfigError):
        return AirflowFailException(f"assay: {error}")
    return AirflowException(f"assay: {error}")
