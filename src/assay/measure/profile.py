"""The column profiler: every column of a load measured in ONE query.

Per column: nulls (count and rate), distinct values, minimum and maximum for numbers and dates,
and the value counts of categorical and low-cardinality columns.

- Categorical columns (text and boolean columns, and any the dataset declares categorical) have
  their values counted by one GROUP BY each, written as CTEs of the same statement: an exact
  distinct count and, up to ``cap`` distinct values (and at most one distinct value per two rows,
  so that an id column is not mistaken for a category), the value set and the top values.
- Number and date columns are counted exactly up to the cap, and estimated beyond it. Whether a
  column is within the cap is known only after the scan, so :func:`exact_columns` decides before
  it, from the column's distinct count in the dataset's previous load: within the cap, it is
  counted exactly (one GROUP BY, cheap when the values are few; its value counts give its top
  values); beyond it, HyperLogLog (``approx_count_distinct``), because counting ten million
  distinct numbers exactly costs a hash table of ten million entries. A column seen for the first
  time is counted exactly when it holds integers, decimals or dates (codes, counts and business
  dates, usually few) and estimated when it holds floats or timestamps (measurements and instants,
  usually nearly unique).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from sqlglot import exp

from assay.engine import Column, DataKind, Engine
from assay.store import MetricKey

CAP = 1000  # the most distinct values a column may have and still be profiled as categorical
TOP = 10
EPOCH = date(1970, 1, 1)


@dataclass
class ColumnProfile:
    name: str
    type: str
    kind: DataKind
    rows: int
    nulls: int
    distinct: int | None
    distinct_exact: bool
    minimum: Any = None
    maximum: Any = None
    values: dict[str, int] | None = (
        None  # the value counts, when the column is categorical and within the cap: its value set
    )
    counts: dict[str, int] | None = (
        None  # the value counts of a number or date column within the cap: top values, not a value set
    )

    @property
    def null_rate(self) -> float:
        return self.nulls / self.rows if self.rows else 0.0

    def top(self, k: int = TOP) -> list[tuple[str, int, float]]:
        """The ``k`` most frequent values with their counts and shares of the rows."""
        counts = self.values if self.values is not None else self.counts
        if not counts:
            return []
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [(value, count, count / self.rows if self.rows else 0.0) for value, count in ranked]


@dataclass
class LoadProfile:
    rows: int
    columns: list[ColumnProfile] = field(default_factory=list)

    @property
    def schema(self) -> list[tuple[str, str]]:
        return [(c.name, c.type) for c in self.columns]

    def column(self, name: str) -> ColumnProfile:
        return next(c for c in self.columns if c.name == name)

    def metrics(self) -> dict[MetricKey, float | None]:
        """The profile as stored metrics, under Glue's names where Glue has one (so DQDL dynamic
        rules on the same dataset can read them): RowCount, ColumnCount, Completeness,
        DistinctValuesCount, Minimum, Maximum; plus NullCount and NullRate. Dates are stored as
        days since 1970-01-01, timestamps as seconds."""
        out: dict[MetricKey, float | None] = {
            MetricKey.dataset("RowCount"): float(self.rows),
            MetricKey.dataset("ColumnCount"): float(len(self.columns)),
        }
        for c in self.columns:
            out[MetricKey.column(c.name, "NullCount")] = float(c.nulls)
            out[MetricKey.column(c.name, "NullRate")] = c.null_rate if self.rows else None
            out[MetricKey.column(c.name, "Completeness")] = 1 - c.null_rate if self.rows else None
            out[MetricKey.column(c.name, "DistinctValuesCount")] = (
                None if c.distinct is None else float(c.distinct)
            )
            if c.kind.numeric or c.kind.temporal:
                out[MetricKey.column(c.name, "Minimum")] = as_number(c.minimum)
                out[MetricKey.column(c.name, "Maximum")] = as_number(c.maximum)
        return out


def as_number(value: Any) -> float | None:
    """A minimum or maximum as a number: dates as days since 1970, timestamps as seconds."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.timestamp() if value.tzinfo else (value - datetime(1970, 1, 1)).total_seconds()
    if isinstance(value, date):
        return float((value - EPOCH).days)
    if isinstance(value, bool):
        return float(value)
    return float(value)


def categorical(column: Column, declared: Sequence[str]) -> bool:
    return column.kind in (DataKind.STRING, DataKind.BOOLEAN) or column.name in declared


# The kinds counted exactly the first time a column is seen: integers, decimals and dates are
# codes, counts and business dates, usually few; floats and timestamps are measurements and
# instants, usually nearly unique.
FIRST_EXACT = (DataKind.INTEGER, DataKind.DECIMAL, DataKind.DATE)


def exact_columns(
    columns: Sequence[Column], previous: Mapping[str, float | None] | None = None, cap: int = CAP
) -> list[str]:
    """The number and date columns to count exactly: those whose distinct count in the previous
    load was within ``cap``, and, for a column the previous load did not have, integers, decimals
    and dates. ``previous`` maps column names to their last distinct counts.

    >>> cols = [Column("n", "BIGINT", DataKind.INTEGER), Column("x", "DOUBLE", DataKind.FLOAT),
    ...         Column("d", "DATE", DataKind.DATE), Column("s", "VARCHAR", DataKind.STRING)]
    >>> exact_columns(cols)
    ['n', 'd']
    >>> exact_columns(cols, {"n": 40_000, "x": 12, "d": None})
    ['x', 'd']
    """
    previous = previous or {}
    chosen = []
    for column in columns:
        if not (column.kind.numeric or column.kind.temporal):
            continue
        before = previous.get(column.name)
        if column.kind in FIRST_EXACT if before is None else before <= cap:
            chosen.append(column.name)
    return chosen


