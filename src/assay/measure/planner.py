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
from collections.abc import Callable, Mapping
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
        return self._build(slots)[0]

    def _build(self, slots: list[str] | None = None) -> tuple[exp.Select, dict[str, _LongSlot]]:
        """The query, and where each slot measured from a long frequency table is in its row."""
        chosen = list(self.requests) if slots is None else slots
        ctes: dict[str, tuple[str, Frequencies]] = {}
        projections: list[exp.Expr] = []
        scans_table = False
        singles = {
            request.freq.key()
            for request in (self.requests[slot] for slot in chosen)
            if isinstance(request, FrequencyAggregate) and len(request.freq.columns) == 1
        }
        # Many one-column frequency tables become one GROUP BY of (column, value) pairs: DuckDB
        # plans a statement of N grouped CTEs in about N² time and refuses it beyond its
        # expression depth (AllStatistics AllColumns on 500 columns).
        wide = len(singles) > WIDE
        longs: dict[str, _Long] = {}
        placed: dict[str, _LongSlot] = {}
        for slot in chosen:
            request = self.requests[slot]
            if isinstance(request, Aggregate):
                projections.append(exp.alias_(request.expr.copy(), slot, quoted=True))
                scans_table = True
            elif isinstance(request, FrequencyAggregate) and wide and len(request.freq.columns) == 1:
                where = request.freq.where.sql() if request.freq.where is not None else ""
                long = longs.setdefault(where, _Long(f"__long{len(longs)}", request.freq.where))
                placed[slot] = long.place(request.freq.columns[0], request.expr)
            elif isinstance(request, FrequencyAggregate):
                name, _ = ctes.setdefault(request.freq.key(), (f"__freq{len(ctes)}", request.freq))
                sub = exp.select(request.expr.copy()).from_(exp.to_identifier(name, quoted=True))
                projections.append(exp.alias_(exp.Subquery(this=sub), slot, quoted=True))
            else:
                projections.append(exp.alias_(exp.Subquery(this=request.query.copy()), slot, quoted=True))
        withs = [
            exp.CTE(
                this=self._frequencies(freq), alias=exp.TableAlias(this=exp.to_identifier(name, quoted=True))
            )
            for name, freq in ctes.values()
        ]
        for long in longs.values():
            withs.extend(long.ctes(self.table))
            projections.append(exp.alias_(long.listed(), long.name, quoted=True))
        query = exp.Select(expressions=projections)
        if scans_table:
            query.set("from_", exp.From(this=exp.Table(this=exp.to_identifier(self.table, quoted=True))))
        if withs:
            query.set("with_", exp.With(expressions=withs))
        return query, placed

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

    def statement(
        self, slots: list[str] | None = None
    ) -> tuple[exp.Select, Callable[[Mapping[str, Any]], dict[str, Any]]]:
        """The query computing ``slots`` (all by default), and the function that turns its one
        row into slot values: for a caller that runs the query inside a larger statement (a
        check document's profile joins its DQDL rules' scan to its own)."""
        query, placed = self._build(slots)

        def decode(found_row: Mapping[str, Any]) -> dict[str, Any]:
            row = dict(found_row)
            lists = {name: row.pop(name, None) for name in {p.column for p in placed.values()}}
            found = {
                name: {(item["i"], k): value for item in items or [] for k, value in item.items() if k != "i"}
                for name, items in lists.items()
            }
            for slot, where in placed.items():
                row[slot] = found[where.column].get((where.position, where.field), where.empty)
            return row

        return query, decode

    def _measure(self, engine: Engine, slots: list[str] | None = None) -> dict[str, Any]:
        query, decode = self.statement(slots)
        return decode(_first_row(engine.query(query)))

    def run(self, engine: Engine) -> Measurements:
        """Measure everything in one query; on failure, measure each group on its own."""
        result = Measurements()
        if not self.requests:
            return result
        try:
            result.values.update(self._measure(engine))
            return result
        except EngineError:
            pass
        for slots in self.groups.values():
            pending = [slot for slot in slots if slot not in result.values]
            if not pending:
                continue
            try:
                result.values.update(self._measure(engine, pending))
            except EngineError as error:
                for slot in pending:
                    result.errors.setdefault(slot, error.message)
        return result


