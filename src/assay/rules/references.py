"""Rules that compare the primary dataset with reference datasets (``--ref alias=PATH``):
RowCountMatch, ReferentialIntegrity, DatasetMatch, SchemaMatch, AggregateMatch."""

from __future__ import annotations

import re

from sqlglot import exp

from assay.engine import Column
from assay.lake.readers import Registered
from assay.lang.dqdl import ast
from assay.measure import Aggregate, Measurements, Scalar
from assay.measure.kinds import KINDS
from assay.measure.requests import count_if, count_star
from assay.rules.plan import (
    Context,
    LeafPlan,
    MetricSpec,
    RowCheck,
    RuleError,
    constant,
    judged,
    ratio_of,
    resolve_column,
)
from assay.store import MetricKey

_REF = "__ref"


def _table(registered: Registered) -> exp.Table:
    return exp.Table(this=exp.to_identifier(registered.name, quoted=True))


def _ref_column(column: Column) -> exp.Column:
    return exp.column(column.name, table=_REF, quoted=True)


def _primary_column(column: Column) -> exp.Column:
    return exp.column(column.name, table="primary", quoted=True)


def _columns_of(ref: Registered, names: list[str], alias: str) -> list[Column]:
    return [resolve_column(name, list(ref.columns), f"reference dataset '{alias}'") for name in names]


def _exists(ref: Registered, conditions: list[exp.Expr]) -> exp.Expr:
    """EXISTS a reference row meeting ``conditions`` (correlated with the primary row)."""
    inner = (
        exp.select(exp.Literal.number(1))
        .from_(exp.alias_(_table(ref), _REF, table=True))
        .where(exp.and_(*conditions))
    )
    return exp.Exists(this=inner)


