"""The result of evaluating a ruleset, and its JSON form (the ``--json`` contract).

Outcomes are :class:`~assay.vocabulary.Outcome` values here as everywhere inside assay; Glue's
strings (``Passed``, ``Failed``, ``Error``) appear only where Glue's format is the contract: the
JSON (``to_dict``), the console's counts, and :attr:`RuleOutcome.outcome`, the public DQDL API's
string that scripts ported from Glue compare.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assay.vocabulary import Outcome, Severity

if TYPE_CHECKING:
    import pyarrow as pa


def json_number(value: float | None) -> float | None:
    """JSON has no NaN or infinity: those become null (the rule's message says why)."""
    if value is None or not math.isfinite(value):
        return None
    return value


def _json_bounds(expected: dict[str, Any] | None) -> dict[str, Any] | None:
    if expected is None:
        return None
    return {
        k: [json_number(x) for x in v] if isinstance(v, list) else json_number(v) for k, v in expected.items()
    }


@dataclass(frozen=True)
class RuleOutcome:
    """One top-level rule's outcome: ``passed``, ``failed`` or ``config_error`` (a rule that
    could not be judged), which Glue says ``Passed``, ``Failed`` or ``Error``.

    >>> done = RuleOutcome("RowCount > 0", Outcome.PASSED, None, {"Dataset.*.RowCount": 3.0}, {})
    >>> done.outcome, done.to_dict()["outcome"]
    ('Passed', 'Passed')
    """

    rule: str
    state: Outcome
    message: str | None
    metrics: dict[str, float | None]
    labels: dict[str, str]
    # what a passed rule calls present that assay calls missing (platform/runs/blanks.py)
    note: str | None = None
    expected: dict[str, Any] | None = None  # the bounds a comparison was judged against

    @property
    def outcome(self) -> str:
        """Glue's word for :attr:`state`, as the DQDL JSON and console say it."""
        return self.state.glue

    @property
    def level(self) -> Severity | None:
        """Where the rule stands on ``--fail-on``'s scale: DQDL rules carry no severity, so a
        failed rule is a ``warning`` and a rule that could not be judged an ``error`` (a failure
        says something about the data, an error says the run could not look); None when it
        passed. These keep ``--fail-on failed`` and ``--fail-on error`` meaning what they did."""
        if self.state is Outcome.PASSED:
            return None
        return Severity.WARNING if self.state is Outcome.FAILED else Severity.ERROR

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "outcome": self.outcome,
            "message": self.message,
            "metrics": {k: json_number(v) for k, v in self.metrics.items()},
            "labels": dict(self.labels),
            **({"note": self.note} if self.note else {}),
            "expected": _json_bounds(self.expected),
        }


@dataclass
class AnalyzerOutcome:
    """One analyzer's metrics; a Distribution analyzer also has one distribution per column
    (``column``, ``data_type``, ``bin_edges``, ``counts``: Glue's DistributionData)."""

    analyzer: str
    metrics: dict[str, float | None]
    errors: list[str] = field(default_factory=list)
    distributions: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "analyzer": self.analyzer,
            "metrics": {k: json_number(v) for k, v in self.metrics.items()},
        }
        if self.distributions:
            out["distributions"] = [dict(d) for d in self.distributions]
        return out


@dataclass
class EvaluationResult:
    """What :func:`assay.dqdl.evaluate` returns. ``to_dict()`` is exactly the ``--json`` file."""

    dataset: str | None
    rules: list[RuleOutcome]
    analyzers: list[AnalyzerOutcome]
    row_level: pa.Table | None = None
    run_id: str | None = None
    load_id: int | None = None
    queries: int = 0

    @property
    def score(self) -> float | None:
        """Passed / (passed + failed). Rules in ``Error`` could not run and count neither way
        (seed 003: a broken check must not skew a quality score); None when nothing was judged."""
        judged = [r for r in self.rules if r.state.counted]
        if not judged:
            return None
        return sum(r.state is Outcome.PASSED for r in judged) / len(judged)

    def counts(self) -> dict[str, int]:
        """How many rules are in each of Glue's outcomes (the DQDL console's summary line)."""
        out = {"Passed": 0, "Failed": 0, "Error": 0}
        for rule in self.rules:
            out[rule.outcome] += 1
        return out

    def levels(self) -> list[Severity]:
        """Each rule that did not pass, at its level on ``--fail-on``'s scale (:attr:`RuleOutcome.level`)."""
        return [r.level for r in self.rules if r.level is not None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "score": self.score,
            "rules": [r.to_dict() for r in self.rules],
            "analyzers": [a.to_dict() for a in self.analyzers],
        }
