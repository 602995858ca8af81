"""Measure one profile of a check document: ONE query, every metric, every dimension grouping.

The source is registered as ``__source``; the rows a run measures (its slice of the logical date,
passed through the profile's ``filter``) are the view ``primary``. The one statement computes:

- every declared metric over ``primary``, for the total and for each value of each dimension
  (``GROUP BY GROUPING SETS``), the groups of each dimension capped at ``top_k`` by rows;
- the metrics of the profile's DQDL ``rule`` expectations (the rules' own one-scan plan, as a
  subquery), so a DQDL rule joins the same scan;
- the sample rows of ``count_where`` metrics that ask for them (a ``LIMIT``-ed subquery);
- on a recorded run, the per-column profile of the same rows (:class:`ColumnProfiling`), whose
  value counts of a dimension are read from that dimension's grouping set.

A metric the document declares but the data cannot answer (an unknown column, ``mean`` of a text
column, a condition that does not parse) is left out of the statement and reported in
``errors``: its expectations are ``config_error`` and the others still run. A filter or slice
that cannot apply fails the profile as a whole (``failure``).
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Any

from sqlglot import exp

from assay.engine import Engine, EngineError
from assay.engine.base import Column, find_column
from assay.errors import ConfigError
from assay.lake.readers import Registered
from assay.lang import sqlsafe
from assay.measure.kinds import KINDS
from assay.measure.profile import CAP, LoadProfile, decode, profile_query
from assay.platform.checks.document import MetricSpec, Profile
from assay.platform.checks.source import SOURCE
from assay.rules.plan import ambiguity

ROWS = "primary"
_ROWCOUNT = "__rows"

Group = tuple[tuple[str, Any], ...]
"""A group's dimension values in dimension order; ``()`` is the total."""


@dataclass
class ProfileMeasurement:
    """What one profile measured on one run."""

    profile: Profile
    values: dict[tuple[str, Group], float | None] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # metric key -> why it could not be measured
    failure: str | None = None  # the whole profile could not be measured (its filter, its slice)
    missing: str | None = None  # the source or the slice has no rows: upstream_missing
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    dqdl: dict[str, Any] = field(default_factory=dict)  # slot -> value of the DQDL rules' scan
    dqdl_errors: dict[str, str] = field(default_factory=dict)
    groups: dict[tuple[str, ...], list[Group]] = field(default_factory=dict)  # grouping -> its groups
    dropped: dict[str, int] = field(default_factory=dict)  # dimension -> groups beyond top_k
    rows: int | None = None
    attempts: int = 1  # how many attempts the measurement took
    rules: Any = None  # the profile's compiled DQDL rules (assay.platform.checks.rules.CompiledRules)
    # the per-column profile of the rows measured (measure/profile.py), carried by the same
    # statement; None when not asked for, or resumed from a killed run's numbers (not kept)
    columns: LoadProfile | None = None

    def value(self, key: str, group: Group = ()) -> float | None:
        return self.values.get((key, group))


def dump_measurement(m: ProfileMeasurement) -> dict[str, Any]:
    """``m`` as JSON the store can keep (its profile and compiled rules aside, which the document
    gives again). Numbers that JSON has no word for (NaN, infinities) survive: the whole is kept
    as one JSON text, read back by :func:`load_measurement`.

    >>> from assay.platform.checks.document import Profile
    >>> m = ProfileMeasurement(Profile(id="daily"), rows=3)
    >>> m.values[("row_count", ())] = 3.0
    >>> m.values[("mean(fee)", (("region", "EU"),))] = float("nan")
    >>> back = load_measurement(m.profile, dump_measurement(m))
    >>> back.rows, back.value("row_count"), str(back.value("mean(fee)", (("region", "EU"),)))
    (3, 3.0, 'nan')
    """
    import json

    body = {
        "values": [[key, [list(pair) for pair in group], value] for (key, group), value in m.values.items()],
        "errors": m.errors,
        "failure": m.failure,
        "missing": m.missing,
        "samples": m.samples,
        "dqdl": m.dqdl,
        "dqdl_errors": m.dqdl_errors,
        "groups": [
            [list(grouping), [[list(pair) for pair in group] for group in groups]]
            for grouping, groups in m.groups.items()
        ],
        "dropped": m.dropped,
        "rows": m.rows,
        "attempts": m.attempts,
    }
    return {"json": json.dumps(body, default=str)}