def _q(name: str) -> exp.Column:
    return exp.column(name, quoted=True)


def profile_query(
    table: str,
    columns: Sequence[Column],
    declared: Sequence[str] = (),
    cap: int = CAP,
    exact: Sequence[str] = (),
) -> exp.Select:
    """The one statement that profiles ``table``: categorical columns and the number and date
    columns named in ``exact`` have their values counted (one CTE each), the others' distinct
    counts are estimated.

    >>> cols = [Column("venue", "VARCHAR", DataKind.STRING), Column("px", "DOUBLE", DataKind.FLOAT)]
    >>> sql = profile_query("t", cols).sql("duckdb")
    >>> sql.count("SELECT") >= 3 and "APPROX_COUNT_DISTINCT" in sql
    True
    >>> "APPROX_COUNT_DISTINCT" in profile_query("t", cols, exact=["px"]).sql("duckdb")
    False
    """
    projections: list[exp.Expr] = [exp.alias_(exp.Count(this=exp.Star()), "rows", quoted=True)]
    ctes: list[tuple[str, exp.Select]] = []
    varchar = exp.DataType.build("VARCHAR")
    for i, column in enumerate(columns):
        c = _q(column.name)
        projections.append(exp.alias_(exp.Count(this=c.copy()), f"present{i}", quoted=True))
        counted = categorical(column, declared)
        if counted or column.name in exact:
            name = f"__values{i}"
            # A categorical column's values are grouped as text (its value set is text); a number
            # or date column's are grouped as themselves and shown as text.
            text = column.kind is DataKind.STRING
            grouped = exp.cast(c.copy(), varchar) if counted and not text else c.copy()
            ctes.append(
                (
                    name,
                    exp.select(
                        exp.alias_(grouped, "v", quoted=True),
                        exp.alias_(exp.Count(this=exp.Star()), "n", quoted=True),
                    )
                    .from_(exp.to_identifier(table, quoted=True))
                    .where(exp.Not(this=exp.Is(this=c.copy(), expression=exp.Null())))
                    .group_by(exp.Literal.number(1)),
                )
            )
            source = exp.to_identifier(name, quoted=True)
            projections.append(
                exp.alias_(
                    exp.Subquery(this=exp.select(exp.Count(this=exp.Star())).from_(source)),
                    f"distinct{i}",
                    quoted=True,
                )
            )
            top = (
                exp.select(_q("v"), _q("n"))
                .from_(source.copy())
                .order_by(exp.Ordered(this=_q("n"), desc=True), exp.Ordered(this=_q("v")))
                .limit(cap + 1)
            )
            shown = _q("v") if text or counted else exp.cast(_q("v"), varchar)
            pairs = exp.Struct(
                expressions=[
                    exp.PropertyEQ(this=exp.to_identifier("v"), expression=shown),
                    exp.PropertyEQ(this=exp.to_identifier("n"), expression=_q("n")),
                ]
            )
            listed = exp.select(exp.ArrayAgg(this=pairs)).from_(
                exp.alias_(exp.Subquery(this=top), "__top", table=True)
            )
            projections.append(exp.alias_(exp.Subquery(this=listed), f"values{i}", quoted=True))
        else:
            projections.append(exp.alias_(exp.ApproxDistinct(this=c.copy()), f"distinct{i}", quoted=True))
        if column.kind.numeric or column.kind.temporal:
            projections.append(exp.alias_(exp.Min(this=c.copy()), f"min{i}", quoted=True))
            projections.append(exp.alias_(exp.Max(this=c.copy()), f"max{i}", quoted=True))
    query = exp.select(*projections).from_(exp.to_identifier(table, quoted=True))
    for name, cte in ctes:
        query = query.with_(exp.to_identifier(name, quoted=True), as_=cte)
    return query


def profile(
    engine: Engine,
    table: str,
    columns: Sequence[Column],
    declared: Sequence[str] = (),
    cap: int = CAP,
    exact: Sequence[str] | None = None,
) -> LoadProfile:
    """Profile a registered table in one engine query. ``exact`` names the number and date columns
    to count exactly; by default, those :func:`exact_columns` picks for a first load."""
    if exact is None:
        exact = exact_columns(columns, cap=cap)
    row = engine.query(profile_query(table, columns, declared, cap, exact)).to_pylist()[0]
    rows = int(row["rows"])
    result = LoadProfile(rows)
    for i, column in enumerate(columns):
        values = counts = None
        is_categorical = categorical(column, declared)
        listed = row.get(f"values{i}")
        present = int(row[f"present{i}"])
        # A column whose values are mostly unique (an id) is not categorical, whatever its size.
        low_cardinality = column.name in declared or (
            listed is not None and len(listed) <= max(10, present // 2)
        )
        if listed is not None and len(listed) <= cap and low_cardinality:
            found = {item["v"]: int(item["n"]) for item in listed}
            if is_categorical:
                values = found
            else:
                counts = found
        elif listed is None and is_categorical:
            values = {}
        result.columns.append(
            ColumnProfile(
                column.name,
                column.type,
                column.kind,
                rows,
                rows - present,
                None if row.get(f"distinct{i}") is None else int(row[f"distinct{i}"]),
                is_categorical or column.name in exact,
                row.get(f"min{i}"),
                row.get(f"max{i}"),
                values,
                counts,
            )
        )
    return result
