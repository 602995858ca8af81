"""The compiler emits sqlglot trees, not DuckDB text: every query it builds for a ruleset also
renders for Spark, and the Spark text parses back. (The Spark engine comes later; this keeps the
compiler honest until then.)"""

from __future__ import annotations

import pyarrow as pa
import sqlglot
from sqlglot import exp

from assay.dqdl import parse
from assay.engine import DuckDBEngine
from assay.platform.runs.dqdl import Evaluation
from assay.rules.compiler import compile_rule
from assay.rules.rows import RowLayout
from measure.test_scan_sharing import RULESET


def _evaluation() -> Evaluation:
    data = pa.table(
        {
            "id": [1, 2, 3],
            "name": ["a", None, "c"],
            "code": ["A", "B", "A"],
            "amount": [1.0, 2.0, 3.0],
            "day": pa.array(["2024-01-01", "2024-01-02", None]).cast(pa.date32()),
        }
    )
    ref = pa.table({"code": ["A"], "amount": [1.0]})
    return Evaluation(parse(RULESET), data, references={"ref": ref}, now="2024-02-01T00:00:00")


def test_the_shared_scan_renders_for_spark() -> None:
    evaluation = _evaluation()
    compiled = [
        compile_rule(node, evaluation.ctx, i) for i, node in enumerate(evaluation.ruleset.rules or ())
    ]
    assert all(p.error is None for c in compiled for p in c.leaves.values())
    query = evaluation.scan.select()
    spark = query.sql(dialect="spark")
    assert "FILTER(WHERE" in spark and "WITH" in spark
    assert isinstance(sqlglot.parse_one(spark, read="spark"), exp.Select)
    duck = DuckDBEngine()
    assert duck.render(query) != spark


def test_row_level_states_render_for_spark() -> None:
    evaluation = _evaluation()
    compiled = [
        compile_rule(node, evaluation.ctx, i) for i, node in enumerate(evaluation.ruleset.rules or ())
    ]
    layout = RowLayout()
    for rule in compiled:
        layout.add(rule.node, rule.leaves)
    query = layout.select(exp.Table(this=exp.to_identifier("rows", quoted=True)))
    spark = query.sql(dialect="spark")
    # uniqueness reads the duplicated keys from the rows' own table, bound by the layout
    assert "FROM `rows` AS `primary` GROUP BY `id` HAVING COUNT(*) > 1" in spark
    assert isinstance(sqlglot.parse_one(spark, read="spark"), exp.Select)
