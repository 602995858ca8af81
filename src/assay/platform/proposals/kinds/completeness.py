"""Completeness: a column never missing (no null, no blank text) in any mined load is proposed complete.

Missing is a null or a blank text value (issue 30: one definition of missing, as the profile's
null-rate band counts it). A text column's proposal judges ``missing_rate(c) = 0``, which counts
both; DQDL's ``IsComplete`` keeps Glue's reading (nulls only) and would pass a load of blank
cells, so it is proposed only for the other kinds, whose blank cells are read as NULL.
"""

from __future__ import annotations

from assay.engine import DataKind
from assay.platform.proposals.candidate import Backtest, Candidate, described, dqdl, expectation_id
from assay.platform.proposals.history import History, metric, plain_name
from assay.store.proposals import StoredLoad

_KINDS = tuple(DataKind)


def missing(load: StoredLoad, column: str) -> float | None:
    """The column's nulls plus its blank text values in ``load`` (None when the nulls are not
    stored; a load profiled before blanks were counted has none)."""
    nulls = metric(load, column, "NullCount")
    if nulls is None:
        return None
    return nulls + (metric(load, column, "BlankCount") or 0.0)


class Completeness:
    kind = "completeness"
    statement = "a column never null nor blank in any of N loads is complete"

    def mine(self, history: History) -> list[Candidate]:
        found = []
        for column in history.columns(*_KINDS):
            span = history.span(column)
            if not span or not plain_name(column):
                continue
            counts = [missing(load, column) for load in span]
            if any(n is None or n > 0 for n in counts):
                continue
            judged = history.judged(column)
            failed = sum(1 for load in judged if (missing(load, column) or 0) > 0)
            rows = sum(load.row_count or 0 for load in span)
            evidence = {
                "column": column,
                "loads": len(span),
                "first": span[0].logical_date.isoformat(),
                "last": span[-1].logical_date.isoformat(),
                "rows": rows,
                "nulls": 0,
                "blanks": 0,
            }
            text = history.kind(column) is DataKind.STRING
            judgement: dict[str, object] = (
                {"metric": f"{history.profile.id}.missing_rate({column})", "expect": "= 0"}
                if text
                else {"rule": dqdl(f'IsComplete "{column}"'), "profile": history.profile.id}
            )
            expectation = {
                "id": expectation_id("complete", column),
                **judgement,
                "mode": "advisory",
                "description": described(
                    f"{column} is never null{' nor blank' if text else ''}",
                    f"no null{' nor blank' if text else ''} in {rows:,} rows of {len(span)} loads "
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
                    requires=(
                        {"profile": history.profile.id, "metrics": [{"missing_rate": [column]}]}
                        if text
                        else None
                    ),
                )
            )
        return found
