"""Checks proposed from a dataset's stored history (issue 12): mined, justified by their
evidence, backtested, dry-run, and activated only when a person accepts them.

>>> from assay.platform.proposals import KINDS
>>> KINDS
('order', 'uniqueness', 'values', 'completeness', 'range', 'volume', 'freshness', 'classify')
"""

from assay.platform.proposals.decide import Accepted, accept, reject
from assay.platform.proposals.kinds import KINDS, MINERS
from assay.platform.proposals.propose import (
    MIN_LOADS,
    Proposal,
    ProposalSet,
    demo_proposals,
    dry_run,
    propose,
    showcase,
)

__all__ = [
    "KINDS",
    "MINERS",
    "MIN_LOADS",
    "Accepted",
    "Proposal",
    "ProposalSet",
    "accept",
    "demo_proposals",
    "dry_run",
    "propose",
    "reject",
    "showcase",
]
