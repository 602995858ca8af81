"""Rules that judge every row's value: ColumnValues, ColumnLength, ColumnDataType, DataFreshness.

Each compiles its condition into a per-row SQL predicate (:mod:`assay.rules.predicates`); the
rule's metric is the share of rows that satisfy it (its *compliance*), and the rule passes when
the compliance is 1.0 or meets ``with threshold``. The same predicate gives the row-level result.
"""

from __future__ import annotations

import re
from dataclasses import replace

from sqlglot import exp

from assay.engine import Column, DataKind
from assay.engine.base import as_text
from assay.lang.dqdl import ast
from assay.lang.dqdl.ast import CondKind, Op
from assay.measure import Aggregate
from assay.measure.kinds import KINDS
from assay.measure.requests import count_if, count_star, filtered
from assay.rules import predicates
from assay.rules.plan import (
    Compliance,
    Context,
    Fixed,
    LeafPlan,
    MetricSpec,
    RowCheck,
    RuleError,
    col,
    number_of,
    qualified,
    ratio_of,
)
from assay.store import MetricKey


def as_number(column: Column) -> exp.Expr:
    if column.kind.numeric:
        return col(column)
    if column.kind is DataKind.STRING:
        return exp.TryCast(this=col(column), to=exp.DataType.build("DOUBLE"))
    raise RuleError(f"Column '{column.name}' is {column.type}; a numeric condition needs numbers or text")


def as_timestamp(column: Column) -> exp.Expr:
    """The column as a UTC timestamp without zone; text is parsed, NULL where it is not a date."""
    if column.kind is DataKind.TIMESTAMP:
        if "TIME ZONE" in column.type.upper():
            return exp.AtTimeZone(this=col(column), zone=exp.Literal.string("UTC"))
        return col(column)
    if column.kind is DataKind.DATE:
        return exp.cast(col(column), exp.DataType.build("TIMESTAMP"))
    if column.kind is DataKind.STRING:
        return exp.TryCast(this=col(column), to=exp.DataType.build("TIMESTAMP"))
    raise RuleError(
        f"Column '{column.name}' is {column.type}; a date condition needs dates, timestamps or text"
    )


def compliance_plan(
    rule: ast.Rule,
    ctx: Context,
    column: Column,
    predicate: exp.Expr,
    name: str,
    *,
    row_level: bool = True,
    extra: list[MetricSpec] | None = None,
) -> LeafPlan:
    """The share of (where-filtered) rows satisfying ``predicate``, judged against 1.0 or the threshold."""
    where = ctx.where(rule)
    rows = ctx.request(Aggregate(count_star(where)))
    passing = ctx.request(Aggregate(count_if(predicate, where)))
    key = MetricKey.column(column.name, name)
    metric = MetricSpec(
        key.key, qualified(key, rule, condition=True), ratio_of(passing, rows), (passing, rows)
    )
    counted = MetricSpec("", MetricKey.dataset("RowCount"), number_of(rows), (rows,))
    threshold = rule.threshold
    verdict = Compliance(metric.display, "rows", threshold, qualified(key, rule, condition=True))
    row = RowCheck(predicate, where, in_row_composites=threshold is None, in_row_level=row_level)
    plan = LeafPlan(rule, [metric, *(extra or [])], verdict, row)
    plan.hidden["rows"] = counted
    return plan


def dated_text(plan: LeafPlan, ctx: Context, column: Column) -> LeafPlan:
    """``plan`` judging a text column as dates: an Error when none of its values is one (vega's
    stocks.csv writes ``Jan 1 2000``), rather than every row failed with no reason."""
    if column.kind is not DataKind.STRING or not isinstance(plan.verdict, Compliance):
        return plan
    where = ctx.where(plan.rule)
    present = ctx.request(
        Aggregate(count_if(exp.Not(this=exp.Is(this=col(column), expression=exp.Null())), where))
    )
    dated = ctx.request(
        Aggregate(count_if(exp.Not(this=exp.Is(this=as_timestamp(column), expression=exp.Null())), where))
    )
    plan.hidden["texts"] = MetricSpec(
        "", MetricKey.column(column.name, "Texts"), number_of(present), (present,)
    )
    plan.hidden["dated"] = MetricSpec("", MetricKey.column(column.name, "Dated"), number_of(dated), (dated,))
    plan.verdict = replace(plan.verdict, dated=(column.name, "texts", "dated"))
    return plan


