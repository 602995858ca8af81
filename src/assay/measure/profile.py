"""The column profiler: every column of a load measured in ONE query.

Per column: nulls (count and rate), distinct values, minimum and maximum for numbers and dates,
the value counts of categorical and low-cardinality columns, and a number's shape (mean,
standard deviation, approximate quantiles: :mod:`assay.measure.shape`).

- Categorical columns (text and boolean columns, and any the dataset declares categorical) have
  their values counted by one GROUP BY each, written as CTEs of the same statement: an exact
  distinct count and, up to ``cap`` distinct values (and at most one distinct value per two rows,
  so that an id column is not mistaken for a category), the value set and the top values.
- Every column is counted exactly up to the cap, and estimated beyond it. Whether a column is
  within the cap is known only after the scan, so :func:`exact_columns` decides before it, from
  the column's distinct count in the dataset's previous load: within the cap, it is counted
  exactly (one GROUP BY, cheap when the values are few; its value counts give its top values);
  beyond it, HyperLogLog (``approx_count_distinct``), because counting 400,000 distinct ids or ten
  million distinct numbers exactly costs a hash table of that many entries on every load. A
  column seen for the first time is counted exactly when it holds text, booleans, integers,
  decimals or dates (categories, codes, counts and business dates, usually few) and estimated
  when it holds floats or timestamps (measurements and instants, usually nearly unique). A
  column the dataset declares categorical is always counted, and so is every column of a load
  of at most :data:`SMALL_LOAD` rows and :data:`SMALL_CELLS` cells (:func:`small_rows`).
- Text columns also count their blank values (empty or whitespace-only, not NULL) apart from
  their nulls: a CSV's missing text arrives blank, not NULL (``BlankCount``).
- Pairs of comparable columns (two timestamps, two dates, two numbers; :func:`column_pairs`)
  count the rows where the first is below the second and where it is above (``LessCount``,
  ``GreaterCount`` of ``Multicolumn.a,b``): a row rule such as ``settled_at >= executed_at``
  that held on every row of every load is read from them (``assay propose``). Counting costs
  two aggregates a pair on every row (45 pairs made a 1M-row profile 1.5 times as slow), so, as for
  distinct counts, the previous load decides (:func:`counted_pairs`): a pair whose rows went
  both ways is not counted again (it can be no rule of this history; stored without a value),
  nor a pair whose ranges did not overlap (its order says nothing the ranges do not).
- Text and integer columns have the values of the load's first rows shaped (e-mail addresses,
  phone, identity and card numbers: :mod:`assay.measure.shapes`), from a CTE of those rows in the
  same statement; only each shape's share is kept, and ``assay propose`` reads the shares to
  suggest classifying a column.

The statement is built once, without copying it per column (sqlglot's builder methods copy the
whole tree on each call: a 500-column profile spent minutes there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from assay.engine import Column, DataKind, Engine
from assay.engine.base import as_text
from assay.measure import shape, shapes
from assay.measure.kinds import KINDS
from assay.measure.kinds import blank as _blank
from assay.measure.values import as_number, looks_temporal
from assay.store import MetricKey

CAP = 1000  # the most distinct values a column may have and still be profiled as categorical
TOP = 10
WIDE = 32  # beyond this many counted columns, one GROUP BY of (column, value) pairs counts them
PAIRS = 45  # the most column pairs whose order is counted (two aggregates each)
PAIR_GROUP = 10  # a kind with more columns than this has no pairs counted (C(10, 2) = 45)


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
    blanks: int = 0  # non-null text values that are empty or whitespace-only (0 for other kinds)
    # A text column whose values all look like dates or times (1/2/21, 2024-01-31 10:00 UTC):
    # instants written as text, never a category (the monitor reads this flag).
    temporal_text: bool = False
    shape: shape.Shape | None = None  # a number column's mean, deviation and quantiles
    # How many values of the load's first rows were shaped (None: not a shaped column), and each
    # shape's share of them (the shapes none had left out): assay.measure.shapes
    sampled: int | None = None
    shapes: dict[str, float] = field(default_factory=dict)

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


@dataclass(frozen=True)
class PairCount:
    """How two comparable columns of a load's rows are ordered: the rows where ``first`` is
    below ``second`` and where it is above (rows where either is null count in neither)."""

    first: str
    second: str
    less: int
    greater: int


@dataclass
class LoadProfile:
    rows: int
    columns: list[ColumnProfile] = field(default_factory=list)
    pairs: list[PairCount] = field(default_factory=list)
    # pairs not counted because their rows went both ways in an earlier load: stored as no value
    mixed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def schema(self) -> list[tuple[str, str]]:
        return [(c.name, c.type) for c in self.columns]

    def column(self, name: str) -> ColumnProfile:
        return next(c for c in self.columns if c.name == name)

    def metrics(self) -> dict[MetricKey, float | None]:
        """The profile as stored metrics, under Glue's names where Glue has one (so DQDL dynamic
        rules on the same dataset can read them): RowCount, ColumnCount, Completeness,
        DistinctValuesCount, Minimum, Maximum, Mean, StandardDeviation; plus NullCount, NullRate
        and BlankCount (the non-null text values that are empty or whitespace-only; 0 for other
        kinds), a number's Quantile05 to Quantile95, and per
        counted pair ``Multicolumn.a,b.LessCount`` / ``GreaterCount``; per text or integer column
        whose first rows had values, ``ShapeSample`` (how many were shaped) and the share of each
        shape some had (``EmailShare``, ``PhoneShare``, ``IdentityNumberShare``,
        ``CardNumberShare``: :mod:`assay.measure.shapes`). Dates are stored as days since
        1970-01-01, timestamps as seconds."""
        out: dict[MetricKey, float | None] = {
            MetricKey.dataset("RowCount"): float(self.rows),
            MetricKey.dataset("ColumnCount"): float(len(self.columns)),
        }
        for c in self.columns:
            out[MetricKey.column(c.name, "NullCount")] = float(c.nulls)
            out[MetricKey.column(c.name, "BlankCount")] = float(c.blanks)
            out[MetricKey.column(c.name, "NullRate")] = c.null_rate if self.rows else None
            out[MetricKey.column(c.name, "Completeness")] = 1 - c.null_rate if self.rows else None
            out[MetricKey.column(c.name, "DistinctValuesCount")] = (
                None if c.distinct is None else float(c.distinct)
            )
            if c.kind.numeric or c.kind.temporal:
                out[MetricKey.column(c.name, "Minimum")] = as_number(c.minimum)
                out[MetricKey.column(c.name, "Maximum")] = as_number(c.maximum)
            if c.shape is not None:
                out.update(c.shape.metrics(c.name))
            if c.sampled:
                out[MetricKey.column(c.name, shapes.SAMPLED)] = float(c.sampled)
                for found, share in c.shapes.items():
                    out[MetricKey.column(c.name, shapes.METRICS[found])] = share
        for pair in self.pairs:
            names = (pair.first, pair.second)
            out[MetricKey.multicolumn(names, "LessCount")] = float(pair.less)
            out[MetricKey.multicolumn(names, "GreaterCount")] = float(pair.greater)
        for names in self.mixed:
            out[MetricKey.multicolumn(names, "LessCount")] = None
            out[MetricKey.multicolumn(names, "GreaterCount")] = None
        return out


def categorical(column: Column, declared: Sequence[str]) -> bool:
    return column.kind in (DataKind.STRING, DataKind.BOOLEAN) or column.name in declared


# The kinds counted exactly the first time a column is seen: text and booleans are categories,
# integers, decimals and dates are codes, counts and business dates, usually few; floats and
# timestamps are measurements and instants, usually nearly unique.
FIRST_EXACT = (DataKind.STRING, DataKind.BOOLEAN, DataKind.INTEGER, DataKind.DECIMAL, DataKind.DATE)
COUNTABLE = (*FIRST_EXACT, DataKind.FLOAT, DataKind.TIMESTAMP)
# A load of at most this many rows, and of at most SMALL_CELLS cells, is counted exactly in every
# column, whatever its previous load had: its hash tables hold at most this many values each, and
# HyperLogLog strays most on the counts such a load has (169 for palmerpenguins' 164 bill lengths,
# 50 for its 55 flipper lengths). The cells bound the cost on wide files: counting every column of
# 500 columns x 20,000 rows exactly made bench/wide.py's profile 4.3 s -> 6.2 s.
SMALL_LOAD = 100_000
SMALL_CELLS = 2_000_000


def small_rows(width: int) -> int:
    """The most rows a load of ``width`` columns may have to be counted exactly in every column.

    >>> small_rows(9), small_rows(500)
    (100000, 4000)
    """
    return min(SMALL_LOAD, SMALL_CELLS // max(1, width))


def is_small(engine: Engine, table: str, width: int) -> bool:
    """Whether ``table``, of ``width`` columns, is counted exactly in every column: it has at most
    :func:`small_rows` rows. Reads at most one row more (``LIMIT``), and is no measuring query (not
    counted in ``engine.queries``).

    >>> import pyarrow as pa
    >>> from assay.engine import DuckDBEngine
    >>> engine = DuckDBEngine()
    >>> engine.register_arrow("t", pa.table({"n": list(range(5))}))
    >>> is_small(engine, "t", 400_000), is_small(engine, "t", 500_000), engine.queries  # 5 rows, 4
    (True, False, 0)
    """
    bound = small_rows(width)
    first = exp.select(exp.Literal.number(1)).from_(exp.to_identifier(table, quoted=True)).limit(bound + 1)
    counted = exp.select(exp.alias_(exp.Count(this=exp.Star()), "n", copy=False)).from_(
        first.subquery("__first")
    )
    return int(engine.rows(counted, measuring=False)[0]["n"]) <= bound


def exact_columns(
    columns: Sequence[Column],
    previous: Mapping[str, float | None] | None = None,
    cap: int = CAP,
    *,
    small: bool = False,
) -> list[str]:
    """The columns to count exactly: those whose distinct count in the previous load was within
    ``cap``, and, for a column the previous load did not have, text, booleans, integers,
    decimals and dates; every one in a ``small`` load (:func:`small_rows`). ``previous`` maps
    column names to their last distinct counts.

    >>> cols = [Column("n", "BIGINT", DataKind.INTEGER), Column("x", "DOUBLE", DataKind.FLOAT),
    ...         Column("d", "DATE", DataKind.DATE), Column("s", "VARCHAR", DataKind.STRING)]
    >>> exact_columns(cols)
    ['n', 'd', 's']
    >>> exact_columns(cols, {"n": 40_000, "x": 12, "d": None, "s": 400_000})
    ['x', 'd']
    >>> exact_columns(cols, {"n": 40_000, "x": 40_000}, small=True)
    ['n', 'x', 'd', 's']
    """
    previous = previous or {}
    chosen = []
    for column in columns:
        if column.kind not in COUNTABLE:
            continue
        if small:
            chosen.append(column.name)
            continue
        before = previous.get(column.name)
        if column.kind in FIRST_EXACT if before is None else before <= cap:
            chosen.append(column.name)
    return chosen


def column_pairs(
    columns: Sequence[Column], cap: int = PAIRS, group: int = PAIR_GROUP
) -> list[tuple[str, str]]:
    """The column pairs whose order a profile counts: two timestamps, two dates, or two numbers
    (integers, decimals and floats together), each pair in column order, timestamps first, then
    dates, then numbers, at most ``cap`` in all. A kind with more than ``group`` columns has no
    pair counted: a wide table's pairs are mostly noise, and they cost two aggregates each.
    Names holding a comma are left out (a ``Multicolumn`` instance joins the names by commas).

    >>> cols = [Column("fee", "DOUBLE", DataKind.FLOAT), Column("at", "TIMESTAMP", DataKind.TIMESTAMP),
    ...         Column("amount", "DOUBLE", DataKind.FLOAT), Column("paid", "TIMESTAMP", DataKind.TIMESTAMP)]
    >>> column_pairs(cols)
    [('at', 'paid'), ('fee', 'amount')]
    """
    families: tuple[tuple[DataKind, ...], ...] = (
        (DataKind.TIMESTAMP,),
        (DataKind.DATE,),
        (DataKind.INTEGER, DataKind.DECIMAL, DataKind.FLOAT),
    )
    chosen: list[tuple[str, str]] = []
    for kinds in families:
        names = [c.name for c in columns if c.kind in kinds and "," not in c.name]
        if len(names) > group:
            continue
        for i, first in enumerate(names):
            for second in names[i + 1 :]:
                if len(chosen) == cap:
                    return chosen
                chosen.append((first, second))
    return chosen


Metrics = Mapping[tuple[str, str, str], float | None]
"""A load's stored metrics: (entity, instance, name) → value."""


