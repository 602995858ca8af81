"""The safe SQL subset: Spark SQL text from rules, parsed into checked sqlglot trees.

DQDL carries SQL in two places: the ``where "<predicate>"`` modifier (DQDL.md §4) and the query of
a ``CustomSql`` rule (DQDL.md §6, tables ``primary`` and the reference aliases). Glue runs both on
Spark, so both are read with sqlglot's ``spark`` dialect. The text is parsed, never pasted: every
node of the tree must be on the allowlist below (a declarative table of sqlglot classes, as in
sqlglot's own dialect tables), every column must resolve against the table's columns and every
table against the declared aliases. The trees are rendered for an engine only at the last moment
(:func:`render`).

>>> print(render(parse_predicate("att1 > 2", ["att1"]), "duckdb"))
"att1" > 2
>>> print(render(parse_query("select count(*) from primary", {"primary": ["id"]}), "duckdb"))
SELECT COUNT(*) FROM "primary"
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Final

from sqlglot import TokenType, exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, OptimizeError, ParseError, SqlglotError, TokenError, UnsupportedError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from assay.errors import ConfigError
from assay.lang import patterns
from assay.names import match_name

READ_DIALECT: Final = "spark"


class SQLRejected(ConfigError):
    """User SQL that assay refuses or cannot parse; ``.reason`` is a short human sentence.

    >>> try:
    ...     parse_predicate("a > 1; drop table t", ["a"])
    ... except SQLRejected as e:
    ...     print(e.reason)
    a predicate cannot contain ';'
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


NodeTypes = frozenset[type[exp.Expr]]

# ---------------------------------------------------------------------------------------------
# The allowlist. A node whose exact class is not listed is rejected; subclasses are not implied
# (TryCast is listed beside Cast on purpose). Functions are listed only when sqlglot renders them
# with Spark's semantics on DuckDB, checked by tests/lang/test_sqlsafe.py. Left out on purpose:
# dayofweek (DuckDB counts from 0, Spark from 1), percentile (DuckDB's QUANTILE is discrete),
# left/right (a negative length differs), chr (Spark wraps at 256), cbrt (DuckDB is inexact),
# pmod and initcap (no DuckDB equivalent), unix-time functions (depend on the session time zone),
# split and collect_* (arrays), and everything that reads files, tables, settings or the host.
# ---------------------------------------------------------------------------------------------