def load_measurement(profile: Profile, stored: dict[str, Any]) -> ProfileMeasurement:
    """The measurement :func:`dump_measurement` kept, for ``profile``."""
    import json

    body = json.loads(stored["json"])

    def group(pairs: list[list[Any]]) -> Group:
        return tuple((str(name), value) for name, value in pairs)

    out = ProfileMeasurement(
        profile,
        errors=dict(body["errors"]),
        failure=body["failure"],
        missing=body["missing"],
        samples=dict(body["samples"]),
        dqdl=dict(body["dqdl"]),
        dqdl_errors=dict(body["dqdl_errors"]),
        dropped=dict(body["dropped"]),
        rows=body["rows"],
        attempts=int(body["attempts"]),
    )
    out.values = {(key, group(pairs)): value for key, pairs, value in body["values"]}
    out.groups = {tuple(grouping): [group(g) for g in groups] for grouping, groups in body["groups"]}
    return out


# --- the rows a run measures ---------------------------------------------------------------------


def day_of(at: datetime) -> date:
    return at.astimezone(UTC).date()


def register_rows(engine: Engine, profile: Profile, source: Registered, at: datetime, now: datetime) -> None:
    """The view ``primary``: the source's rows of the run's logical date (``slice``) that pass
    the profile's ``filter``. Raises ConfigError when either cannot apply to these columns."""
    names = source.column_names()
    conditions: list[exp.Expr] = []
    if profile.slice is not None:
        column = _resolve(profile.slice.column, source.columns, "slice column")
        day = exp.cast(exp.Literal.string(day_of(at).isoformat()), exp.DataType.build("DATE"))
        conditions.append(
            exp.EQ(
                this=exp.cast(exp.column(column.name, quoted=True), exp.DataType.build("DATE")),
                expression=day,
            )
        )
    if profile.filter:
        try:
            predicate = sqlsafe.parse_predicate(profile.filter, names, clock=now, sources=source.sources())
            conditions.append(predicate)
        except sqlsafe.SQLRejected as error:
            raise ConfigError(f"profile {profile.id}: filter '{profile.filter}': {error.reason}") from None
    query = exp.select("*").from_(exp.to_identifier(SOURCE, quoted=True))
    if conditions:
        query = query.where(exp.and_(*conditions))
    try:
        engine.register_query(ROWS, query)
        engine.describe(exp.select("*").from_(exp.to_identifier(ROWS, quoted=True)))
    except EngineError as error:
        raise ConfigError(
            f"profile {profile.id}: the slice or filter cannot apply: {error.message}"
        ) from None


def _resolve(name: str, columns: Sequence[Column], what: str) -> Column:
    found, matches = find_column(name, columns)
    if found is not None:
        return found
    if matches:
        raise ConfigError(f"{what} '{name}' is ambiguous: {ambiguity(matches)}")
    names = [c.name for c in columns]
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f" (columns: {', '.join(names[:20])})"
    raise ConfigError(f"{what} '{name}' is not a column of the source{hint}")


# --- the statement -----------------------------------------------------------------------------------


@dataclass
class _Slot:
    spec: MetricSpec
    alias: str
    finish: Callable[[Any, datetime], float | None]


def _number(value: Any, _: datetime) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float | Decimal):
        number = float(value)
        return number if math.isfinite(number) else None
    raise TypeError(f"not a number: {value!r}")


