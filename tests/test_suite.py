"""The suite's own rules: what tests/conftest.py's sharing-out between xdist workers relies on."""

from __future__ import annotations

import pytest

from _units import unit_of

SPARK_FIXTURES = {"spark_session", "spark_connect_url", "spark_cluster"}


def _runs_spark(item: pytest.Item) -> bool:
    if SPARK_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and "spark" in [str(value) for value in callspec.params.values()]


def test_every_spark_test_says_so_in_its_id(request: pytest.FixtureRequest) -> None:
    # xdist's scheduler sees only ids: a Spark test without `spark` in its id would start a
    # second SparkSession on the other worker
    items = request.session.items
    spark = [item.nodeid for item in items if _runs_spark(item)]
    assert all(unit_of(nodeid) == "spark" for nodeid in spark), [n for n in spark if unit_of(n) != "spark"]
    if any("[spark" in item.nodeid for item in items):  # a run that holds Spark tests finds them
        assert spark
