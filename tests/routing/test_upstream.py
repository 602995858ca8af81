"""``dataset.upstream``: the datasets a dataset reads, declared in its check document and
validated like the rest of it (each mistake with its line and column)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _invoke import assay
from assay.platform.checks.document import load_document

HEAD = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: silver.orders
  source: {path: "orders.csv"}
"""
TAIL = """profiles:
  - {id: daily, metrics: [row_count]}
expectations:
  - {id: volume, metric: daily.row_count, expect: "> 0"}
"""


def test_a_document_declares_its_upstream_datasets(tmp_path: Path) -> None:
    path = tmp_path / "orders.yaml"
    path.write_text(HEAD + "  upstream: [bronze.orders, bronze.customers]\n" + TAIL)
    assert load_document(path).dataset.upstream == ("bronze.orders", "bronze.customers")
    path.write_text(HEAD + TAIL)
    assert load_document(path).dataset.upstream == ()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("  upstream: bronze.orders\n", "6:13: dataset.upstream: Input should be a valid list"),
        ("  upstream: [bronze.orders, 7]\n", "6:29: dataset.upstream.1: Input should be a valid string"),
        ("  upstream: [silver.orders]\n", "6:13: dataset.upstream: silver.orders is the dataset itself"),
        ("  upstream: [a, a]\n", "6:13: dataset.upstream: a is named twice"),
        ('  upstream: ["a\\u202eb"]\n', "6:13: dataset.upstream: dataset name 'a\\u202eb' holds U+202E"),
    ],
)
def test_a_wrong_upstream_is_named_with_its_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str
) -> None:
    path = tmp_path / "orders.yaml"
    path.write_text(HEAD + line + TAIL)
    assert assay("check", "validate", str(path)) == 2
    err = capsys.readouterr().err
    assert f"{path}:{message}" in err, err


def test_a_dbt_import_declares_what_each_model_is_built_from(tmp_path: Path) -> None:
    """One model of the upstream: a dbt model's ``depends_on`` that is a model, seed or snapshot
    becomes its document's ``dataset.upstream`` (a source, which is not imported, does not)."""
    import json

    from assay.platform.checks.dbt.documents import SourceTemplate, import_dbt
    from assay.platform.checks.dbt.manifest import parse_manifest

    def model(name: str, *depends: str) -> dict[str, object]:
        return {
            "resource_type": "model",
            "name": name,
            "schema": "shop",
            "depends_on": {"nodes": list(depends)},
        }

    def not_null(name: str) -> dict[str, object]:
        return {
            "resource_type": "test",
            "name": f"not_null_{name}_id",
            "attached_node": f"model.p.{name}",
            "column_name": "id",
            "test_metadata": {"name": "not_null", "kwargs": {"column_name": "id"}},
            "config": {"severity": "ERROR"},
        }

    nodes = {
        "model.p.stg_orders": model("stg_orders", "source.p.raw.orders"),
        "model.p.orders": model("orders", "model.p.stg_orders", "model.p.stg_orders"),
        "test.p.a": not_null("stg_orders"),
        "test.p.b": not_null("orders"),
    }
    version = "https://schemas.getdbt.com/dbt/manifest/v12.json"
    text = json.dumps({"metadata": {"dbt_schema_version": version}, "nodes": nodes})
    result = import_dbt(
        parse_manifest(text, filename="manifest.json"), SourceTemplate.parse("data/{alias}.csv")
    )
    written = {doc.dataset: doc.text for doc in result.documents}
    assert "upstream" not in written["shop.stg_orders"]
    assert "  upstream:\n  - shop.stg_orders\n" in written["shop.orders"]
    path = tmp_path / "orders.yaml"
    path.write_text(written["shop.orders"])
    assert load_document(path).dataset.upstream == ("shop.stg_orders",)
