"""A proposal before it is stored: its expectation, the numbers that justify it and its backtest.

Each kind of proposal (:mod:`assay.platform.proposals.kinds`) mines :class:`Candidate` values
from a :class:`~assay.platform.proposals.history.History`; :mod:`assay.platform.proposals.propose`
dry-runs them, records them and filters them by intent.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from dataclasses import dataclass
from typing import Any

from assay.lang.dqdl.printer import rule_text
from assay.platform.checks.rules import parse_rule

NAMESPACE = uuid.UUID("6f1d8a43-52c1-4b8e-9a55-1b0b7c3e2d10")
"""The namespace of proposal ids: uuid5(dataset, kind, target) is the same proposal every time."""

_NOT_ID = re.compile(r"[^A-Za-z0-9_-]+")
_SAFE_TEXT = re.compile(r"^[^\"\\\x00-\x1f\x7f]*\S[^\"\\\x00-\x1f\x7f]*$")


@dataclass(frozen=True)
class Backtest:
    """On how many stored loads the expectation could be judged, and on how many it fails."""

    loads: int
    would_have_failed: int

    def to_dict(self) -> dict[str, int]:
        return {"loads": self.loads, "would_have_failed": self.would_have_failed}


@dataclass
class Candidate:
    """One proposed expectation, as a kind mined it."""

    kind: str
    target: str  # what it is about: a column, two columns in order, "row_count"
    columns: tuple[str, ...]
    expectation: dict[str, Any]
    evidence: dict[str, Any]
    backtest: Backtest
    fingerprint: tuple[Any, ...]  # what, with the strength of its evidence, a rejection is keyed by
    requires: dict[str, Any] | None = None  # {"profile": id, "metrics": [entries]} it needs
    dry_run: dict[str, Any] | None = None
    score: float = 0.0  # how well it matches an intent

    def id(self, dataset: str) -> str:
        """The proposal's stable id: the same dataset, kind and target give the same id."""
        return str(uuid.uuid5(NAMESPACE, json.dumps([dataset, self.kind, self.target])))

    def evidence_hash(self) -> str:
        """What a rejection holds for: the proposal's substance (:attr:`fingerprint`: its
        bounds, values or columns) and the strength of its evidence, counted in doublings of
        the loads it was mined from. A proposal rejected on 20 loads comes back when it held on
        40, or at once when its bounds or values change; not every day a load is added."""
        loads = int(self.evidence.get("loads") or 1)
        strength = int(math.log2(max(loads, 1)))
        text = json.dumps([self.kind, self.target, list(self.fingerprint), strength], default=str)
        return hashlib.sha256(text.encode()).hexdigest()


def expectation_id(*parts: str) -> str:
    """An expectation id from a kind and its columns (letters, digits, ``_`` and ``-``).

    >>> expectation_id("complete", "customer id")
    'complete-customer-id'
    """
    text = "-".join(_NOT_ID.sub("-", p).strip("-") for p in parts if p)
    return text if text[:1].isalpha() or text[:1] == "_" else f"p-{text}"


def safe_text(value: str) -> bool:
    """Whether ``value`` can be written as a DQDL string as it is (no quote, backslash or
    control character, not blank).

    >>> safe_text("EU"), safe_text('say "hi"'), safe_text(" ")
    (True, False, False)
    """
    return bool(_SAFE_TEXT.match(value))


def dqdl(text: str) -> str:
    """A DQDL rule's canonical text, after checking that it parses (built from checked names)."""
    return rule_text((parse_rule(text).rules or ())[0])


def number(value: float) -> str:
    """A bound as DQDL writes it: integers without a fraction.

    >>> number(14.0), number(0.35000000000000003), number(-2.5)
    ('14', '0.35', '-2.5')
    """
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.10g}"


DURATION_UNITS = (("day", 86400), ("hour", 3600), ("minute", 60))
"""The units a check document's durations are written in (``<= 6 hours``), largest first."""


def duration(seconds: float) -> str:
    """A whole number of minutes as a check document writes it, in the largest exact unit.

    >>> duration(3600), duration(36 * 3600), duration(2 * 86400), duration(5400)
    ('1 hour', '36 hours', '2 days', '90 minutes')
    """
    for unit, size in DURATION_UNITS:
        if seconds >= size and seconds % size == 0:
            n = int(seconds // size)
            return f"{n} {unit}" if n == 1 else f"{n} {unit}s"
    raise ValueError(f"{seconds} seconds is not a whole number of minutes")


def described(statement: str, evidence_line: str) -> str:
    """The ``description`` a proposed expectation carries: what it says and why."""
    return f"Proposed by assay: {statement}; {evidence_line}."
