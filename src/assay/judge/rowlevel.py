"""Row-level outcomes: the input rows plus Glue's four columns (DQDL.md §9).

``DataQualityRulesPass``, ``DataQualityRulesFail`` and ``DataQualityRulesSkip`` list the texts
of the rules a row passed, failed or was skipped by; ``DataQualityEvaluationResult`` is
``Failed`` when the fail list is not empty and ``Passed`` otherwise. With skipped filtered rows,
a row that no rule judged is ``Skipped``. Everything is computed by the engine in one query.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from sqlglot import exp

from assay.engine import Engine
from assay.engine.base import positions
from assay.lake.readers import Registered
from assay.rules.compiler import CompiledRule
from assay.rules.rows import FAIL, PASS, SKIP, RowLayout, tree_state

ROW_ID = "__assay_row"
COLUMNS = (
    "DataQualityRulesPass",
    "DataQualityRulesFail",
    "DataQualityRulesSkip",
    "DataQualityEvaluationResult",
)


def _texts(states: Sequence[exp.Expr], texts: list[str], wanted: str) -> exp.Expr:
    if not states:
        return exp.cast(exp.Array(expressions=[]), exp.DataType.build("VARCHAR[]", dialect="duckdb"))
    items = [
        exp.Case().when(_is(s, wanted), exp.Literal.string(t)) for s, t in zip(states, texts, strict=True)
    ]
    keep = exp.Lambda(
        this=exp.Not(this=exp.Is(this=exp.to_identifier("x"), expression=exp.Null())),
        expressions=[exp.to_identifier("x")],
    )
    return exp.ArrayFilter(this=exp.Array(expressions=items), expression=keep)


def _is(state: exp.Expr, value: str) -> exp.Expr:
    return exp.EQ(this=state.copy(), expression=exp.Literal.string(value))


def row_outcomes(
    engine: Engine,
    primary: Registered,
    compiled: list[CompiledRule],
    texts: list[str],
    *,
    skip_filtered: bool = False,
) -> pa.Table:
    """The primary rows, in input order, with the four row-level columns."""
    rows = engine.query(exp.select(exp.Star()).from_(exp.to_identifier(primary.name, quoted=True)))
    rows = rows.append_column(ROW_ID, positions(rows.num_rows))
    engine.register_arrow("__assay_rows", rows)
    layout = RowLayout(SKIP if skip_filtered else PASS)
    trees = [layout.add(rule.node, rule.leaves) for rule in compiled]
    states = [exp.Literal.string(SKIP) if tree is None else tree_state(tree) for tree in trees]
    named = [exp.alias_(s, f"__t{i}", quoted=True) for i, s in enumerate(states)]
    layer = layout.select(exp.Table(this=exp.to_identifier("__assay_rows", quoted=True)))
    with_states = exp.select(exp.Star(), *named).from_(
        exp.alias_(exp.Subquery(this=layer), "__l", table=True)
    )
    top = [exp.column(f"__t{i}", quoted=True) for i in range(len(states))]
    if top:
        verdict: exp.Expr = (
            exp.Case()
            .when(exp.or_(*(_is(t, FAIL) for t in top)), exp.Literal.string("Failed"))
            .when(exp.or_(*(_is(t, PASS) for t in top)), exp.Literal.string("Passed"))
            .else_(exp.Literal.string("Skipped" if skip_filtered else "Passed"))
        )
    else:
        verdict = exp.Literal.string("Passed")
    originals = [exp.column(c.name, quoted=True) for c in primary.columns]
    final = (
        exp.select(
            *originals,
            exp.alias_(_texts(top, texts, PASS), COLUMNS[0], quoted=True),
            exp.alias_(_texts(top, texts, FAIL), COLUMNS[1], quoted=True),
            exp.alias_(_texts(top, texts, SKIP), COLUMNS[2], quoted=True),
            exp.alias_(verdict, COLUMNS[3], quoted=True),
        )
        .from_(exp.alias_(exp.Subquery(this=with_states), "__w", table=True))
        .order_by(exp.column(ROW_ID, quoted=True))
    )
    return engine.query(final)
