"""Completeness: a column that was never null in any mined load is proposed ``IsComplete``."""

from __future__ import annotations

from assay.engine import DataKind
from assay.platform.proposals.candidate import Backtest, Candidate, described, dqdl, expectation_id
from assay.platform.proposals.history import History, metric, plain_name

_KINDS = tuple(DataKind)


class Completeness:
    kind = "completeness"
    statement = "a column never null in any of N loads is complete"

    def mine(self, history: History) -> list[Candidate]:
        found = []
        for column in history.columns(*_KINDS):
            span = history.span(column)
            if not span or not plain_name(column):
                continue
            nulls = [metric(load, column, "NullCount") for load in span]
            if any(n is None or n > 0 for n in nulls):
                continue
            judged = history.judged(column)
            failed = sum(1 for load in judged if (metric(load, column, "NullCount") or 0) > 0)
            rows = sum(load.row_count or 0 for load in span)
            evidence = {
                "column": column,
                "loads": len(span),
                "first": span[0].logical_date.isoformat(),
                "last": span[-1].logical_date.isoformat(),
                "rows": rows,
                "nulls": 0,
            }
            expectation = {
                "id": expectation_id("complete", column),
                "rule": dqdl(f'IsComplete "{column}"'),
                "profile": history.profile.id,
                "mode": "advisory",
                "description": described(
                    f"{column} is never null",
                    f"no null in {rows:,} rows of {len(span)} loads "
                    f"({evidence['first']} to {evidence['last']})",
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