def _freshness(value: Any, now: datetime) -> float | None:
    """Seconds between the run's clock and the newest timestamp (a date counts from midnight UTC)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
    elif isinstance(value, date):
        moment = datetime.combine(value, time(0), UTC)
    else:
        raise TypeError(f"not a timestamp: {value!r}")
    return (now - moment).total_seconds()


def _condition(spec: MetricSpec, columns: Sequence[Column], now: datetime) -> exp.Expr:
    """A ``count_where``'s condition, parsed against the source's columns. Raises ConfigError."""
    assert spec.where is not None
    names = [c.name for c in columns]
    sources = {c.name: c.source for c in columns if c.source is not None}
    try:
        return sqlsafe.parse_predicate(spec.where.condition, names, clock=now, sources=sources)
    except sqlsafe.SQLRejected as error:
        raise ConfigError(f"condition '{spec.where.condition}': {error.reason}") from None


def _sample_columns(
    spec: MetricSpec, condition: exp.Expr | None, columns: Sequence[Column], key: Sequence[str]
) -> list[str]:
    """The columns a ``count_where``'s sample rows carry, in the source's order: its
    ``sample_columns``, else the key (``key``, else the source's first column) and the columns its
    condition names, so that a sample shows why the row was flagged and little else."""
    if spec.where is None or condition is None:
        return []
    if spec.where.sample_columns is not None:
        wanted = {_resolve(c, columns, "sample_columns: column").name for c in spec.where.sample_columns}
    else:
        named = {c.name for c in condition.find_all(exp.Column)}
        keys = [k for k in key if any(c.name == k for c in columns)] or [c.name for c in columns[:1]]
        wanted = {*keys, *(c.name for c in columns if c.name in named)}
    return [c.name for c in columns if c.name in wanted]


def _aggregate(
    spec: MetricSpec, column: Column | None, condition: exp.Expr | None
) -> tuple[exp.Expr, Callable[[Any, datetime], float | None]]:
    """The aggregate of one metric (``condition``: a ``count_where``'s, parsed), and how its
    value becomes the stored number. Raises ConfigError when the column's type does not fit."""
    star = exp.Count(this=exp.Star())
    if spec.kind == "row_count":
        return star, _number
    if spec.kind == "count_where":
        assert condition is not None
        case = exp.Case(
            ifs=[exp.If(this=condition, true=exp.Literal.number(1))], default=exp.Literal.number(0)
        )
        # a count: 0 over no rows, where SUM alone is NULL ("no value"), as null_count is
        return exp.Coalesce(this=exp.Sum(this=case), expressions=[exp.Literal.number(0)]), _number
    assert column is not None
    kind = KINDS[spec.kind]
    if not kind.fits(column):
        if kind.needs == "temporal":
            raise ConfigError(f"freshness needs a date or timestamp column; '{column.name}' is {column.type}")
        raise ConfigError(f"{spec.kind} needs a number column; '{column.name}' is {column.type}")
    if spec.kind == "freshness" and spec.over == "source":
        # the newest row that arrived at all, whatever the day's slice holds
        newest = exp.select(exp.Max(this=exp.column(column.name, quoted=True))).from_(
            exp.to_identifier(SOURCE, quoted=True)
        )
        return exp.Subquery(this=newest), _freshness
    return kind.aggregate(column), _freshness if spec.kind == "freshness" else _number


def groupings(profile: Profile, extra: Sequence[tuple[str, ...]] = ()) -> list[tuple[str, ...]]:
    """The grouping sets of a profile: the total, each dimension alone, and the combinations
    that ``by:`` expectations ask for."""
    out: list[tuple[str, ...]] = [()]
    for dimension in profile.dimensions:
        out.append((dimension,))
    for combination in extra:
        ordered = tuple(d for d in profile.dimensions if d in combination)
        if ordered and ordered not in out:
            out.append(ordered)
    return out


PROFILED = "__prof"
MATERIALIZED = "__slice"
GROUPED = "__grouping_sets"
_PREFIX = "__p_"


@dataclass(frozen=True)
class ColumnProfiling:
    """The fixed per-column profile a check run records of its slice, as ``assay profile``
    measures a load (:func:`assay.measure.profile.profile_query`): which columns to count
    exactly, which column pairs to count, and the pairs known to go both ways."""

    exact: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    mixed: tuple[tuple[str, str], ...] = ()
    categorical: tuple[str, ...] = ()  # kept whatever their count (monitor.profiler.categories)

    def query(
        self, columns: Sequence[Column], table: str = ROWS, counts: Mapping[str, exp.Query] | None = None
    ) -> exp.Select:
        """The profile's statement over ``table``, its columns renamed ``__p_<name>`` so that
        none meets a name of the check statement's (a dimension named ``rows``); ``counts``: the
        columns whose values another part of the statement groups (:func:`profile_query`)."""
        # the value shapes' first rows are read from the slice's own relation, not its
        # materialized copy (measure.profile.profile_query's sample_from)
        sample_from = ROWS if table == MATERIALIZED else None
        query = profile_query(
            table, columns, self.categorical, CAP, self.exact, self.pairs, counts, sample_from
        )
        for projection in query.expressions:
            projection.set("alias", exp.to_identifier(_PREFIX + projection.alias, quoted=True))
        return query

    def decode(self, engine: Engine, row: dict[str, Any], columns: Sequence[Column]) -> LoadProfile:
        mine = {k[len(_PREFIX) :]: v for k, v in row.items() if k.startswith(_PREFIX)}
        return decode(engine, mine, columns, self.categorical, CAP, self.exact, self.pairs, self.mixed)


class Plan:
    """The one statement of a profile, built against the columns of its source."""

    def __init__(
        self,
        profile: Profile,
        columns: Sequence[Column],
        *,
        now: datetime,
        extra_groupings: Sequence[tuple[str, ...]] = (),
        dqdl: exp.Select | None = None,
        dialect: str = "duckdb",
        profiling: ColumnProfiling | None = None,
        key: Sequence[str] = (),
    ) -> None:
        self.profile = profile
        self.profiling = profiling
        # With the column profile on DuckDB, the slice is read once into a MATERIALIZED CTE that
        # every part of the statement reads: the profile's value counts are one GROUP BY each,
        # and each re-read the Parquet file and re-applied the slice and filter (bench/checks.py
        # at 1M rows: ratio to the hand-written query 2.7 without it).
        self._rows = MATERIALIZED if profiling is not None and dialect == "duckdb" else ROWS
        self.now = now
        self.errors: dict[str, str] = {}
        self.slots: list[_Slot] = []
        self.samples: dict[str, tuple[str, exp.Expr, int, list[str]]] = {}
        self.expressions: dict[str, exp.Expr] = {}
        self.dimensions: list[str] = []
        for dimension in profile.dimensions:
            self.dimensions.append(_resolve(dimension, columns, f"profile {profile.id}: dimension").name)
        self.groupings = groupings(profile, extra_groupings)
        for spec in profile.specs():
            if spec.reconcile is not None:  # measured apart, on both tables (platform/reconcile)
                continue
            try:
                column = _resolve(spec.column, columns, f"{spec.kind}: column") if spec.column else None
                condition = _condition(spec, columns, now) if spec.where is not None else None
                expr, finish = _aggregate(spec, column, condition)
                shown = _sample_columns(spec, condition, columns, key)
            except ConfigError as error:
                self.errors[spec.key] = error.message
                continue
            alias = f"__m{len(self.slots)}"
            self.slots.append(_Slot(spec, alias, finish))
            if spec.where is not None and spec.where.sample_rows:
                assert condition is not None
                self.samples[spec.key] = (f"__s{len(self.samples)}", condition, spec.where.sample_rows, shown)
            self.expressions[alias] = expr
        self.columns = list(columns)
        self.dqdl = dqdl
        self.dialect = dialect

    def statement(self) -> exp.Select:
        rows = exp.to_identifier(self._rows, quoted=True)
        dims = [exp.column(d, quoted=True) for d in self.dimensions]
        shared: exp.CTE | None = None
        projections: list[exp.Expr] = [
            exp.alias_(exp.Count(this=exp.Star()), _ROWCOUNT, quoted=True, copy=False)
        ]
        projections += [
            exp.alias_(expr.copy(), alias, quoted=True, copy=False)
            for alias, expr in self.expressions.items()
        ]
        if dims:
            flags = [
                exp.alias_(exp.func("GROUPING", d.copy()), f"__g{i}", quoted=True, copy=False)
                for i, d in enumerate(dims)
            ]
            # Built without the builders' copies of the whole tree (copy=False): the statement
            # of bench/checks.py took 0.05 s to build, as long as DuckDB takes to plan it.
            grouped = exp.select(*(d.copy() for d in dims), *flags, *projections, copy=False).from_(
                rows.copy(), copy=False
            )
            sets = [
                exp.Tuple(expressions=[exp.column(d, quoted=True) for d in grouping])
                for grouping in self.groupings
            ]
            grouped.set("group", exp.Group(grouping_sets=[exp.GroupingSets(expressions=sets)]))
            if self._shares_groups():
                # one CTE that the ranked groups and the profile's value counts both read
                shared = exp.CTE(
                    this=grouped,
                    alias=exp.TableAlias(this=exp.to_identifier(GROUPED, quoted=True)),
                    materialized=True,
                )
                grouped = exp.select(exp.Star(), copy=False).from_(
                    exp.to_identifier(GROUPED, quoted=True), copy=False
                )
            partition = [exp.column(f"__g{i}", quoted=True) for i in range(len(dims))]
            order = [exp.Ordered(this=exp.column(_ROWCOUNT, quoted=True), desc=True)] + [
                exp.Ordered(this=d.copy(), nulls_first=False) for d in dims
            ]
            rank = exp.Window(
                this=exp.RowNumber(), partition_by=partition, order=exp.Order(expressions=order)
            )
            total = exp.Window(this=exp.Count(this=exp.Star()), partition_by=[p.copy() for p in partition])
            ranked = exp.select(
                exp.Star(),
                exp.alias_(rank, "__rank", quoted=True, copy=False),
                exp.alias_(total, "__groups", quoted=True, copy=False),
                copy=False,
            ).from_(
                exp.Subquery(this=grouped, alias=exp.TableAlias(this=exp.to_identifier("__grouped"))),
                copy=False,
            )
            base = (
                exp.select(exp.Star(), copy=False)
                .from_(
                    exp.Subquery(this=ranked, alias=exp.TableAlias(this=exp.to_identifier("__ranked"))),
                    copy=False,
                )
                .where(
                    exp.LTE(
                        this=exp.column("__rank", quoted=True),
                        expression=exp.Literal.number(self.profile.top_k),
                    ),
                    copy=False,
                )
            )
        else:
            base = exp.select(*projections, copy=False).from_(rows.copy(), copy=False)
        extras: list[exp.Expr] = []
        for _key, (alias, condition, limit, shown) in self.samples.items():
            flagged = (
                exp.select(*(exp.column(c, quoted=True) for c in shown))
                .from_(rows.copy())
                .where(condition.copy())
                .order_by(*(exp.column(c.name, quoted=True) for c in self.columns[:8]))
                .limit(limit)
            )
            item = exp.column("__t", quoted=True)
            agg: exp.Expr
            if self.dialect == "postgres":
                agg = exp.func("json_agg", item)
            elif self.dialect == "spark":  # Spark has no row value of an alias: a struct of its columns
                agg = exp.ArrayAgg(this=exp.Struct(expressions=[exp.Star()]))
            else:
                agg = exp.ArrayAgg(this=item)
            sub = exp.select(agg).from_(
                exp.Subquery(this=flagged, alias=exp.TableAlias(this=exp.to_identifier("__t", quoted=True)))
            )
            extras.append(exp.alias_(exp.Subquery(this=sub), alias, quoted=True, copy=False))
        if not extras and self.dqdl is None and self.profiling is None:
            return base
        everything = exp.Column(this=exp.Star(), table=exp.to_identifier("__base"))
        outer = exp.select(everything, *extras, copy=False).from_(
            exp.Subquery(this=base, alias=exp.TableAlias(this=exp.to_identifier("__base"))), copy=False
        )
        if self.dqdl is not None:
            outer = outer.select(
                exp.Column(this=exp.Star(), table=exp.to_identifier("__dq")), append=True, copy=False
            ).join(
                exp.Subquery(this=self.dqdl.copy(), alias=exp.TableAlias(this=exp.to_identifier("__dq"))),
                join_type="cross",
                copy=False,
            )
        if self.profiling is not None:
            outer = self._with_profiling(outer, self.profiling, shared)
        return outer

    def _shares_groups(self) -> bool:
        """Whether the profile reads its value counts of the dimensions from the grouping sets:
        on DuckDB, where the slice is materialized once (a GROUP BY of a dimension's values
        again cost 5 % of the statement at 1M rows in bench/checks.py)."""
        return self.profiling is not None and self._rows == MATERIALIZED and bool(self.dimensions)

    def _counted_dimensions(self, profiling: ColumnProfiling) -> dict[str, exp.Query]:
        """The dimensions the profile counts exactly, each read from its own grouping set of
        the GROUPED CTE: the groups where it alone is grouped, before any ``top_k`` cap."""
        out: dict[str, exp.Query] = {}
        for i, dimension in enumerate(self.dimensions):
            if dimension not in profiling.exact:
                continue
            alone = exp.and_(
                *(
                    exp.EQ(
                        this=exp.column(f"__g{j}", quoted=True), expression=exp.Literal.number(int(j != i))
                    )
                    for j in range(len(self.dimensions))
                )
            )
            out[dimension] = exp.Select(
                expressions=[
                    exp.column(dimension, quoted=True),
                    exp.alias_(exp.column(_ROWCOUNT, quoted=True), "__n", quoted=True, copy=False),
                ],
                from_=exp.From(this=exp.to_identifier(GROUPED, quoted=True)),
                where=exp.Where(this=alone),
            )
        return out

    def _with_profiling(
        self, outer: exp.Select, profiling: ColumnProfiling, grouped: exp.CTE | None = None
    ) -> exp.Select:
        """``outer`` joined with the per-column profile's one row, on the total's row only (a
        group's row would repeat its value lists). Its CTEs move to the top of the statement:
        not every engine takes a WITH inside a joined subquery. ``grouped``: the check's
        grouping sets as a CTE, which the profile reads the dimensions' value counts from."""
        counts = self._counted_dimensions(profiling) if grouped is not None else None
        query = profiling.query(self.columns, self._rows, counts)
        found = query.args.get("with_")
        query.set("with_", None)
        ctes: list[exp.CTE] = list(found.expressions) if found is not None else []
        if grouped is not None:
            ctes.insert(0, grouped)
        if self._rows == MATERIALIZED:
            read = exp.select("*").from_(exp.to_identifier(ROWS, quoted=True))
            alias = exp.TableAlias(this=exp.to_identifier(MATERIALIZED, quoted=True))
            ctes.insert(0, exp.CTE(this=read, alias=alias, materialized=True))
        joined = exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier(PROFILED)))
        outer = outer.select(
            exp.Column(this=exp.Star(), table=exp.to_identifier(PROFILED)), append=True, copy=False
        )
        if self.dimensions:
            total = exp.and_(
                *(
                    exp.EQ(
                        this=exp.column(f"__g{i}", table="__base", quoted=True),
                        expression=exp.Literal.number(1),
                    )
                    for i in range(len(self.dimensions))
                )
            )
            outer = outer.join(joined, on=total, join_type="left", copy=False)
        else:
            outer = outer.join(joined, join_type="cross", copy=False)
        if ctes:
            outer.set("with_", exp.With(expressions=ctes))
        return outer

    def decode(
        self, rows: list[dict[str, Any]], dqdl_slots: Sequence[str], engine: Engine | None = None
    ) -> ProfileMeasurement:
        out = ProfileMeasurement(self.profile, errors=dict(self.errors))
        for grouping in self.groupings:
            out.groups[grouping] = []
        ranks: dict[Group, int] = {}
        for row in rows:
            if self.dimensions:
                flags = [row[f"__g{i}"] for i in range(len(self.dimensions))]
                group: Group = tuple(
                    (d, _plain(row[d])) for i, d in enumerate(self.dimensions) if flags[i] == 0
                )
                grouping = tuple(d for d, _ in group)
                if grouping not in out.groups:
                    continue
                if group and row["__rank"] == self.profile.top_k:
                    for d in grouping:
                        out.dropped[d] = max(out.dropped.get(d, 0), int(row["__groups"]) - self.profile.top_k)
                if group:
                    out.groups[grouping].append(group)
                    ranks[group] = int(row["__rank"])
            else:
                group = ()
            if not group:
                out.rows = int(row[_ROWCOUNT] or 0)
                for key, (sample, _, _limit, _shown) in self.samples.items():
                    out.samples[key] = _rows(row.get(sample))
                for name in dqdl_slots:
                    out.dqdl[name] = row.get(name)
                if self.profiling is not None and engine is not None:
                    out.columns = self.profiling.decode(engine, row, self.columns)
            out.values[(_ROWCOUNT, group)] = float(row[_ROWCOUNT] or 0)
            self.finish(out, row, group, self.slots)
        if out.rows is None:
            # No row for the grand total: Spark's GROUPING SETS give no row at all, not even the
            # empty set's, on an empty input (DuckDB gives the total's row of zero counts). The
            # input had no row: the total is that, and its other values are unknown (but those
            # of the whole source, which :func:`measure` asks for alone).
            out.rows = 0
            out.values[(_ROWCOUNT, ())] = 0.0
        for groups in out.groups.values():  # largest first, as ranked in the query: the same order every run
            groups.sort(key=lambda g: ranks.get(g, 0))
        return out

    def finish(
        self, out: ProfileMeasurement, row: dict[str, Any], group: Group, slots: Sequence[_Slot]
    ) -> None:
        """The values of ``slots`` in ``row``, as ``group``'s, into ``out``."""
        for slot in slots:
            try:
                out.values[(slot.spec.key, group)] = slot.finish(row[slot.alias], self.now)
            except TypeError as error:
                out.errors[slot.spec.key] = f"{slot.spec.key}: {error}"


