"""The trigger the deferred sensor waits on: it polls the store every ``poke_interval`` seconds,
off the triggerer's event loop (``asyncio.to_thread``: the store's reads block), until the wait's
incidents are resolved or its deadline passes. Airflow re-imports it by its class path."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from assay.integrations.airflow.waits import Wait


class AssayIncidentTrigger(BaseTrigger):
    """Fires ``{"status": "resolved"}`` when nothing the wait names is unresolved, or
    ``{"status": "timeout", "unresolved": [...]}`` at ``deadline`` (epoch seconds), which the
    sensor turns into its failure; the deadline is the trigger's own so that a run with no
    triggerer timeout (``dag.test()`` runs triggers inline) still ends."""

    def __init__(self, wait: dict[str, Any], poke_interval: float, deadline: float) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # Airflow's base has no annotations
        self.wait, self.poke_interval, self.deadline = wait, poke_interval, deadline

    def serialize(self) -> tuple[str, dict[str, Any]]:
        kwargs = {"wait": self.wait, "poke_interval": self.poke_interval, "deadline": self.deadline}
        return f"{type(self).__module__}.{type(self).__qualname__}", kwargs

    async def run(self) -> AsyncIterator[TriggerEvent]:
        wait = Wait(**self.wait)
        polls = 0
        while True:
            unresolved = await asyncio.to_thread(wait.unresolved)
            polls += 1
            if not unresolved:
                yield TriggerEvent(  # type: ignore[no-untyped-call]
                    {"status": "resolved", "polls": polls, **self.wait}
                )
                return
            self.log.info("poll %d: %s", polls, wait.describe(unresolved))  # the triggerer's log
            if time.time() >= self.deadline:
                yield TriggerEvent(  # type: ignore[no-untyped-call]
                    {"status": "timeout", "unresolved": unresolved, **self.wait}
                )
                return
            await asyncio.sleep(min(self.poke_interval, max(self.deadline - time.time(), 0)))
