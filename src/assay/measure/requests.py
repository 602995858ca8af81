"""What a rule asks to have measured. Requests only declare expressions; the planner decides
how they share a scan (STYLE.md: scan sharing belongs to the planner)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

N = "__n"  # the count column of a frequency table


@dataclass(frozen=True)
class Frequencies:
    """The value counts of ``columns`` over the rows where ``where`` holds, leaving out rows whose
    key columns are all NULL (Deequ's frequency analyzers do the same; DQDL.md §6 Uniqueness).
    Its rows have the key columns and ``__n``."""

    columns: tuple[str, ...]
    where: exp.Expr | None = None

    def key(self) -> str:
        where = self.where.sql() if self.where is not None else ""
        return repr((self.columns, where))


@dataclass(frozen=True, eq=False)
class Aggregate:
    """An aggregate expression over the rows of the primary table, e.g. ``COUNT(col)``."""

    expr: exp.Expr


@dataclass(frozen=True, eq=False)
class FrequencyAggregate:
    """An aggregate over the rows of a frequency table, e.g. ``SUM(__n) FILTER (WHERE __n = 1)``."""

    freq: Frequencies
    expr: exp.Expr


@dataclass(frozen=True, eq=False)
class Scalar:
    """A query that yields one value, run as a scalar subquery of the shared query
    (scalar CustomSql, the row count of a reference dataset)."""

    query: exp.Query


Request = Aggregate | FrequencyAggregate | Scalar


def count_star(where: exp.Expr | None = None) -> exp.Expr:
    """``COUNT(*)``, filtered by ``where`` when given."""
    return filtered(exp.Count(this=exp.Star()), where)


def count_if(predicate: exp.Expr, where: exp.Expr | None = None) -> exp.Expr:
    """The number of rows where ``predicate`` is TRUE (and ``where`` holds)."""
    condition = predicate if where is None else exp.and_(where, predicate)
    return exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=condition))


def filtered(aggregate: exp.Expr, where: exp.Expr | None) -> exp.Expr:
    if where is None:
        return aggregate
    return exp.Filter(this=aggregate, expression=exp.Where(this=where))


def n_column() -> exp.Column:
    return exp.column(N)
