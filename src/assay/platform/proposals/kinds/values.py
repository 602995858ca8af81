"""Value sets: a categorical column whose values stopped growing (no new value in the later half
of the mined loads) is proposed ``ColumnValues "c" in [...]`` with every value it held."""

from __future__ import annotations

import json

from assay.engine import DataKind
from assay.platform.proposals.candidate import Backtest, Candidate, described, dqdl, expectation_id, safe_text
from assay.platform.proposals.history import History, metric, plain_name
from assay.store.proposals import StoredLoad

MOST = 30  # more values than this make no readable rule


class ValueSet:
    kind = "values"
    statement = "a categorical column with no new value in the later half of N loads holds only those values"

    def mine(self, history: History) -> list[Candidate]:
        found = []
        for column in history.columns(DataKind.STRING):
            span = history.span(column)
            if not span or not plain_name(column) or any(column not in load.values for load in span):
                continue
            first_seen: dict[str, int] = {}
            held: dict[str, int] = {}
            for i, load in enumerate(span):
                for value in load.values[column]:
                    first_seen.setdefault(value, i)
                    held[value] = held.get(value, 0) + 1
            if not held or len(held) > MOST or not all(safe_text(v) for v in held):
                continue
            newest = max(first_seen.values())
            if newest >= len(span) // 2:
                continue  # still growing
            nulls = any((metric(load, column, "NullCount") or 0) > 0 for load in span)
            values = sorted(held)
            listed = ",".join(json.dumps(v) for v in values) + (",NULL" if nulls else "")
            judged = history.judged(column)
            failed = sum(1 for load in judged if _fails(load, column, set(values), nulls))
            evidence = {
                "column": column,
                "loads": len(span),
                "values": {v: held[v] for v in values},
                "last_new_value": span[newest].logical_date.isoformat(),
                "nulls": nulls,
            }
            expectation = {
                "id": expectation_id("values", column),
                "rule": dqdl(f'ColumnValues "{column}" in [{listed}]'),
                "profile": history.profile.id,
                "mode": "advisory",
                "description": described(
                    f"{column} is one of {len(values)} values",
                    f"the same values in {len(span)} loads, none new since {evidence['last_new_value']}",
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
                    fingerprint=(*values, nulls),
                )
            )
        return found


def _fails(load: StoredLoad, column: str, values: set[str], nulls: bool) -> bool:
    held = load.values.get(column)
    if held is None:  # no value counts kept: a load that turned it into no category fails
        return True
    if not nulls and (metric(load, column, "NullCount") or 0) > 0:
        return True
    return any(v not in values for v in held)
