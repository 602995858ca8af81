"""Great Expectations 1.24.1 measures the profile's metrics on the workload (a child of bench/profile.py).

    bench/out/venvs/gx/bin/python bench/peers/gx_child.py --data FILE --spec SPEC.json

Runs in GX's own virtual environment.
The recipe of PEERS.md: a SQL datasource on a DuckDB database file holding a view on
``read_parquet``, and ``duckdb`` added to GX's persisted-connection dialects. One suite, run once:

- ``expect_table_row_count_to_be_between``: the row count;
- per column ``expect_column_values_to_not_be_null`` (null count and rate) and
  ``expect_column_unique_value_count_to_be_between`` (GX's distinct count, COUNT(DISTINCT): exact,
  as GX has no approximate one);
- per number and date ``expect_column_min_to_be_between`` and ``expect_column_max_to_be_between``;
- per low-cardinality text column ``expect_column_most_common_value_to_be_in_set``, which computes
  the column's value counts (a GROUP BY) and reports their mode: the nearest GX has to a top 10.

The timed span runs from creating the database file to the validation result. The expectations
have no bounds (or accept every value): they measure, and the script reports what they observed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
from datetime import date
from pathlib import Path
from typing import Any

import duckdb

# bench/ goes after the standard library and site-packages: its profile.py must not hide the
# standard library's profile module from the peer's packages.
sys.path.append(str(Path(__file__).resolve().parents[1]))
from _common import Span, report


class _DuckDBDialect(str):
    """``duckdb`` as GX's persisted-connection check needs it: a string that also has ``.value``.

    GX 1.24 closes its SQLAlchemy connection before DuckDB's results are read unless the dialect
    is listed in ``_PERSISTED_CONNECTION_DIALECTS``; its check there reads ``dialect.value``
    (the list holds ``GXSqlDialect`` members, and GX has none for DuckDB), so a plain ``"duckdb"``
    fails with AttributeError.
    """

    @property
    def value(self) -> str:
        return str(self)


def expectations(spec: Mapping[str, Any]) -> Iterator[Any]:
    import great_expectations.expectations as gxe

    yield gxe.ExpectTableRowCountToBeBetween(min_value=1)
    for column in (*spec["numbers"], *spec["dates"], *spec["texts"]):
        yield gxe.ExpectColumnValuesToNotBeNull(column=column, mostly=0.9)
        yield gxe.ExpectColumnUniqueValueCountToBeBetween(column=column)
    for column in (*spec["numbers"], *spec["dates"]):
        yield gxe.ExpectColumnMinToBeBetween(column=column)
        yield gxe.ExpectColumnMaxToBeBetween(column=column)
    for column, accepted in spec["accepted"].items():
        yield gxe.ExpectColumnMostCommonValueToBeInSet(column=column, value_set=accepted)


def observed(kind: str, column: str | None, result: Mapping[str, Any]) -> dict[str, Any]:
    """What one expectation's result gives, under the metric names bench/profile.py compares."""
    if kind == "expect_table_row_count_to_be_between":
        return {"rows": result["observed_value"]}
    if kind == "expect_column_values_to_not_be_null":
        nulls, percent = result["unexpected_count"], result["unexpected_percent"]
        return {f"{column}.nulls": nulls, f"{column}.null_rate": percent / 100}
    if kind == "expect_column_unique_value_count_to_be_between":
        return {f"{column}.distinct": result["observed_value"]}
    if kind in ("expect_column_min_to_be_between", "expect_column_max_to_be_between"):
        value = result["observed_value"]
        return {f"{column}.{kind.split('_')[2]}": value.isoformat() if isinstance(value, date) else value}
    if kind == "expect_column_most_common_value_to_be_in_set":
        return {f"{column}.mode": sorted(result["observed_value"])}
    raise ValueError(f"no reading for {kind}")


def measure(data: Path, spec: Mapping[str, Any]) -> dict[str, Any]:
    import great_expectations as gx
    from great_expectations.execution_engine import sqlalchemy_execution_engine

    persisted = sqlalchemy_execution_engine._PERSISTED_CONNECTION_DIALECTS
    sqlalchemy_execution_engine._PERSISTED_CONNECTION_DIALECTS = (*persisted, _DuckDBDialect("duckdb"))
    source = "'" + str(data).replace("'", "''") + "'"
    with tempfile.TemporaryDirectory(prefix="gx-bench-") as folder:
        database = Path(folder) / "gx.duckdb"
        with Span() as span:
            con = duckdb.connect(str(database))
            con.execute("CREATE VIEW data AS SELECT * FROM read_parquet(" + source + ")")
            con.close()
            context = gx.get_context(mode="ephemeral")
            datasource = context.data_sources.add_sql(name="duck", connection_string=f"duckdb:///{database}")
            batch = datasource.add_table_asset(
                name="data", table_name="data"
            ).add_batch_definition_whole_table("all")
            suite = context.suites.add(gx.ExpectationSuite(name="profile"))
            for expectation in expectations(spec):
                suite.add_expectation(expectation)
            validation = gx.ValidationDefinition(name="profile", data=batch, suite=suite)
            results = context.validation_definitions.add(validation).run()
    values: dict[str, Any] = {}
    for result in results.results:
        config = result.expectation_config
        if result.exception_info.get("raised_exception") or not result.result:
            failure = result.exception_info or "no result"
            raise SystemExit(f"{config.type} {config.kwargs.get('column')}: {failure}")
        values.update(observed(config.type, config.kwargs.get("column"), result.result))
    return {**span.measurements(), "expectations": len(results.results), "values": values}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--spec", type=Path, required=True, help="the columns and accepted values (JSON)")
    args = parser.parse_args()
    # GX sends usage analytics unless told not to; this machine is offline.
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    report(measure(args.data, json.loads(args.spec.read_text())))


if __name__ == "__main__":
    main()
