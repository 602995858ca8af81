"""Profiling Parquet columns of the types other tools write: a UUID column (DuckDB, Polars and
Arrow write Parquet's UUID type), nanosecond timestamps (pandas) beside zoned ones. Each used to
fail the whole profile with an engine error (exit 3): the blank test's regular expression does
not take a UUID, and DuckDB refuses to compare TIMESTAMP_NS with TIMESTAMPTZ."""

from __future__ import annotations

import json
import uuid
from datetime import date
from pathlib import Path

import duckdb
import pytest

from assay.monitor import profile

ROWS = 40


@pytest.fixture
def typed(tmp_path: Path) -> Path:
    path = tmp_path / "events.parquet"
    con = duckdb.connect()
    con.sql(
        f"""
        SELECT ('00000000-0000-4000-8000-' || lpad(range::VARCHAR, 12, '0'))::UUID AS event_id,
               TIMESTAMP_NS '2026-01-01 08:00:00.123456789' + INTERVAL (range) MINUTE AS sent_at,
               TIMESTAMPTZ '2026-01-01 08:30:00+00' + INTERVAL (range) MINUTE AS received_at,
               range AS n
        FROM range({ROWS})
        """
    ).write_parquet(str(path))
    con.close()
    return path


def test_a_uuid_and_two_kinds_of_timestamp_profile_as_any_column(typed: Path, tmp_path: Path) -> None:
    from _invoke import assay

    result = profile(typed, dataset="events", load_date=date(2026, 1, 1))
    event_id = result.profile.column("event_id")
    assert (event_id.type, event_id.nulls, event_id.blanks, event_id.distinct) == ("uuid", 0, 0, ROWS)
    # the pair of timestamps is counted, as instants: every event was received after it was sent
    [pair] = result.profile.pairs
    assert (pair.first, pair.second, pair.less, pair.greater) == ("sent_at", "received_at", ROWS, 0)
    # and the command profiles it, keeping it in the store
    code = assay("profile", str(typed), "--dataset", "events", "--load-date", "2026-01-01",
                 "--workspace", str(tmp_path), "--json")  # fmt: skip
    assert code == 0


def test_a_uuids_values_are_kept_as_text(typed: Path) -> None:
    from assay.engine import DuckDBEngine
    from assay.lake.readers import register
    from assay.measure.profile import profile as measure

    engine = DuckDBEngine()
    try:
        table = register(engine, "t", typed)
        load = measure(engine, "t", list(table.columns), declared=["event_id"])
    finally:
        engine.close()
    values = load.column("event_id").values
    assert values is not None and len(values) == ROWS
    assert all(isinstance(v, str) and uuid.UUID(v) for v in values)
    assert json.dumps(sorted(values))  # a value set is text


def test_dqdl_string_rules_read_a_uuid_as_its_text(typed: Path) -> None:
    from assay.dqdl import evaluate

    rules = (
        'Rules = [ ColumnValues "event_id" matches "[0-9a-f]{8}-[0-9a-f-]{27}", '
        'ColumnLength "event_id" = 36, '
        'ColumnValues "event_id" in ["00000000-0000-4000-8000-000000000001"] with threshold > 0.02, '
        'IsUnique "event_id", ColumnValues "sent_at" < "2026-01-02" ]'
    )
    result = evaluate(rules, str(typed))
    assert [r.outcome for r in result.rules] == ["Passed"] * 5, [r.message for r in result.rules]
    assert result.rules[2].metrics["Column.event_id.ColumnValues.Compliance"] == pytest.approx(1 / ROWS)


def test_a_date_before_year_one_is_profiled_and_stored_not_a_platform_failure(tmp_path: Path) -> None:
    """ISO year 0000 (1 BC) is a valid ISO date that Python cannot hold: the engine gives it as
    text, and storing the profile's minimum ended the command with exit 3."""
    from _invoke import assay

    path = tmp_path / "eras.csv"
    path.write_text("d,t\n0000-01-01,0000-01-01 12:00:00\n2024-01-01,2024-01-01 00:00:00\n")
    code = assay("profile", str(path), "--dataset", "eras", "--load-date", "2026-12-01",
                 "--workspace", str(tmp_path), "--json")  # fmt: skip
    assert code == 0
    store_profile = profile(path, dataset="eras", load_date=date(2026, 12, 1)).profile
    assert store_profile.column("d").minimum == "0001-01-01 (BC)"
    metrics = store_profile.metrics()
    assert {k.key: v for k, v in metrics.items() if k.key.endswith("Minimum")} == {
        "Column.d.Minimum": -719528.0,  # days from 1970, as the engine counts them
        "Column.t.Minimum": -62167176000.0,
    }
