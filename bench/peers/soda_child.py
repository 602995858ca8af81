"""Soda Core 4.28 measures the profile's metrics on the workload (a child of bench/profile.py).

    bench/out/venvs/soda/bin/python bench/peers/soda_child.py --data FILE --spec SPEC.json

Runs in Soda's own virtual environment, with ``SODA_CORE_TELEMETRY_ENABLED=false`` (offline,
telemetry retries add about 7 s). The recipe of PEERS.md: ``verify_contract_locally`` on a DuckDB
connection holding a view on ``read_parquet`` (``DuckDBDataSourceImpl.from_existing_cursor``),
with one contract:

- ``row_count``: the row count;
- per column ``missing``: null count and rate;
- per number and date a ``metric`` check ``approx_count_distinct(column)``, as the profile's
  HyperLogLog estimate; per text column ``duplicate``, whose exact COUNT(DISTINCT) gives the
  distinct count (non-null rows - duplicates);
- per number ``aggregate`` checks ``min`` and ``max``; for the date, ``metric`` checks giving days
  since 1970-01-01 (Soda's aggregate checks refuse a result that is not a number).

Soda has no value counts, group-by or top-k metric in contracts, so it measures less than the other
contenders. The nearest check, ``invalid`` with the column's accepted values, is left out: with
s1000's 1000 values in the contract, Soda 4.28 spends about 13 s parsing the contract (ruamel.yaml
deep copies), whatever the number of rows.

The timed span runs from connecting to DuckDB to the verification result; the contract file is
written before. Thresholds are loose: the checks measure, and the script reports what they saw.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb

# bench/ goes after the standard library and site-packages: its profile.py must not hide the
# standard library's profile module from the peer's packages.
sys.path.append(str(Path(__file__).resolve().parents[1]))
from _common import Span, report

EPOCH = date(1970, 1, 1)
ANYTHING = {"must_be_greater_than_or_equal": -1e18}


def quoted(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


def contract(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The contract, as the document its YAML file holds (JSON is YAML)."""
    columns: dict[str, list[dict[str, Any]]] = {}
    for column in (*spec["numbers"], *spec["dates"], *spec["texts"]):
        columns[column] = [{"missing": {"threshold": {"metric": "percent", "must_be_less_than": 10}}}]
    for column in (*spec["numbers"], *spec["dates"]):
        expression = f"approx_count_distinct({quoted(column)})"
        columns[column].append(
            {"metric": {"qualifier": "distinct", "expression": expression, "threshold": ANYTHING}}
        )
    for column in spec["numbers"]:
        for function in ("min", "max"):
            check = {"function": function, "qualifier": function, "threshold": ANYTHING}
            columns[column].append({"aggregate": check})
    for column in spec["dates"]:
        for function in ("min", "max"):
            expression = f"{function}({quoted(column)}) - DATE '1970-01-01'"
            check = {"qualifier": function, "expression": expression, "threshold": ANYTHING}
            columns[column].append({"metric": check})
    for column in spec["texts"]:
        columns[column].append({"duplicate": {"threshold": {"metric": "percent", "must_be_less_than": 100}}})
    return {
        "dataset": "duck/main/data",
        "checks": [{"row_count": {"threshold": {"must_be_greater_than": 0}}}],
        "columns": [{"name": name, "checks": checks} for name, checks in columns.items()],
    }


def observed(check: Any, seen: Mapping[str, Any], value: Any, dates: set[str]) -> dict[str, Any]:
    """What one check result gives, under the metric names bench/profile.py compares."""
    column = check.column_name
    if check.type == "row_count":
        return {"rows": value}
    if check.type == "missing":
        return {
            f"{column}.nulls": seen["missing_count"],
            f"{column}.null_rate": seen["missing_percent"] / 100,
        }
    if check.type == "duplicate":
        distinct = seen["check_rows_tested"] - seen["missing_count"] - seen["duplicate_count"]
        return {f"{column}.distinct": distinct}
    if check.type == "aggregate":
        return {f"{column}.{check.qualifier}": value}
    if check.type == "metric" and check.qualifier == "distinct":
        return {f"{column}.distinct": value}
    if check.type == "metric" and column in dates:
        return {f"{column}.{check.qualifier}": (EPOCH + timedelta(days=int(value))).isoformat()}
    raise ValueError(f"no reading for {check.type} {check.qualifier} on {column}")


def measure(data: Path, spec: Mapping[str, Any]) -> dict[str, Any]:
    from soda_core.contracts.api.verify_api import verify_contract_locally
    from soda_duckdb.common.data_sources.duckdb_data_source import DuckDBDataSourceImpl

    with tempfile.TemporaryDirectory(prefix="soda-bench-") as folder:
        path = Path(folder) / "contract.yml"
        path.write_text(json.dumps(contract(spec), indent=2))
        with Span() as span:
            con = duckdb.connect()
            con.read_parquet(str(data)).create_view("data")
            source = DuckDBDataSourceImpl.from_existing_cursor(con, name="duck")
            session = verify_contract_locally(data_sources=[source], contract_file_path=str(path))
            con.close()
    if session.has_errors:
        raise SystemExit(session.get_errors_str())
    values: dict[str, Any] = {}
    checks = 0
    for verification in session.contract_verification_results:
        for result in verification.check_results:
            checks += 1
            seen = result.diagnostic_metric_values
            values.update(observed(result.check, seen, result.threshold_value, set(spec["dates"])))
    return {**span.measurements(), "checks": checks, "values": values}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--spec", type=Path, required=True, help="the columns and accepted values (JSON)")
    args = parser.parse_args()
    # Offline, Soda's telemetry retries its sends for seconds; it must be off before Soda loads.
    os.environ.setdefault("SODA_CORE_TELEMETRY_ENABLED", "false")
    report(measure(args.data, json.loads(args.spec.read_text())))


if __name__ == "__main__":
    main()
