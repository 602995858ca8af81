"""dbt's generic tests as check-document expectations: one converter per test name
(:data:`CONVERTERS`), each stating the query dbt runs and why the expectation fails on exactly the
same rows. A test with no exact equivalent raises :class:`NotConverted` with the reason.

dbt runs a test as a query that selects the failing rows (or groups) and fails when it finds any
(the default ``fail_calc: count(*)``, ``warn_if``/``error_if: != 0``). Each converter says which
rows those are, and the expectation counts the same rows and expects 0, NULLs included.

>>> from assay.platform.checks.dbt.manifest import DbtTest
>>> test = DbtTest("test.shop.x", "accepted_values_orders_status", "accepted_values", None,
...             {"column_name": "status", "values": ["placed", "shipped"]}, "status", {},
...             "model.shop.orders", "")
>>> check = convert(test, "status_accepted")
>>> check.metric["count_where"]["condition"], check.expect
("NOT `status` IS NULL AND NOT `status` IN ('placed', 'shipped')", '= 0')
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from assay.lang import sqlsafe
from assay.platform.checks.dbt.manifest import DbtTest

SEVERITIES: Mapping[str, str] = {"error": "error", "warn": "warning"}
"""dbt's two severities (case-insensitive in dbt) as assay's."""

DEFAULT_THRESHOLDS = ("!=0", "<>0", ">0")
"""``warn_if``/``error_if`` that mean "any failing row" (dbt's default is ``!= 0``)."""

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")


class NotConverted(Exception):
    """A test with no exact equivalent in a check document; the message says why."""


@dataclass(frozen=True)
class Check:
    """What one test becomes: an expectation on a declared metric (``metric`` declared in the
    profile, read as ``key`` with ``expect``) or a DQDL ``rule``, measured over the rows that pass
    ``filter`` (dbt's ``where`` config and dbt-expectations' ``row_condition``)."""

    metric: str | dict[str, Any] | None = None
    key: str | None = None
    expect: str | None = None
    rule: str | None = None
    filter: str | None = None


@dataclass(frozen=True)
class _Args:
    test: DbtTest
    name: str  # the count_where metric's name, when the converter declares one

    def get(self, key: str, default: Any = None) -> Any:
        value = self.test.kwargs.get(key, default)
        if isinstance(value, str) and ("{{" in value or "{%" in value):
            raise NotConverted(f"argument {key} is Jinja ({value!r}), which only dbt renders")
        return value

    @property
    def column(self) -> str:
        """The tested column as the data names it; ``"Order ID"`` (dbt's quoted form) is kept whole."""
        column = self.test.column or self.test.kwargs.get("column_name")
        if not isinstance(column, str) or not column:
            raise NotConverted("the test names no column")
        if len(column) > 2 and column[0] == column[-1] == '"' and '"' not in column[1:-1]:
            return column[1:-1]
        if not _IDENTIFIER.match(column):
            raise NotConverted(f"column_name {column!r} is an expression, not a column")
        return column


def _col(name: str) -> exp.Column:
    return exp.column(name, quoted=True)


def _counted(args: _Args, condition: exp.Expr) -> Check:
    """A ``count_where`` of the failing rows, expected to be 0. The condition is printed from its
    tree and read back through assay's safe SQL subset, so a pattern RE2 cannot run is refused
    here, not at the first run."""
    text = sqlsafe.render(condition, "spark")
    try:
        sqlsafe.parse_predicate(text, [args.column])
    except sqlsafe.SQLRejected as error:
        raise NotConverted(error.reason) from None
    return Check(metric={"count_where": {"name": args.name, "condition": text}}, key=args.name, expect="= 0")


def _number(args: _Args, key: str) -> float | int | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise NotConverted(f"argument {key} {value!r} is not a number (SQL text is the warehouse's to read)")
    return value


def _literal(value: Any, quote: bool, key: str) -> exp.Expr:
    """A value of a list as dbt writes it into the test's SQL: quoted, ``'{{ value }}'``, or as
    written, which the import reads only when it is a number."""
    if isinstance(value, bool) or value is None:
        raise NotConverted(f"{key} holds {value!r}, which dbt writes into SQL as the text {str(value)!r}")
    if isinstance(value, str) and ("{{" in value or "{%" in value):
        raise NotConverted(f"{key} holds Jinja ({value!r}), which only dbt renders")
    if quote:
        if not isinstance(value, str | int | float):
            raise NotConverted(f"{key} holds {value!r}, not a value")
        if "'" in str(value) or "\\" in str(value):
            raise NotConverted(f"{key} holds {str(value)!r}, which dbt pastes into SQL unescaped")
        return exp.Literal.string(str(value))
    if isinstance(value, int | float) and math.isfinite(value):
        return exp.Literal.number(value)
    raise NotConverted(f"{key} holds {value!r} unquoted (quote: false): SQL text, not a value")


def _values(args: _Args, key: str, quote_key: str) -> list[exp.Expr]:
    values = args.get(key)
    if not isinstance(values, list) or not values:
        raise NotConverted(f"argument {key} is not a list of values")
    quote = args.get(quote_key, True)
    if not isinstance(quote, bool):
        raise NotConverted(f"argument {quote_key} {quote!r} is not true or false")
    return [_literal(v, quote, key) for v in values]


def _bounds(args: _Args, value: exp.Expr) -> exp.Expr:
    """``value >= min and value <= max`` (``>``, ``<`` when ``strictly``), either side optional."""
    low, high = _number(args, "min_value"), _number(args, "max_value")
    if low is None and high is None:
        raise NotConverted("neither min_value nor max_value is given")
    strictly = args.get("strictly", False)
    parts: list[exp.Expr] = []
    if low is not None:
        bound = exp.Literal.number(low)
        parts.append(
            exp.GT(this=value.copy(), expression=bound)
            if strictly
            else exp.GTE(this=value.copy(), expression=bound)
        )
    if high is not None:
        bound = exp.Literal.number(high)
        parts.append(
            exp.LT(this=value.copy(), expression=bound)
            if strictly
            else exp.LTE(this=value.copy(), expression=bound)
        )
    return exp.and_(*parts)


def _no_group_by(args: _Args) -> None:
    if args.get("group_by"):
        raise NotConverted(
            "group_by: one number per group, which a check document judges with by: dimensions"
        )


# --- dbt's own generic tests --------------------------------------------------------------------------


def _not_null(args: _Args) -> Check:
    """``select * from model where c is null``: the nulls of c. → ``null_count(c) = 0``."""
    column = args.column
    return Check(metric={"null_count": [column]}, key=f"null_count({column})", expect="= 0")


def _unique(args: _Args) -> Check:
    """``select c from model where c is not null group by c having count(*) > 1``: values of c seen
    twice, NULL left out. → DQDL ``DuplicateRowCount "c" = 0``, which leaves NULL keys out too."""
    column = args.column
    if '"' in column or "\\" in column:
        raise NotConverted(f"column {column!r} holds a double quote or backslash, which DQDL cannot quote")
    return Check(rule=f'DuplicateRowCount "{column}" = 0')


def _accepted_values(args: _Args) -> Check:
    """``... where c not in ('a', 'b')``: NULL is accepted (``NULL not in (...)`` is not true).
    → ``count_where: NOT c IS NULL AND NOT c IN ('a', 'b')`` = 0; ``quote: false`` writes numbers."""
    c = _col(args.column)
    values = _values(args, "values", "quote")
    present = exp.Not(this=exp.Is(this=c.copy(), expression=exp.Null()))
    return _counted(args, exp.and_(present, exp.Not(this=exp.In(this=c.copy(), expressions=values))))


def _relationships(args: _Args) -> Check:
    """Every c is a key of another model: a check document reads one source, so it has no other
    model to look the keys up in."""
    to, key = args.test.kwargs.get("to"), args.test.kwargs.get("field")
    raise NotConverted(
        f"relationships to {to} ({key}): a check document reads one source; check it with "
        f"assay dqdl run and a ReferentialIntegrity rule (--ref)"
    )


# --- dbt-expectations (namespace dbt_expectations) -----------------------------------------------------


def _expect_not_null(args: _Args) -> Check:
    """``... where c is null`` over the rows of ``row_condition``. → ``null_count(c) = 0``."""
    return _not_null(args)


def _expect_null(args: _Args) -> Check:
    """``... where c is not null``. → ``count_where: NOT c IS NULL`` = 0."""
    return _counted(args, exp.Not(this=exp.Is(this=_col(args.column), expression=exp.Null())))


def _expect_unique(args: _Args) -> Check:
    """expect_compound_columns_to_be_unique of [c], rows whose c is NULL ignored (its
    ``ignore_row_if`` default): groups seen twice. → ``DuplicateRowCount "c" = 0``."""
    return _unique(args)


def _expect_in_set(args: _Args) -> Check:
    """The values of c left-joined to the set, ``where s.value_field is null``: a NULL finds no
    partner, so a NULL fails. → ``count_where: c IS NULL OR NOT c IN (...)`` = 0."""
    c = _col(args.column)
    values = _values(args, "value_set", "quote_values")
    missing = exp.Is(this=c.copy(), expression=exp.Null())
    return _counted(args, exp.or_(missing, exp.Not(this=exp.In(this=c.copy(), expressions=values))))


def _expect_between(args: _Args) -> Check:
    """expression_is_true of ``c >= min and c <= max``, failing rows ``where not (expression =
    true)``: a NULL c makes the expression NULL and passes. → ``count_where: NOT (bounds)`` = 0,
    which does not count NULL either."""
    return _counted(args, exp.Not(this=exp.Paren(this=_bounds(args, _col(args.column)))))


def _expect_lengths_between(args: _Args) -> Check:
    """As between, on ``length(c)``. → ``count_where: NOT (LENGTH(c) >= min AND ...)`` = 0."""
    length = exp.Length(this=_col(args.column))
    return _counted(args, exp.Not(this=exp.Paren(this=_bounds(args, length))))


def _expect_match_regex(args: _Args) -> Check:
    """expression_is_true of ``regexp_instr(c, regex) > 0``, a search, NULL passing. → ``count_where:
    NOT c RLIKE 'regex'`` = 0 (RLIKE searches; NULL is not counted)."""
    regex = args.get("regex")
    if not isinstance(regex, str) or not regex:
        raise NotConverted("argument regex is not a pattern")
    if args.get("flags"):
        raise NotConverted(f"regex flags {args.get('flags')!r}: the warehouse's own flags")
    if args.get("is_raw", False) not in (True, False):
        raise NotConverted("argument is_raw is not true or false")
    c = _col(args.column)
    return _counted(args, exp.Not(this=exp.RegexpLike(this=c, expression=exp.Literal.string(regex))))


def _expect_row_count_between(args: _Args) -> Check:
    """expression_between of ``count(*)``: ``>= min and <= max``. A count is a whole number, so
    the inclusive bounds are DQDL's exclusive ``between min - 1 and max + 1``."""
    _no_group_by(args)
    low, high = _number(args, "min_value"), _number(args, "max_value")
    strictly = bool(args.get("strictly", False))
    if low is None and high is None:
        raise NotConverted("neither min_value nor max_value is given")
    # the least and the most rows that pass, as whole numbers
    least = None if low is None else (math.floor(low) + 1 if strictly else math.ceil(low))
    most = None if high is None else (math.ceil(high) - 1 if strictly else math.floor(high))
    if least is not None and most is not None:
        expect = f"between {least - 1} and {most + 1}"
    else:
        expect = f">= {least}" if least is not None else f"<= {most}"
    return Check(metric="row_count", key="row_count", expect=expect)


def _expect_row_count_equal(args: _Args) -> Check:
    """``count(*) = value``. → ``row_count = value``."""
    _no_group_by(args)
    value = _number(args, "value")
    if value is None:
        raise NotConverted("argument value is not given")
    return Check(metric="row_count", key="row_count", expect=f"= {value}")


def _expect_distinct_count_equal(args: _Args) -> Check:
    """``count(distinct c) = value`` (NULL not counted). → ``distinct_count(c) = value``, distinct
    non-null values counted exactly."""
    _no_group_by(args)
    value = _number(args, "value")
    if value is None:
        raise NotConverted("argument value is not given")
    column = args.column
    return Check(metric={"distinct_count": [column]}, key=f"distinct_count({column})", expect=f"= {value}")


_Converter = Callable[[_Args], Check]

_FILTERED = ("row_condition",)
_BOUNDS = ("min_value", "max_value", "strictly", *_FILTERED)

CONVERTERS: Mapping[str, tuple[_Converter, Sequence[str]]] = {
    "not_null": (_not_null, ()),
    "unique": (_unique, ()),
    "accepted_values": (_accepted_values, ("values", "quote")),
    "relationships": (_relationships, ("to", "field")),
    "dbt_expectations.expect_column_values_to_not_be_null": (_expect_not_null, _FILTERED),
    "dbt_expectations.expect_column_values_to_be_null": (_expect_null, _FILTERED),
    "dbt_expectations.expect_column_values_to_be_unique": (_expect_unique, _FILTERED),
    "dbt_expectations.expect_column_values_to_be_in_set": (
        _expect_in_set,
        ("value_set", "quote_values", *_FILTERED),
    ),
    "dbt_expectations.expect_column_values_to_be_between": (_expect_between, _BOUNDS),
    "dbt_expectations.expect_column_value_lengths_to_be_between": (_expect_lengths_between, _BOUNDS),
    "dbt_expectations.expect_column_values_to_match_regex": (
        _expect_match_regex,
        ("regex", "is_raw", "flags", *_FILTERED),
    ),
    "dbt_expectations.expect_table_row_count_to_be_between": (
        _expect_row_count_between,
        ("group_by", *_BOUNDS),
    ),
    "dbt_expectations.expect_table_row_count_to_equal": (
        _expect_row_count_equal,
        ("value", "group_by", *_FILTERED),
    ),
    "dbt_expectations.expect_column_distinct_count_to_equal": (
        _expect_distinct_count_equal,
        ("value", "quote_values", "group_by", *_FILTERED),
    ),
}
"""One converter per generic test, by ``namespace.name`` (dbt's own tests have no namespace),
with the arguments it reads besides ``model`` and ``column_name``: a test given any other
argument is not converted, since the expectation would ignore what it says."""


def convert(test: DbtTest, name: str) -> Check:
    """The expectation of one generic test (``name`` names its ``count_where`` metric, if it
    declares one), or :class:`NotConverted`. See the module's docstring for an example."""
    if test.kind is None:
        raise NotConverted("a singular test (a SQL file): its query is the warehouse's to run")
    found = CONVERTERS.get(test.full_kind)
    if found is None:
        raise NotConverted(f"test {test.full_kind} has no exact equivalent in a check document")
    converter, known = found
    others = sorted(set(test.kwargs) - {"model", "column_name", *known})
    if others:
        raise NotConverted(f"argument(s) {', '.join(others)} are not read by the import")
    _thresholds(test.config)
    args = _Args(test, name)
    check = converter(args)
    filters = [
        f
        for f in (
            _filter(test.config.get("where"), "where"),
            _filter(args.get("row_condition"), "row_condition"),
        )
        if f
    ]
    if len(filters) == 2:
        return _with_filter(check, f"({filters[0]}) AND ({filters[1]})")
    return _with_filter(check, filters[0] if filters else None)


def severity(test: DbtTest) -> str:
    """The expectation's severity: dbt's ``config.severity`` (``error`` by default)."""
    given = str(test.config.get("severity") or "error").lower()
    if given not in SEVERITIES:
        raise NotConverted(f"severity {test.config.get('severity')!r} is not warn or error")
    return SEVERITIES[given]


def _thresholds(config: Mapping[str, Any]) -> None:
    """dbt fails (or warns) when the failing rows' count meets ``error_if`` (``warn_if``); only
    the default, any row at all, is what ``= 0`` says."""
    fail_calc = str(config.get("fail_calc") or "count(*)")
    if "".join(fail_calc.split()).lower() != "count(*)":
        raise NotConverted(f"fail_calc {fail_calc!r}: the import converts counts of failing rows")
    key = "warn_if" if str(config.get("severity") or "error").lower() == "warn" else "error_if"
    threshold = str(config.get(key) or "!= 0")
    if "".join(threshold.split()) not in DEFAULT_THRESHOLDS:
        raise NotConverted(f"{key} {threshold!r}: the import converts the default, any failing row (!= 0)")


def _filter(text: Any, key: str) -> str | None:
    """dbt's ``where`` (or ``row_condition``) as a profile's filter: SQL that assay reads in its
    safe subset (Spark SQL), checked here so that a filter it refuses is named at import."""
    if text is None or text == "":
        return None
    if not isinstance(text, str):
        raise NotConverted(f"{key} {text!r} is not SQL text")
    if "{{" in text or "{%" in text:
        raise NotConverted(f"{key} {text!r} is Jinja, which only dbt renders")
    try:
        tree = sqlsafe.parse_condition(text)
        columns = sorted({c.name for c in tree.find_all(exp.Column)})
        sqlsafe.parse_predicate(text, columns)
    except sqlsafe.SQLRejected as error:
        raise NotConverted(f"{key} {text!r}: {error.reason}") from None
    return " ".join(text.split())


def _with_filter(check: Check, text: str | None) -> Check:
    return Check(check.metric, check.key, check.expect, check.rule, text)
