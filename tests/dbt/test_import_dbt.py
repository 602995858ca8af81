"""``assay check import-dbt``: tests/dbt/manifest.json (a dbt 1.8 manifest of a two-model shop,
written by hand in the shape dbt-duckdb writes, each test with the ``compiled_code`` dbt runs)
turned into check documents, which ``assay check run`` then runs against a real DuckDB database.

The oracle is dbt's own query: each test's ``compiled_code`` is run on the same database, and dbt
fails a test when it returns a row. On a clean shop (whose NULLs are the edges where the tests
differ: a NULL status is accepted, a NULL channel is not in the set) every converted test passes
in both; on a shop with one planted violation per test every converted test fails in both.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from _invoke import assay

HERE = Path(__file__).parent
MANIFEST = HERE / "manifest.json"
TEMPLATE = "duckdb:../shop.duckdb#{schema}.{alias}"

ORDERS = (
    "order_id INT, customer_id INT, status VARCHAR, priority INT, amount DOUBLE, email VARCHAR, "
    "channel VARCHAR, country VARCHAR"
)
CLEAN_ORDERS = [
    (1, 10, "placed", 1, 10.0, "a@x.com", "web", "US"),
    (2, 11, "shipped", 2, 0.0, "b@x.com", "store", "FR"),
    (
        3,
        12,
        None,
        3,
        None,
        None,
        "web",
        "DE",
    ),  # NULL status accepted; amount NULL but status NULL is filtered out
    (4, 10, "returned", 1, 1000.0, "c@y.org", "store", "GB"),  # 1000 is within 0..1000 (inclusive)
    (
        5,
        13,
        "placed",
        None,
        5.5,
        "d@z.net",
        "web",
        None,
    ),  # NULL priority accepted, NULL country's length passes
    (6, 99, "shipped", 2, 999.99, "e@x.com", "store", "US"),
]
DIRTY_ORDERS = [
    *CLEAN_ORDERS,
    (None, 10, "lost", 7, None, "no-at-sign", None, "USA"),  # one violation of each column test
    (2, 11, "placed", 1, -1.0, "f@x.com", "web", "US"),  # a second order 2, a negative amount
    (9, 10, "placed", 1, 1.0, "g@x.com", "web", "US"),
    (10, 10, "placed", 1, 1.0, "h@x.com", "web", "US"),  # 10 rows: more than 8
]
CUSTOMERS = "id INT, email VARCHAR, active BOOLEAN, segment VARCHAR"
CLEAN_CUSTOMERS = [
    (10, "a@x.com", True, "gold"),
    (11, "b@x.com", True, "silver"),
    (12, None, False, "bronze"),  # inactive: its NULL email is outside row_condition
    (13, "dup@x.com", False, "gold"),
    (14, "dup@x.com", False, "silver"),  # inactive duplicates are outside row_condition
    (15, "g@x.com", True, None),  # a NULL segment is no distinct value
]
DIRTY_CUSTOMERS = [
    *CLEAN_CUSTOMERS,
    (11, "a@x.com", True, "platinum"),  # id 11 twice, active a@x.com twice, a fourth segment
    (None, None, True, "gold"),  # NULL id, active NULL email
]


def _database(path: Path, orders: list[tuple[Any, ...]], customers: list[tuple[Any, ...]]) -> None:
    with duckdb.connect(str(path)) as con:
        for table, columns, rows in (("orders", ORDERS, orders), ("customers", CUSTOMERS, customers)):
            con.execute(f"CREATE TABLE {table} ({columns})")
            marks = ", ".join("?" * len(rows[0]))
            con.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)


def _dbt_fails(database: Path) -> dict[str, bool]:
    """dbt's verdict on each test: its compiled query returned a row."""
    manifest = json.loads(MANIFEST.read_text())
    verdicts = {}
    with duckdb.connect(str(database), read_only=True) as con:
        for node in manifest["nodes"].values():
            if node["resource_type"] == "test":
                (count,) = con.execute(
                    f"select count(*) from ({node['compiled_code']}) dbt_internal_test"
                ).fetchone()
                verdicts[node["name"]] = count != 0
    return verdicts


