"""Decisions on never-seen values, taken: one service for the CLI and the web.

A decision is opened by the drift monitor or the gate (a new value goes to a person, never to a
default) and settled here: the decision is recorded with who and when, with its audit row
(``decision.accept`` or ``decision.reject``: one per decision, whoever calls), then the rows the gate
held for it are released: committed when accepted (and waiting on nothing else), quarantined
when rejected (:func:`assay.gate.holds.release`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.errors import ConfigError
from assay.workspace import Workspace

STATUSES = ("accepted", "rejected")


@dataclass
class Taken:
    """What deciding did: the decisions taken and one line per file of held rows released."""

    decisions: list[Any] = field(default_factory=list)
    released: list[str] = field(default_factory=list)


def decide(
    workspace: Workspace,
    store: Any,
    status: str,
    *,
    by: str,
    decision_id: int | None = None,
    dataset: str | None = None,
    column: str | None = None,
    note: str | None = None,
) -> Taken:
    """Accept or reject one pending decision (``decision_id``), or every pending one of
    ``dataset`` (and ``column``), and release the rows held for them.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from assay.store import MetricStore
    >>> space = Workspace(Path(tempfile.mkdtemp()))
    >>> with MetricStore.open("sqlite://") as store:
    ...     d = store.open_decision("trades", "venue", "XNEW", 12, None)
    ...     [x.status for x in decide(space, store, "accepted", by="ana", decision_id=d).decisions]
    ['accepted']
    """
    from assay.gate.holds import release

    if status not in STATUSES:
        raise ConfigError(f"a decision is accepted or rejected, not {status!r}")
    if (decision_id is None) == (dataset is None):
        raise ConfigError("give a decision id, or a dataset (and column) for every pending decision there")
    action = f"decision.{'accept' if status == 'accepted' else 'reject'}"
    with store.transaction():
        if decision_id is not None:
            decided = [store.decide(decision_id, status, by=by, note=note)]
        else:
            assert dataset is not None
            decided = store.decide_all(dataset, status, by=by, column=column, note=note)
        for d in decided:
            detail = {"column": d.column, "value": d.value, "note": d.note}
            store.audit(by, action, str(d.id), dataset=d.dataset, detail=detail)
    taken = Taken(decided)
    for decision in decided:
        taken.released += release(workspace, store, decision)
    return taken
