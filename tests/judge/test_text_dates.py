"""Date rules on a text column that holds no date: vega_datasets' ``stocks.csv`` writes its dates
as ``Jan 1 2000``, which assay does not read as a date (only ISO 8601 is unambiguous). The rules
used to fail with "0.00 % of rows passed" and no reason, as if every price were stale."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from vega_datasets import data

from assay.dqdl import evaluate

STOCKS = Path(data.stocks.filepath)
NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "rule",
    [
        'DataFreshness "date" <= 10000 days',
        'ColumnValues "date" > "2005-01-01"',
        'DataFreshness "symbol" <= 1 days',
    ],
)
def test_a_date_rule_on_text_that_holds_no_date_is_an_error_that_says_so(rule: str) -> None:
    [outcome] = evaluate(f"Rules = [ {rule} ]", STOCKS, now=NOW).rules
    assert outcome.outcome == "Error"
    column = rule.split('"')[1]
    assert f"'{column}'" in outcome.message and "no value" in outcome.message and "date" in outcome.message


def test_a_few_bad_dates_among_iso_ones_fail_their_rows(tmp_path: Path) -> None:
    """Dirty data is what the rule is for: where some values are dates, the others fail."""
    path = tmp_path / "dirty.csv"
    path.write_text("id,d\n1,2024-01-05\n2,2024-13-45\n3,2024-03-01\nnot,a date\n")
    [outcome] = evaluate('Rules = [ ColumnValues "d" > "2024-01-01" ]', path, now=NOW).rules
    assert outcome.outcome == "Failed"
    assert outcome.metrics["Column.d.ColumnValues.Compliance"] == pytest.approx(0.5)
