"""What a check run's one statement computes once for the document's metrics and the per-column
profile both (issue 30: ``bench/checks.py`` within 1.2x of the hand-written query with the profile
included): a dimension the profile counts exactly has its values counted by the dimension's own
grouping set, not by a second GROUP BY of the same rows. The profile must stay the one
``assay profile`` measures of the same rows: a NULL dimension value, a blank one, a boolean
dimension, and more values than the document's ``top_k`` keeps."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
from sqlglot import exp

from assay.engine import DuckDBEngine
from assay.measure.profile import profile
from assay.platform.checks.measure import ROWS, ColumnProfiling, Plan, measure
from assay.platform.checks.model import Profile

NOW = datetime(2026, 12, 1, tzinfo=UTC)
ROWS_TABLE = pa.table(
    {
        "venue": ["XLON", "XPAR", None, " ", "XLON", "XETR", "XPAR", "XLON", "XMIL", None],
        "live": [True, False, None, True, True, True, False, True, True, False],
        "side": ["b", "s", "b", "b", "s", "s", "b", "b", "s", "s"],
        "fee": [1.5, 2.0, None, 0.5, 1.0, 3.5, 2.5, 1.0, 0.0, 4.0],
    }
)
DIMENSIONS = ("venue", "live")


def plan(engine: DuckDBEngine) -> tuple[Plan, ColumnProfiling]:
    columns = engine.columns(ROWS)
    exact = tuple(c.name for c in columns if c.name != "fee")
    profiling = ColumnProfiling(exact, ())
    document_profile = Profile(
        id="daily", dimensions=DIMENSIONS, top_k=2, metrics=("row_count", {"mean": ["fee"]})
    )
    return Plan(document_profile, columns, now=NOW, profiling=profiling), profiling


def grouped_by(statement: exp.Select) -> list[str]:
    """The column each plain GROUP BY of the statement groups rows of the slice by."""
    out = []
    for group in statement.find_all(exp.Group):
        if group.args.get("grouping_sets"):
            continue
        select = group.parent
        assert isinstance(select, exp.Select)
        out.append(select.expressions[0].this.sql("duckdb"))
    return out


def test_a_dimension_the_profile_counts_is_grouped_once() -> None:
    engine = DuckDBEngine()
    engine.register_arrow(ROWS, ROWS_TABLE)
    built, _ = plan(engine)
    grouped = grouped_by(built.statement())
    assert not [g for g in grouped if "venue" in g or "live" in g], grouped
    assert [g for g in grouped if "side" in g]  # not a dimension: counted by its own GROUP BY


def test_the_shared_counts_give_the_profile_assay_profile_measures() -> None:
    engine = DuckDBEngine()
    engine.register_arrow(ROWS, ROWS_TABLE)
    built, profiling = plan(engine)
    measured = measure(engine, built)
    columns = engine.columns(ROWS)
    alone = profile(engine, ROWS, columns, exact=profiling.exact, pairs=profiling.pairs)
    assert measured.columns is not None
    for want in alone.columns:
        got = measured.columns.column(want.name)
        assert (got.nulls, got.blanks, got.distinct, got.values, got.counts) == (
            want.nulls,
            want.blanks,
            want.distinct,
            want.values,
            want.counts,
        ), want.name
    venue = measured.columns.column("venue")
    assert venue.values == {"XLON": 3, "XPAR": 2, " ": 1, "XETR": 1, "XMIL": 1}  # beyond top_k 2
    assert venue.blanks == 1 and venue.nulls == 2
    assert measured.columns.column("live").values == {"true": 6, "false": 3}
    assert measured.value("row_count") == 10.0
    assert len(measured.groups[("venue",)]) == 2  # the document's own cap still holds