def counted_pairs(
    columns: Sequence[Column], previous: Metrics | None = None
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The pairs of :func:`column_pairs` to count today, and those known to go both ways,
    decided from the dataset's previous load (``previous``: its stored metrics). A pair is not
    counted when its rows went both ways in the previous load, or were known to before (stored
    without a value): it is returned among the mixed, stored without a value again. Nor when
    the previous load's ranges did not overlap (``max(a) <= min(b)``): the ranges say its order.

    >>> cols = [Column("a", "BIGINT", DataKind.INTEGER), Column("b", "BIGINT", DataKind.INTEGER),
    ...         Column("c", "BIGINT", DataKind.INTEGER)]
    >>> counted_pairs(cols)
    ([('a', 'b'), ('a', 'c'), ('b', 'c')], [])
    >>> before = {("Multicolumn", "a,b", "LessCount"): 3.0, ("Multicolumn", "a,b", "GreaterCount"): 1.0,
    ...           ("Multicolumn", "a,c", "LessCount"): 5.0, ("Multicolumn", "a,c", "GreaterCount"): 0.0,
    ...           ("Column", "b", "Maximum"): 9.0, ("Column", "c", "Minimum"): 10.0,
    ...           ("Column", "b", "Minimum"): 1.0, ("Column", "c", "Maximum"): 20.0}
    >>> counted_pairs(cols, before)
    ([('a', 'c')], [('a', 'b')])
    """
    candidates = column_pairs(columns)
    if not previous:
        return candidates, []
    counted, mixed = [], []
    for first, second in candidates:
        instance = f"{first},{second}"
        less = previous.get(("Multicolumn", instance, "LessCount"), -1.0)
        greater = previous.get(("Multicolumn", instance, "GreaterCount"), -1.0)
        if less is None or greater is None or (less > 0 and greater > 0):
            mixed.append((first, second))
            continue
        low_a, high_a = previous.get(("Column", first, "Minimum")), previous.get(("Column", first, "Maximum"))
        low_b, high_b = (
            previous.get(("Column", second, "Minimum")),
            previous.get(("Column", second, "Maximum")),
        )
        if None not in (low_a, high_a, low_b, high_b) and (
            high_a <= low_b or high_b <= low_a  # type: ignore[operator]
        ):
            continue
        counted.append((first, second))
    return counted, mixed


def _q(name: str) -> exp.Column:
    return exp.column(name, quoted=True)


def profile_query(
    table: str,
    columns: Sequence[Column],
    declared: Sequence[str] = (),
    cap: int = CAP,
    exact: Sequence[str] | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    counts: Mapping[str, exp.Query] | None = None,
    sample_from: str | None = None,
) -> exp.Select:
    """The one statement that profiles ``table``: the columns named in ``exact`` (by default,
    those :func:`exact_columns` picks for a first load) and the declared categorical ones have
    their values counted (one CTE each), the others' distinct counts are estimated. The column
    ``pairs`` (by default every pair of :func:`column_pairs`) have their orders counted.
    ``counts`` maps a column to a query of a statement this one joins that has already grouped
    ``table``'s rows by it: one row per value (null included) with the column under its name and
    its rows as ``__n``; the column's values are read from it instead of grouped again.
    ``sample_from`` is the table whose first rows are shaped (default ``table``): a check's
    statement names the relation its materialized slice is read from, since a ``LIMIT`` over the
    materialized CTE makes DuckDB keep the whole slice for it (spilled, and the other readers
    blocked: a 10-million-row statement's threads waited 8 s of its 22).

    >>> cols = [Column("venue", "VARCHAR", DataKind.STRING), Column("px", "DOUBLE", DataKind.FLOAT)]
    >>> sql = profile_query("t", cols).sql("duckdb")
    >>> sql.count("SELECT") >= 3 and "APPROX_COUNT_DISTINCT" in sql
    True
    >>> "APPROX_COUNT_DISTINCT" in profile_query("t", cols, exact=["venue", "px"]).sql("duckdb")
    False
    >>> 'APPROX_COUNT_DISTINCT("venue")' in profile_query("t", cols, exact=[]).sql("duckdb")
    True
    """
    if exact is None:
        exact = exact_columns(columns, cap=cap)
    ordered = column_pairs(columns) if pairs is None else list(pairs)
    counted_names = {*declared, *exact}
    # Wide tables count every counted column's values in one GROUP BY of (column, value) pairs:
    # DuckDB plans a statement of N grouped subqueries in about N² time (400: 5 s) and refuses
    # one of N CTEs beyond its expression depth (500 columns failed after 2 minutes).
    long = sum(1 for c in columns if c.name in counted_names) > WIDE
    projections: list[exp.Expr] = [exp.alias_(exp.Count(this=exp.Star()), "rows", quoted=True, copy=False)]
    ctes: list[exp.CTE] = []
    for i, column in enumerate(columns):
        text = column.kind is DataKind.STRING
        c = as_text(column) if text else _q(column.name)
        projections.append(exp.alias_(exp.Count(this=c.copy()), f"present{i}", quoted=True, copy=False))
        if text and column.name not in counted_names:
            # A counted column's blanks are summed from its value counts instead: trimming each
            # of a few distinct values, not every row (trimming six text columns of a million
            # rows doubled the profile's time).
            projections.append(
                exp.alias_(KINDS["blank_count"].aggregate(column), f"blank{i}", quoted=True, copy=False)
            )
        if column.name in counted_names and long:
            pass  # counted by the one GROUP BY of (column, value) pairs below
        elif column.name in counted_names:
            name = f"__values{i}"
            # A categorical column's values are grouped as text (its value set is text); a number
            # or date column's are grouped as themselves and shown as text.
            counted = categorical(column, declared)
            grouped = _text_of(c.copy(), column) if counted and not text else c.copy()
            present = exp.Where(this=exp.Not(this=exp.Is(this=c.copy(), expression=exp.Null())))
            shared = (counts or {}).get(column.name)
            if shared is None:
                source_table = exp.Table(this=exp.to_identifier(table, quoted=True))
                values = exp.Select(
                    expressions=[
                        exp.alias_(grouped, "v", quoted=True, copy=False),
                        exp.alias_(exp.Count(this=exp.Star()), "n", quoted=True, copy=False),
                    ],
                    from_=exp.From(this=source_table),
                    where=present,
                    group=exp.Group(expressions=[exp.Literal.number(1)]),
                )
            else:  # grouped already (a check's dimension): a value's rows are its group's
                alias = exp.TableAlias(this=exp.to_identifier("__counted", quoted=True))
                values = exp.Select(
                    expressions=[
                        exp.alias_(grouped, "v", quoted=True, copy=False),
                        exp.alias_(_q("__n"), "n", quoted=True, copy=False),
                    ],
                    from_=exp.From(this=exp.Subquery(this=shared, alias=alias)),
                    where=present,
                )
            ctes.append(exp.CTE(this=values, alias=exp.TableAlias(this=exp.to_identifier(name, quoted=True))))
            source = exp.to_identifier(name, quoted=True)
            projections.append(
                exp.alias_(
                    exp.Subquery(
                        this=exp.select(exp.Count(this=exp.Star()), copy=False).from_(source, copy=False)
                    ),
                    f"distinct{i}",
                    quoted=True,
                    copy=False,
                )
            )
            top = (
                exp.select(_q("v"), _q("n"), copy=False)
                .from_(source.copy(), copy=False)
                .order_by(exp.Ordered(this=_q("n"), desc=True), exp.Ordered(this=_q("v")), copy=False)
                .limit(exp.Literal.number(cap + 1), copy=False)
            )
            shown = _q("v") if text or counted else _text_of(_q("v"), column)
            entries = exp.Struct(
                expressions=[
                    exp.PropertyEQ(this=exp.to_identifier("v"), expression=shown),
                    exp.PropertyEQ(this=exp.to_identifier("n"), expression=_q("n")),
                ]
            )
            listed = exp.select(exp.ArrayAgg(this=entries), copy=False).from_(
                exp.alias_(exp.Subquery(this=top), "__top", table=True, copy=False), copy=False
            )
            projections.append(exp.alias_(exp.Subquery(this=listed), f"values{i}", quoted=True, copy=False))
            if text:
                blanks = exp.select(_blank_sum(), copy=False).from_(source.copy(), copy=False)
                projections.append(
                    exp.alias_(exp.Subquery(this=blanks), f"blank{i}", quoted=True, copy=False)
                )
        else:
            projections.append(
                exp.alias_(exp.ApproxDistinct(this=c.copy()), f"distinct{i}", quoted=True, copy=False)
            )
        if column.kind.numeric or column.kind.temporal:
            projections.append(exp.alias_(exp.Min(this=c.copy()), f"min{i}", quoted=True, copy=False))
            projections.append(exp.alias_(exp.Max(this=c.copy()), f"max{i}", quoted=True, copy=False))
        if column.kind.numeric:
            projections.extend(shape.projections(column, i))
    # COUNT_IF, not COUNT(*) FILTER (WHERE ...): DuckDB spends 4x as long on 90 filtered counts.
    by_name = {column.name: column for column in columns}
    for k, (first, second) in enumerate(ordered):
        left, right = _comparable(by_name, first, second)
        for name, order in (("lt", exp.LT), ("gt", exp.GT)):
            counted_rows = exp.CountIf(this=order(this=left.copy(), expression=right.copy()))
            projections.append(exp.alias_(counted_rows, f"{name}{k}", quoted=True, copy=False))
    sample = shapes.sample(sample_from or table, columns)
    if sample is not None:
        ctes.append(sample[0])
        projections.append(exp.alias_(sample[1], "shapes", quoted=True, copy=False))
    if long:
        ctes.extend(_long_counts(table, columns, counted_names, declared, cap))
        summary = exp.to_identifier("__summary", quoted=True)
        entry = exp.Struct(
            expressions=[
                exp.PropertyEQ(this=exp.to_identifier(k), expression=_q(k)) for k in ("i", "d", "top", "b")
            ]
        )
        listed_all = exp.select(exp.ArrayAgg(this=entry)).from_(summary)
        projections.append(exp.alias_(exp.Subquery(this=listed_all), "counted", quoted=True, copy=False))
    # Built in one go: each builder call (``.select``, ``.with_``) copies the whole statement.
    query = exp.Select(
        expressions=projections, from_=exp.From(this=exp.Table(this=exp.to_identifier(table, quoted=True)))
    )
    if ctes:
        query.set("with_", exp.With(expressions=ctes))
    return query


_VARCHAR = exp.DataType.build("VARCHAR")  # built once: each build parses the type's name


def _text_of(value: exp.Expr, column: Column) -> exp.Expr:
    """A counted value of ``column`` as text, the same on every engine: a timestamp is written as
    its wall-clock time in UTC (cast to DuckDB's TIMESTAMP, Spark's TIMESTAMP_NTZ, first), since
    DuckDB writes a zoned one with an offset ("2013-01-01 20:00:00+00") and Spark without."""
    if column.kind is DataKind.TIMESTAMP:
        value = exp.cast(value, exp.DataType.build("TIMESTAMP", dialect="duckdb"))
    return exp.cast(value, _VARCHAR.copy())


def _comparable(columns: Mapping[str, Column], first: str, second: str) -> tuple[exp.Expr, exp.Expr]:
    """The columns ``first`` and ``second`` of a pair, made comparable: two timestamps of
    different types (nanoseconds, a time zone) are compared as instants, casting both to
    TIMESTAMPTZ, which is how DuckDB compares a naive and a zoned one by itself (the naive read
    in the session's UTC); it refuses to compare TIMESTAMP_NS with TIMESTAMPTZ."""
    left, right = _q(first), _q(second)
    one, other = columns.get(first), columns.get(second)
    if (
        one is not None
        and other is not None
        and one.kind is other.kind is DataKind.TIMESTAMP
        and one.type.upper() != other.type.upper()
    ):
        instant = exp.DataType.build("TIMESTAMPTZ")
        return exp.cast(left, instant), exp.cast(right, instant)
    return left, right


def _blank_sum() -> exp.Expr:
    """The rows of a value-count table whose value is blank (0 when none is)."""
    summed = exp.Filter(this=exp.Sum(this=_q("n")), expression=exp.Where(this=_blank(_q("v"))))
    return exp.Coalesce(this=summed, expressions=[exp.Literal.number(0)])


def _long_counts(
    table: str, columns: Sequence[Column], counted: set[str], declared: Sequence[str], cap: int
) -> list[exp.CTE]:
    """The value counts of the counted columns as (column position, value as text, count), and
    per column its distinct count and its ``cap + 1`` most frequent values."""
    chosen = [(i, c) for i, c in enumerate(columns) if c.name in counted]
    positions = exp.Array(expressions=[exp.Literal.number(i) for i, _ in chosen])
    values = exp.Array(expressions=[_text_of(_q(c.name), c) for _, c in chosen])
    cells = exp.Select(
        expressions=[
            exp.alias_(exp.Explode(this=positions), "i", quoted=True, copy=False),
            exp.alias_(exp.Explode(this=values), "v", quoted=True, copy=False),
        ],
        from_=exp.From(this=exp.Table(this=exp.to_identifier(table, quoted=True))),
    )
    counts = exp.Select(
        expressions=[_q("i"), _q("v"), exp.alias_(exp.Count(this=exp.Star()), "n", quoted=True, copy=False)],
        from_=exp.From(
            this=exp.Subquery(this=cells, alias=exp.TableAlias(this=exp.to_identifier("__cells")))
        ),
        where=exp.Where(this=exp.Not(this=exp.Is(this=_q("v"), expression=exp.Null()))),
        group=exp.Group(expressions=[exp.Literal.number(1), exp.Literal.number(2)]),
    )
    pair = exp.Struct(
        expressions=[
            exp.PropertyEQ(this=exp.to_identifier("v"), expression=_q("v")),
            exp.PropertyEQ(this=exp.to_identifier("n"), expression=_q("n")),
        ]
    )
    ranked = exp.ArrayAgg(
        this=exp.Order(
            this=pair, expressions=[exp.Ordered(this=_q("n"), desc=True), exp.Ordered(this=_q("v"))]
        )
    )
    top = exp.Bracket(
        this=ranked,
        expressions=[exp.Slice(this=exp.Literal.number(1), expression=exp.Literal.number(cap + 1))],
    )
    summary = exp.Select(
        expressions=[
            _q("i"),
            exp.alias_(exp.Count(this=exp.Star()), "d", quoted=True, copy=False),
            exp.alias_(top, "top", quoted=True, copy=False),
            exp.alias_(_blank_sum(), "b", quoted=True, copy=False),
        ],
        from_=exp.From(this=exp.Table(this=exp.to_identifier("__counts", quoted=True))),
        group=exp.Group(expressions=[exp.Literal.number(1)]),
    )
    return [
        exp.CTE(this=counts, alias=exp.TableAlias(this=exp.to_identifier("__counts", quoted=True))),
        exp.CTE(this=summary, alias=exp.TableAlias(this=exp.to_identifier("__summary", quoted=True))),
    ]


def profile(
    engine: Engine,
    table: str,
    columns: Sequence[Column],
    declared: Sequence[str] = (),
    cap: int = CAP,
    exact: Sequence[str] | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    mixed: Sequence[tuple[str, str]] = (),
) -> LoadProfile:
    """Profile a registered table in one engine query. ``exact`` names the columns to count
    exactly; by default, those :func:`exact_columns` picks for a first load. ``pairs`` names the
    column pairs whose order is counted (default: every pair of :func:`column_pairs`) and
    ``mixed`` those known to go both ways (stored without a value; :func:`counted_pairs`).

    >>> import pyarrow as pa
    >>> from assay.engine import DuckDBEngine
    >>> engine = DuckDBEngine()
    >>> engine.register_arrow("t", pa.table({"s": ["a", " ", "", None, "a"], "n": [1, 2, 2, None, 3]}))
    >>> load = profile(engine, "t", engine.columns("t"))
    >>> [(c.name, c.nulls, c.blanks, c.distinct) for c in load.columns], engine.queries
    ([('s', 1, 2, 3), ('n', 1, 0, 3)], 1)
    """
    if exact is None:
        exact = exact_columns(columns, cap=cap)
    chosen_pairs = column_pairs(columns) if pairs is None else list(pairs)
    row = engine.rows(profile_query(table, columns, declared, cap, exact, chosen_pairs))[0]
    return decode(engine, row, columns, declared, cap, exact, chosen_pairs, mixed)


def decode(
    engine: Engine,
    row: dict[str, Any],
    columns: Sequence[Column],
    declared: Sequence[str],
    cap: int,
    exact: Sequence[str],
    pairs: Sequence[tuple[str, str]],
    mixed: Sequence[tuple[str, str]] = (),
) -> LoadProfile:
    """The load profile in the row of :func:`profile_query` (made with the same arguments), when
    another statement carried it (a check run's: platform/checks/measure.py)."""
    counted_names = {*declared, *exact}
    chosen_pairs = list(pairs)
    if "counted" in row:  # a wide table's counts come as one list (see profile_query)
        for i, column in enumerate(columns):
            if column.name in counted_names:
                row[f"distinct{i}"] = 0  # no value at all: absent from the list
        for item in row.pop("counted") or []:
            row[f"distinct{item['i']}"] = item["d"]
            row[f"values{item['i']}"] = item["top"]
            if columns[item["i"]].kind is DataKind.STRING:
                row[f"blank{item['i']}"] = item["b"]
    rows = int(row["rows"])
    result = LoadProfile(rows)
    result.pairs = [
        PairCount(first, second, int(row[f"lt{k}"] or 0), int(row[f"gt{k}"] or 0))
        for k, (first, second) in enumerate(chosen_pairs)
    ]
    result.mixed = [pair for pair in mixed if pair not in chosen_pairs]
    sampled = dict(zip(shapes.shaped(columns), row.get("shapes") or [], strict=False))
    for i, column in enumerate(columns):
        values = counts = None
        is_categorical = categorical(column, declared)
        counted = column.name in counted_names
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
        elif listed is None and counted and is_categorical:
            values = {}  # counted, and no value at all: an empty value set
        temporal = (
            column.kind is DataKind.STRING
            and listed is not None
            and len(listed) <= cap
            and looks_temporal([item["v"] for item in listed])
        )
        result.columns.append(
            ColumnProfile(
                column.name,
                engine.canonical(column.type),
                column.kind,
                rows,
                rows - present,
                None if row.get(f"distinct{i}") is None else int(row[f"distinct{i}"]),
                counted,
                row.get(f"min{i}"),
                row.get(f"max{i}"),
                values,
                counts,
                blanks=int(row.get(f"blank{i}") or 0),
                temporal_text=temporal,
                shape=shape.read(row, i) if column.kind.numeric else None,
            )
        )
        if i in sampled:
            first_rows: list[str | None] = sampled[i] or []
            result.columns[-1].sampled, result.columns[-1].shapes = shapes.read(first_rows)
    return result