VALUES: Final[NodeTypes] = frozenset(
    {exp.Literal, exp.Null, exp.Boolean, exp.Interval, exp.DataType, exp.DataTypeParam, exp.Var}
    | {exp.Column, exp.Identifier, exp.Paren, exp.Tuple}
)
OPERATORS: Final[NodeTypes] = frozenset(
    {exp.And, exp.Or, exp.Not, exp.Neg, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod}
    | {exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ}
    | {exp.Is, exp.In, exp.Between, exp.Like, exp.ILike, exp.RegexpLike, exp.Escape, exp.DPipe}
)
CONDITIONAL_FUNCTIONS: Final[NodeTypes] = frozenset(
    {exp.Case, exp.If, exp.Coalesce, exp.Nullif, exp.Nvl2, exp.Cast, exp.TryCast, exp.IsNan}
)
STRING_FUNCTIONS: Final[NodeTypes] = frozenset(
    {exp.Lower, exp.Upper, exp.Trim, exp.Length, exp.Substring, exp.Concat, exp.ConcatWs}
    | {exp.Replace, exp.Translate, exp.Reverse, exp.Repeat, exp.StrPosition, exp.Pad, exp.SplitPart}
    | {exp.RegexpExtract, exp.RegexpReplace, exp.StartsWith, exp.EndsWith, exp.Contains, exp.Ascii}
    | {exp.MD5, exp.Levenshtein}
)
MATH_FUNCTIONS: Final[NodeTypes] = frozenset(
    {exp.Abs, exp.Round, exp.Floor, exp.Ceil, exp.Sqrt, exp.Pow, exp.Ln, exp.Log, exp.Exp, exp.Sign}
    | {exp.Greatest, exp.Least}
)
DATETIME_FUNCTIONS: Final[NodeTypes] = frozenset(
    {exp.CurrentDate, exp.CurrentTimestamp, exp.TsOrDsAdd, exp.DateDiff, exp.TimestampTrunc}
    | {exp.DateTrunc, exp.Year, exp.Quarter, exp.Month, exp.Day, exp.DayOfMonth, exp.DayOfYear}
    | {exp.WeekOfYear, exp.Hour, exp.Minute, exp.Second, exp.TsOrDsToDate, exp.StrToTime}
    | {exp.TimeToStr, exp.TimeStrToTime, exp.AddMonths, exp.LastDay, exp.MonthsBetween, exp.Extract}
    | {exp.TimestampAdd}
)
AGGREGATE_FUNCTIONS: Final[NodeTypes] = frozenset(
    {exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max, exp.Stddev, exp.StddevPop, exp.StddevSamp}
    | {exp.Variance, exp.VariancePop, exp.ApproxDistinct, exp.First, exp.Last, exp.Median}
    | {exp.ApproxQuantile, exp.Corr, exp.CovarPop, exp.CovarSamp, exp.CountIf, exp.LogicalAnd}
    | {exp.LogicalOr, exp.Filter}
)
WINDOW_FUNCTIONS: Final[NodeTypes] = frozenset(
    {exp.RowNumber, exp.Rank, exp.DenseRank, exp.PercentRank, exp.CumeDist, exp.Ntile, exp.Lag}
    | {exp.Lead, exp.FirstValue, exp.LastValue, exp.NthValue, exp.Window, exp.WindowSpec}
)
QUERY_CLAUSES: Final[NodeTypes] = frozenset(
    {exp.Select, exp.Union, exp.Intersect, exp.Except, exp.With, exp.CTE, exp.TableAlias, exp.From}
    | {exp.Join, exp.Table, exp.Subquery, exp.Exists, exp.Where, exp.Group, exp.Rollup, exp.Cube}
    | {exp.GroupingSets, exp.Having, exp.Qualify, exp.Order, exp.Ordered, exp.Limit, exp.Offset}
    | {exp.Distinct, exp.Alias, exp.Star}
)
# Functions that sqlglot leaves untyped (exp.Anonymous) and that mean the same on Spark and DuckDB.
PASS_THROUGH_FUNCTIONS: Final = frozenset({"make_date"})

PREDICATE_NODES: Final[NodeTypes] = (
    VALUES | OPERATORS | CONDITIONAL_FUNCTIONS | STRING_FUNCTIONS | MATH_FUNCTIONS | DATETIME_FUNCTIONS
) | {exp.Anonymous}
QUERY_NODES: Final[NodeTypes] = PREDICATE_NODES | AGGREGATE_FUNCTIONS | WINDOW_FUNCTIONS | QUERY_CLAUSES

# Spark functions that sqlglot leaves untyped, rewritten to typed nodes: name -> (arity, builder).
_Builder = Callable[[list[exp.Expression]], exp.Expression]
FUNCTION_REWRITES: Final[Mapping[str, tuple[int, _Builder]]] = {
    "isnull": (1, lambda a: exp.Is(this=a[0], expression=exp.Null())),
    "isnotnull": (1, lambda a: exp.Not(this=exp.Is(this=a[0], expression=exp.Null()))),
    "now": (0, lambda a: exp.CurrentTimestamp()),
    "mean": (1, lambda a: exp.Avg(this=a[0])),
    "std": (1, lambda a: exp.Stddev(this=a[0])),
    "every": (1, lambda a: exp.LogicalAnd(this=a[0])),
    "some": (1, lambda a: exp.LogicalOr(this=a[0])),
}

