"""The check document is a dataset's one home: the monitor and the gate read their sections,
owners and tier from it, and a check document in ``checks/`` never breaks the other flows."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _invoke import assay
from gate.conftest import HEADER, RULES
from monitor.realdata import weather_daily

DOC = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: {name}
  source: {{path: data.parquet}}
  owners: {{team: weather-data, contact: "mailto:wx@example.com"}}
  tier: 1
profiles:
  - id: daily
    metrics: [row_count]
expectations:
  - {{id: rows, metric: daily.row_count, expect: "> 0"}}
{extra}"""


def test_the_monitor_reads_its_settings_owners_and_tier_from_the_check_document(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "checks").mkdir(parents=True)
    extra = "monitor:\n  window: last:5\n  not_categorical: [time_hour]\n"
    (ws / "checks" / "weather.yaml").write_text(DOC.format(name="nyc.weather", extra=extra))
    loads = weather_daily()[:3]
    for day, table in loads:
        path = tmp_path / f"{day}.parquet"
        pq.write_table(table, path)
        args = (
            "profile",
            str(path),
            "--dataset",
            "nyc.weather",
            "--load-date",
            str(day),
            "--workspace",
            str(ws),
        )
        assert assay(*args) == 0
    [summary] = [json.loads(p.read_text()) for p in sorted((ws / "runs").glob("*.json"))][-1:]
    assert summary["owners"] == {"team": "weather-data", "contact": "mailto:wx@example.com"}
    assert summary["tier"] == 1


def test_a_bad_monitor_section_is_a_document_mistake(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "d.yaml"
    doc.write_text(DOC.format(name="t", extra="monitor:\n  window: fortnight\n"))
    assert assay("check", "validate", str(doc)) == 2
    err = capsys.readouterr().err
    assert "d.yaml:" in err and "monitor" in err and "fortnight" in err


def test_the_gate_reads_its_table_settings_from_the_check_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    (ws / "checks").mkdir(parents=True)
    extra = "gate: {key: account_id, order: statement_date, contributor_column: contributor_id}\n"
    (ws / "checks" / "accounts.yaml").write_text(DOC.format(name="silver.accounts", extra=extra))
    # a second check document without a gate: section stays out of the gate's way
    (ws / "checks" / "other.yaml").write_text(DOC.format(name="shop.orders", extra=""))
    batch = tmp_path / "jan.csv"
    batch.write_text(f"{HEADER}\nB1,A1,2025-01-31,ACTIVE,1000,1000,0\n")
    rules = tmp_path / "rules.csv"
    rules.write_text(RULES.replace(",bank,", ",all,"))
    code = assay("gate", str(batch), "--rules", str(rules), "--contributor", "B1", "--workspace", str(ws))
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    assert assay("table", "list", "--workspace", str(ws), "--json") == 0
    assert "silver.accounts" in capsys.readouterr().out


def test_a_check_document_is_data_the_monitor_and_the_checks_agree_on(tmp_path: Path) -> None:
    """The same file measured by a check run and profiled by the monitor counts the same rows."""
    ws = tmp_path / "ws"
    (ws / "checks").mkdir(parents=True)
    pq.write_table(pa.table({"a": [1, 2, None]}), ws / "checks" / "data.parquet")
    (ws / "checks" / "t.yaml").write_text(DOC.format(name="t", extra=""))
    out = tmp_path / "run.json"
    assert (
        assay("check", "run", str(ws / "checks" / "t.yaml"), "--workspace", str(ws), "--json", str(out)) == 0
    )
    run = json.loads(out.read_text())
    assert run["profiles"]["daily"]["rows"] == 3 and run["outcomes"][0]["outcome"] == "passed"
