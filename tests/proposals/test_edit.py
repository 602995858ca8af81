"""The document editor keeps the author's comments and layout, and never writes a broken document."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.platform.checks.document import load_document, parse_document
from assay.platform.checks.edit import add_expectations, edited_text

SHIPPED = Path(__file__).parents[2] / "src" / "assay" / "demo" / "data" / "trades.yaml"


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    target = tmp_path / "checks" / "trades.yaml"
    target.parent.mkdir()
    shutil.copyfile(SHIPPED, target)
    return target


def test_only_the_added_lines_change(doc: Path) -> None:
    before = doc.read_text()
    diff = add_expectations(
        doc,
        [
            {
                "id": "complete-customer_id",
                "rule": 'IsComplete "customer_id"',
                "profile": "daily",
                "mode": "advisory",
            },
            {"id": "weekday-volume", "metric": "daily.row_count", "expect": "> 0", "history": "same_weekday"},
            {"id": "exec-order", "metric": "daily.late", "expect": "= 0", "by": ["region"]},
        ],
        {"daily": ["row_count", {"count_where": {"name": "late", "condition": "executed_at > settled_at"}}]},
        comments={"complete-customer_id": "proposal 1234abcd, accepted by ana"},
    )
    removed = [x for x in diff.splitlines() if x.startswith("-") and not x.startswith("---")]
    added = [x[1:] for x in diff.splitlines() if x.startswith("+") and not x.startswith("+++")]
    assert removed == []  # every line the author wrote is kept, comments and flow lists included
    kept = iter(doc.read_text().splitlines())
    assert all(line in kept for line in before.splitlines())  # the old text, in order, within the new
    assert "      - count_where: {name: late, condition: executed_at > settled_at}" in added
    assert "  # proposal 1234abcd, accepted by ana" in added
    assert "    by: [region]" in added and "      - row_count" not in added  # declared already
    document = load_document(doc)
    assert (
        document.expectations[-3].mode == "advisory" and document.expectations[-2].history == "same_weekday"
    )


def test_refusals_write_nothing(doc: Path) -> None:
    before = doc.read_text()
    with pytest.raises(ConfigError, match="has an expectation 'fresh' already"):
        add_expectations(doc, [{"id": "fresh", "metric": "daily.row_count", "expect": "> 0"}])
    with pytest.raises(ConfigError, match="unknown metric 'nope'"):
        add_expectations(doc, [{"id": "x", "metric": "daily.nope", "expect": "> 0"}])
    with pytest.raises(ConfigError, match="no profile 'hourly'"):
        add_expectations(doc, [], {"hourly": ["row_count"]})
    with pytest.raises(ConfigError, match="history: applies to metric expectations"):
        add_expectations(doc, [{"id": "y", "rule": "RowCount > 0", "history": "same_weekday"}])
    assert doc.read_text() == before
    assert not list(doc.parent.glob("*.partial"))


def test_documents_of_other_layouts() -> None:
    text = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
    name: t            # four-space mappings
    source: {path: t.csv}
profiles:
-   id: daily
    metrics: [row_count]
"""
    edited = edited_text(text, [{"id": "rows", "metric": "daily.row_count", "expect": "> 0"}])
    assert edited.startswith(text)
    assert (
        edited[len(text) :] == "expectations:\n-   id: rows\n    metric: daily.row_count\n    expect: '> 0'\n"
    )
    parse_document(edited)
