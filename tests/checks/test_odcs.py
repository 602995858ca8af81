"""``import_odcs``: ODCS v3 contracts (written in the style of the standard's examples) as check
documents; every entry either mapped or named, and the mapped ones judging rows as ODCS defines
them (through ``export_dqdl`` and ``assay.dqdl.evaluate``, against DuckDB on the same rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from assay.dqdl import evaluate, parse
from assay.errors import ConfigError
from assay.platform.checks.document import parse_document
from assay.platform.checks.export import export_dqdl
from assay.platform.checks.odcs import ALIASES, OPERATORS, SEVERITIES, import_odcs

TRADES = """
apiVersion: v3.1.0
kind: DataContract
id: 7b1c9a52-trades
name: payments
version: 2.1.0
status: active
domain: payments
description:
  purpose: Executed trades, one row per fill, for settlement and fee reporting.
team:
  name: payments-data
tags: [finance, pii]
servers:
  - server: lake-prod
    type: s3
    location: s3://payments-lake/trades/
    format: parquet
  - server: dev
    type: local
    path: trades.parquet
    format: parquet
schema:
  - name: trades
    physicalName: trades_v2
    physicalType: table
    quality:
      - id: trades_volume
        metric: rowCount
        mustBeBetween: [3, 1000]
        dimension: completeness
        severity: error
        schedule: 0 7 * * *
        scheduler: cron
      - id: one_fill_per_venue_trade
        metric: duplicateValues
        mustBe: 0
        arguments:
          properties: [trade_id, venue]
        dimension: uniqueness
      - id: settles_after_execution
        type: sql
        query: SELECT COUNT(*) FROM {object} WHERE settled_at < executed_at
        mustBe: 0
        severity: critical
        description: A trade never settles before it was executed.
        dimension: consistency
        schedule: 0 7 * * *
      - id: fee_ceiling
        type: sql
        query: select max(fee) from trades_v2
        mustBeLessThan: 100
        businessImpact: operational
      - type: text
        description: Fees are booked in the trade's currency.
    properties:
      - name: trade_id
        logicalType: string
        quality:
          - metric: nullValues
            mustBe: 0
            severity: blocker
            dimension: completeness
      - name: customer_id
        logicalType: string
        quality:
          - id: customer_mostly_known
            metric: nullValues
            mustBeLessThan: 30
            unit: percent
            severity: warning
      - name: currency
        logicalType: string
        quality:
          - id: known_currency
            metric: invalidValues
            arguments:
              validValues: [EUR, USD, GBP]
            mustBe: 0
            dimension: conformity
      - name: venue
        logicalType: string
        quality:
          - id: known_venue_mostly
            metric: invalidValues
            arguments:
              validValues: [XETR, XLON, XNYS]
            mustBeLessOrEqualTo: 20
            unit: percent
      - name: fee
        logicalType: number
        quality:
          - id: fee_missing
            metric: missingValues
            arguments:
              missingValues: [null, -1]
            mustBeLessThan: 2
          - id: fee_missing_share
            metric: missingValues
            arguments:
              missingValues: [null]
            mustBeLessThan: 5
            unit: percent
      - name: iban
        logicalType: string
        quality:
          - id: iban_shape
            metric: invalidValues
            arguments:
              pattern: '^[A-Z]{2}[0-9]{2}[A-Z0-9]{4,30}$'
            mustBe: 0
      - name: email
        logicalType: string
        quality:
          - id: email_rarely_shared
            metric: duplicateValues
            mustBeLessThan: 10
            unit: rows
          - id: email_soda
            type: custom
            engine: soda
            implementation: |
              type: invalid_percent
              valid format: email
              must_be_less_than: 1
      - name: settled_at
        logicalType: timestamp
      - name: executed_at
        logicalType: timestamp
"""

ORDERS = """
version: 1.0.0
apiVersion: v3.0.2
kind: DataContract
id: adventureworks-sales
status: active
servers:
  - server: warehouse
    type: postgres
    host: db.internal
    port: 5433
    database: adventureworks
    schema: sales
schema:
  - name: salesorderheader
    quality:
      - rule: rowCount
        mustBeGreaterThan: 0
        severity: info
    properties:
      - name: salesorderid
        quality:
          - rule: duplicateCount
            mustBe: 0
            severity: P1
      - name: status
        physicalName: order_status
        quality:
          - rule: validValues
            validValues: [1, 2, 3, 4, 5, 6]
            mustBeLessOrEqualTo: 0
          - rule: nullCheck
            mustBeGreaterThan: 0
            mustBeLessThan: 3
      - name: totaldue
        quality:
          - rule: freshness
            mustBeLessThan: 3
  - name: salesorderdetail
    quality:
      - rule: rowCount
        mustBeGreaterThan: 0
