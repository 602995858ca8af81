"""A run of an event's contracts on one window: the front doors (:func:`run_event`,
:func:`run_events`) and what the CLI, the scheduler and the docs read of a run's result.

The run itself is a flow on the one driver (:class:`assay.platform.runs.event.EventRun`, see
:mod:`assay.platform.runs.driver`): measure → persist → judge, ONE query, no rescans; its
judgement is :mod:`assay.platform.events.judging`.
"""

from __future__ import annotations

from assay.platform.events.judging import EVENT_METRICS, EventResult, window_start
from assay.platform.runs.event import EventRun, run_event, run_events

__all__ = [
    "EVENT_METRICS",
    "EventResult",
    "EventRun",
    "run_event",
    "run_events",
    "window_start",
]