def _run(workspace: Path, document: str, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    capsys.readouterr()
    out = workspace / f"{document}.run.json"
    code = assay(
        "check",
        "run",
        str(workspace / "checks" / f"{document}.yaml"),
        "--workspace",
        str(workspace),
        "--at",
        "2026-12-05",
        "--now",
        "2026-12-05T12:00:00Z",
        "--json",
        str(out),
    )
    assert code == 0, capsys.readouterr()
    return {o["expectation"]: o["outcome"] for o in json.loads(out.read_text())["outcomes"]}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The import of the manifest into a scratch folder, as its JSON report."""
    folder = tmp_path_factory.mktemp("import")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        code = assay(
            "check",
            "import-dbt",
            str(MANIFEST),
            "--source-template",
            TEMPLATE,
            "--out",
            str(folder / "checks"),
            "--json",
        )
    assert code == 0
    return {"folder": folder, **json.loads(printed.getvalue())}


def test_the_manifest_becomes_one_document_per_model_and_names_every_test_it_cannot_convert(
    report: dict[str, Any],
) -> None:
    assert [(d["model"], d["dataset"], d["expectations"]) for d in report["documents"]] == [
        ("orders", "main.orders", 10),
        ("customers", "main.customers", 5),
    ]
    assert report["tests"] == 19
    not_converted = {(i["test"], i["model"]): i["reason"] for i in report["not_converted"]}
    assert set(not_converted) == {
        ("relationships_orders_customer_id__id__ref_customers_", "orders"),
        ("dbt_utils_expression_is_true_orders_amount_0", "orders"),
        ("assert_no_orders_from_the_future", "orders"),
        ("not_null_customers_segment", "customers"),
    }
    assert (
        "ReferentialIntegrity"
        in not_converted[("relationships_orders_customer_id__id__ref_customers_", "orders")]
    )
    assert "error_if '>10'" in not_converted[("not_null_customers_segment", "customers")]
    assert "singular test" in not_converted[("assert_no_orders_from_the_future", "orders")]
    converted = {c["test"] for c in report["converted"]}
    assert len(converted) == 15 and not converted & {t for t, _ in not_converted}
    # the model's YAML says who owns it, what it is, how it is tagged; a warn test is a warning
    orders = (report["folder"] / "checks" / "orders.yaml").read_text()
    assert "team: commerce-data" in orders and "One row per order placed" in orders and "- finance" in orders
    assert "filter: status != 'returned'" in orders
    for test, _ in not_converted:
        if test != "not_null_customers_segment":
            assert test in orders  # named at the top of its document too


def test_the_documents_validate(report: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    for doc in report["documents"]:
        assert assay("check", "validate", doc["file"]) == 0, capsys.readouterr()


@pytest.mark.parametrize("state", ["clean", "dirty"])
def test_each_converted_test_fails_exactly_where_dbt_s_query_finds_rows(
    report: dict[str, Any], state: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "checks").mkdir(parents=True)
    for doc in report["documents"]:
        (workspace / "checks" / Path(doc["file"]).name).write_text(doc["text"])
    if state == "clean":
        _database(workspace / "shop.duckdb", CLEAN_ORDERS, CLEAN_CUSTOMERS)
    else:
        _database(workspace / "shop.duckdb", DIRTY_ORDERS, DIRTY_CUSTOMERS)
    dbt = _dbt_fails(workspace / "shop.duckdb")
    outcomes = {**_run(workspace, "orders", capsys), **_run(workspace, "customers", capsys)}
    expectation = {c["test"]: c["expectation"] for c in report["converted"]}
    assay_fails = {test: outcomes[eid] == "failed" for test, eid in expectation.items()}
    assert {test: dbt[test] for test in expectation} == assay_fails
    assert set(outcomes.values()) == {"passed" if state == "clean" else "failed"}


def test_a_model_with_no_rows_fails_only_the_row_count_as_dbt_does(
    report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """dbt's queries find no failing row in an empty table, except the row count's (0 is not
    between 5 and 8): a count of rows where a condition holds is 0 there, not "no value"."""
    workspace = tmp_path / "ws"
    (workspace / "checks").mkdir(parents=True)
    for doc in report["documents"]:
        (workspace / "checks" / Path(doc["file"]).name).write_text(doc["text"])
    with duckdb.connect(str(workspace / "shop.duckdb")) as con:
        con.execute(f"CREATE TABLE orders ({ORDERS})")
        con.execute(f"CREATE TABLE customers ({CUSTOMERS})")
    dbt = _dbt_fails(workspace / "shop.duckdb")
    outcomes = _run(workspace, "orders", capsys)
    expectation = {c["test"]: c["expectation"] for c in report["converted"] if c["model"] == "orders"}
    assay_fails = {test: outcomes[eid] == "failed" for test, eid in expectation.items()}
    assert {test: dbt[test] for test in expectation} == assay_fails
    assert [e for e, outcome in outcomes.items() if outcome != "passed"] == [
        "dbt_expectations_expect_table_row_count_to_be_between_orders__8__5"
    ]
