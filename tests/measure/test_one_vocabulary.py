"""One metric vocabulary (issue 30): a DQDL rule, a check document, the per-column profile and an
event contract measure "null count of c", "mean of c" and "distinct count of c" with the aggregates
of ONE table, :data:`assay.measure.kinds.KINDS`, through ONE planner."""

from __future__ import annotations

from datetime import datetime

import pyarrow as pa
import pytest

from assay.engine import DuckDBEngine
from assay.lake.readers import register
from assay.lang.dqdl import ast, parse_text
from assay.measure import ScanPlan
from assay.measure.kinds import KINDS
from assay.rules.compiler import compile_analyzer
from assay.rules.plan import Context, LeafPlan
from assay.rules.registry import compile_leaf

# A DQDL rule, and the kind (with the column) whose measurement it reads.
RULE_KINDS = [
    ('Completeness "v" > 0.5', "null_count", "v"),
    ('IsComplete "c"', "null_count", "c"),
    ('IsPrimaryKey "c"', "null_count", "c"),
    ('Mean "v" > 0', "mean", "v"),
    ('Sum "v" > 0', "sum", "v"),
    ('StandardDeviation "v" > 0', "stddev", "v"),
    ('Variance "v" > 0', "variance", "v"),
    ('DistinctValuesCount "c" > 1', "distinct_count", "c"),
    ('ColumnValues "v" > 0', "min", "v"),
    ('ColumnValues "v" > 0', "max", "v"),
    ('Range "v" < 100', "max", "v"),
    ('Skewness "v" > -5', "variance", "v"),
    ('AggregateMatch "sum(v)" "avg(v)" > 0', "sum", "v"),
    ('AggregateMatch "sum(v)" "avg(v)" > 0', "mean", "v"),
    # analyzers: AllStatistics asks for Completeness, Mean, Sum, StandardDeviation ...
    ('Analyzers = [ ColumnValues "v" ]', "min", "v"),
    ('Analyzers = [ Distribution "v" ]', "max", "v"),
    ('Analyzers = [ AllStatistics "v" ]', "stddev", "v"),
    ('Analyzers = [ AllStatistics "c" ]', "null_count", "c"),
]


def _context(engine: DuckDBEngine) -> Context:
    table = pa.table({"v": [1.5, None, 4.0, 2.5], "c": ["a", "b", None, "a"]})
    primary = register(engine, "primary", table)
    return Context(
        engine=engine, primary=primary, references={}, now=datetime(2024, 1, 1), scan=ScanPlan("primary")
    )


# each rule again with a where clause, where DQDL takes one
CASES = [(*case, None) for case in RULE_KINDS] + [
    (*case, "c = 'a'") for case in RULE_KINDS if not case[0].startswith(("Analyzers", "AggregateMatch"))
]


@pytest.mark.parametrize(("text", "kind", "name", "where"), CASES)
def test_a_dqdl_rule_asks_for_the_kind_tables_measurement(
    text: str, kind: str, name: str, where: str | None
) -> None:
    """The rule's request and the kind's are one slot of the scan: the same measurement,
    written once (the planner dedupes by SQL text), with or without a where clause."""
    ctx = _context(DuckDBEngine())
    plans: list[LeafPlan]
    if text.startswith("Analyzers"):
        (node,) = parse_text(text).ruleset.analyzers
        plans = compile_analyzer(node, ctx, 0)
        filtering = None
    else:
        clause = "" if where is None else f' where "{where}"'
        (rule,) = parse_text(f"Rules = [ {text}{clause} ]").ruleset.rules
        assert isinstance(rule, ast.Rule)
        plans = [compile_leaf(rule, ctx)]
        filtering = ctx.where(rule)
    assert [p.error for p in plans if p.error] == []
    asked = dict(ctx.scan.requests)
    slot = ctx.scan.add(KINDS[kind].request(ctx.column(name), filtering))
    assert ctx.scan.requests == asked, f"{text} asks for its own {kind}, not the kind table's"
    assert slot in asked
