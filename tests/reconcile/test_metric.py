"""The ``reconcile`` metric kind of a check document: measured through the run's driver, kept
in the store as the load's metrics, judged by expectations, its sample keys the evidence."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from _invoke import assay
from assay.platform.checks.document import DocumentError, load_document
from assay.store import MetricStore
from reconcile._planted import tables

DOC = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: shop.orders
  source: {path: ../source.parquet}
profiles:
  - id: daily
    metrics:
      - row_count
      - reconcile:
          name: vs_target
          target: {path: ../target.parquet}
          key: id
          tolerance: {amount: 0.01}
          samples: 2
expectations:
  - {id: reconciled, metric: daily.vs_target, expect: "= 0"}
  - {id: changed, metric: daily.vs_target(changed), expect: "<= 3"}
  - {id: missing, metric: daily.vs_target(only_in_source), expect: "= 0"}
"""


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    source, target = tables()
    pq.write_table(source, tmp_path / "source.parquet")
    pq.write_table(target, tmp_path / "target.parquet")
    (tmp_path / "checks").mkdir()
    path = tmp_path / "checks" / "orders.yaml"
    path.write_text(DOC)
    return path


def test_a_reconcile_metric_is_measured_stored_and_judged(doc: Path) -> None:
    workspace = doc.parent.parent
    out = workspace / "run.json"
    code = assay(
        "check", "run", str(doc), "--at", "2026-11-01", "--workspace", str(workspace), "--json", str(out)
    )
    payload = json.loads(out.read_text())
    assert code == 0 and payload["state"] == "completed"
    outcomes = {o["expectation"]: o for o in payload["outcomes"]}
    assert outcomes["reconciled"]["outcome"] == "failed" and outcomes["reconciled"]["observed"] == 5
    assert outcomes["changed"]["outcome"] == "passed" and outcomes["changed"]["observed"] == 3
    assert outcomes["missing"]["outcome"] == "failed" and outcomes["missing"]["observed"] == 1
    samples = outcomes["reconciled"]["samples"]
    assert {"difference": "only_in_source", "id": 3} in samples
    assert {"difference": "changed", "id": 6, "columns": "amount"} in samples
    with MetricStore.open(workspace=workspace) as store:
        series = store.metric_series(
            "shop.orders",
            partition="daily",
            names={"vs_target", "vs_target(null_keys)"},
            before=dt.datetime(2026, 11, 2, tzinfo=dt.UTC),
            baseline=False,
        )
    day = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    assert series[("Dataset", "*", "vs_target")] == [(day, 5.0)]
    assert series[("Dataset", "*", "vs_target(null_keys)")] == [(day, 1.0)]


def test_a_reconcile_metric_without_a_key_is_a_document_error(doc: Path) -> None:
    doc.write_text(DOC.replace("          key: id\n", ""))
    with pytest.raises(DocumentError, match="reconcile key"):
        load_document(doc)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("reconcile:\n          name: vs target", "reconcile name 'vs target' is not an id"),
        ("reconcile:\n          name: null_rate", "reconcile name 'null_rate' is a metric kind's name"),
        (
            "count_where: {name: 'big one', condition: 'amount > 9'}",
            "count_where name 'big one' is not an id",
        ),
        (
            "count_where: {name: row_count, condition: 'amount > 9'}",
            "count_where name 'row_count' is a metric",
        ),
        ("count_where: [amount]", "count_where needs {name, condition"),
        ("reconcile: amount", "reconcile needs {name, target, key}"),
    ],
)
def test_a_named_metrics_name_must_be_an_id_of_its_own(doc: Path, entry: str, message: str) -> None:
    """count_where and reconcile entries carry their own name, which keys their metrics: it must be
    an id and not read as a metric kind (one validation for both, platform/checks/document.py)."""
    text = DOC.replace("reconcile:\n          name: vs_target", entry)
    if entry.startswith("count_where") or entry == "reconcile: amount":
        text = text.replace(
            "\n          target: {path: ../target.parquet}\n          key: id\n"
            "          tolerance: {amount: 0.01}\n          samples: 2",
            "",
        )
    doc.write_text(text)
    with pytest.raises(DocumentError, match=re.escape(message)):
        load_document(doc)


def test_a_key_the_tables_lack_is_that_metrics_config_error(doc: Path) -> None:
    doc.write_text(DOC.replace("          key: id\n", "          key: account\n"))
    workspace = doc.parent.parent
    out = workspace / "run.json"
    assay("check", "run", str(doc), "--at", "2026-11-01", "--workspace", str(workspace), "--json", str(out))
    outcomes = {o["expectation"]: o for o in json.loads(out.read_text())["outcomes"]}
    assert outcomes["reconciled"]["outcome"] == "config_error"
    assert "--key account: no such column in the source" in outcomes["reconciled"]["message"]
