"""``assay profile`` and ``assay gate`` with ``--engine spark`` print what DuckDB prints, on the
demo's data (the vendor's daily files, the bureau's contributor months) (issue 10)."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from _invoke import assay
from assay.demo import bureau as bu
from assay.demo import faults as fa
from assay.demo import vendor
from sparksession import VOLATILE, assert_same_profile


def _profiles(root: Path, engine: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    (root / "checks").mkdir(parents=True)
    (root / "checks" / f"{vendor.DATASET}.yaml").write_text(vendor.CONFIG)
    printed = []
    for day in vendor.DAYS[24:35]:  # six quiet days, the null day, the new venue's day, and after
        path = root / f"trades_{day}.parquet"
        pq.write_table(vendor.trades(day), path)
        code = assay(
            "profile", str(path), "--dataset", vendor.DATASET, "--load-date", day.isoformat(),
            "--workspace", str(root), "--engine", engine, "--json",
        )  # fmt: skip
        captured = capsys.readouterr()
        assert code == 0, captured.err
        printed.append(json.loads(captured.out))
    return printed


def test_profile_on_spark_prints_duckdbs_profiles_and_alerts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spark_session: Any
) -> None:
    duck = _profiles(tmp_path / "duckdb", "duckdb", capsys)
    spark = _profiles(tmp_path / "spark", "spark", capsys)
    kinds = [sorted((a["kind"], a["column"]) for a in day["alerts"]) for day in duck]
    assert ("null_rate", "settle_ccy") in kinds[6] and ("new_value", "venue") in kinds[9]
    for mine, theirs in zip(spark, duck, strict=True):
        assert_same_profile(mine, theirs)


def test_gate_on_spark_prints_duckdbs_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spark_session: Any
) -> None:
    data = files("assay.demo") / "data"
    bureau = bu.Bureau([bu.Contributor("BANK_A", "bank", 150)])
    months = [bureau.month("BANK_A", 0), fa.swap_limit_mapping(bureau.month("BANK_A", 1))[0]]
    summaries: dict[str, list[dict[str, Any]]] = {}
    for engine in ("duckdb", "spark"):
        workspace = tmp_path / engine
        summaries[engine] = []
        for i, month in enumerate(months):
            path = tmp_path / f"{engine}-{i}.csv"
            path.write_text(bu.csv_text(month))
            code = assay(
                "gate", str(path), "--rules", str(data / "bureau_rules.csv"), "--contributor", "BANK_A",
                "--contributor-type", "bank", "--table", "silver.accounts", "--key", "account_id",
                "--order", "statement_date", "--contributor-column", "contributor_id",
                "--schema", str(data / "accounts_schema.yaml"), "--workspace", str(workspace),
                "--engine", engine, "--json",
            )  # fmt: skip
            captured = capsys.readouterr()
            assert code == 0, captured.err
            payload = json.loads(captured.out)
            summaries[engine].append({k: v for k, v in payload.items() if k not in VOLATILE})
    assert summaries["duckdb"][1]["quarantined"] > 0
    assert summaries["spark"] == summaries["duckdb"]
