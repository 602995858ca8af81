"""The converters' edges that the shop's manifest does not reach: one-sided and strict bounds, a
row count between fractions, and what is refused (an argument the converter does not read, Jinja,
regex flags, group_by, custom thresholds, a severity dbt does not know)."""

from __future__ import annotations

from typing import Any

import pytest

from assay.platform.checks.dbt.generic import NotConverted, convert, severity
from assay.platform.checks.dbt.manifest import DbtTest


def _test(
    kind: str, kwargs: dict[str, Any], config: dict[str, Any] | None = None, column: str | None = "c"
) -> DbtTest:
    namespace, _, name = kind.rpartition(".")
    return DbtTest("test.p.t", "t", name, namespace or None, kwargs, column, config or {}, "model.p.m", "")


@pytest.mark.parametrize(
    ("kind", "kwargs", "metric", "expect"),
    [
        ("dbt_expectations.expect_table_row_count_to_be_between", {"min_value": 5}, "row_count", ">= 5"),
        (
            "dbt_expectations.expect_table_row_count_to_be_between",
            {"max_value": 8, "strictly": True},
            "row_count",
            "<= 7",
        ),
        (
            "dbt_expectations.expect_table_row_count_to_be_between",
            {"min_value": 2.5, "max_value": 9.5},
            "row_count",
            "between 2 and 10",
        ),
        (
            "dbt_expectations.expect_table_row_count_to_be_between",
            {"min_value": 2, "max_value": 4, "strictly": True},
            "row_count",
            "between 2 and 4",
        ),
        ("dbt_expectations.expect_table_row_count_to_equal", {"value": 3}, "row_count", "= 3"),
    ],
)
def test_a_row_count_s_inclusive_bounds_become_whole_numbers(
    kind: str, kwargs: dict[str, Any], metric: str, expect: str
) -> None:
    check = convert(_test(kind, kwargs, column=None), "n")
    assert (check.metric, check.expect) == (metric, expect)


def test_strict_and_one_sided_value_bounds() -> None:
    kind = "dbt_expectations.expect_column_values_to_be_between"
    check = convert(_test(kind, {"column_name": "c", "min_value": 0, "strictly": True}), "n")
    assert check.metric == {"count_where": {"name": "n", "condition": "NOT (`c` > 0)"}}
    kind = "dbt_expectations.expect_column_value_lengths_to_be_between"
    check = convert(_test(kind, {"column_name": "c", "max_value": 3}), "n")
    assert check.metric == {"count_where": {"name": "n", "condition": "NOT (LENGTH(`c`) <= 3)"}}


def test_where_and_row_condition_are_one_filter_and_a_quoted_column_is_kept_whole() -> None:
    kind = "dbt_expectations.expect_column_values_to_not_be_null"
    test = _test(kind, {"row_condition": "active"}, {"where": "region = 'EU'"}, column='"Order ID"')
    check = convert(test, "n")
    assert (check.key, check.filter) == ("null_count(Order ID)", "(region = 'EU') AND (active)")


@pytest.mark.parametrize(
    ("kind", "kwargs", "config", "said"),
    [
        ("not_null", {"column_name": "c", "extra": 1}, {}, "argument(s) extra are not read by the import"),
        ("accepted_values", {"values": ["{{ var('s') }}"]}, {}, "holds Jinja"),
        ("accepted_values", {"values": "{{ var('s') }}"}, {}, "argument values is Jinja"),
        ("accepted_values", {"values": ["a", None]}, {}, "values holds None"),
        ("accepted_values", {"values": ["it's"]}, {}, "pastes into SQL unescaped"),
        (
            "accepted_values",
            {"values": ["upper(x)"], "quote": False},
            {},
            "unquoted (quote: false): SQL text",
        ),
        (
            "dbt_expectations.expect_column_values_to_match_regex",
            {"regex": "^a", "flags": "i"},
            {},
            "regex flags",
        ),
        ("dbt_expectations.expect_column_values_to_match_regex", {"regex": "(a)\\1"}, {}, "backreference"),
        (
            "dbt_expectations.expect_column_values_to_be_between",
            {"min_value": "'2020-01-01'"},
            {},
            "is not a number",
        ),
        ("dbt_expectations.expect_column_values_to_be_between", {}, {}, "neither min_value nor max_value"),
        ("dbt_expectations.expect_table_row_count_to_equal", {"value": 3, "group_by": ["d"]}, {}, "group_by"),
        ("not_null", {}, {"fail_calc": "sum(n)"}, "fail_calc 'sum(n)'"),
        ("not_null", {}, {"severity": "warn", "warn_if": ">5"}, "warn_if '>5'"),
        ("not_null", {}, {"where": "id in (select id from other)"}, "where 'id in (select id from other)'"),
        ("dbt_utils.not_empty_string", {}, {}, "test dbt_utils.not_empty_string has no exact equivalent"),
    ],
)
def test_what_has_no_exact_equivalent_is_named(
    kind: str, kwargs: dict[str, Any], config: dict[str, Any], said: str
) -> None:
    with pytest.raises(NotConverted, match=None) as raised:
        convert(_test(kind, {"column_name": "c", **kwargs}, config), "n")
    assert said in str(raised.value)


def test_severity_is_dbt_s_in_any_case() -> None:
    assert [severity(_test("not_null", {}, {"severity": s})) for s in ("ERROR", "warn", None)] == [
        "error",
        "warning",
        "error",
    ]
    with pytest.raises(NotConverted, match="severity 'info' is not warn or error"):
        severity(_test("not_null", {}, {"severity": "info"}))
