"""OpenLineage run events from every run (docs/openlineage.md): the driver wraps each run in
:func:`watch`, which emits nothing, and imports nothing of the client, unless lineage is
configured (:mod:`.settings`); the events are made from what the run found (:mod:`.facts`), named
as the spec names datasets (:mod:`.naming`) and sent by the official client (:mod:`.events`).

For lineage-aware routing: :func:`assay.platform.lineage.naming.identity` is the OpenLineage
name of a source (what other tools' events call the same data), and every dataset in assay's
events carries the name assay knows it by in a ``symlinks`` facet (namespace: the jobs').
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from assay.platform.lineage.settings import Settings, emitting_to, settings
from assay.vocabulary import RunState

if TYPE_CHECKING:
    from assay.platform.runs.driver import Driver

__all__ = ["Settings", "emitting_to", "settings", "watch"]


@contextmanager
def watch(driver: Driver, flow: Any) -> Iterator[None]:
    """Around one run of ``flow``: its START event before, COMPLETE or FAIL after (an error
    raised by the run goes on as it was). A dry run emits nothing: it did nothing."""
    chosen = None if driver.dry_run else settings(driver.workspace.root)
    if chosen is None:
        yield
        return
    try:
        from assay.platform.lineage.events import Emission, warn
    except ImportError:
        _missing_client(driver)
        yield
        return
    driver.run_id = driver.run_id or str(uuid.uuid4())  # the events name the run before it starts
    emission = Emission(chosen, flow, driver.run_id, driver.workspace.root)
    emission.start()
    try:
        yield
    except BaseException as error:
        warn(emission.end(error, completed=False), driver.run_id)
        raise
    run = driver.current
    warnings = emission.end(None, completed=run.state is RunState.COMPLETED, message=run.error)
    if warnings:
        warn(warnings, driver.run_id)
        _keep(driver, warnings)


def _keep(driver: Driver, warnings: list[str]) -> None:
    """The warnings in the run's ``runs/<id>.json``, beside what its commit recorded."""
    if not driver.recorded:
        return
    with suppress(Exception):  # the summary is the run's; stderr said it already
        driver.workspace.write_run(driver.current.id, {**driver.recorded, "lineage": {"warnings": warnings}})


def _missing_client(driver: Driver) -> None:
    import sys

    sys.stderr.write(
        "warning: OpenLineage is configured, but its client is not installed: "
        "pip install 'assay[openlineage]' (no events were sent)\n"
    )