WIDE = 32  # beyond this many one-column frequency tables, one long table of (column, value) counts


@dataclass(frozen=True)
class _LongSlot:
    """Where a slot is in a long frequency table's list: which entry (column position) and
    field, and its value when the column had no value at all."""

    column: str
    position: int
    field: str
    empty: Any


class _Long:
    """One-column frequency tables (of one ``where``) as one table of (column, value, count),
    and the requested aggregates per column computed from it in one GROUP BY."""

    def __init__(self, name: str, where: exp.Expr | None) -> None:
        self.name = name
        self.where = where
        self.columns: list[str] = []
        self.exprs: dict[str, exp.Expr] = {}

    def place(self, column: str, expr: exp.Expr) -> _LongSlot:
        if column not in self.columns:
            self.columns.append(column)
        key = expr.sql()
        if key not in self.exprs:
            self.exprs[key] = expr
        field = f"e{list(self.exprs).index(key)}"
        # an aggregate of no rows: a count is 0, anything else NULL (as the CTE form gives)
        counts = isinstance(expr, exp.Count) or (
            isinstance(expr, exp.Filter) and isinstance(expr.this, exp.Count)
        )
        return _LongSlot(self.name, self.columns.index(column), field, 0 if counts else None)

    def ctes(self, table: str) -> list[exp.CTE]:
        varchar = exp.DataType.build("VARCHAR")
        positions = exp.Array(expressions=[exp.Literal.number(i) for i in range(len(self.columns))])
        # values as text, so that columns of every type share one table; distinct values stay
        # distinct as text (DuckDB prints numbers exactly)
        values = exp.Array(expressions=[exp.cast(exp.column(c, quoted=True), varchar) for c in self.columns])
        cells = exp.Select(
            expressions=[
                exp.alias_(exp.Explode(this=positions), "i", quoted=True),
                exp.alias_(exp.Explode(this=values), "v", quoted=True),
            ],
            from_=exp.From(this=exp.Table(this=exp.to_identifier(table, quoted=True))),
        )
        if self.where is not None:
            cells.set("where", exp.Where(this=self.where.copy()))
        i, v = exp.column("i", quoted=True), exp.column("v", quoted=True)
        counts = exp.Select(
            expressions=[i.copy(), exp.alias_(exp.Count(this=exp.Star()), N, quoted=True)],
            from_=exp.From(
                this=exp.Subquery(this=cells, alias=exp.TableAlias(this=exp.to_identifier("__cells")))
            ),
            where=exp.Where(this=exp.Not(this=exp.Is(this=v, expression=exp.Null()))),
            group=exp.Group(expressions=[i.copy(), v.copy()]),
        )
        summary = exp.Select(
            expressions=[
                i.copy(),
                *(
                    exp.alias_(expr.copy(), f"e{k}", quoted=True)
                    for k, expr in enumerate(self.exprs.values())
                ),
            ],
            from_=exp.From(this=exp.Table(this=exp.to_identifier(f"{self.name}_counts", quoted=True))),
            group=exp.Group(expressions=[i.copy()]),
        )
        return [
            exp.CTE(
                this=counts, alias=exp.TableAlias(this=exp.to_identifier(f"{self.name}_counts", quoted=True))
            ),
            exp.CTE(this=summary, alias=exp.TableAlias(this=exp.to_identifier(self.name, quoted=True))),
        ]

    def listed(self) -> exp.Subquery:
        fields = ["i", *(f"e{k}" for k in range(len(self.exprs)))]
        entry = exp.Struct(
            expressions=[
                exp.PropertyEQ(this=exp.to_identifier(f), expression=exp.column(f, quoted=True))
                for f in fields
            ]
        )
        return exp.Subquery(
            this=exp.select(exp.ArrayAgg(this=entry)).from_(exp.to_identifier(self.name, quoted=True))
        )


def _first_row(table: Any) -> Mapping[str, Any]:
    rows = table.to_pylist()
    return rows[0] if rows else {}
