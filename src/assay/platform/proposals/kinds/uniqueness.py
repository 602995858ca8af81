"""Uniqueness: a text or integer column whose every value was distinct within each mined load
(at least 20 values a load) is a key: proposed ``IsUnique``."""

from __future__ import annotations

from assay.engine import DataKind
from assay.measure.profile import CAP
from assay.platform.proposals.candidate import Backtest, Candidate, described, dqdl, expectation_id
from assay.platform.proposals.history import History, metric, plain_name
from assay.store.proposals import StoredLoad

MIN_VALUES = 20  # fewer values a load are no evidence of a key
ESTIMATED = 0.03  # a distinct count estimated by HyperLogLog is within a few percent


class Uniqueness:
    kind = "uniqueness"
    statement = "a text or integer column with no repeated value in any of N loads is unique"

    def mine(self, history: History) -> list[Candidate]:
        found = []
        for column in history.columns(DataKind.STRING, DataKind.INTEGER, DataKind.DECIMAL):
            span = history.span(column)
            if not span or not plain_name(column):
                continue
            verdicts = [_unique(history, load, column) for load in span]
            if not all(v is True for v in verdicts):
                continue
            if any(_present(load, column) < MIN_VALUES for load in span):
                continue
            judged = history.judged(column)
            failed = sum(1 for load in judged if _unique(history, load, column) is False)
            estimated = sum(1 for load in span if _estimated(history, load, column))
            values = sum(_present(load, column) for load in span)
            evidence = {
                "column": column,
                "loads": len(span),
                "values": values,
                "distinct_per_load": "every value",
                "estimated_loads": estimated,
            }
            expectation = {
                "id": expectation_id("unique", column),
                "rule": dqdl(f'IsUnique "{column}"'),
                "profile": history.profile.id,
                "mode": "advisory",
                "description": described(
                    f"no two rows of a load share a {column}",
                    f"{values:,} values in {len(span)} loads, none repeated within its load",
                ),
            }
            found.append(
                Candidate(
                    self.kind,
                    column,
                    (column,),
                    expectation,
                    evidence,
                    Backtest(len(judged), failed),
                    fingerprint=(column,),
                )
            )
        return found


def _present(load: StoredLoad, column: str) -> int:
    nulls = metric(load, column, "NullCount") or 0
    return int((load.row_count or 0) - nulls)


def _estimated(history: History, load: StoredLoad, column: str) -> bool:
    """Whether the load's distinct count was estimated: its previous load had more than the
    profile's cap of values (docs/monitor.md, "What is measured")."""
    index = history.loads.index(load)
    if index == 0:
        return False
    before = metric(history.loads[index - 1], column, "DistinctValuesCount")
    return before is not None and before > CAP


def _unique(history: History, load: StoredLoad, column: str) -> bool | None:
    distinct = metric(load, column, "DistinctValuesCount")
    if distinct is None:
        return None
    present = _present(load, column)
    if _estimated(history, load, column):
        return abs(distinct - present) <= ESTIMATED * present
    return int(distinct) == present