def column_values(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``ColumnValues "c" in ["a","b"]``, ``> 5``, ``between "2024-01-01" and now()``, ``matches "..."``."""
    column = ctx.column(rule.params[0].text)
    cond = rule.condition
    if cond is None:
        return _value_analyzer(rule, ctx, column)
    extra: list[MetricSpec] = []
    if cond.kind is CondKind.STRING:
        ignore_case = (rule.tag("ignoreCase") or "").lower() == "true"
        predicate = predicates.string_predicate(as_text(column), cond, ctx.constants, ignore_case=ignore_case)
    elif cond.kind is CondKind.NUMBER:
        value = as_number(column)
        predicate = predicates.number_predicate(value, cond)
        extra = _min_max(rule, ctx, column, value, "Minimum", "Maximum")
    else:
        predicate = predicates.date_predicate(as_timestamp(column), cond, ctx.now, rule.tag("timeZone"))
        plan = compliance_plan(rule, ctx, column, predicate, "ColumnValues.Compliance")
        return dated_text(plan, ctx, column)
    return compliance_plan(rule, ctx, column, predicate, "ColumnValues.Compliance", extra=extra)


def _min_max(
    rule: ast.Rule, ctx: Context, column: Column, value: exp.Expr, low: str, high: str
) -> list[MetricSpec]:
    """The least and greatest of ``value`` (the column read as numbers, or its lengths); a
    number column's are the kind table's ``min`` and ``max``."""
    where = ctx.where(rule)
    specs = []
    for name, aggregate, kind in ((low, exp.Min, "min"), (high, exp.Max, "max")):
        measured = (
            KINDS[kind].request(column, where)
            if column.kind.numeric and value == col(column)
            else Aggregate(filtered(aggregate(this=value.copy()), where))
        )
        slot = ctx.request(measured)
        key = MetricKey.column(column.name, name)
        specs.append(MetricSpec(key.key, qualified(key, rule), number_of(slot), (slot,)))
    return specs


def _length(column: Column) -> exp.Expr:
    if column.kind is not DataKind.STRING:
        raise RuleError(f"Column '{column.name}' is {column.type}; ColumnLength needs a text column")
    # NULL counts as length 0 (DQDL.md §6, ColumnLength).
    return exp.func("coalesce", exp.Length(this=as_text(column)), exp.Literal.number(0))


def _value_analyzer(rule: ast.Rule, ctx: Context, column: Column) -> LeafPlan:
    """ColumnValues as an analyzer: minimum and maximum, or their lengths for text."""
    if column.kind is DataKind.STRING:
        metrics = _min_max(rule, ctx, column, _length(column), "MinimumLength", "MaximumLength")
    elif column.kind.numeric:
        metrics = _min_max(rule, ctx, column, col(column), "Minimum", "Maximum")
    else:
        metrics = []
    return LeafPlan(rule, metrics, Fixed(True))


def column_length(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``ColumnLength "c" between 1 and 10``: every row's length satisfies the condition."""
    column = ctx.column(rule.params[0].text)
    length = _length(column)
    extra = _min_max(rule, ctx, column, length, "MinimumLength", "MaximumLength")
    if rule.condition is None:
        return LeafPlan(rule, extra, Fixed(True))
    predicate = predicates.number_predicate(length, rule.condition)
    return compliance_plan(rule, ctx, column, predicate, "LengthCompliance", extra=extra)


# ColumnDataType: the types Glue names, as the engine type a value must cast to (DQDL.md §6).
_CAST_TYPES = {
    "BOOLEAN": "BOOLEAN",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
    "INTEGER": "INT",
    "INT": "INT",
    "LONG": "BIGINT",
    "BIGINT": "BIGINT",
    "SHORT": "SMALLINT",
    "BYTE": "TINYINT",
    "DOUBLE": "DOUBLE",
    "FLOAT": "FLOAT",
    "STRING": "VARCHAR",
}
_DECIMAL = re.compile(r"DECIMAL\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)", re.IGNORECASE)

# Java date-pattern letters (the `format` tag) and their strftime equivalents, longest first.
_JAVA_FORMAT = (
    ("yyyy", "%Y"),
    ("MMMM", "%B"),
    ("EEEE", "%A"),
    ("MMM", "%b"),
    ("EEE", "%a"),
    ("SSS", "%g"),
    ("yy", "%y"),
    ("MM", "%m"),
    ("dd", "%d"),
    ("HH", "%H"),
    ("hh", "%I"),
    ("mm", "%M"),
    ("ss", "%S"),
    ("M", "%-m"),
    ("d", "%-d"),
    ("H", "%-H"),
    ("a", "%p"),
)


def strftime_format(java: str) -> str:
    """A Java ``DateTimeFormatter`` pattern as a strftime format.

    >>> strftime_format("dd/MM/yyyy"), strftime_format("yyyy-MM-dd'T'HH:mm")
    ('%d/%m/%Y', '%Y-%m-%dT%H:%M')
    """
    out, i = [], 0
    while i < len(java):
        if java[i] == "'":
            end = java.find("'", i + 1)
            if end < 0:
                raise RuleError(f"invalid date format '{java}': unclosed quote")
            out.append(java[i + 1 : end].replace("%", "%%"))
            i = end + 1
            continue
        for pattern, replacement in _JAVA_FORMAT:
            if java.startswith(pattern, i):
                out.append(replacement)
                i += len(pattern)
                break
        else:
            if java[i].isalpha():
                raise RuleError(f"invalid date format '{java}': pattern letter '{java[i]}' is not supported")
            out.append("%%" if java[i] == "%" else java[i])
            i += 1
    return "".join(out)


def castable(text: exp.Expr, type_name: str, fmt: str | None) -> exp.Expr:
    """TRUE where ``text`` converts to ``type_name``, FALSE elsewhere (NULL does not convert)."""
    upper = type_name.strip().upper()
    decimal = _DECIMAL.fullmatch(upper)
    if decimal:
        target = exp.DataType.build(f"DECIMAL({decimal.group(1)},{decimal.group(2)})")
        converted: exp.Expr = exp.TryCast(this=text, to=target)
    elif upper in ("DATE", "TIMESTAMP") and fmt:
        pattern = exp.Literal.string(strftime_format(fmt))
        pattern.meta["java_format"] = fmt  # Spark takes the Java pattern as written (docs/engines.md)
        converted = exp.StrToTime(this=text, format=pattern, safe=True)
    elif upper in _CAST_TYPES:
        converted = exp.TryCast(this=text, to=exp.DataType.build(_CAST_TYPES[upper]))
    else:
        known = "Boolean, Date, Timestamp, Integer, Long, Float, Double, Decimal(p,s), String"
        raise RuleError(f"Unrecognized data type '{type_name}': use one of {known}")
    return exp.Not(this=exp.Is(this=converted, expression=exp.Null()))


def column_data_type(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``ColumnDataType "c" = "DATE"``: the share of values that convert to the type."""
    column = ctx.column(rule.params[0].text)
    cond = rule.condition
    assert cond is not None
    names = [
        item.value for item in predicates.string_items(cond, ctx.constants) if isinstance(item, ast.StringLit)
    ]
    if not names:
        raise RuleError('ColumnDataType needs a type name such as "DATE"')
    fmt = rule.tag("format")
    text = as_text(column)
    matched = exp.or_(*(castable(text.copy(), name, fmt) for name in names))
    predicate = predicates.coalesce_false(matched)
    if cond.op in (Op.NE, Op.NOT_IN):
        predicate = exp.Not(this=predicate)
    return compliance_plan(rule, ctx, column, predicate, "ColumnDataType.Compliance")


def data_freshness(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``DataFreshness "updated_at" <= 24 hours``: every row's age (now - value) satisfies the
    condition; NULL rows fail. Deequ gives it no row-level result, and neither do we; its rows
    are judged in ROW-mode composites, where a composite needs every part row by row."""
    column = ctx.column(rule.params[0].text)
    assert rule.condition is not None
    predicate = predicates.freshness_predicate(as_timestamp(column), rule.condition, ctx.now)
    plan = compliance_plan(rule, ctx, column, predicate, "DataFreshness.Compliance", row_level=False)
    return dated_text(plan, ctx, column)
