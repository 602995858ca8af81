"""Incidents: a run's failures grouped so that the right person hears once.

Check and event runs judge their outcomes here themselves; gate, profile and DQDL runs through
:mod:`assay.platform.alerts`, which reads their summaries into the same outcomes.

A failure belongs to the incident of its key: dataset + quality dimension + expectation (+ the
group, for an expectation with ``divide_by_group: true``). At most one incident of a key is
unresolved at a time. An incident is ``open`` → ``acknowledged`` → ``resolved``, or ``muted``
until a time. Its owners hear of it when it opens, when its severity escalates, when its observed
value moves by more than ``incidents.move_share`` of the value they last heard, and when it
resolves; never on a repeat. It resolves by itself after :data:`PASSES_TO_RESOLVE` consecutive
passing evaluations; a failure within :data:`REOPEN_WITHIN` of its resolution reopens it.

Everything here runs inside the check run's commit (the transaction of its outcomes), so the
incidents, their events and the notifications they cause (the outbox) land with the outcomes or
not at all. Only evaluations later than the one an incident last counted change it: a re-run of
the same logical time, or a backfill of an earlier one, leaves incidents as they are.

A ``config_error`` outcome is sent to its route once per distinct error (same dataset,
expectation and message), a ``system_error`` once per source per :data:`SYSTEM_ERROR_EVERY`;
neither opens an incident (they are not statements about the data). Advisory expectations and
dry runs never notify.
"""

from assay.platform.incidents.actions import acknowledge, mute, raise_config, resolve
from assay.platform.incidents.errors import run_error
from assay.platform.incidents.judging import judge, notify_incident
from assay.platform.incidents.keys import (
    CAUSES,
    DIMENSIONS,
    NAMESPACE,
    PASSES_TO_RESOLVE,
    REOPEN_WITHIN,
    SYSTEM_ERROR_EVERY,
    Context,
    Evaluation,
    dimension_of,
    evaluations,
)

__all__ = [
    "CAUSES",
    "DIMENSIONS",
    "NAMESPACE",
    "PASSES_TO_RESOLVE",
    "REOPEN_WITHIN",
    "SYSTEM_ERROR_EVERY",
    "Context",
    "Evaluation",
    "acknowledge",
    "dimension_of",
    "evaluations",
    "judge",
    "mute",
    "notify_incident",
    "raise_config",
    "resolve",
    "run_error",
]
