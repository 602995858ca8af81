"""The run summary of a gate run (the ``--summary`` file and ``<workspace>/runs/<run_id>.json``).

Fields named by the contract: ``run_id, contributor, contributor_type, table, source {path,
sha256}, total, passed, quarantined, warned, rules {rule_id: {severity, category, passed,
failed, skipped}}, groups [{statement_date, rows, dataset_rules [{rule_id, outcome, observed,
message}]}]``; ``total == passed + quarantined + held`` always (``held``: rows waiting for a decision on a
never-seen value). Extra fields are additions: ``quarantined_by {rule_id: {rows, rule, reason}}``
(the rows each rule or reason of the gate quarantined, a row under each it failed) and
``incidents`` (what the run did to incidents, :mod:`assay.platform.alerts`) and ``read`` (the
reading options given, when any: ``assay gate audit`` reads the batch again with them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.judge.result import json_number


@dataclass
class RuleStats:
    severity: str
    category: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    dqdl: str = ""  # the rule's DQDL text

    def to_dict(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "category": self.category,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "dqdl": self.dqdl,
        }


@dataclass
class GroupRule:
    rule_id: str
    severity: str
    outcome: str
    observed: float | None
    message: str | None

    def to_dict(self) -> dict[str, Any]:
        observed = json_number(self.observed)
        return {
            "rule_id": self.rule_id,
            "outcome": self.outcome,
            "observed": observed,
            "message": self.message,
        }


@dataclass
class Group:
    statement_date: str
    rows: int
    dataset_rules: list[GroupRule] = field(default_factory=list)
    rejected: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "statement_date": self.statement_date,
            "rows": self.rows,
            "dataset_rules": [r.to_dict() for r in self.dataset_rules],
            "rejected": self.rejected,
        }


@dataclass
class Summary:
    run_id: str
    contributor: str
    contributor_type: str
    table: str
    source_path: str
    source_sha256: str
    total: int = 0
    passed: int = 0
    quarantined: int = 0
    warned: int = 0
    held: int = 0
    parse_errors: int = 0
    rules: dict[str, RuleStats] = field(default_factory=dict)
    groups: list[Group] = field(default_factory=list)
    started_at: str = ""
    finished_at: str = ""
    quarantine_file: str | None = None
    held_file: str | None = None
    decisions: list[int] = field(default_factory=list)
    snapshot_id: int | None = None
    replaced_dates: list[str] = field(default_factory=list)
    baseline_date: str | None = None
    duplicate_of: str | None = None
    quarantined_by: dict[str, dict[str, Any]] = field(default_factory=dict)
    incidents: dict[str, int] | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)  # the read's and measure's tries
    read: dict[str, Any] = field(default_factory=dict)  # the reading options not left at their defaults

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "contributor": self.contributor,
            "contributor_type": self.contributor_type,
            "table": self.table,
            "source": {"path": self.source_path, "sha256": self.source_sha256},
            "total": self.total,
            "passed": self.passed,
            "quarantined": self.quarantined,
            "warned": self.warned,
            "held": self.held,
            "parse_errors": self.parse_errors,
            "rules": {rule_id: stats.to_dict() for rule_id, stats in self.rules.items()},
            "groups": [g.to_dict() for g in self.groups],
            "baseline_date": self.baseline_date,
            "replaced_dates": self.replaced_dates,
            "quarantine_file": self.quarantine_file,
            "held_file": self.held_file,
            "decisions": self.decisions,
            "snapshot_id": self.snapshot_id,
            "duplicate_of": self.duplicate_of,
            "quarantined_by": self.quarantined_by,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "attempts": self.attempts,
            **({"incidents": self.incidents} if self.incidents is not None else {}),
            **({"read": self.read} if self.read else {}),
        }
