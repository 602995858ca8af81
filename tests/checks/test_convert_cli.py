"""The two command bodies the CLI wires as ``assay check export-dqdl`` and ``assay check
import-odcs``: what they print and write, and a user's mistake as a ConfigError (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.dqdl import parse
from assay.errors import ConfigError
from assay.platform.checks.convert_cli import export_command, import_command
from assay.platform.checks.document import DocumentError, load_document

DOCUMENT = """apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: shop.orders, source: {path: orders.csv}}
profiles:
  - id: daily
    dimensions: [country]
    metrics: [row_count, {null_rate: [email]}]
expectations:
  - {id: volume, metric: daily.row_count, expect: "> 0"}
  - {id: per-country, metric: daily.row_count, by: [country], expect: "> 0"}
  - {id: email, metric: daily.null_rate(email), expect: "<= 0.05"}
"""

CONTRACT = """apiVersion: v3.1.0
kind: DataContract
id: orders
servers: [{server: dev, type: local, path: orders.csv, format: csv}]
schema:
  - name: orders
    quality:
      - {metric: rowCount, mustBeGreaterThan: 0}
      - {type: text, description: Orders are complete by 6am.}
    properties:
      - name: email
        quality: [{metric: nullValues, mustBeLessOrEqualTo: 5, unit: percent}]
"""


def test_export_prints_the_ruleset_or_writes_it_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "orders.yaml"
    doc.write_text(DOCUMENT)
    assert export_command(doc, None) == 0
    printed = capsys.readouterr().out
    assert len(parse(printed).rules or ()) == 2
    out = tmp_path / "out" / "orders.dqdl"
    assert export_command(doc, out) == 0
    assert out.read_text() == printed
    assert not list(out.parent.glob("*.partial"))
    assert capsys.readouterr().out == f"wrote {out}: 2 rule(s), 1 expectation(s) as comments only\n"


def test_import_writes_a_valid_document_and_names_what_it_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = tmp_path / "orders.odcs.yaml"
    contract.write_text(CONTRACT)
    out = tmp_path / "orders.yaml"
    assert import_command(contract, out) == 0
    captured = capsys.readouterr()
    assert captured.out == f"wrote {out}: 2 expectation(s), 1 entries not imported\n"
    assert captured.err.startswith(
        f"{contract}: not imported: schema object entry (Orders are complete by 6am.)"
    )
    document = load_document(out)
    assert [e.metric for e in document.expectations] == ["contract.row_count", "contract.null_rate(email)"]
    assert [e.expect for e in document.expectations] == ["> 0", "<= 0.05"]
    # and the imported document exports
    assert export_command(out, None) == 0
    assert 'Completeness "email" >= 0.95' in capsys.readouterr().out


def test_user_mistakes_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such contract file"):
        import_command(tmp_path / "missing.yaml", None)
    with pytest.raises(ConfigError, match="no such check document"):
        export_command(tmp_path / "missing.yaml", None)
    broken = tmp_path / "broken.yaml"
    broken.write_text(DOCUMENT.replace("daily.row_count", "daily.rows", 1))
    with pytest.raises(DocumentError, match=r"broken.yaml:9:\d+: unknown metric 'rows'") as raised:
        export_command(broken, None)
    assert raised.value.exit_code == 2
    doc = tmp_path / "orders.yaml"
    doc.write_text(DOCUMENT)
    (tmp_path / "taken").write_text("a file, not a folder")
    with pytest.raises(ConfigError, match="cannot write"):
        export_command(doc, tmp_path / "taken" / "x.dqdl")
