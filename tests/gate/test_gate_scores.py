"""A gate run's row rules count in the dataset's score. A tester's bank file: February's trend
rule quarantined a row and a warning rule failed seven, yet the score said pass rate 1.0 (only the
month rules were recorded as outcomes), "no completeness check" beside an ``IsComplete`` rule
(outcomes were named by rule id), and a contributor whose rules are all row rules had no judged
check at all (its run had no load of its own to be dated by)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from assay.platform.scores import Subject, score_dataset
from gate.conftest import Bench

LIMITS = {"A1": 1000, "A2": 2000, "A3": 3000, "A4": 4000, "A5": 5000}
NOW = datetime(2025, 3, 15, tzinfo=UTC)
ROW_RULES = '''rule_id,contributor_type,category,severity,rule,description
C01,all,completeness,critical,"IsComplete ""account_id""",Every record names its account
T01,bank,trend,critical,credit_limit = prev_credit_limit OR account_status = 'ADMIN_CHANGE',Limit stability
'''


def two_months(bench: Bench, **kw: object) -> None:
    bench.gate(bench.month("B1", "2025-01-31", LIMITS), **kw)
    february = {**LIMITS, "A1": 9999}  # A1's limit changed without an admin change: T01 fails
    result = bench.gate(bench.month("B1", "2025-02-28", february), **kw)
    assert result.summary.quarantined == 1
    assert result.summary.rules["T01"].failed == 1


def test_a_row_rule_that_quarantined_a_row_lowers_the_pass_rate(bench: Bench) -> None:
    two_months(bench)
    score = score_dataset(Subject("silver.accounts"), bench.store, now=NOW)
    components = score.components
    assert components["failed"] >= 1  # T01 in February
    assert components["pass_rate"] is not None and components["pass_rate"] < 1
    assert components["coverage"]["completeness"] is True  # C01 is IsComplete


@pytest.mark.parametrize("engine", ["duckdb"], indirect=True)
def test_a_contributor_with_row_rules_only_is_judged(bench: Bench, tmp_path: Path) -> None:
    rules = tmp_path / "row-rules.csv"
    rules.write_text(ROW_RULES)
    two_months(bench, rules=rules)
    score = score_dataset(Subject("silver.accounts"), bench.store, now=NOW)
    # February's run (January's is outside the 30 days): C01 passed, T01 failed
    assert (score.components["passed"], score.components["failed"]) == (1, 1)
    assert "no check was judged" not in " ".join(score.why)
