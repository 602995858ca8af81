"""The gate on generated contributor histories (assay.demo.bureau): for each of the seed's faults,
exactly the expected rows are quarantined or warned; backfills are baselined month by month; a new
contributor's trend rules are skipped; no prev_ column reaches the table; and every row is
accounted for (total == passed + quarantined), also on random batches with random faults."""

from __future__ import annotations

import csv
import shutil
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.demo import bureau as bu
from assay.demo import faults as fa
from assay.gate.gate import GateOptions, GateResult
from assay.lake.iceberg import Warehouse
from assay.platform.flows import gate as run_gate
from assay.store import MetricStore

DATA = resources.files("assay.demo") / "data"
HISTORY = 3  # months committed before each test
CONTRIBUTORS = ("BANK_A", "EASYPAY")
TYPES = {"BANK_A": "bank", "EASYPAY": "instalment", "NEWPAY": "instalment"}
BUREAU = bu.Bureau([*bu.DEFAULT_CONTRIBUTORS, bu.Contributor("NEWPAY", "instalment", 120, since=HISTORY)])


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.rules = Path(str(DATA / "bureau_rules.csv"))
        self.schema = Path(str(DATA / "accounts_schema.yaml"))
        self.count = 0

    def write(self, table: pa.Table | str) -> Path:
        self.count += 1
        path = self.root / f"file{self.count}.csv"
        path.write_text(table if isinstance(table, str) else bu.csv_text(table))
        return path

    def gate(self, batch: pa.Table | str, contributor: str) -> GateResult:
        options = GateOptions(
            batch=self.write(batch),
            rules=self.rules,
            contributor=contributor,
            contributor_type=TYPES[contributor],
            workspace=self.root / "ws",
            schema=self.schema,
        )
        with MetricStore.open(workspace=self.root / "ws") as store:
            return run_gate(options, store=store)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("history")
    workspace = Workspace(root)
    for contributor in CONTRIBUTORS:
        for index in range(HISTORY):
            result = workspace.gate(BUREAU.month(contributor, index), contributor)
            assert result.summary.quarantined == 0, (contributor, index, result.summary.to_dict()["rules"])
    return root


@pytest.fixture
def ws(history: Path, tmp_path: Path) -> Iterator[Workspace]:
    shutil.copytree(history / "ws", tmp_path / "ws")
    yield Workspace(tmp_path)


def outcome(result: GateResult) -> dict[str, set[str]]:
    """Quarantined accounts with their rule ids (parse errors keyed by line); checks conservation."""
    quarantined: dict[str, set[str]] = {}
    if result.quarantine_file:
        with Path(result.quarantine_file).open() as handle:
            for row in csv.DictReader(handle):
                key = row["account_id"] or f"line {row['dq_line']}"
                quarantined.setdefault(key, set()).update(row["dq_failed_rules"].split(";"))
    assert result.summary.total == result.summary.passed + result.summary.quarantined
    return quarantined


def expected_quarantine(expected: fa.Expected) -> dict[str, set[str]]:
    severity = fa.rule_severities()
    return {
        account: {r for r in rules if severity[r] == "critical"}
        for account, rules in expected.failures.items()
        if account in expected.quarantined
    }


def committed(ws: Workspace, contributor: str, index: int) -> pa.Table:
    day = BUREAU.statement_date(index)
    return Warehouse.open(ws.root / "ws").read(
        "silver.accounts", {"contributor_id": contributor, "statement_date": day}
    )


@pytest.mark.parametrize("contributor", CONTRIBUTORS)
def test_a_swapped_column_mapping(ws: Workspace, contributor: str) -> None:
    faulty, expected = fa.swap_limit_mapping(BUREAU.month(contributor, HISTORY))
    result = ws.gate(faulty, contributor)
    quarantined = outcome(result)
    assert quarantined == expected_quarantine(expected)
    assert result.summary.warned == len(expected.warned)
    assert committed(ws, contributor, HISTORY).num_rows == faulty.num_rows - len(expected.quarantined)


def test_doubled_limits(ws: Workspace) -> None:
    faulty, expected = fa.double_limits(BUREAU.month("BANK_A", HISTORY), share=0.05)
    assert expected.accounts
    quarantined = outcome(ws.gate(faulty, "BANK_A"))
    assert quarantined == expected_quarantine(expected)


@pytest.mark.parametrize("contributor", CONTRIBUTORS)
def test_a_truncated_extract_is_refused_whole(ws: Workspace, contributor: str) -> None:
    previous = BUREAU.month(contributor, HISTORY - 1)
    faulty, expected = fa.truncate(BUREAU.month(contributor, HISTORY), previous=previous)
    result = ws.gate(faulty, contributor)
    quarantined = outcome(result)
    assert {r for rules in quarantined.values() for r in rules} == set(expected.rules)
    assert set(quarantined) == set(expected.accounts) and result.summary.passed == 0
    (group,) = result.summary.groups
    assert group.rejected
    assert committed(ws, contributor, HISTORY).num_rows == 0


