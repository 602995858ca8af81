"""The kinds of proposals, one small class each, each with a one-line statement of its rule.

A kind reads a :class:`~assay.platform.proposals.history.History` (stored numbers only, never
the data: a classification reads the shares of value shapes a profile stores) and returns its
:class:`~assay.platform.proposals.candidate.Candidate` values, each with its evidence and its
backtest. :data:`MINERS` is the one table of them.
"""

from __future__ import annotations

from typing import Protocol

from assay.platform.proposals.candidate import Candidate
from assay.platform.proposals.history import History
from assay.platform.proposals.kinds.classify import Classify
from assay.platform.proposals.kinds.completeness import Completeness
from assay.platform.proposals.kinds.freshness import Freshness
from assay.platform.proposals.kinds.order import Order
from assay.platform.proposals.kinds.ranges import Range
from assay.platform.proposals.kinds.uniqueness import Uniqueness
from assay.platform.proposals.kinds.values import ValueSet
from assay.platform.proposals.kinds.volume import Volume


class Miner(Protocol):
    kind: str
    statement: str

    def mine(self, history: History) -> list[Candidate]: ...


MINERS: tuple[Miner, ...] = (
    Order(),
    Uniqueness(),
    ValueSet(),
    Completeness(),
    Range(),
    Volume(),
    Freshness(),
    Classify(),
)
"""Every kind, in the order proposals are listed when no intent ranks them."""

KINDS = tuple(m.kind for m in MINERS)

EARLY: tuple[Miner, ...] = (Classify(),)
"""The kinds mined from however few loads (a classification protects; it judges nothing)."""

__all__ = ["EARLY", "KINDS", "MINERS", "Miner"]
