"""The sensor: wait until a dataset (one expectation of it, or one incident) has no unresolved
incident, e.g. before a downstream task reads a table whose load broke. Deferred by default: the
worker slot is freed and the triggerer polls the store (:mod:`.triggers`); with
``deferrable=False`` it pokes from the worker, with the same answer and the same timeout."""

from __future__ import annotations

import time
from typing import Any

from airflow.sdk import BaseSensorOperator, Context
from airflow.sdk.exceptions import AirflowSensorTimeout

from assay.integrations.airflow.triggers import AssayIncidentTrigger
from assay.integrations.airflow.waits import Wait


class AssayIncidentSensor(BaseSensorOperator):
    """Succeeds when ``dataset`` (or its ``expectation``, or the incident whose id starts with
    ``incident``) has no incident that is open, acknowledged or muted; fails when ``timeout``
    (Airflow's sensor timeout, seconds) passes first, naming the incidents still unresolved.
    Returns (XCom) what it waited on and ``status: resolved``."""

    template_fields = ("dataset", "expectation", "incident", "workspace", "store")

    def __init__(
        self,
        *,
        dataset: str,
        expectation: str | None = None,
        incident: str | None = None,
        workspace: str | None = None,
        store: str | None = None,
        deferrable: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.dataset, self.expectation, self.incident = dataset, expectation, incident
        self.workspace, self.store = workspace, store
        self.deferrable = deferrable

    def _wait(self) -> Wait:
        return Wait(self.dataset, self.expectation, self.incident, self.workspace, self.store)

    def execute(self, context: Context) -> Any:
        if not self.deferrable:
            try:
                super().execute(context)
            except AirflowSensorTimeout as timeout:
                wait = self._wait()
                raise AirflowSensorTimeout(self._timed_out(wait, wait.unresolved())) from timeout
            return {"status": "resolved", **self._wait().to_dict()}
        trigger = AssayIncidentTrigger(
            self._wait().to_dict(), self.poke_interval, deadline=time.time() + self.timeout
        )
        self.defer(trigger=trigger, method_name="execute_complete")

    def poke(self, context: Context) -> bool:
        unresolved = self._wait().unresolved()
        if unresolved:
            self.log.info("%s", self._wait().describe(unresolved))
        return not unresolved

    def execute_complete(self, context: Context, event: dict[str, Any]) -> dict[str, Any]:
        """Resumed by the trigger's event: its payload, or the timeout's failure."""
        if event.get("status") != "resolved":
            raise AirflowSensorTimeout(self._timed_out(self._wait(), event.get("unresolved") or []))
        return event

    def _timed_out(self, wait: Wait, unresolved: list[dict[str, Any]]) -> str:
        return f"assay: waited {self.timeout:g} s and {wait.describe(unresolved)}"
