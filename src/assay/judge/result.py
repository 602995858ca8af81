"""The result of evaluating a ruleset, and its JSON form (the ``--json`` contract)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa


def json_number(value: float | None) -> float | None:
    """JSON has no NaN or infinity: those become null (the rule's message says why)."""
    if value is None or not math.isfinite(value):
        return None
    return value


@dataclass
class RuleOutcome:
    """One top-level rule's outcome: ``Passed``, ``Failed`` or ``Error``."""

    rule: str
    outcome: str
    message: str | None
    metrics: dict[str, float | None]
    labels: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "outcome": self.outcome,
            "message": self.message,
            "metrics": {k: json_number(v) for k, v in self.metrics.items()},
            "labels": dict(self.labels),
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
        judged = [r for r in self.rules if r.outcome in ("Passed", "Failed")]
        if not judged:
            return None
        return sum(r.outcome == "Passed" for r in judged) / len(judged)

    def counts(self) -> dict[str, int]:
        out = {"Passed": 0, "Failed": 0, "Error": 0}
        for rule in self.rules:
            out[rule.outcome] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "score": self.score,
            "rules": [r.to_dict() for r in self.rules],
            "analyzers": [a.to_dict() for a in self.analyzers],
        }
