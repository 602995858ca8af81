"""Classification: a column whose values look like e-mail addresses, phone, identity or card numbers
in the stored loads is proposed classified ``pii`` (``dataset.classified``, docs/privacy.md).

The shares come from every profiled load's first rows (:mod:`assay.measure.shapes`: only the
shares are stored, never a value). Unlike the other kinds, this one reads the latest load too and
needs no run of loads: a classification protects, it judges nothing, so there is no problem of
today's load to learn as normal, and a column of e-mail addresses should be masked from its first
load on. A column is proposed when a shape reached :data:`THRESHOLD` of the sampled values of the
latest load and on average over every load that sampled it; when several shapes did, the most
specific wins (:data:`~assay.measure.shapes.PRECEDENCE`). Accepting it adds the column to the
document's ``dataset.classified`` (:func:`assay.platform.proposals.decide.accept`); a column
classified already, in any class, is not proposed.
"""

from __future__ import annotations

from assay.engine import DataKind
from assay.measure import shapes
from assay.platform.proposals.candidate import Backtest, Candidate, described, expectation_id
from assay.platform.proposals.history import History, metric
from assay.store.proposals import StoredLoad

THRESHOLD = 0.9
"""The share of a column's sampled values that must have a shape for it to be proposed classified."""

CLASS = "pii"
"""The class proposed for every shape: each identifies a person."""

NAMES = {
    "email": "e-mail addresses",
    "phone": "phone numbers",
    "identity_number": "identity numbers",
    "card_number": "card numbers",
}


def share(load: StoredLoad, column: str, shape: str) -> float:
    """The share of ``column``'s sampled values of ``load`` that have ``shape`` (a shape no sampled
    value had is not stored: 0)."""
    return metric(load, column, shapes.METRICS[shape]) or 0.0


class Classify:
    kind = "classify"
    statement = "a column whose sampled values look personal (e-mail, phone, identity or card numbers) is pii"

    def mine(self, history: History) -> list[Candidate]:
        found = []
        for column in history.columns(DataKind.STRING, DataKind.INTEGER):
            # the loads that sampled the column (none profiled before shapes were, or all-null rows)
            loads = [load for load in history.loads if metric(load, column, shapes.SAMPLED)]
            if not loads or loads[-1] is not history.latest:
                continue
            picked = None
            for shape in shapes.PRECEDENCE:
                shares = [share(load, column, shape) for load in loads]
                mean = sum(shares) / len(shares)
                if shares[-1] >= THRESHOLD and mean >= THRESHOLD:
                    picked = (shape, shares, mean)
                    break
            if picked is None:
                continue
            shape, shares, mean = picked
            sampled = int(sum(metric(load, column, shapes.SAMPLED) or 0 for load in loads))
            below = sum(1 for s in shares if s < THRESHOLD)
            evidence = {
                "column": column,
                "shape": shape,
                "class": CLASS,
                "loads": len(loads),
                "first": loads[0].logical_date.isoformat(),
                "last": loads[-1].logical_date.isoformat(),
                "sampled": sampled,
                "share": round(mean, 4),
                "latest_share": shares[-1],
                "threshold": THRESHOLD,
            }
            proposal = {
                "id": expectation_id("classify", column),
                "classified": {CLASS: [column]},
                "description": described(
                    f"{column} holds {NAMES[shape]}: classify it {CLASS}",
                    f"{mean:.0%} of {sampled:,} sampled values of {len(loads)} load(s) "
                    f"({evidence['first']} to {evidence['last']}) look like {NAMES[shape]}",
                ),
            }
            found.append(
                Candidate(
                    self.kind,
                    column,
                    (column,),
                    proposal,
                    evidence,
                    Backtest(len(loads), below),
                    fingerprint=(column, shape, CLASS),
                    dry_run={"outcome": None, "observed": shares[-1]},
                )
            )
        return found
