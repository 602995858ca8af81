"""The metric kinds: one table from a per-column metric's name to its aggregate and its stored name.

Every flow that measures a column builds the aggregate from these rows, so that ``null_rate(color)``
in a check document, ``Completeness "color"`` in a DQDL ruleset, ``Column.color.NullCount`` in the
per-column profile and an event contract's ``present`` share of a field are one measurement,
written once:

- check documents (:mod:`assay.platform.checks.measure`) take every per-column metric from it;
- DQDL rules (:mod:`assay.rules.columns` and its siblings) ask
  :class:`assay.measure.planner.ScanPlan` for :meth:`Kind.request` (Completeness from
  ``null_count``; Mean, Sum, StandardDeviation, Variance, a number's Minimum and Maximum,
  DistinctValuesCount from their kinds), so the planner, which dedupes by SQL text, computes a
  rule's and a check metric's equal aggregate once;
- event contracts (:mod:`assay.platform.events.compile`) project each payload field as columns
  of a CTE and ask the same planner for the field's ``null_count`` and ``blank_count``;
- the per-column profile (:func:`assay.measure.profile.profile_query`) takes its blank count,
  and a number's mean and deviation (:mod:`assay.measure.shape`) are the kinds ``mean`` and
  ``stddev``.

The gap that remains: the profile's null count is still read as rows minus ``COUNT(c)`` beside
its other per-column counts and its minimum and maximum keep the column's own type (dates as
dates, not doubles); and a check document's metrics and its DQDL rules' scan are two subqueries
of its one statement, so an equal aggregate of the two is computed twice
(tests/measure/test_one_vocabulary.py lists the modules still allowed to write a statistic).

Missing has one definition (issue 30): a null and a blank text value (empty or whitespace-only,
how a CSV's missing text arrives) are counted apart (``null_count``, ``blank_count``) and judged
as their sum (``missing_rate``). Only text holds blanks: a blank cell of a number or date column
is read as NULL, so its ``blank_count`` is 0.

>>> from assay.engine import Column, DataKind
>>> color = Column("color", "VARCHAR", DataKind.STRING)
>>> KINDS["missing_rate"].aggregate(color).sql("duckdb")[:48]
'CAST(COUNT(*) - COUNT("color") + COUNT(*) FILTER'
>>> KINDS["null_count"].stored, KINDS["blank_count"].stored, KINDS["missing_rate"].stored
('NullCount', 'BlankCount', None)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from assay.engine import Column, DataKind
from assay.engine.base import as_text
from assay.measure.requests import Aggregate, Frequencies, FrequencyAggregate, Request

# A blank value: only whitespace (str.isspace's common characters, no-break space included).
BLANK = r"^[\s\x0b\x{00A0}]*$"

_DOUBLE = exp.DataType.build("DOUBLE")


def blank(value: exp.Expr) -> exp.Expr:
    """``value`` is empty or whitespace-only: a regular expression (trimming a character set off
    every value costs three times as much on a million ids), run only on the values that can be
    blank. Those are empty or start with one of BLANK's characters, so they sort before "!" (the
    characters up to the space) or start with a no-break space (UTF-8 C2 A0: from U+00A0 to
    before U+00A1 in the engines' binary string order). On a 5-million-row id column the regular
    expression took 0.09 s of the profile; behind the comparisons, 0.02 s. A CASE, as both
    engines evaluate a branch only for the rows that reach it, where AND may evaluate both."""
    candidate = exp.or_(
        exp.LT(this=value.copy(), expression=exp.Literal.string("!")),
        exp.and_(
            exp.GTE(this=value.copy(), expression=exp.Literal.string("\u00a0")),
            exp.LT(this=value.copy(), expression=exp.Literal.string("\u00a1")),
        ),
    )
    regex = exp.RegexpLike(this=value, expression=exp.Literal.string(BLANK))
    return exp.Case(ifs=[exp.If(this=candidate, true=regex)], default=exp.false())


def _rows() -> exp.Expr:
    return exp.Count(this=exp.Star())


def _nulls(column: Column) -> exp.Expr:
    return exp.Sub(this=_rows(), expression=exp.Count(this=exp.column(column.name, quoted=True)))


def _blanks(column: Column) -> exp.Expr:
    if column.kind is not DataKind.STRING:
        return exp.Literal.number(0)
    return exp.Filter(this=_rows(), expression=exp.Where(this=blank(as_text(column))))


def _rate(count: exp.Expr) -> exp.Expr:
    """``count`` over the rows, as a double; NULL when there are no rows."""
    rows = exp.Nullif(this=exp.cast(_rows(), _DOUBLE), expression=exp.Literal.number(0))
    return exp.Div(this=exp.cast(count, _DOUBLE), expression=rows)


def _number(column: Column) -> exp.Expr:
    return exp.cast(exp.column(column.name, quoted=True), _DOUBLE)


def within(aggregate: exp.Expr, where: exp.Expr | None) -> exp.Expr:
    """``aggregate`` over only the rows where ``where`` holds: every aggregate function in it
    filtered (a DQDL rule's ``where "..."`` clause), one already filtered on both conditions.

    >>> nulls = _nulls(Column("c", "INT", DataKind.INTEGER))
    >>> within(nulls, exp.column("k").eq(1)).sql("duckdb")
    'COUNT(*) FILTER(WHERE k = 1) - COUNT("c") FILTER(WHERE k = 1)'
    """
    if where is None:
        return aggregate
    if not any(isinstance(node, exp.AggFunc | exp.Filter) for node in aggregate.walk()):
        # an aggregate function sqlglot does not know (DuckDB's kurtosis_pop, an Anonymous call)
        return exp.Filter(this=aggregate, expression=exp.Where(this=where))

    def filtered(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Filter):
            condition = exp.and_(where.copy(), node.expression.this.copy())
            return exp.Filter(this=node.this.copy(), expression=exp.Where(this=condition))
        if isinstance(node, exp.AggFunc):
            return exp.Filter(this=node.copy(), expression=exp.Where(this=where.copy()))
        return node

    return aggregate.transform(filtered)


@dataclass(frozen=True)
class Kind:
    """One per-column metric: the aggregate that measures it over a table's rows, what the
    column must be (``needs``: ``numeric``, ``temporal`` or None for any), and the name the
    profile stores it under (``Column.<c>.<stored>``), None when the profile stores its parts.
    ``counted`` is the same number as an aggregate over the column's value counts (a
    :class:`~assay.measure.requests.Frequencies` table), for the planner to share with the other
    requests that read them."""

    name: str
    build: Callable[[Column], exp.Expr]
    needs: str | None = None
    stored: str | None = None
    counted: Callable[[], exp.Expr] | None = None

    def fits(self, column: Column) -> bool:
        """Whether ``column``'s type can be measured by this kind."""
        if self.needs == "numeric":
            return column.kind.numeric
        if self.needs == "temporal":
            return column.kind.temporal
        return True

    def aggregate(self, column: Column, where: exp.Expr | None = None) -> exp.Expr:
        """The aggregate over the rows (where ``where`` holds), for a statement that groups them
        (a check document's GROUPING SETS)."""
        return within(self.build(column), where)

    def request(self, column: Column, where: exp.Expr | None = None) -> Request:
        """What to ask :class:`~assay.measure.planner.ScanPlan` for: the aggregate, or its form
        over the column's value counts when the kind has one.

        >>> code = Column("code", "VARCHAR", DataKind.STRING)
        >>> type(KINDS["distinct_count"].request(code)).__name__, type(KINDS["mean"].request(code)).__name__
        ('FrequencyAggregate', 'Aggregate')
        """
        if self.counted is not None:
            return FrequencyAggregate(Frequencies((column.name,), where), self.counted())
        return Aggregate(self.aggregate(column, where))


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind("null_count", _nulls, stored="NullCount"),
        Kind("null_rate", lambda c: _rate(_nulls(c)), stored="NullRate"),
        Kind("blank_count", _blanks, stored="BlankCount"),
        Kind("blank_rate", lambda c: _rate(_blanks(c))),
        Kind("missing_rate", lambda c: _rate(exp.Add(this=_nulls(c), expression=_blanks(c)))),
        # Through the planner, counted from the value counts rather than COUNT(DISTINCT ...): it
        # shares them with Uniqueness and Entropy, and a DISTINCT aggregate makes DuckDB
        # materialise the whole scan (1.5 GB on the 10M-row benchmark). A grouped statement (a
        # check document's dimensions) needs the DISTINCT aggregate.
        Kind(
            "distinct_count",
            lambda c: exp.Count(this=exp.Distinct(expressions=[exp.column(c.name, quoted=True)])),
            stored="DistinctValuesCount",
            counted=lambda: exp.Count(this=exp.Star()),
        ),
        Kind("min", lambda c: exp.Min(this=_number(c)), "numeric", stored="Minimum"),
        Kind("max", lambda c: exp.Max(this=_number(c)), "numeric", stored="Maximum"),
        Kind("mean", lambda c: exp.Avg(this=_number(c)), "numeric", stored="Mean"),
        Kind("sum", lambda c: exp.Sum(this=_number(c)), "numeric", stored="Sum"),
        # population statistics, as Deequ's and Glue's StandardDeviation
        Kind("stddev", lambda c: exp.StddevPop(this=_number(c)), "numeric", stored="StandardDeviation"),
        Kind("variance", lambda c: exp.VariancePop(this=_number(c)), "numeric", stored="Variance"),
        Kind("freshness", lambda c: exp.Max(this=exp.column(c.name, quoted=True)), "temporal"),
    )
}
"""The per-column metric kinds by name (a check document's names)."""