# Date parts a bare keyword (exp.Var) may name: INTERVAL 1 DAY, extract(year FROM d), date_trunc.
# Spark's abbreviations map to names that both Spark and DuckDB accept.
DATE_PARTS: Final[Mapping[str, str]] = {
    **{p: p for p in ("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND")},
    **{p: p for p in ("MILLISECOND", "MICROSECOND", "DAYOFYEAR", "DOY")},
    **{p + "S": p for p in ("YEAR", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND")},
    **{"YYYY": "YEAR", "YY": "YEAR", "MM": "MONTH", "MON": "MONTH", "DD": "DAY"},
}
DATA_TYPES: Final = frozenset(
    {exp.DataType.Type.BOOLEAN, exp.DataType.Type.TINYINT, exp.DataType.Type.SMALLINT}
    | {exp.DataType.Type.INT, exp.DataType.Type.BIGINT, exp.DataType.Type.FLOAT}
    | {exp.DataType.Type.DOUBLE, exp.DataType.Type.DECIMAL, exp.DataType.Type.TEXT}
    | {exp.DataType.Type.VARCHAR, exp.DataType.Type.CHAR, exp.DataType.Type.DATE}
    | {exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPLTZ}
    | {exp.DataType.Type.TIMESTAMPNTZ}
)

# Why a node is refused, by class (the first class of its MRO found here wins).
REJECTION_REASONS: Final[Mapping[type[exp.Expr], str]] = {
    exp.Placeholder: "parameters and placeholders are not allowed",
    exp.Parameter: "parameters and placeholders are not allowed",
    exp.SessionParameter: "session variables are not allowed",
    exp.TableSample: "TABLESAMPLE is not allowed",
    exp.Lateral: "LATERAL and LATERAL VIEW are not allowed",
    exp.Unnest: "UNNEST and explode are not allowed",
    exp.Explode: "UNNEST and explode are not allowed",
    exp.Into: "SELECT ... INTO is not allowed",
    exp.Lambda: "lambda functions are not allowed",
    exp.Values: "VALUES lists are not allowed",
    exp.Hint: "query hints are not allowed",
    exp.QueryTransform: "TRANSFORM ... USING scripts are not allowed",
    exp.Version: "time travel (VERSION/TIMESTAMP AS OF) is not allowed",
    exp.Pivot: "PIVOT and UNPIVOT are not allowed",
    exp.Lock: "locking clauses are not allowed",
    exp.Cluster: "CLUSTER BY is not allowed",
    exp.Distribute: "DISTRIBUTE BY is not allowed",
    exp.Sort: "SORT BY is not allowed",
    exp.Bracket: "subscripts are not allowed",
    exp.Dot: "struct fields and qualified function names are not allowed",
    exp.Any: "ANY/SOME comparisons are not allowed",
    exp.All: "ALL comparisons are not allowed",
}
# Refused in a row predicate only: it filters rows one at a time and reads no other table.
PREDICATE_REJECTIONS: Final[Sequence[tuple[type[exp.Expr], str]]] = (
    (exp.Query, "subqueries are not allowed in a predicate"),
    (exp.Exists, "subqueries are not allowed in a predicate"),
    (exp.Window, "window functions are not allowed in a predicate"),
    (exp.Star, "'*' is not allowed in a predicate"),
)


def parse_predicate(
    text: str,
    columns: Sequence[str],
    *,
    clock: datetime | None = None,
    sources: Mapping[str, str] | None = None,
) -> exp.Expression:
    """Parse a Spark SQL row predicate over ``columns`` into a checked sqlglot tree.

    Column references resolve exactly, else case-insensitively (as Spark does) when the match is
    unique, else case-insensitively and without surrounding spaces; they come out as quoted
    identifiers with the table's exact names, unqualified (``primary.x`` is accepted and the
    qualifier dropped). ``sources`` maps a column the engine renamed to the input's name for it
    (``A_1`` → ``A`` beside ``a``): a reference to that name is ambiguous. With ``clock``,
    ``now()``, ``current_timestamp`` and ``current_date`` read that instant instead of the
    machine's clock.

    >>> tree = parse_predicate("`state name` = 'WA' and PRIMARY.amount > 3/2", ["State Name", "amount"])
    >>> print(render(tree, "duckdb"))
    "State Name" = 'WA' AND "amount" > 3 / NULLIF(2, 0)
    """
    with _depth_guard("predicate"):
        tree = _fix_clock(_rewrite(_parse(text, "predicate")), clock)
        _check_nodes(tree, text, PREDICATE_NODES, predicate=True)
        _resolve_predicate_columns(tree, columns, sources or {})
        _check_boolean(tree)
        return tree


def parse_query(
    text: str,
    tables: Mapping[str, Sequence[str]],
    *,
    clock: datetime | None = None,
    sources: Mapping[str, str] | None = None,
) -> exp.Query:
    """Parse a Spark SQL query over ``tables`` (name -> columns) into a checked sqlglot tree.

    Exactly one statement, a SELECT or a set operation of SELECTs with optional CTEs. Table names
    are matched case-insensitively and rewritten as quoted identifiers of the exact key; any other
    table is refused. Unknown columns are refused where sqlglot can resolve the query's scopes,
    and so is a column named, other than exactly, by the input's name of a column the engine
    renamed (``sources``, held name → input's name: ``A_1`` → ``A`` beside ``a``).
    ``clock`` fixes the current date and time as in :func:`parse_predicate`.

    >>> tree = parse_query("SELECT id FROM Primary WHERE name IS NOT NULL", {"primary": ["id", "name"]})
    >>> print(render(tree, "duckdb"))
    SELECT "id" FROM "primary" WHERE NOT "name" IS NULL
    """
    checked = _checked_query(
        text,
        tuple((name, tuple(columns)) for name, columns in tables.items()),
        tuple(sorted((sources or {}).items())),
    )
    tree = checked.copy()
    assert isinstance(tree, exp.Expression)
    fixed = _fix_clock(tree, clock)
    assert isinstance(fixed, exp.Query)
    return fixed


@functools.lru_cache(maxsize=512)
def _checked_query(
    text: str, tables: tuple[tuple[str, tuple[str, ...]], ...], sources: tuple[tuple[str, str], ...] = ()
) -> exp.Query:
    """:func:`parse_query` before its clock is fixed, kept per query and tables: the gate checks
    each CustomSql rule of a ruleset on every batch (3.7 of the demo's 73 s under cProfile, afresh).
    Callers get a copy; a refused query is not kept, and is refused again the same way."""
    mapping = {name: list(columns) for name, columns in tables}
    with _depth_guard("query"):
        tree = _rewrite(_parse(text, "query"))
        if not isinstance(tree, exp.Query):
            raise SQLRejected(f"only a query (SELECT ...) is allowed; {tree.key.upper()} statements are not")
        _check_nodes(tree, text, QUERY_NODES, predicate=False)
        _resolve_tables(tree, mapping)
        _check_query_columns(tree, mapping, dict(sources))
        return tree


def render(expr: exp.Expr, dialect: str) -> str:
    r"""Render a checked tree as SQL text for an engine's dialect, every identifier quoted.

    ``expr`` is any sqlglot node (``exp.Expr`` is the base of both ``exp.Expression`` and the
    ``exp.Query`` trait), typically a tree of assay's own that embeds the checked ones.

    A construct that sqlglot cannot express in ``dialect`` is refused rather than approximated.

    >>> print(render(parse_predicate(r"name = 'it\'s'", ["name"]), "duckdb"))
    "name" = 'it''s'
    """
    try:
        return expr.sql(dialect=dialect, identify=True, unsupported_level=ErrorLevel.RAISE)
    except UnsupportedError as e:
        raise SQLRejected(f"cannot be expressed in {dialect}: {_one_line(str(e))}") from e


# --- parsing ------------------------------------------------------------------------------------

_QUERY_START: Final = frozenset({TokenType.SELECT, TokenType.WITH, TokenType.FROM, TokenType.L_PAREN})


@contextmanager
def _depth_guard(kind: str) -> Iterator[None]:
    # sqlglot parses and walks recursively; deeply nested text is the author's problem, not ours.
    try:
        yield
    except RecursionError:
        raise SQLRejected(f"the {kind} is nested too deeply") from None


def _parse(text: str, kind: str) -> exp.Expression:
    if not text.strip():
        raise SQLRejected(f"the {kind} is empty")
    dialect = Dialect.get_or_raise(READ_DIALECT)
    try:
        tokens = dialect.tokenize(text)
        if kind == "predicate" and any(t.token_type == TokenType.SEMICOLON for t in tokens):
            raise SQLRejected("a predicate cannot contain ';'")
        first = next((t for t in tokens if t.token_type != TokenType.SEMICOLON), None)
        if kind == "query" and first is not None and first.token_type not in _QUERY_START:
            # Refused before parsing: sqlglot parses unknown commands into exp.Command.
            word = first.text.upper()
            raise SQLRejected(f"only a query (SELECT ...) is allowed; {word} statements are not")
        parser = dialect.parser(error_level=ErrorLevel.IMMEDIATE)
        if kind == "predicate":
            parsed = parser.parse_into(exp.Condition, tokens, text)
        else:
            parsed = parser.parse(tokens, text)
    except ParseError as e:
        raise SQLRejected(f"{kind} is invalid: {_describe_parse_error(e)}") from e
    except TokenError as e:
        raise SQLRejected(f"{kind} is invalid: {_one_line(str(e))} (unclosed quote or comment?)") from e
    except SqlglotError as e:
        raise SQLRejected(f"{kind} is invalid: {_one_line(str(e)) or type(e).__name__}") from e
    statements = [s for s in parsed if s is not None]
    if len(statements) > 1:
        raise SQLRejected(f"the {kind} must be a single statement, found {len(statements)}")
    if not statements or not isinstance(statements[0], exp.Expression):
        raise SQLRejected(f"the {kind} is empty")
    return statements[0]


def parse_condition(text: str) -> exp.Expression:
    """The tree of a Spark SQL condition as written, before any check (a caller that must know
    its column names first): SQLRejected, in the user's words, if it does not parse."""
    with _depth_guard("predicate"):
        return _parse(text, "predicate")


def _describe_parse_error(error: ParseError) -> str:
    """Where and what, in the user's words: the parser's own wording names its classes
    ("Required keyword: 'expression' missing for <class '...BitwiseRightShift'>")."""
    if not error.errors:
        return _one_line(str(error))
    first = error.errors[0]
    description = str(first.get("description", ""))
    if description.startswith("Required keyword"):
        description = "an operand is missing"
    elif description.startswith("Invalid expression / Unexpected token"):
        description = "unexpected token"
    elif expected := re.fullmatch(r"Expecting (\S+)", description):
        description = f"'{expected.group(1)}' expected"
    description = re.sub(r"<class '[\w.]*\.(\w+)'>", r"\1", description)
    description = re.sub(r"<Token token_type: TokenType\.(\w+).*?>", r"\1", description)
    near = _one_line(str(first.get("highlight") or ""))
    where = f"line {first.get('line')}, col {first.get('col')}"
    return _one_line(f"{description} at {where}" + (f" near '{near}'" if near else ""))


def _one_line(message: str, limit: int = 200) -> str:
    text = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", message).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _snippet(node: exp.Expr, limit: int = 60) -> str:
    try:
        text = node.sql(dialect=READ_DIALECT)
    except SqlglotError:
        text = node.key
    return _one_line(text, limit)


# --- rewrites that keep Spark's meaning on every engine ----------------------------------------


def _rewrite(tree: exp.Expression) -> exp.Expression:
    for node in tree.walk():
        node.pop_comments()
    rewritten = tree.transform(_rewrite_node, copy=False)
    assert isinstance(rewritten, exp.Expression)
    return rewritten


def _rewrite_node(node: exp.Expr) -> exp.Expr:
    rewrite = _NODE_REWRITES.get(type(node))
    return rewrite(node) if rewrite else node


def _rewrite_function(node: exp.Expr) -> exp.Expr:
    assert isinstance(node, exp.Anonymous)
    entry = FUNCTION_REWRITES.get(node.name.lower())
    if entry is None:
        return node
    arity, build = entry
    args = list(node.expressions)
    if len(args) != arity:
        raise SQLRejected(f"function '{node.name.lower()}' takes {arity} argument(s), got {len(args)}")
    return build(args)


def _fix_clock(tree: exp.Expression, clock: datetime | None) -> exp.Expression:
    """``now()``, ``current_timestamp`` and ``current_date`` as literals of ``clock`` (the
    evaluation's ``--now``), so that a rule reads the same instant as the rest of its evaluation.
    An aware clock is read in UTC, the engine's session time zone; the tree is edited, never the text.

    >>> tree = parse_predicate("d >= current_date - INTERVAL 1 DAY", ["d"], clock=datetime(2024, 6, 10))
    >>> print(render(tree, "duckdb"))
    "d" >= CAST('2024-06-10' AS DATE) - INTERVAL '1' DAY
    """
    if clock is None:
        return tree
    instant = clock.astimezone(UTC).replace(tzinfo=None) if clock.tzinfo else clock
    literals: dict[type[exp.Expr], exp.Expr] = {
        exp.CurrentTimestamp: exp.cast(
            exp.Literal.string(instant.isoformat(sep=" ")), exp.DataType.build("TIMESTAMP")
        ),
        exp.CurrentDate: exp.cast(exp.Literal.string(instant.date().isoformat()), exp.DataType.build("DATE")),
    }

    def fix(node: exp.Expr) -> exp.Expr:
        literal = literals.get(type(node))
        return literal.copy() if literal is not None else node

    fixed = tree.transform(fix, copy=False)
    assert isinstance(fixed, exp.Expression)
    return fixed


def _escape_like(node: exp.Expr) -> exp.Expr:
    # Spark's LIKE treats '\' as the escape character by default; DuckDB's LIKE has none.
    if isinstance(node.parent, exp.Escape):
        return node
    return exp.Escape(this=node, expression=exp.Literal.string("\\"))


def _normalize_trunc_unit(node: exp.Expr) -> exp.Expr:
    # Spark accepts 'MM', 'YY', 'DD' ...; DuckDB only the long names, which Spark accepts too.
    unit = node.args.get("unit")
    if isinstance(unit, (exp.Var, exp.Literal)) and unit.name.upper() in DATE_PARTS:
        name = DATE_PARTS[unit.name.upper()]
        node.set("unit", exp.var(name) if isinstance(unit, exp.Var) else exp.Literal.string(name))
    elif unit is not None:
        raise SQLRejected(f"'{_snippet(unit)}' is not a truncation unit (use 'year', 'month', 'day' ...)")
    return node


def _substring_from_one(node: exp.Expr) -> exp.Expr:
    # Spark reads position 0 as 1; DuckDB counts position 0 as one of the characters taken.
    start = node.args.get("start")
    if isinstance(start, exp.Literal) and start.is_number and start.to_py() == 0:
        node.set("start", exp.Literal.number(1))
    return node


def _translate_regex(node: exp.Expr) -> exp.Expr:
    # Spark's RLIKE and regexp_* take Java patterns; DuckDB runs RE2 (assay.lang.patterns).
    pattern = node.args.get("expression")
    if isinstance(pattern, exp.Literal) and pattern.is_string:
        try:
            translated = exp.Literal.string(patterns.to_re2(pattern.this))
            translated.meta["java_regex"] = pattern.this  # Spark runs Java regex: as written
            node.set("expression", translated)
        except patterns.PatternRefused as error:
            raise SQLRejected(error.message) from None
    return node


_NODE_REWRITES: Final[Mapping[type[exp.Expr], Callable[[exp.Expr], exp.Expr]]] = {
    exp.RegexpLike: _translate_regex,
    exp.RegexpExtract: _translate_regex,
    exp.RegexpReplace: _translate_regex,
    exp.Anonymous: _rewrite_function,
    exp.Like: _escape_like,
    exp.ILike: _escape_like,
    exp.TimestampTrunc: _normalize_trunc_unit,
    exp.DateTrunc: _normalize_trunc_unit,
    exp.Substring: _substring_from_one,
}


# --- the allowlist walk ---------------------------------------------------------------------------


def _check_nodes(tree: exp.Expression, text: str, allowed: NodeTypes, *, predicate: bool) -> None:
    for node in tree.walk():
        if type(node) not in allowed:
            raise SQLRejected(_rejection_reason(node, text, predicate=predicate))
        check = _NODE_CHECKS.get(type(node))
        if check is not None:
            check(node)


def _rejection_reason(node: exp.Expr, text: str, *, predicate: bool) -> str:
    if predicate:
        if isinstance(node, exp.AggFunc):
            return f"aggregate function '{_function_name(node, text)}' is not allowed in a predicate"
        for cls, reason in PREDICATE_REJECTIONS:
            if isinstance(node, cls):
                return reason
    for cls in type(node).__mro__:
        if cls in REJECTION_REASONS:
            return REJECTION_REASONS[cls]
    if isinstance(node, exp.Func):
        return f"function '{_function_name(node, text)}' is not allowed"
    return f"'{_snippet(node)}' is not allowed"


def _function_name(node: exp.Func, text: str) -> str:
    """The name as the user wrote it (sqlglot records where the name token was), else sqlglot's."""
    start, end = node.meta.get("start"), node.meta.get("end")
    if isinstance(start, int) and isinstance(end, int) and 0 <= start <= end < len(text):
        return text[start : end + 1].lower()
    match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\(", _snippet(node, 200))
    return match.group(1).lower() if match else node.sql_name().lower()


def _check_anonymous(node: exp.Expr) -> None:
    if node.name.lower() not in PASS_THROUGH_FUNCTIONS:
        raise SQLRejected(f"function '{node.name.lower()}' is not allowed")


def _check_var(node: exp.Expr) -> None:
    if node.name.upper() not in DATE_PARTS:
        raise SQLRejected(f"keyword '{node.name}' is not allowed here")


def _check_data_type(node: exp.Expr) -> None:
    if node.this not in DATA_TYPES:
        raise SQLRejected(f"type '{_snippet(node)}' is not allowed")


def _check_with(node: exp.Expr) -> None:
    if node.args.get("recursive"):
        raise SQLRejected("recursive CTEs are not allowed")


def _check_text(node: exp.Expr) -> None:
    value = node.this if isinstance(node.this, str) else ""
    if "\x00" in value:
        raise SQLRejected("NUL characters are not allowed in SQL text")
    if "${" in value:
        # Spark substitutes ${var}, ${env:VAR} and ${system:prop} in SQL text before parsing it.
        raise SQLRejected("'${' is not allowed in SQL text: Spark would substitute a variable there")


def _check_escape(node: exp.Expr) -> None:
    escape = node.expression
    if not isinstance(node.this, (exp.Like, exp.ILike)) or not (
        isinstance(escape, exp.Literal) and escape.is_string and len(escape.this) == 1
    ):
        raise SQLRejected("ESCAPE needs LIKE/ILIKE and a one-character string")


_NODE_CHECKS: Final[Mapping[type[exp.Expr], Callable[[exp.Expr], None]]] = {
    exp.Anonymous: _check_anonymous,
    exp.Var: _check_var,
    exp.DataType: _check_data_type,
    exp.With: _check_with,
    exp.Escape: _check_escape,
    exp.Literal: _check_text,
    exp.Identifier: _check_text,
}


# --- names ---------------------------------------------------------------------------------------


def _resolve_name(
    name: str, candidates: Sequence[str], kind: str, sources: Mapping[str, str] | None = None
) -> str:
    """The exact candidate ``name`` refers to, as :func:`assay.names.match_name` finds it:
    ``sources`` (held name → the input's name) makes a renamed column's input name ambiguous."""
    found, matches = match_name(name, candidates, sources)
    if found is not None:
        return found
    if matches:
        raise SQLRejected(
            f"{kind} '{name}' is ambiguous: it matches {', '.join(map(repr, matches))} "
            "(names are matched regardless of case, as Spark does)"
        )
    raise SQLRejected(f"unknown {kind} '{name}'{_did_you_mean(name, candidates)}")


def _did_you_mean(name: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def _resolve_predicate_columns(
    tree: exp.Expression, columns: Sequence[str], sources: Mapping[str, str]
) -> None:
    for column in list(tree.find_all(exp.Column)):
        if column.args.get("db") or column.args.get("catalog"):
            raise SQLRejected(f"'{_snippet(column)}' has too many qualifiers")
        qualifier = column.table
        if qualifier and qualifier.lower() != "primary":
            raise SQLRejected(f"unknown table '{qualifier}' in '{_snippet(column)}': only primary's columns")
        name = _resolve_name(column.name, columns, "column", sources)
        column.set("table", None)
        column.set("this", exp.to_identifier(name, quoted=True))


def _check_boolean(tree: exp.Expression) -> None:
    try:
        typed = annotate_types(tree.copy(), dialect=READ_DIALECT)
    except Exception:  # types are a courtesy check here; the engine still refuses a non-boolean filter
        return
    kind = typed.type
    if kind is not None and not kind.is_type(
        exp.DataType.Type.BOOLEAN, exp.DataType.Type.UNKNOWN, exp.DataType.Type.NULL
    ):
        raise SQLRejected(f"a predicate must be a condition, but '{_snippet(tree)}' is {kind.sql()}")


def _resolve_tables(tree: exp.Expression, tables: Mapping[str, Sequence[str]]) -> None:
    names = list(tables)
    for table in list(tree.find_all(exp.Table)):
        if not isinstance(table.this, exp.Identifier):
            raise SQLRejected(f"table functions are not allowed: '{_snippet(table)}'")
        if table.args.get("db") or table.args.get("catalog"):
            raise SQLRejected(f"qualified table '{_snippet(table)}' is not allowed; use {_listing(names)}")
        if table.name.lower() in _visible_ctes(table):
            continue
        try:
            exact = _resolve_name(table.name, names, "table")
        except SQLRejected as e:
            raise SQLRejected(f"{e.reason}; the tables are {_listing(names)} and the query's CTEs") from None
        table.set("this", exp.to_identifier(exact, quoted=True))


def _listing(names: Sequence[str]) -> str:
    return ", ".join(names)


def _visible_ctes(node: exp.Expr) -> set[str]:
    """Names of the CTEs in scope at ``node``: those of enclosing queries, and earlier siblings."""
    names: set[str] = set()
    child, parent = node, node.parent
    while parent is not None:
        if isinstance(parent, exp.With):
            for cte in parent.expressions:
                if cte is child:
                    break
                names.add(cte.alias_or_name.lower())
        else:
            with_ = parent.args.get("with_")
            if isinstance(with_, exp.With) and with_ is not child:
                names.update(cte.alias_or_name.lower() for cte in with_.expressions)
        child, parent = parent, parent.parent
    return names


def _check_query_columns(
    tree: exp.Query, tables: Mapping[str, Sequence[str]], sources: Mapping[str, str] | None = None
) -> None:
    all_columns = [c for columns in tables.values() for c in columns]
    # The engine binds a query's names itself, regardless of case: a renamed column's input name
    # would silently be the other column, so it is refused as ambiguous, naming both.
    renamed = {source.casefold() for source in (sources or {}).values()}
    for column in tree.find_all(exp.Column):
        if column.name not in all_columns and column.name.casefold() in renamed:
            _resolve_name(column.name, all_columns, "column", sources)
    # A name can only be a table's column or a name the query itself defines (aliases, CTE columns).
    known = {c.lower() for c in all_columns} | {
        i.name.lower() for i in tree.find_all(exp.Identifier) if not isinstance(i.parent, exp.Column)
    }
    for column in tree.find_all(exp.Column):
        if column.args.get("db") or column.args.get("catalog"):
            raise SQLRejected(f"'{_snippet(column)}' has too many qualifiers")
        if not isinstance(column.this, exp.Star) and column.name.lower() not in known:
            raise SQLRejected(f"unknown column '{column.name}'{_did_you_mean(column.name, all_columns)}")
    # Precise resolution scope by scope, where sqlglot's optimizer can do it.
    try:
        # Names given as the query's are normalized (Spark's: lower case): the schema's own
        # normalization parses each name, which drops a space around it ("Amount ").
        schema = MappingSchema(
            {name.lower(): {c.lower(): "UNKNOWN" for c in columns} for name, columns in tables.items()},
            dialect=READ_DIALECT,
            normalize=False,
        )
        qualify(tree.copy(), schema=schema, dialect=READ_DIALECT, validate_qualify_columns=True)
    except OptimizeError as e:
        match = re.search(
            r"Column '([^']+)' could not be resolved(?: for table: '([^']+)')?|Unknown column: (\S+)", str(e)
        )
        if match:
            name = ".".join(p for p in (match.group(2), match.group(1) or match.group(3)) if p)
            raise SQLRejected(f"column '{name}' is unknown or ambiguous where it is used") from None
    except Exception:  # an exotic query sqlglot cannot scope: the engine will judge its columns
        return
