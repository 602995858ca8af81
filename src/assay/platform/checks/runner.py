"""A run of a check document: the front door (:func:`run_document`) and what the CLI, the web, the
scheduler and the queue read of a run's result.

The run itself is a flow on the one driver (:class:`assay.platform.runs.check.CheckRun`, see
:mod:`assay.platform.runs.driver`): measure → persist → judge, one query per profile, no rescans;
its judgement is :mod:`assay.platform.checks.judging`, its result :mod:`assay.platform.checks.outcomes`.
"""

from __future__ import annotations

from assay.platform.checks.outcomes import CheckResult, parse_at, summarize
from assay.platform.runs.check import CheckRun, default_engine, notify_config, run_document
from assay.platform.runs.driver import Attempt
from assay.vocabulary import Outcome


def failing_severities(result: CheckResult, threshold: str) -> bool:
    """Whether an enforced expectation of ``threshold`` severity or worse failed."""
    from assay.vocabulary import Severity, fail_on, reached

    found = (
        Severity(o["severity"])
        for o in result.outcomes
        if o["outcome"] == Outcome.FAILED.value and o["mode"] == "enforce"
    )
    return reached(found, fail_on(threshold))


__all__ = [
    "Attempt",
    "CheckResult",
    "CheckRun",
    "default_engine",
    "failing_severities",
    "notify_config",
    "parse_at",
    "run_document",
    "summarize",
]
