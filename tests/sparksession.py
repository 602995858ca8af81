"""One SparkSession for the whole test session, and the ``engine`` fixture; a pytest plugin.

The ``spark_session`` fixture (session scope) starts Spark ``local[2]`` once, with assay's
defaults (:data:`assay.engine.spark.DEFAULT_CONF`), and stops it at the end of the session; it
needs PySpark (the ``dev`` extra) and a Java 17+ runtime, and fails, never skips, without them.
Every engine a test builds on it has views of its own, so tests cannot see each other's tables.

The ``engine`` fixture runs a test once per engine, as a value for ``assay.dqdl.evaluate(...,
engine=...)``: ``"duckdb"``, or the shared SparkSession. Use it from a test folder by importing
the fixtures into that folder's ``conftest.py``::

    from sparksession import engine, spark_session  # noqa: F401

    def test_something(engine: object) -> None:
        result = evaluate(ruleset, data, engine=engine)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

ENGINES = ("duckdb", "spark")


@pytest.fixture(scope="session")
def spark_session() -> Iterator[Any]:
    from assay.engine.spark import build_session

    session = build_session("local[2]")
    yield session
    session.stop()


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> Any:
    """``"duckdb"`` or the session's SparkSession; ``request.param`` names the engine."""
    if request.param == "spark":
        return request.getfixturevalue("spark_session")
    return "duckdb"


def engine_name(engine: Any) -> str:
    """The name of an ``engine`` fixture's value."""
    return engine if isinstance(engine, str) else "spark"


ROW_COLUMNS = (
    "DataQualityRulesPass",
    "DataQualityRulesFail",
    "DataQualityRulesSkip",
    "DataQualityEvaluationResult",
)


def assert_same_results(result: Any, reference: Any) -> None:
    """Two evaluations of one vector agree: every rule's outcome and every metric (no DQDL
    metric is estimated, so floats agree to pytest.approx's relative 1e-6; NaN equals NaN), and
    the row-level outcomes row for row. Messages are the engines' own words and may differ."""
    assert [r.outcome for r in result.rules] == [r.outcome for r in reference.rules]
    for mine, theirs in zip(result.rules, reference.rules, strict=True):
        assert mine.metrics.keys() == theirs.metrics.keys(), mine.rule
        for key, value in theirs.metrics.items():
            if value is None:
                assert mine.metrics[key] is None, (mine.rule, key)
            else:
                assert mine.metrics[key] == pytest.approx(value, nan_ok=True), (mine.rule, key)
    if reference.row_level is not None:
        assert result.row_level is not None
        for column in ROW_COLUMNS:
            assert (
                result.row_level.column(column).to_pylist() == reference.row_level.column(column).to_pylist()
            )
