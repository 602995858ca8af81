"""The gate's mechanics on small hand-written batches: routing, parse errors, the baseline,
resends, idempotency and the errors that stop a run before anything is committed."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pytest
import sqlglot

from assay.errors import ConfigError
from assay.gate.baseline import lagged
from assay.lake.iceberg import Warehouse
from gate.conftest import HEADER, Bench

LIMITS = {"A1": 1000, "A2": 2000, "A3": 3000, "A4": 4000, "A5": 5000}


def table_rows(bench: Bench, contributor: str | None = None) -> list[dict[str, object]]:
    rows = Warehouse.open(bench.workspace).read(
        "silver.accounts", {"contributor_id": contributor} if contributor else {}
    )
    return sorted(rows.to_pylist(), key=lambda r: (str(r["statement_date"]), str(r["account_id"])))


def quarantined(result: object) -> dict[str, str]:
    path = result.quarantine_file  # type: ignore[attr-defined]
    if path is None:
        return {}
    with Path(path).open() as handle:
        return {
            row["account_id"] or row["dq_raw_line"]: row["dq_failed_rules"] for row in csv.DictReader(handle)
        }


def test_first_batch_creates_the_table_and_commits_everything(bench: Bench) -> None:
    result = bench.gate(bench.month("B1", "2025-01-31", LIMITS))
    s = result.summary
    assert (s.total, s.passed, s.quarantined, s.warned) == (5, 5, 0, 0)
    assert [r["account_id"] for r in table_rows(bench)] == list(LIMITS)
    assert Warehouse.open(bench.workspace).schema("silver.accounts").names == HEADER.split(",")
    assert json.loads(result.summary_file.read_text())["total"] == 5


def test_rows_are_routed_by_severity(bench: Bench) -> None:
    bench.gate(bench.month("B1", "2025-01-31", LIMITS))
    february = bench.csv(
        "B1,A1,2025-02-28,ACTIVE,1000,1000,0",
        "B1,A2,2025-02-28,ADMIN_CHANGE,2500,2000,500",  # a legitimate change
        "B1,A3,2025-02-28,ACTIVE,6000,6000,0",  # a limit moved without a reason: T01
        "B1,A4,2025-02-28,FROZEN,4000,4000,0",  # unknown status: warning D02
        "B1,A5,2025-02-28,ACTIVE,5000,4000,0",  # does not add up: F01
    )
    result = bench.gate(february)
    s = result.summary
    assert (s.total, s.passed, s.quarantined, s.warned) == (5, 3, 2, 1)
    assert quarantined(result) == {"A3": "T01", "A5": "F01"}
    assert s.rules["T01"].failed == 1 and s.rules["D02"].failed == 1 and s.rules["F01"].failed == 1
    feb = [r for r in table_rows(bench) if str(r["statement_date"]) == "2025-02-28"]
    assert [r["account_id"] for r in feb] == ["A1", "A2", "A4"]
    assert not any(name.startswith("prev_") or name.startswith("__") for name in feb[0])


def test_parse_errors_are_quarantined_with_their_raw_text(bench: Bench) -> None:
    many = {f"B{i}": 100 for i in range(20)}
    bench.gate(bench.month("B1", "2025-01-31", {**LIMITS, **many}))
    batch = bench.csv(
        "B1,A1,2025-02-28,ACTIVE,1000,1000,0",
        "B1,A2,2025-02-28,ACTIVE,12,5O0,2000,0",  # a comma inside a number: a ragged line
        "B1,A3,2025-02-30,ACTIVE,3000,3000,0",  # an impossible date
        "B1,A4,2025-02-28,ACTIVE,4O00,4000,0",  # text in a number
        "B1,A5,2025-02-28,ACTIVE,5000,5000,0",
        *(f"B1,{a},2025-02-28,ACTIVE,100,100,0" for a in many),
    )
    result = bench.gate(batch)
    s = result.summary
    assert (s.total, s.passed, s.quarantined, s.parse_errors) == (25, 22, 3, 3)
    with Path(result.quarantine_file).open() as handle:
        rows = list(csv.DictReader(handle))
    by_line = {row["dq_line"]: row for row in rows if row["dq_line"]}
    assert by_line["3"]["dq_raw_line"] == "B1,A2,2025-02-28,ACTIVE,12,5O0,2000,0"
    texts = {row["account_id"]: row for row in rows if row["account_id"]}
    assert texts["A3"]["statement_date"] == "2025-02-30" and "not a valid date" in texts["A3"]["dq_reasons"]
    assert texts["A4"]["credit_limit"] == "4O00" and texts["A4"]["dq_failed_rules"] == "parse_error"


def test_a_backfill_is_baselined_month_by_month(bench: Bench) -> None:
    bench.gate(bench.month("B1", "2024-12-31", {"A1": 1000, "A2": 2000}))
    backfill = bench.csv(
        "B1,A1,2025-01-31,ADMIN_CHANGE,1500,1500,0",  # January changes A1's limit, legitimately
        "B1,A2,2025-01-31,ACTIVE,2000,2000,0",
        "B1,A1,2025-02-28,ACTIVE,1500,1500,0",  # February keeps January's limit: stable
        "B1,A2,2025-02-28,ACTIVE,2000,2000,0",
        "B1,A1,2025-03-31,ACTIVE,1500,1500,0",
        "B1,A2,2025-03-31,ACTIVE,2100,2100,0",  # March moves A2 without reason: T01
    )
    result = bench.gate(backfill)
    assert quarantined(result) == {"A2": "T01"}
    assert [g.statement_date for g in result.summary.groups] == ["2025-01-31", "2025-02-28", "2025-03-31"]
    assert result.summary.baseline_date == "2024-12-31"


def test_a_new_contributor_skips_its_trend_rules(bench: Bench) -> None:
    result = bench.gate(bench.month("NEWBANK", "2025-01-31", LIMITS), contributor="NEWBANK")
    assert result.summary.quarantined == 0
    assert result.summary.rules["T01"].skipped == 5 and result.summary.rules["T01"].failed == 0


def test_a_new_account_skips_trend_rules_but_not_the_others(bench: Bench) -> None:
    bench.gate(bench.month("B1", "2025-01-31", LIMITS))
    result = bench.gate(bench.month("B1", "2025-02-28", {**LIMITS, "A9": 900}))
    assert result.summary.rules["T01"].skipped == 1 and result.summary.rules["T01"].passed == 5
    assert result.summary.quarantined == 0


def test_an_account_quarantined_last_month_is_judged_against_its_own_latest_record(bench: Bench) -> None:
    bench.gate(bench.month("B1", "2025-01-31", LIMITS))
    broken = bench.csv(  # A3's limit does not add up in February: quarantined, not committed
        *(f"B1,{a},2025-02-28,ACTIVE,{n},{n if a != 'A3' else 1},0" for a, n in LIMITS.items())
    )
    assert quarantined(bench.gate(broken)) == {"A3": "F01"}
    # March: A3 comes back with a limit that moved since its January record, without a reason
    march = bench.gate(bench.month("B1", "2025-03-31", {**LIMITS, "A3": 9000}))
    assert march.summary.rules["T01"].skipped == 0
    assert quarantined(march) == {"A3": "T01"}
    # an unchanged limit against the January record passes
    april = bench.gate(bench.month("B1", "2025-04-30", LIMITS))
    assert april.summary.rules["T01"].failed == 0 and april.summary.rules["T01"].skipped == 0


def test_a_truncated_extract_is_refused_whole(bench: Bench) -> None:
    bench.gate(bench.month("B1", "2025-01-31", LIMITS))
    result = bench.gate(bench.month("B1", "2025-02-28", {"A1": 1000, "A2": 2000}))
    (group,) = result.summary.groups
    assert (
        group.rejected and group.dataset_rules[0].rule_id == "A02" and group.dataset_rules[0].observed == 2.0
    )
    assert quarantined(result) == {"A1": "A02", "A2": "A02"}
    assert result.summary.passed == 0
    # the refused month is not history: March is judged against January's 5 rows
    march = bench.gate(bench.month("B1", "2025-03-31", LIMITS))
    assert march.summary.quarantined == 0 and march.summary.baseline_date == "2025-01-31"


def test_a_corrected_resend_replaces_the_month(bench: Bench) -> None:
    bench.gate(bench.month("B1", "2025-01-31", LIMITS))
    bench.gate(bench.month("B1", "2025-02-28", LIMITS))
    bench.gate(bench.month("B2", "2025-02-28", {"Z1": 10}), contributor="B2")
    fixed = {**LIMITS, "A3": 3000}
    result = bench.gate(bench.month("B1", "2025-02-28", fixed, status={"A1": "ADMIN_CHANGE"}))
    assert result.summary.replaced_dates == ["2025-02-28"] and result.summary.baseline_date == "2025-01-31"
    feb = [r for r in table_rows(bench, "B1") if str(r["statement_date"]) == "2025-02-28"]
    assert len(feb) == 5 and {r["account_status"] for r in feb if r["account_id"] == "A1"} == {"ADMIN_CHANGE"}
    assert len(table_rows(bench, "B2")) == 1 and len(table_rows(bench, "B1")) == 10


def test_the_same_file_twice_commits_nothing_twice(bench: Bench) -> None:
    batch = bench.month("B1", "2025-01-31", LIMITS)
    first = bench.gate(batch)
    second = bench.gate(batch)
    assert second.summary.duplicate_of == first.summary.run_id
    assert len(table_rows(bench)) == 5
    # the same content for another contributor is not a duplicate
    other = bench.csv(*(line.replace("B1,", "B2,", 1) for line in batch.read_text().splitlines()[1:]))
    assert bench.gate(other, contributor="B2").summary.duplicate_of is None


def test_an_empty_batch_is_a_recorded_run(bench: Bench) -> None:
    result = bench.gate(bench.csv())
    assert (result.summary.total, result.summary.passed, result.summary.quarantined) == (0, 0, 0)
    assert result.summary_file.exists()
    assert [run.kind for run in bench.store.runs("silver.accounts")] == ["gate"]


def test_rows_of_another_contributor_are_quarantined(bench: Bench) -> None:
    result = bench.gate(bench.csv("B1,A1,2025-01-31,ACTIVE,1,1,0", "B9,A2,2025-01-31,ACTIVE,1,1,0"))
    assert quarantined(result) == {"A2": "contributor"}


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (HEADER.replace(",temporary_limit", ""), r"missing column\(s\) temporary_limit"),
        (HEADER + ",extra", r"unexpected column\(s\) extra"),
    ],
)
def test_a_changed_header_stops_the_run(bench: Bench, header: str, message: str) -> None:
    bench.gate(bench.month("B1", "2025-01-31", LIMITS))
    width = len(header.split(","))
    batch = bench.csv(
        ",".join(["B1", "A1", "2025-02-28", "ACTIVE", "1", "1", "0", "x"][:width]), header=header
    )
    with pytest.raises(ConfigError, match=message):
        bench.gate(batch)
    assert len(table_rows(bench)) == 5


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            'X1,all,domain,critical,"IsComplete ""nosuch""",x',
            "rule X1 cannot run: Column 'nosuch' does not exist",
        ),
        (
            "X2,all,trend,critical,a = prev_nosuch,x",
            "rule X2 reads prev_nosuch, but the table has no column 'nosuch'",
        ),
        ("X3,all,domain,high,a > 1,x", "severity 'high' must be 'critical' or 'warning'"),
        ("X4,all,domain,critical,a >,x", "neither a DQDL rule nor a valid row condition"),
    ],
)
def test_a_broken_rule_stops_the_run_and_names_its_line(bench: Bench, line: str, message: str) -> None:
    rules = bench.root / "broken.csv"
    rules.write_text(bench.rules.read_text() + line + "\n")
    with pytest.raises(ConfigError, match=message) as raised:
        bench.gate(bench.month("B1", "2025-01-31", LIMITS), rules=rules)
    assert f"{rules}:7" in str(raised.value)
    assert not Warehouse.open(bench.workspace).exists("silver.accounts")