def row_count_match(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``RowCountMatch "ref" >= 0.9``: primary rows / reference rows."""
    alias = rule.params[0].text
    ref = ctx.reference(alias)
    rows = ctx.request(Aggregate(count_star()))
    ref_rows = ctx.request(Scalar(exp.select(exp.Count(this=exp.Star())).from_(_table(ref))))
    key = MetricKey.dataset("RowCountMatch", instance=alias)
    metric = MetricSpec(key.key, key, ratio_of(rows, ref_rows), (rows, ref_rows))
    return LeafPlan(rule, [metric], judged(rule, metric))


def _ratio_plan(rule: ast.Rule, ctx: Context, predicate: exp.Expr, key: MetricKey) -> LeafPlan:
    rows = ctx.request(Aggregate(count_star()))
    passing = ctx.request(Aggregate(count_if(predicate)))
    metric = MetricSpec(key.key, key, ratio_of(passing, rows), (passing, rows))
    return LeafPlan(rule, [metric], judged(rule, metric), RowCheck(predicate, in_row_composites=False))


def referential_integrity(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``ReferentialIntegrity "a,b" "ref.{x,y}" >= 0.99``: the share of primary rows whose key
    is in the reference.

    A row with a NULL in its key matches nothing."""
    primary_names = [name.strip() for name in rule.params[0].text.split(",")]
    spec = rule.params[1].text
    braced = re.fullmatch(r"(.+?)\.\{(.*)\}", spec)
    if braced:
        alias, ref_names = braced.group(1), [n.strip() for n in braced.group(2).split(",")]
    elif "." in spec:
        alias, ref_names = spec.split(".", 1)[0], [spec.split(".", 1)[1]]
    else:
        raise RuleError(f'\'{spec}\' names no reference columns: write "alias.column" or "alias.{{c1,c2}}"')
    ref = ctx.reference(alias)
    if len(primary_names) != len(ref_names):
        raise RuleError(f"{len(primary_names)} primary columns but {len(ref_names)} reference columns")
    primary_cols = [ctx.column(name) for name in primary_names]
    ref_cols = _columns_of(ref, ref_names, alias)
    conditions: list[exp.Expr] = [
        exp.EQ(this=_ref_column(r), expression=_primary_column(p))
        for p, r in zip(primary_cols, ref_cols, strict=True)
    ]
    key = MetricKey.column(alias, "ReferentialIntegrity")
    return _ratio_plan(rule, ctx, _exists(ref, conditions), key)


def _mappings(text: str) -> list[tuple[str, str]]:
    pairs = []
    for item in text.split(","):
        left, _, right = item.partition("->")
        left, right = left.strip(), (right or left).strip()
        if not left:
            raise RuleError(f"empty column name in '{text}'")
        pairs.append((left, right))
    return pairs


def dataset_match(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``DatasetMatch "ref" "id->ref_id" ["a->b,..."] >= 0.9``: share of primary rows that have a
    reference row with the same key and equal match columns (NULL equals NULL). Without match
    columns, every non-key column of the primary dataset is matched by name."""
    alias = rule.params[0].text
    ref = ctx.reference(alias)
    keys = _mappings(rule.params[1].text)
    missing = [left for left, _ in keys if not _has(ctx.primary, left)] + [
        right for _, right in keys if not _has(ref, right)
    ]
    if missing:
        raise RuleError(f"key columns were not found: {', '.join(missing)}")
    if len(rule.params) > 2:
        matches = _mappings(rule.params[2].text)
    else:
        key_names = {ctx.column(left).name for left, _ in keys}
        matches = [(c.name, c.name) for c in ctx.primary.columns if c.name not in key_names]
    for left, right in matches:
        if not _has(ctx.primary, left):
            raise RuleError(f"match column '{left}' not found in the primary dataset")
        if not _has(ref, right):
            raise RuleError(f"match column '{right}' not found in reference dataset '{alias}'")
    conditions: list[exp.Expr] = []
    for left, right in keys:
        p, r = ctx.column(left), _columns_of(ref, [right], alias)[0]
        conditions.append(exp.EQ(this=_ref_column(r), expression=_primary_column(p)))
    for left, right in matches:
        p, r = ctx.column(left), _columns_of(ref, [right], alias)[0]
        conditions.append(exp.NullSafeEQ(this=_ref_column(r), expression=_primary_column(p)))
    key = MetricKey.dataset("DatasetMatch", instance=alias)
    return _ratio_plan(rule, ctx, _exists(ref, conditions), key)


def _has(table: Registered, name: str) -> bool:
    try:
        resolve_column(name, list(table.columns), "table")
        return True
    except RuleError:
        return False


def schema_match(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``SchemaMatch "ref" = 1.0``: share of the primary columns that the reference has with the
    same name and type (order ignored)."""
    alias = rule.params[0].text
    ref = ctx.reference(alias)
    ref_types = {c.name: c.type for c in ref.columns}
    same = sum(1 for c in ctx.primary.columns if ref_types.get(c.name) == c.type)
    value = same / len(ctx.primary.columns) if ctx.primary.columns else float("nan")
    key = MetricKey.dataset("SchemaMatch", instance=alias)
    metric = MetricSpec(key.key, key, constant(value))
    return LeafPlan(rule, [metric], judged(rule, metric))


_AGGREGATE = re.compile(r"\s*(sum|avg)\s*\((.*)\)\s*", re.IGNORECASE | re.DOTALL)


def aggregate_match(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``AggregateMatch "sum(amount)" "sum(ref.amount)" >= 0.99``: the first aggregate over the
    second. As Deequ: 0/0 is 1.0 and x/0 is 0.0; NULLs are ignored."""
    sides = [_aggregate_side(p.text, ctx) for p in rule.params]
    slots = [slot for slot, _ in sides]
    names: list[str] = []
    for _, name in sides:
        if name not in names:
            names.append(name)

    def compute(m: Measurements) -> float | None:
        first, second = (m.number(s) for s in slots)
        if first is None or second is None:
            return None
        if second == 0:
            return 1.0 if first == 0 else 0.0
        return first / second

    key = MetricKey("Column", ",".join(names), "AggregateMatch")
    metric = MetricSpec(key.key, key, compute, tuple(slots))
    return LeafPlan(rule, [metric], judged(rule, metric))


def _aggregate_side(text: str, ctx: Context) -> tuple[str, str]:
    match = _AGGREGATE.fullmatch(text)
    if not match:
        raise RuleError(f"'{text}' is not an aggregate: write sum(column) or avg(column)")
    kind = KINDS["sum" if match.group(1).lower() == "sum" else "mean"]
    target = match.group(2).strip()
    prefix, dot, rest = target.partition(".")
    if dot and prefix in ctx.references:
        ref = ctx.reference(prefix)
        column = _columns_of(ref, [rest], prefix)[0]
        _numeric(column)
        query = exp.select(kind.aggregate(column)).from_(_table(ref))
        return ctx.request(Scalar(query)), column.name
    if dot and not _has(ctx.primary, target) and prefix != "primary":
        ctx.reference(prefix)  # raises: reference not found
    if prefix == "primary" and dot:
        target = rest
    column = ctx.column(target)
    _numeric(column)
    return ctx.request(kind.request(column)), column.name


def _numeric(column: Column) -> None:
    if not column.kind.numeric:
        raise RuleError(f"Column '{column.name}' is {column.type}; AggregateMatch needs numbers")
