"""Crash points, and failing attempts: the faults the crash and retry tests inject, named.

The crash-safety tests (``tests/lifecycle/``, ``tests/checks/test_crash.py``) start ``assay gate``,
``assay run --due`` or another command in a subprocess with ``ASSAY_CRASH_AT=<point>``; when the
process reaches that point it sends itself SIGKILL, exactly as an out-of-memory killer or a
pulled plug would stop it, between two writes. Nothing else reads the variable, and a run
without it pays one dictionary lookup per point.

The retry tests (``tests/platform/test_five_flows.py``) set ``ASSAY_FAIL_ATTEMPTS=N``: the first
N attempts of each step a run retries (:meth:`assay.platform.runs.driver.Driver.attempt`, one
label a step) fail in that process with a :class:`~assay.errors.PlatformError` naming this hook,
as an engine that lost its connection would; a run without it reads the variable once an attempt.

>>> checkpoint("before-commit")  # no ASSAY_CRASH_AT: nothing happens
>>> fallible("daily", lambda: 3)()  # no ASSAY_FAIL_ATTEMPTS: the step itself
3
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Callable
from typing import TypeVar

from assay.errors import ConfigError, PlatformError

ENV = "ASSAY_CRASH_AT"
FAIL_ENV = "ASSAY_FAIL_ATTEMPTS"
T = TypeVar("T")
_failed = Counter[str]()  # attempts failed on purpose so far in this process, by label

POINTS = (
    "after-start",  # the run record says running; nothing else written
    "after-measure",  # pending loads and metrics written
    "after-stage",  # quarantine, held rows and the manifest staged
    "before-commit",  # about to commit the Iceberg snapshot
    "after-commit",  # the snapshot is committed; the store does not know yet
    "after-settle",  # the store transaction settled loads, decisions and the run
    "after-publish",  # one staged file was moved into place (the first one)
    "after-summary",  # runs/<id>.json written; the staging folder still there
)
"""Every crash point, in the order a gate run passes them."""

DECISION_POINTS = ("after-document",)  # accepting a proposal wrote the document, not the decision yet
"""The crash points of accepting a proposal (:mod:`assay.platform.proposals.decide`)."""

SCHEDULE_POINTS = ("after-claim",)  # a pass claimed a tick (its row names its run), the run not started
"""The crash points of a scheduler pass (:mod:`assay.platform.schedule`); the run it starts then
passes the run's points."""

RECOVERY_POINTS = ("in-recovery",)  # a dead run recorded as abandoned and its notice written, not committed
"""The crash points of recovering a dead run (:mod:`assay.platform.runs.recover`)."""

DELIVERY_POINTS = ("after-send",)  # a delivery pass sent a notification and has not recorded it yet
"""The crash points of a delivery pass (:mod:`assay.platform.outbox`)."""


REPORT_POINTS = ("report-partial",)  # a --junit file written whole beside its target, not renamed yet
"""The crash point of writing a report (:func:`assay.platform.reports.junit.write`)."""


def checkpoint(name: str) -> None:
    """Kill this process here if the crash tests asked for it (``ASSAY_CRASH_AT=name``)."""
    if os.environ.get(ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def fallible(label: str, step: Callable[[], T]) -> Callable[[], T]:
    """``step``, whose first N attempts under ``label`` in this process fail with a
    :class:`PlatformError` when the retry tests ask for it (``ASSAY_FAIL_ATTEMPTS=N``); ``step``
    itself otherwise."""
    wanted = os.environ.get(FAIL_ENV)
    if not wanted:
        return step
    if not wanted.isdigit():
        raise ConfigError(f"{FAIL_ENV} must be a whole number of attempts, not '{wanted}'")

    def failing() -> T:
        if _failed[label] < int(wanted):
            _failed[label] += 1
            raise PlatformError(f"{label}: attempt {_failed[label]} failed on purpose ({FAIL_ENV}={wanted})")
        return step()

    return failing