def test_a_three_month_backfill_is_baselined_month_by_month(ws: Workspace) -> None:
    table, expected = fa.backfill(BUREAU, "BANK_A", HISTORY, months=3)
    assert expected.traps  # a gate using one stale baseline for all three months would flag these
    result = ws.gate(table, "BANK_A")
    quarantined = outcome(result)
    assert quarantined == {}
    assert [g.statement_date for g in result.summary.groups] == [
        BUREAU.statement_date(i).isoformat() for i in range(HISTORY, HISTORY + 3)
    ]
    assert result.summary.baseline_date == BUREAU.statement_date(HISTORY - 1).isoformat()
    assert result.summary.passed == table.num_rows


def test_a_brand_new_contributor_skips_its_trend_rules(ws: Workspace) -> None:
    table, expected = fa.first_file(BUREAU, "NEWPAY")
    assert len(expected.traps) == table.num_rows  # a NULL comparison would fail every row
    result = ws.gate(table, "NEWPAY")
    quarantined = outcome(result)
    assert quarantined == {}
    for rule_id in ("T03", "T04"):
        stats = result.summary.rules[rule_id]
        assert (stats.skipped, stats.failed, stats.passed) == (table.num_rows, 0, 0)


def test_malformed_rows_are_parse_errors(ws: Workspace) -> None:
    text, expected = fa.malformed_rows(bu.csv_text(BUREAU.month("BANK_A", HISTORY)))
    result = ws.gate(text, "BANK_A")
    quarantined = outcome(result)
    assert result.summary.parse_errors == 3
    lines = {f"line {n}" for n in expected.lines.values()}
    keys = {k for k in quarantined if k in expected.accounts} | {
        k for k in quarantined if k.startswith("line ")
    }
    assert len(keys) == 3 and all(quarantined[k] == {"parse_error"} for k in keys)
    assert {k for k in keys if k.startswith("line ")} <= lines
    assert result.summary.passed == result.summary.total - 3


@pytest.mark.parametrize("fault", sorted(fa.ROW_FAULTS))
def test_each_row_fault_is_caught_by_its_rule(ws: Workspace, fault: str) -> None:
    contributor = "BANK_A"
    faulty, expected = fa.plant(
        BUREAU.month(contributor, HISTORY), fault, previous=BUREAU.month(contributor, HISTORY - 1)
    )
    result = ws.gate(faulty, contributor)
    quarantined = outcome(result)
    assert quarantined == expected_quarantine(expected)
    assert result.summary.warned == len(expected.warned)


def test_no_validation_column_reaches_the_table(ws: Workspace) -> None:
    faulty, _ = fa.double_limits(BUREAU.month("BANK_A", HISTORY))
    ws.gate(faulty, "BANK_A")
    schema = Warehouse.open(ws.root / "ws").schema("silver.accounts")
    assert schema.names == bu.SCHEMA.names


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    faults=st.lists(st.sampled_from(sorted(fa.ROW_FAULTS)), max_size=3, unique=True),
    malformed=st.booleans(),
    truncated=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_every_row_is_accounted_for(
    history: Path,
    tmp_path_factory: pytest.TempPathFactory,
    faults: list[str],
    malformed: bool,
    truncated: bool,
    seed: int,
) -> None:
    root = tmp_path_factory.mktemp("prop")
    shutil.copytree(history / "ws", root / "ws")
    ws = Workspace(root)
    table = BUREAU.month("EASYPAY", HISTORY)
    previous = BUREAU.month("EASYPAY", HISTORY - 1)
    for fault in faults:
        if fault in ("arrears_jump",) or not _eligible(table, fault):
            continue
        table, _ = fa.plant(table, fault, seed=seed, previous=previous)
    if truncated:
        table, _ = fa.truncate(table, keep=0.6, previous=previous)
    text = bu.csv_text(table)
    if malformed:
        text, _ = fa.malformed_rows(text, seed=seed)
    lines = len(text.splitlines()) - 1
    result = ws.gate(text, "EASYPAY")
    s = result.summary
    assert s.total == lines == s.passed + s.quarantined
    assert committed(ws, "EASYPAY", HISTORY).num_rows == s.passed
    quarantine_rows = 0
    if result.quarantine_file:
        with Path(result.quarantine_file).open() as handle:
            quarantine_rows = sum(1 for _ in csv.DictReader(handle))
    assert quarantine_rows == s.quarantined


def _eligible(table: pa.Table, fault: str) -> bool:
    return sum(1 for r in table.to_pylist() if fa.ROW_FAULTS[fault].eligible(r)) >= 3


def test_a_duplicated_record_is_quarantined_twice(ws: Workspace) -> None:
    """The gate refuses both copies itself, before any rule (K01 included) is judged."""
    table = BUREAU.month("BANK_A", HISTORY)
    duplicated = pa.concat_tables([table, table.slice(7, 1)])
    result = ws.gate(duplicated, "BANK_A")
    quarantined = outcome(result)
    account = table.column("account_id")[7].as_py()
    assert quarantined == {account: {"duplicate"}}
    assert result.summary.quarantined == 2 and result.summary.rules["K01"].failed == 0