def test_unknown_contributor_type_and_unsafe_names(bench: Bench) -> None:
    batch = bench.month("B1", "2025-01-31", LIMITS)
    with pytest.raises(ConfigError, match="unknown contributor type 'lender'"):
        bench.gate(batch, contributor_type="lender")
    with pytest.raises(ConfigError, match=r"contributor '\.\./etc' must be"):
        bench.gate(batch, contributor="../etc")


def test_the_baseline_sql_renders_for_spark() -> None:
    schema = pa.schema(
        [("account_id", pa.string()), ("statement_date", pa.date32()), ("credit_limit", pa.int64())]
    )
    query = lagged(
        "batch", "baseline", schema, key="account_id", order="statement_date", prev=["credit_limit"]
    )
    spark = query.sql(dialect="spark")
    assert "LAG(`credit_limit`) OVER (PARTITION BY `account_id` ORDER BY `statement_date`" in spark
    assert sqlglot.parse_one(spark, read="spark") is not None


def test_every_query_the_gate_runs_renders_for_spark(bench: Bench, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate builds sqlglot trees only: each query it sends to its engine also renders for
    Spark (and on Spark, Spark ran it)."""
    from assay.engine.base import Engine

    sent: list[object] = []
    original = Engine.query

    def record(self: Engine, query: object) -> pa.Table:
        sent.append(query)
        return original(self, query)  # type: ignore[arg-type]

    monkeypatch.setattr(Engine, "query", record)
    bench.gate(bench.month("B1", "2025-01-31", LIMITS))
    bench.gate(bench.month("B1", "2025-02-28", {**LIMITS, "A1": 1}))
    assert len(sent) >= 8
    for query in sent:
        spark = query.sql(dialect="spark")  # type: ignore[attr-defined]
        assert sqlglot.parse_one(spark, read="spark") is not None


def _history_scenario(bench: Bench) -> tuple[list[tuple[dict[str, object], dict[str, str]]], list[object]]:
    """Four runs that read the baseline month every way the gate does: for LAG, and, where the
    store lacks the month's metrics, for ``last()``. Returns each run's summary (without what
    differs from run to run) and quarantined rows, and the table's rows at the end."""
    without_a02 = bench.root / "rules-without-a02.csv"
    without_a02.write_text(
        "".join(line for line in bench.rules.read_text().splitlines(True) if "A02" not in line)
    )
    march = {**LIMITS, "A6": 600, "A7": 700}
    runs = [
        bench.gate(bench.month("B1", "2025-01-31", LIMITS), rules=without_a02),  # January: no RowCount stored
        bench.gate(bench.month("B1", "2025-02-28", {"A1": 1000, "A2": 2000})),  # truncated against January
        bench.gate(
            bench.csv(
                *(f"B1,{a},2025-02-28,ACTIVE,{n},{n},0" for a, n in LIMITS.items() if a != "A3"),
                "B1,A3,2025-02-28,ACTIVE,3500,3500,0",  # T01
                "B1,A6,2025-02-28,ACTIVE,600,500,0",  # F01
                "B1,A7,2025-02-28,CLOSED,700,700,0",  # D02, a warning
                "B1,A8,2025-02-3O,ACTIVE,800,800,0",  # a parse error
                "B9,A9,2025-02-28,ACTIVE,900,900,0",  # another contributor
            )
        ),
        bench.gate(  # a backfill whose second month is truncated: only that month's row is refused
            bench.csv(
                *(f"B1,{a},2025-03-31,ACTIVE,{n},{n},0" for a, n in march.items()),
                "B1,A1,2025-04-30,ACTIVE,1000,1000,0",
            )
        ),
    ]
    volatile = {
        "run_id",
        "source",
        "quarantine_file",
        "held_file",
        "snapshot_id",
        "started_at",
        "finished_at",
    }
    seen = [
        ({k: v for k, v in r.summary.to_dict().items() if k not in volatile}, quarantined(r)) for r in runs
    ]
    return seen, table_rows(bench)


def test_the_baseline_month_scanned_in_place_gives_what_reading_it_through_iceberg_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.engine.duckdb import DuckDBEngine
    from assay.gate import gate
    from assay.store import MetricStore

    scanned: list[str] = []
    original = DuckDBEngine.register_file

    def record(self: DuckDBEngine, name: str, path: str | list[str], fmt: str) -> None:
        scanned.append(name)
        original(self, name, path, fmt)

    monkeypatch.setattr(DuckDBEngine, "register_file", record)
    outcomes = []
    for way in ("in place", "through iceberg"):
        if way == "through iceberg":
            monkeypatch.setattr(Warehouse, "parquet_files", lambda self, name, where: None)
        (tmp_path / way).mkdir()
        with MetricStore.open(workspace=tmp_path / way / "ws") as store:
            outcomes.append(_history_scenario(Bench(tmp_path / way, store)))
        assert [name for name in scanned if name == gate.BASELINE_FILES] == [
            gate.BASELINE_FILES
        ] * 3  # runs 2-4
    assert outcomes[0] == outcomes[1]
    (_, truncated), (_, february), (backfill, refused) = outcomes[0][0][1:]
    assert truncated == {"A1": "A02", "A2": "A02"}
    assert february == {"A3": "T01", "A6": "F01", "A8": "parse_error", "A9": "contributor"}
    assert refused == {"A1": "A02"} and backfill["baseline_date"] == "2025-02-28" and backfill["passed"] == 7


def test_a_month_rule_can_read_prev_columns(bench: Bench, tmp_path: Path) -> None:
    """A dataset-level rule over a ``prev_`` column (here: the share of accounts whose limit
    stayed) is judged per month on the lagged rows, fetched from the engine only for such a rule."""
    rules = tmp_path / "month_rules.csv"
    rules.write_text(
        "rule_id,contributor_type,category,severity,rule,description\n"
        'M01,all,trend,critical,"ColumnValues ""prev_credit_limit"" > 0 with threshold >= 0.5",'
        "Most accounts had a limit last month\n"
        'C01,bank,completeness,critical,"IsComplete ""account_id""",Every record names its account\n'
    )
    first = bench.month("B1", "2025-01-31", {"A1": 100, "A2": 200, "A3": 300})
    assert bench.gate(first).summary.passed == 3  # the first month, under the usual rules
    same = bench.month("B1", "2025-02-28", {"A1": 100, "A2": 200, "A3": 300})
    kept = bench.gate(same, rules=rules).summary
    [group] = kept.groups
    assert [(r.rule_id, r.outcome) for r in group.dataset_rules] == [("M01", "passed")]
    new = bench.month("B1", "2025-03-31", {"A1": 100, "N1": 5, "N2": 6, "N3": 7})  # 3 of 4 without a past
    refused = bench.gate(new, rules=rules).summary
    [group] = refused.groups
    assert [(r.rule_id, r.outcome) for r in group.dataset_rules] == [("M01", "failed")]
    assert refused.passed == 0 and refused.quarantined == 4


def test_a_month_rule_reads_prev_columns_when_the_store_lacks_the_baseline_month(
    bench: Bench, tmp_path: Path
) -> None:
    """The baseline month is measured for ``last()`` (here: January, gated without any month
    rule) before the lagged rows are kept for the month rules: they are still the lagged batch."""
    rules = tmp_path / "month_rules.csv"
    rules.write_text(
        "rule_id,contributor_type,category,severity,rule,description\n"
        'M01,all,trend,critical,"ColumnValues ""prev_credit_limit"" > 0 with threshold >= 0.5",'
        "Most accounts had a limit last month\n"
        'A02,bank,aggregate,critical,"RowCount >= 0.8 * last()",The extract is not truncated\n'
    )
    row_rules_only = tmp_path / "row_rules.csv"
    row_rules_only.write_text(
        "rule_id,contributor_type,category,severity,rule,description\n"
        'C01,bank,completeness,critical,"IsComplete ""account_id""",Every record names its account\n'
    )
    assert bench.gate(bench.month("B1", "2025-01-31", LIMITS), rules=row_rules_only).summary.passed == 5
    february = bench.gate(bench.month("B1", "2025-02-28", LIMITS), rules=rules).summary
    [group] = february.groups
    assert [(r.rule_id, r.outcome) for r in group.dataset_rules] == [("M01", "passed"), ("A02", "passed")]
    assert february.passed == 5