def _plain(value: Any) -> Any:
    """A dimension value as JSON keeps it."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return str(value)


def _rows(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, str):
        value = json.loads(value)
    return [{k: _plain(v) for k, v in dict(item).items()} for item in value]


def measure(engine: Engine, plan: Plan, dqdl_slots: Sequence[str] = ()) -> ProfileMeasurement:
    """Send the profile's one statement and decode its rows. Raises EngineError. (As the
    engine's rows, not an Arrow table's: pyarrow imports pandas to turn a zoned timestamp into
    Python, 0.2 to 0.5 s of every ``assay check run``.)"""
    rows = engine.rows(plan.statement())
    out = plan.decode(rows, dqdl_slots, engine)
    whole = [slot for slot in plan.slots if slot.spec.over == "source"] if not rows else []
    if whole:
        # No row at all: Spark's GROUPING SETS on an empty slice (Plan.decode). A metric of the
        # whole source does not read the slice, and a day whose rows never came is the day it is
        # for: measured alone, it is DuckDB's number (one more statement, on that day only).
        alone = exp.select(
            *(exp.alias_(plan.expressions[s.alias].copy(), s.alias, quoted=True) for s in whole)
        )
        plan.finish(out, engine.rows(alone)[0], (), whole)
    return out


def group_label(group: Group) -> dict[str, Any] | None:
    return dict(group) if group else None


__all__ = ["ColumnProfiling", "Plan", "ProfileMeasurement", "measure", "register_rows"]
