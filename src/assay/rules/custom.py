"""CustomSql: a user's query over ``primary`` and the reference aliases.

The SQL is parsed and checked by :mod:`assay.lang.sqlsafe` (one SELECT, known tables, allowed
functions) before it goes anywhere near the engine. Two forms (DQDL.md §6):

- with a condition, the query returns one number, compared like any metric
  (``Dataset.*.CustomSQL``);
- without one, the query returns a subset of the primary rows: a primary row passes when the
  result holds a row equal to it on the selected columns (NULL equals NULL); the share of
  passing rows (``Dataset.*.CustomSQL.Compliance``) must be 1.0 or meet the threshold.
  An empty primary dataset fails, as in Deequ.
"""

from __future__ import annotations

from sqlglot import exp

from assay.engine import EngineError
from assay.lang import sqlsafe
from assay.lang.dqdl import ast
from assay.measure import Aggregate, Scalar
from assay.measure.requests import count_if, count_star
from assay.rules.plan import (
    Compliance,
    Context,
    LeafPlan,
    MetricSpec,
    RowCheck,
    RuleError,
    judged,
    number_of,
    ratio_of,
)
from assay.rules.predicates import coalesce_false
from assay.store import MetricKey

_RESULT = "__q"


def parse(rule: ast.Rule, ctx: Context) -> exp.Query:
    text = rule.params[0].text
    try:
        return sqlsafe.parse_query(text, ctx.tables(), clock=ctx.now, sources=ctx.sources())
    except sqlsafe.SQLRejected as error:
        raise RuleError(f"CustomSql is invalid: {error.reason}") from None


def custom_sql(rule: ast.Rule, ctx: Context) -> LeafPlan:
    query = parse(rule, ctx)
    try:
        output = ctx.engine.describe(query)
    except EngineError as error:
        raise RuleError(f"CustomSql failed: {error.message}") from None
    if rule.condition is not None or (rule.threshold is None and len(output) == 1 and _is_aggregate(query)):
        return _scalar(rule, ctx, query, len(output))
    return _row_form(rule, ctx, query, [c.name for c in output])


def _is_aggregate(query: exp.Query) -> bool:
    """A query whose single output is an aggregate, used as an analyzer (no condition)."""
    return isinstance(query, exp.Select) and not query.args.get("group") and bool(query.find(exp.AggFunc))


def _scalar(rule: ast.Rule, ctx: Context, query: exp.Query, width: int) -> LeafPlan:
    if width != 1:
        raise RuleError(f"CustomSql with a condition must return one column; this query returns {width}")
    slot = ctx.request(Scalar(query))
    key = MetricKey.dataset("CustomSQL")
    metric = MetricSpec(key.key, key, number_of(slot), (slot,))
    return LeafPlan(rule, [metric], judged(rule, metric))


def _row_form(rule: ast.Rule, ctx: Context, query: exp.Query, names: list[str]) -> LeafPlan:
    primary = {c.name.lower(): c for c in ctx.primary.columns}
    missing = [name for name in names if name.lower() not in primary]
    if missing:
        raise RuleError(
            f"CustomSql returns columns not found in the primary dataset: {', '.join(missing)}; "
            "a CustomSql rule without a condition must select primary rows"
        )
    pairs = [(name, primary[name.lower()].name) for name in names]
    predicate = _shortcut(query) or _semi_join(query, pairs)
    rows = ctx.request(_count(None))
    passing = ctx.request(_count(predicate))
    key = MetricKey.dataset("CustomSQL.Compliance")
    metric = MetricSpec(key.key, key, ratio_of(passing, rows), (passing, rows))
    verdict = Compliance(metric.display, "rows", rule.threshold, key, empty_passes=False)
    plan = LeafPlan(rule, [metric], verdict, RowCheck(predicate, in_row_composites=rule.threshold is None))
    plan.hidden["rows"] = MetricSpec("", MetricKey.dataset("RowCount"), number_of(rows), (rows,))
    return plan


def _count(predicate: exp.Expr | None) -> Aggregate:
    return Aggregate(count_star() if predicate is None else count_if(predicate))


def _shortcut(query: exp.Query) -> exp.Expr | None:
    """``SELECT * FROM primary WHERE p`` selects exactly the rows where p is TRUE: judge p per row
    instead of joining the result back (same answer, no join)."""
    if (
        not isinstance(query, exp.Select)
        or len(query.expressions) != 1
        or not isinstance(query.expressions[0], exp.Star)
    ):
        return None
    if any(
        query.args.get(k)
        for k in ("joins", "group", "having", "limit", "offset", "distinct", "with", "qualify", "order")
    ):
        return None
    source = query.args.get("from") or query.args.get("from_")
    if source is None or not isinstance(source.this, exp.Table) or source.this.name.lower() != "primary":
        return None
    where = query.args.get("where")
    if where is None:
        return exp.true()
    return coalesce_false(where.this.copy())


def _semi_join(query: exp.Query, pairs: list[tuple[str, str]]) -> exp.Expr:
    """EXISTS a result row equal to the primary row on the selected columns (output, primary)."""
    conditions: list[exp.Expr] = [
        exp.NullSafeEQ(
            this=exp.column(output, table=_RESULT, quoted=True),
            expression=exp.column(name, table="primary", quoted=True),
        )
        for output, name in pairs
    ]
    inner = (
        exp.select(exp.Literal.number(1))
        .from_(exp.alias_(exp.Subquery(this=query.copy()), _RESULT, table=True))
        .where(exp.and_(*conditions))
    )
    return exp.Exists(this=inner)