"""


def _expectations(text: str) -> dict[str, dict[str, Any]]:
    document = yaml.safe_load(text)
    return {e.pop("id"): e for e in document["expectations"]}


def test_a_contract_with_every_kind_of_entry_maps_what_has_an_equivalent() -> None:
    result = import_odcs(TRADES, filename="trades.odcs.yaml")
    document = parse_document(result.text)
    assert document.dataset.name == "payments.trades"
    assert document.dataset.source.path == "trades.parquet"  # the local server; s3 is not a source
    assert document.dataset.owners.team == "payments-data"
    assert document.dataset.tags == ("finance", "pii")
    assert document.profiles[0].schedule == "0 7 * * *"
    expectations = _expectations(result.text)
    assert expectations == {
        "trades_volume": {
            "metric": "contract.row_count",
            "expect": "between 3 and 1000",
            "severity": "error",
            "description": "dimension: completeness",
        },
        "one_fill_per_venue_trade": {
            "rule": 'IsUnique "trade_id" "venue"',
            "severity": "error",
            "description": "dimension: uniqueness",
        },
        "settles_after_execution": {
            "metric": "contract.settles_after_execution_count",
            "expect": "= 0",
            "severity": "critical",
            "description": "A trade never settles before it was executed. (dimension: consistency)",
        },
        "fee_ceiling": {
            "rule": 'CustomSql "SELECT MAX(`fee`) FROM `primary`" < 100',
            "severity": "error",
            "description": "business impact: operational",
        },
        "trade_id-null-values": {
            "metric": "contract.null_count(trade_id)",
            "expect": "= 0",
            "severity": "critical",
            "description": "dimension: completeness",
        },
        "customer_mostly_known": {
            "metric": "contract.null_rate(customer_id)",
            "expect": "< 0.3",
            "severity": "warning",
        },
        "known_currency": {
            "metric": "contract.known_currency_count",
            "expect": "= 0",
            "severity": "error",
            "description": "dimension: conformity",
        },
        "known_venue_mostly": {
            "rule": 'ColumnValues "venue" in ["XETR","XLON","XNYS",NULL] with threshold >= 0.8',
            "severity": "error",
        },
        "fee_missing": {"metric": "contract.fee_missing_count", "expect": "< 2", "severity": "error"},
        "iban_shape": {"metric": "contract.iban_shape_count", "expect": "= 0", "severity": "error"},
    }
    conditions = {
        m["count_where"]["name"]: m["count_where"]["condition"]
        for m in yaml.safe_load(result.text)["profiles"][0]["metrics"]
        if isinstance(m, dict) and "count_where" in m
    }
    assert conditions == {
        "settles_after_execution_count": "`settled_at` < `executed_at`",
        "known_currency_count": "NOT `currency` IS NULL AND NOT `currency` IN ('EUR', 'USD', 'GBP')",
        "fee_missing_count": "`fee` IS NULL OR `fee` IN (-1)",
        "iban_shape_count": "NOT `iban` IS NULL AND NOT `iban` RLIKE '^[A-Z]{2}[0-9]{2}[A-Z0-9]{4,30}$'",
    }


def test_every_unsupported_entry_is_named_in_the_result_and_at_the_top_of_the_document() -> None:
    result = import_odcs(TRADES, filename="trades.odcs.yaml")
    assert [item.split(":")[0] for item in result.unsupported] == [
        "schema object entry (Fees are booked in the trade's currency.)",
        "property 'fee' entry 'fee_missing_share'",
        "property 'email' entry 'email_rarely_shared'",
        "property 'email' entry 'email_soda'",
    ]
    assert "type text is prose" in result.unsupported[0]
    assert "missingValues in percent" in result.unsupported[1]
    assert "duplicateValues with a bound other than 0" in result.unsupported[2]
    assert "type custom (engine soda)" in result.unsupported[3]
    header = result.text.split("apiVersion: assay/v1")[0]
    for item in result.unsupported:
        assert f"#   - {' '.join(item.split())}" in header


def test_service_levels_are_named_as_not_imported() -> None:
    """ODCS ``slaProperties`` (latency, retention) were dropped without a word."""
    contract = (
        TRADES + "slaProperties:\n  - property: latency\n    value: 4\n    unit: d\n  - property: retention\n"
    )
    result = import_odcs(contract, filename="trades.odcs.yaml")
    assert [item for item in result.unsupported if item.startswith("slaProperties")] == [
        "slaProperties 'latency' (4 d): a service level, not a quality entry; write it as an expectation",
        "slaProperties 'retention': a service level, not a quality entry; write it as an expectation",
    ]
    assert "#   - slaProperties 'latency' (4 d)" in result.text.split("apiVersion: assay/v1")[0]


def test_a_v3_0_contract_with_rule_names_a_postgres_server_and_two_objects() -> None:
    result = import_odcs(ORDERS, filename="orders.odcs.yaml")
    document = parse_document(result.text)
    assert document.dataset.name == "adventureworks-sales.salesorderheader"
    postgres = document.dataset.source.postgres
    assert postgres is not None
    assert (postgres.url, postgres.table) == (
        "postgresql://db.internal:5433/adventureworks",
        "sales.salesorderheader",
    )
    assert _expectations(result.text) == {
        "salesorderheader-row-count": {
            "metric": "contract.row_count",
            "expect": "> 0",
            "severity": "warning",
        },
        "salesorderid-duplicate-values": {"rule": 'IsUnique "salesorderid"', "severity": "error"},
        "order_status-invalid-values": {
            "metric": "contract.order_status_invalid_values_count",
            "expect": "<= 0",
            "severity": "error",
        },
        "order_status-null-values": {
            "metric": "contract.null_count(order_status)",
            "expect": "between 0 and 3",
            "severity": "error",
        },
    }
    assert [item.split(":")[0] for item in result.unsupported] == [
        "schema object 'salesorderdetail'",
        "property 'salesorderid' entry",
        "property 'totaldue' entry",
    ]
    assert "severity 'P1' is not known; read as error" in result.unsupported[1]
    assert "library metric 'freshness' has no assay equivalent" in result.unsupported[2]
    other = import_odcs(ORDERS, filename="orders.odcs.yaml", schema="salesorderdetail")
    assert parse_document(other.text).dataset.name == "adventureworks-sales.salesorderdetail"


@pytest.mark.parametrize(
    ("server", "source"),
    [
        (
            {"server": "w", "type": "duckdb", "database": "wh.duckdb"},
            {"duckdb": {"path": "wh.duckdb", "table": "main.t"}},
        ),
        (
            {"server": "w", "type": "postgresql", "host": "h", "database": "d"},
            {"postgres": {"url": "postgresql://h:5432/d", "table": "public.t"}},
        ),
        ({"server": "w", "type": "local", "path": "data/*.csv", "format": "csv"}, {"path": "data/*.csv"}),
        ({"server": "w", "type": "snowflake", "account": "a", "database": "d"}, {"path": "TODO"}),
    ],
)
def test_servers_map_to_the_source_kinds_assay_reads(server: dict[str, Any], source: dict[str, Any]) -> None:
    contract = {
        "apiVersion": "v3.1.0",
        "kind": "DataContract",
        "id": "c",
        "servers": [server],
        "schema": [{"name": "t", "quality": [{"metric": "rowCount", "mustBeGreaterThan": 0}]}],
    }
    result = import_odcs(yaml.safe_dump(contract), filename="c.yaml")
    assert yaml.safe_load(result.text)["dataset"]["source"] == source
    placeholder = source == {"path": "TODO"}
    assert any(item.startswith("servers: no server maps") for item in result.unsupported) is placeholder


def test_the_tables_of_the_module_cover_the_standard() -> None:
    assert set(OPERATORS) >= {
        "mustBe",
        "mustNotBe",
        "mustBeGreaterThan",
        "mustBeGreaterOrEqualTo",
        "mustBeLessThan",
        "mustBeLessOrEqualTo",
        "mustBeBetween",
        "mustNotBeBetween",
    }
    assert set(SEVERITIES.values()) == {"critical", "error", "warning"}
    assert set(ALIASES.values()) <= {
        "nullValues",
        "missingValues",
        "invalidValues",
        "duplicateValues",
        "rowCount",
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("apiVersion: [", "c.yaml:1:14: not valid YAML"),
        ("- a\n- b\n", "an ODCS contract is a YAML mapping"),
        ("apiVersion: v2.2.0\nkind: DataContract\n", "apiVersion 'v2.2.0' is not ODCS v3"),
        ("apiVersion: v3.1.0\nkind: DataProduct\n", "kind is 'DataProduct', not DataContract"),
        ("apiVersion: v3.1.0\nkind: DataContract\nid: x\n", "no schema objects"),
    ],
)
def test_what_is_not_an_odcs_v3_contract_is_a_config_error(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        import_odcs(text, filename="c.yaml")


# --- the imported document judges rows as ODCS defines its metrics ------------------------------------

ROWS = {
    "trade_id": ["t1", "t2", "t3", "t4", "t5", "t6"],
    "customer_id": ["c1", None, "c3", "c4", None, "c6"],
    "currency": ["EUR", "USD", "GBP", None, "EUR", "JPY"],
    "venue": ["XETR", "XLON", "XNYS", "XETR", "BATS", None],
    "fee": [1.5, None, -1.0, 2.0, 3.0, 99.0],
    "iban": [
        "DE89370400440532013000",
        "GB29NWBK60161331926819",
        None,
        "DE12",
        "FR7630006000011234567890189",
        "NL91ABNA0417164300",
    ],
    "email": ["a@x.com", "b@x.com", "a@x.com", None, "c@x.com", "d@x.com"],
    "settled_at": pa.array([1, 5, 9, 10, 20, 30], pa.timestamp("s")),
    "executed_at": pa.array([0, 4, 8, 11, 19, 29], pa.timestamp("s")),
}

# ODCS's definitions, computed directly on the same rows (constant SQL).
ODCS_DIRECT = {
    "trades_volume": "SELECT count(*) > 3 AND count(*) < 1000 FROM t",
    "one_fill_per_venue_trade": "SELECT count(*) = count(DISTINCT (trade_id, venue)) FROM t",
    "settles_after_execution": "SELECT count(*) FILTER (WHERE settled_at < executed_at) = 0 FROM t",
    "fee_ceiling": "SELECT max(fee) < 100 FROM t",
    "trade_id-null-values": "SELECT count(*) FILTER (WHERE trade_id IS NULL) = 0 FROM t",
    "customer_mostly_known": (
        "SELECT count(*) FILTER (WHERE customer_id IS NULL) * 100.0 / count(*) < 30 FROM t"
    ),
    "known_currency": "SELECT count(*) FILTER (WHERE currency NOT IN ('EUR', 'USD', 'GBP')) = 0 FROM t",
    "known_venue_mostly": (
        "SELECT count(*) FILTER (WHERE venue NOT IN ('XETR', 'XLON', 'XNYS')) * 100.0 / count(*) <= 20 FROM t"
    ),
    "fee_missing": "SELECT count(*) FILTER (WHERE fee IS NULL OR fee = -1) < 2 FROM t",
    "iban_shape": (
        "SELECT count(*) FILTER (WHERE NOT regexp_matches(iban, '^[A-Z]{2}[0-9]{2}[A-Z0-9]{4,30}$')) = 0 "
        "FROM t"
    ),
}


@pytest.mark.parametrize("variant", ["as-is", "cleaned"])
def test_imported_then_exported_rules_judge_rows_as_odcs_defines_them(variant: str, tmp_path: Path) -> None:
    rows = dict(ROWS)
    if variant == "cleaned":  # the same table with every problem fixed: the outcomes flip
        rows.update(
            customer_id=["c1", "c2", "c3", "c4", None, "c6"],
            currency=["EUR", "USD", "GBP", None, "EUR", "USD"],
            venue=["XETR", "XLON", "XNYS", "XETR", "BATS", None],
            fee=[1.5, None, 1.0, 2.0, 3.0, 9.0],
            iban=[v if v != "DE12" else None for v in ROWS["iban"]],
            settled_at=pa.array([1, 5, 9, 12, 20, 30], pa.timestamp("s")),
        )
    path = tmp_path / "trades.parquet"
    pq.write_table(pa.table(rows), path)
    ruleset = parse(export_dqdl(parse_document(import_odcs(TRADES, filename="trades.odcs.yaml").text)))
    exported = {r.labels["expectation"]: r.outcome == "Passed" for r in evaluate(ruleset, str(path)).rules}
    con = duckdb.connect()
    con.read_parquet(str(path)).create_view("t")
    direct = {eid: bool((con.execute(sql).fetchone() or (None,))[0]) for eid, sql in ODCS_DIRECT.items()}
    assert exported == direct
    # the rows as they are break some entries; the cleaned rows break none
    assert (False in direct.values()) is (variant == "as-is")
