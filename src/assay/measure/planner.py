"""The scan planner: every metric a ruleset needs from one table, in ONE query.

Aggregates over the table become columns of one ``SELECT ... FROM table``; value-count
metrics (uniqueness, entropy, distinct counts) read frequency tables that the same statement
defines as CTEs; scalar queries (CustomSql, reference row counts) are scalar subqueries of
it. Identical requests are computed once. If that query fails (a user's SQL fails at run
time, say), each group of requests is run on its own so that only the guilty rule loses its
result (Deequ's `Try` per metric, applied to SQL).
"""

from __future__ import annotations

import decimal
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from assay.engine import Engine, EngineError
from assay.measure.requests import Aggregate, Frequencies, FrequencyAggregate, N, Request


@dataclass
class Measurements:
    """Values by slot name, and the engine's error for slots that could not be measured."""

    values: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def number(self, slot: str) -> float | None:
        """A slot's value as a float (None for NULL)."""
        value = self.values.get(slot)
        if value is None:
            return None
        if isinstance(value, bool):
            return 1.0 if value else 0.0
        if isinstance(value, int | float | decimal.Decimal):
            return float(value)
        raise TypeError(f"slot {slot} holds {type(value).__name__}, not a number")


class ScanPlan:
    """Collects requests against one table and measures them together.

    >>> import pyarrow as pa
    >>> from assay.engine import DuckDBEngine
    >>> from assay.measure.requests import count_star
    >>> engine = DuckDBEngine(); engine.register_arrow("t", pa.table({"a": [1, None]}))
    >>> plan = ScanPlan("t")
    >>> rows = plan.add(Aggregate(count_star()))
    >>> nonnull = plan.add(Aggregate(exp.Count(this=exp.column("a"))))
    >>> m = plan.run(engine); (m.number(rows), m.number(nonnull), engine.queries)
    (2.0, 1.0, 1)
    """

    def __init__(self, table: str) -> None:
        self.table = table
        self.requests: dict[str, Request] = {}
        self.groups: dict[str, list[str]] = {}
        self._slot_of: dict[str, str] = {}

    def add(self, request: Request, group: str = "") -> str:
        """Ask for a value; returns its slot name. ``group`` names the rule that asked, for isolation."""
        key = self._key(request)
        slot = self._slot_of.get(key)
        if slot is None:
            slot = f"m{len(self.requests)}"
            self._slot_of[key] = slot
            self.requests[slot] = request
        self.groups.setdefault(group, [])
        if slot not in self.groups[group]:
            self.groups[group].append(slot)
        return slot

    @staticmethod
    def _key(request: Request) -> str:
        if isinstance(request, Aggregate):
            return "a:" + request.expr.sql()
        if isinstance(request, FrequencyAggregate):
            return "f:" + request.freq.key() + ":" + request.expr.sql()
        return "s:" + request.query.sql()

    def select(self, slots: list[str] | None = None) -> exp.Select:
        """The query computing ``slots`` (all by default)."""
        chosen = list(self.requests) if slots is None else slots
        ctes: dict[str, tuple[str, Frequencies]] = {}
        projections: list[exp.Expr] = []
        scans_table = False
        for slot in chosen:
            request = self.requests[slot]
            if isinstance(request, Aggregate):
                projections.append(exp.alias_(request.expr.copy(), slot, quoted=True))
                scans_table = True
            elif isinstance(request, FrequencyAggregate):
                name, _ = ctes.setdefault(request.freq.key(), (f"__freq{len(ctes)}", request.freq))
                sub = exp.select(request.expr.copy()).from_(exp.to_identifier(name, quoted=True))
                projections.append(exp.alias_(exp.Subquery(this=sub), slot, quoted=True))
            else:
                projections.append(exp.alias_(exp.Subquery(this=request.query.copy()), slot, quoted=True))
        query = exp.select(*projections)
        if scans_table:
            query = query.from_(exp.to_identifier(self.table, quoted=True))
        for name, freq in ctes.values():
            query = query.with_(exp.to_identifier(name, quoted=True), as_=self._frequencies(freq))
        return query

    def _frequencies(self, freq: Frequencies) -> exp.Select:
        keys = [exp.column(c, quoted=True) for c in freq.columns]
        not_all_null = exp.or_(*(exp.Not(this=exp.Is(this=k.copy(), expression=exp.Null())) for k in keys))
        condition = not_all_null if freq.where is None else exp.and_(freq.where.copy(), not_all_null)
        return (
            exp.select(*keys, exp.alias_(exp.Count(this=exp.Star()), N, quoted=True))
            .from_(exp.to_identifier(self.table, quoted=True))
            .where(condition)
            .group_by(*(k.copy() for k in keys))
        )

    def run(self, engine: Engine) -> Measurements:
        """Measure everything in one query; on failure, measure each group on its own."""
        result = Measurements()
        if not self.requests:
            return result
        try:
            result.values.update(_first_row(engine.query(self.select())))
            return result
        except EngineError:
            pass
        for slots in self.groups.values():
            pending = [slot for slot in slots if slot not in result.values]
            if not pending:
                continue
            try:
                result.values.update(_first_row(engine.query(self.select(pending))))
            except EngineError as error:
                for slot in pending:
                    result.errors.setdefault(slot, error.message)
        return result


def _first_row(table: Any) -> Mapping[str, Any]:
    rows = table.to_pylist()
    return rows[0] if rows else {}
