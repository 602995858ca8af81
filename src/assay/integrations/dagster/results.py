"""One assay run's outcomes as Dagster asset check results: one result per expectation.

The tables below are the whole mapping (docs/dagster.md, "What a result says"):

- **severity**: assay's ``warning`` is Dagster's ``WARN``; ``error`` and ``critical`` are
  ``ERROR`` (Dagster has no third level). An ``advisory`` expectation is ``WARN`` whatever its
  severity: assay never lets it fail anything (``--fail-on``, gates, notifications), so it never
  blocks a downstream asset either.
- **outcome**: ``passed`` passes; ``failed`` fails at the expectation's severity; ``skipped``
  (nothing to judge: no rows for the day, warming up) fails as ``WARN``, never blocking, because a
  check that said nothing about the data is not green (the web's catalog never shows such a run
  green either); ``config_error`` and ``system_error`` fail as ``ERROR``: the check could not run,
  which Dagster shows for a check of its own as a failure, and a blocking check that cannot judge
  the data must not let it through.

An expectation with ``by:`` has an outcome per group; its result is the worst of them (in the
order of :data:`WORST_FIRST`), with every group's in the ``groups`` metadata.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dagster as dg

from assay.platform.checks.document import Expectation
from assay.vocabulary import Outcome, Severity

SEVERITIES = {
    Severity.WARNING: dg.AssetCheckSeverity.WARN,
    Severity.ERROR: dg.AssetCheckSeverity.ERROR,
    Severity.CRITICAL: dg.AssetCheckSeverity.ERROR,
}

# An outcome's severity in Dagster when it is not assay's own severity (a failure's is).
OUTCOME_SEVERITIES = {
    Outcome.SKIPPED: dg.AssetCheckSeverity.WARN,
    Outcome.CONFIG_ERROR: dg.AssetCheckSeverity.ERROR,
    Outcome.SYSTEM_ERROR: dg.AssetCheckSeverity.ERROR,
}

WORST_FIRST = (Outcome.FAILED, Outcome.SYSTEM_ERROR, Outcome.CONFIG_ERROR, Outcome.SKIPPED, Outcome.PASSED)


def check_name(expectation_id: str) -> str:
    """The Dagster check name of an expectation: Dagster's names are letters, digits and ``_``,
    an assay id may also hold ``-``.

    >>> check_name("email-complete")
    'email_complete'
    """
    return expectation_id.replace("-", "_")


def severity(expectation: Expectation, outcome: Outcome = Outcome.FAILED) -> dg.AssetCheckSeverity:
    """The Dagster severity of ``expectation``'s result with ``outcome``."""
    if expectation.mode == "advisory":
        return dg.AssetCheckSeverity.WARN
    return OUTCOME_SEVERITIES.get(outcome) or SEVERITIES[Severity(expectation.severity)]


def worst(outcomes: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The outcome that speaks for an expectation: its only one, or its worst group's.

    >>> worst([{"outcome": "passed"}, {"outcome": "skipped"}, {"outcome": "failed", "group": {"r": "EU"}}])
    {'outcome': 'failed', 'group': {'r': 'EU'}}
    """
    return min(outcomes, key=lambda item: WORST_FIRST.index(Outcome(item["outcome"])))


def check_result(
    expectation: Expectation,
    outcomes: Sequence[Mapping[str, Any]],
    asset_key: dg.AssetKey,
    run: Mapping[str, Any],
) -> dg.AssetCheckResult:
    """The result of ``expectation`` from its outcomes in the run's JSON; ``run`` holds the
    run's ``run_id`` and ``summary_at`` (where its summary was written, a path or a URL)."""
    found = worst(outcomes)
    outcome = Outcome(found["outcome"])
    grouped = bool(expectation.by)  # an outcome per group: no one observed value
    metadata: dict[str, Any] = {
        "expectation": expectation.id,
        "outcome": outcome.value,
        "reason": found["reason"],
        "observed": None if grouped else found["observed"],
        "expected": expectation.expect if expectation.expect is not None else expectation.rule,
        "bounds": None if grouped else found["expected"],
        "severity": expectation.severity,
        "mode": expectation.mode,
        "message": found["message"],
        "assay_run_id": run["run_id"],
        "run_summary": run["summary_at"],
    }
    if grouped:
        metadata["groups"] = [
            {key: item[key] for key in ("group", "outcome", "observed", "expected", "reason")}
            for item in outcomes
        ]
    return dg.AssetCheckResult(
        check_name=check_name(expectation.id),
        asset_key=asset_key,
        passed=outcome is Outcome.PASSED,
        severity=severity(expectation, outcome),
        metadata=metadata,
        description=found["message"],
    )
