"""What a user reads in a rule's message: true to the outcome and free of engine internals."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from assay.dqdl import evaluate
from monitor.realdata import flights

_INTERNALS = re.compile(r"LINE \d|__\w+|\x1b\[|\bSET\b|max_expression_depth|DQDL\.md|§")


def test_a_failed_rule_never_reads_100_percent() -> None:
    # One flight of 336,776 (EWR to LGA, 17 miles) is not longer than 17 miles: 99.9997 %
    # passed, which two decimals would print as "100.00 %" on a rule that failed.
    table = flights()
    failing = pc.sum(pc.less_equal(table.column("distance"), 17)).as_py()
    assert 0 < failing < table.num_rows / 20_000
    (outcome,) = evaluate('Rules = [ ColumnValues "distance" > 17 ]', table).rules
    assert outcome.outcome == "Failed"
    assert outcome.message is not None
    assert "100.00" not in outcome.message
    assert f"{failing:,} of {table.num_rows:,} rows failed" in outcome.message


@pytest.mark.parametrize(
    "rule",
    [
        'ColumnValues "distance" > 0 with threshold < 1',
        'CustomSql "select distance from primary where distance > 0" with threshold < 1',
        'ColumnValues "carrier" in ["UA", "AA", "B6", "DL", "EV", "MQ", "US", "WN", "VX", "FL", "AS", '
        '"9E", "F9", "HA", "YV", "OO"] with threshold = 0.5',
    ],
)
def test_a_threshold_that_every_row_passing_fails_never_reads_100_percent_passed(rule: str) -> None:
    """Every flight passes, and the threshold wants less: the rule fails, and its message must
    not read "100.00 % of rows passed the threshold" beside a Failed outcome."""
    table = flights()
    (outcome,) = evaluate(f"Rules = [ {rule} ]", table).rules
    assert outcome.outcome == "Failed"
    assert outcome.message is not None
    assert "100.00" not in outcome.message and "% of rows passed" not in outcome.message
    assert f"every one of the {table.num_rows:,} rows passed" in outcome.message


def test_a_threshold_failure_says_what_the_threshold_required() -> None:
    table = flights()
    (outcome,) = evaluate('Rules = [ ColumnValues "distance" > 100 with threshold > 0.9999 ]', table).rules
    failing = pc.sum(pc.less_equal(table.column("distance"), 100)).as_py()
    assert outcome.outcome == "Failed"
    assert outcome.message is not None
    assert f"{failing:,} of {table.num_rows:,} rows failed" in outcome.message
    assert "the threshold requires > 0.9999" in outcome.message


@pytest.mark.parametrize(
    "rule",
    [
        # DuckDB answers with its expression-depth limit and a `SET max_expression_depth` remedy.
        'RowCount > 0 where "' + " + ".join(["distance"] * 1100) + ' > 0"',
        # A run-time failure inside the one shared query, which DuckDB echoes with a caret.
        'CustomSql "select count(*) from primary where make_date(2013, 13, day) is not null" > 0',
    ],
    ids=["expression-depth", "run-time-failure"],
)
def test_engine_errors_reach_the_user_without_engine_internals(rule: str) -> None:
    table = flights().slice(0, 1000)
    (outcome,) = evaluate(f"Rules = [ {rule} ]", table).rules
    assert outcome.outcome == "Error"
    assert outcome.message
    assert not _INTERNALS.search(outcome.message), outcome.message


def test_a_composite_that_row_mode_cannot_run_cites_no_document() -> None:
    table = pa.table({"a": [1, 2, None]})
    (outcome,) = evaluate(
        'Rules = [ (Completeness "a" > 0.5) and (IsComplete "a") ]', table, composite_mode="row"
    ).rules
    assert outcome.outcome == "Error"
    assert outcome.message is not None
    assert not _INTERNALS.search(outcome.message)
    assert "Completeness" in outcome.message


def test_an_unknown_column_lists_the_users_columns_only() -> None:
    table = pa.table({"id": [1, 2], "__row": [0, 1], "__gate_batch": ["a", "a"]})
    (outcome,) = evaluate('Rules = [ IsComplete "ID_x" ]', table).rules
    assert outcome.outcome == "Error"
    assert outcome.message == "Column 'ID_x' does not exist in the primary dataset (columns: id)"


def test_a_custom_sql_rule_whose_query_returns_rows_says_so_in_the_rules_terms() -> None:
    """DuckDB's "scalar subqueries can only return a single row" speaks of assay's plan, not of
    the user's rule."""
    (outcome,) = evaluate('Rules = [ CustomSql "select distance from primary" > 0 ]', flights()).rules
    assert outcome.outcome == "Error"
    assert outcome.message is not None
    assert "the query returns more than one row" in outcome.message
    assert "subquer" not in outcome.message and "scalar" not in outcome.message
