"""``s3://`` inputs: ``dqdl run --data``/``--ref``, ``profile`` and ``gate`` read an object of the
test's S3 server and give the outcomes, metrics and splits the same file gives read from disk."""

from __future__ import annotations

import gzip
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from _invoke import completed
from gate.conftest import HEADER, RULES
from monitor.realdata import daily_loads
from s3server import S3Bucket

DEMO = resources.files("assay.demo") / "data"


def _demo(tmp_path: Path) -> dict[str, Path]:
    files = {}
    for name in ("orders.dqdl", "orders.csv", "customers.csv"):
        files[name] = tmp_path / name
        files[name].write_bytes((DEMO / name).read_bytes())
    return files


def _outcomes(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, float]]]:
    return [(r["rule"], r["outcome"], r["metrics"]) for r in doc["rules"]]


def test_dqdl_run_reads_its_data_and_reference_from_s3(s3_bucket: S3Bucket, tmp_path: Path) -> None:
    files = _demo(tmp_path)
    s3_bucket.put("drops/orders.csv.gz", gzip.compress(files["orders.csv"].read_bytes()))
    s3_bucket.put("drops/customers.csv", files["customers.csv"].read_bytes())
    ruleset = str(files["orders.dqdl"])
    local = completed(
        "dqdl", "run", ruleset, "--data", str(files["orders.csv"]),
        "--ref", f"customers={files['customers.csv']}", "--json", "-",
    )  # fmt: skip
    remote = completed(
        "dqdl", "run", ruleset, "--data", s3_bucket.url("drops/orders.csv.gz"),
        "--ref", f"customers={s3_bucket.url('drops/customers.csv')}", "--json", "-",
    )  # fmt: skip
    assert local.returncode == remote.returncode, remote.stderr
    outcomes = _outcomes(json.loads(remote.stdout))
    assert outcomes == _outcomes(json.loads(local.stdout))
    assert len(outcomes) == 16 and {o for _, o, _ in outcomes} >= {"Passed"}


def test_a_missing_object_or_a_prefix_is_the_users_mistake(s3_bucket: S3Bucket, tmp_path: Path) -> None:
    files = _demo(tmp_path)
    s3_bucket.put("drops/orders.csv", files["orders.csv"].read_bytes())
    ruleset = str(files["orders.dqdl"])
    missing = completed("dqdl", "run", ruleset, "--data", s3_bucket.url("drops/none.csv"))
    assert missing.returncode == 2
    assert f"{s3_bucket.url('drops/none.csv')}: no such data file" in missing.stderr
    folder = completed("dqdl", "run", ruleset, "--data", s3_bucket.url("drops"))
    assert folder.returncode == 2 and "is a prefix (a folder), not a data file" in folder.stderr


def _profile(data: str, workspace: Path) -> dict[str, Any]:
    done = completed(
        "profile", data, "--dataset", "flights", "--load-date", "2013-01-02",
        "--workspace", str(workspace), "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


@pytest.mark.parametrize("name", ["day.parquet", "day.csv.gz"])
def test_profile_of_an_object_is_the_profile_of_the_file(
    s3_bucket: S3Bucket, tmp_path: Path, name: str
) -> None:
    day = dict(daily_loads())
    table = next(load for when, load in day.items() if when.isoformat() == "2013-01-02")
    path = tmp_path / name
    if name.endswith(".parquet"):
        pq.write_table(table, path)
    else:
        import pyarrow.csv as pacsv

        plain = tmp_path / "day.csv"
        pacsv.write_csv(table, plain)
        path.write_bytes(gzip.compress(plain.read_bytes()))
    s3_bucket.put(f"flights/{name}", path.read_bytes())
    local = _profile(str(path), tmp_path / "local")
    remote = _profile(s3_bucket.url(f"flights/{name}"), tmp_path / "remote")
    assert remote == local
    assert remote["rows"] == table.num_rows and len(remote["columns"]) == table.num_columns


def _gate(batch: str, rules: Path, workspace: Path) -> dict[str, Any]:
    args = ["gate", batch, "--rules", str(rules), "--contributor", "B1", "--contributor-type", "bank"]
    args += ["--table", "silver.accounts", "--key", "account_id", "--order", "statement_date"]
    args += ["--contributor-column", "contributor_id", "--workspace", str(workspace), "--json"]
    done = completed(*args)
    assert done.returncode in (0, 1), done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


JANUARY = [f"B1,A{i},2025-01-31,ACTIVE,{i}000,{i}000,0" for i in range(1, 6)]
FEBRUARY = [
    "B1,A1,2025-02-28,ACTIVE,1000,1000,0",
    "B1,A2,2025-02-28,ADMIN_CHANGE,2500,2000,500",
    "B1,A3,2025-02-28,ACTIVE,6000,6000,0",  # a limit moved without a reason: T01
    "B1,A4,2025-02-28,FROZEN,4000,4000,0",  # unknown status: warning D02
    "B1,A5,2025-02-28,ACTIVE,5000,4000,0",  # does not add up: F01
    "B1,A6,2025-02-28",  # too few cells: a parse error
]


def test_the_gate_splits_an_object_as_it_splits_the_file(s3_bucket: S3Bucket, tmp_path: Path) -> None:
    rules = tmp_path / "rules.csv"
    rules.write_text(RULES)
    months = {}
    for name, rows in (("jan.csv", JANUARY), ("feb.csv", FEBRUARY)):
        months[name] = tmp_path / name
        months[name].write_text("\n".join([HEADER, *rows]) + "\n")
        s3_bucket.put(f"bureau/{name}", months[name].read_bytes())
    splits = {}
    sources = {
        "local": {n: str(p) for n, p in months.items()},
        "s3": {n: s3_bucket.url(f"bureau/{n}") for n in months},
    }
    for where, named in sources.items():
        summaries = [_gate(named[name], rules, tmp_path / where) for name in ("jan.csv", "feb.csv")]
        splits[where] = [
            (s["total"], s["passed"], s["quarantined"], s["warned"], s["parse_errors"], s["source"]["sha256"])
            for s in summaries
        ]
        quarantine = summaries[1]["quarantine_file"]
        lines = Path(quarantine).read_text().replace(summaries[1]["run_id"], "RUN").splitlines()
        splits[where].append(sorted(lines[1:]))
        if where == "s3":
            assert summaries[1]["source"]["path"] == s3_bucket.url("bureau/feb.csv")
    assert splits["s3"] == splits["local"]
    assert splits["s3"][1][:5] == (6, 3, 3, 1, 1)


def test_spark_reads_an_object_as_duckdb_reads_the_file(
    s3_bucket: S3Bucket, tmp_path: Path, spark_session: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spark reads the same local copy (``local[N]`` shares the driver's disk); its outcomes and
    metrics are DuckDB's on the file."""
    files = _demo(tmp_path)
    s3_bucket.put("drops/orders.csv", files["orders.csv"].read_bytes())
    s3_bucket.put("drops/customers.csv", files["customers.csv"].read_bytes())
    ruleset = str(files["orders.dqdl"])
    local = completed(
        "dqdl", "run", ruleset, "--data", str(files["orders.csv"]),
        "--ref", f"customers={files['customers.csv']}", "--json", "-",
    )  # fmt: skip
    monkeypatch.setenv("ASSAY_ENGINE", "spark")
    remote = completed(
        "dqdl", "run", ruleset, "--data", s3_bucket.url("drops/orders.csv"),
        "--ref", f"customers={s3_bucket.url('drops/customers.csv')}", "--json", "-",
    )  # fmt: skip
    assert remote.returncode == local.returncode, remote.stderr
    assert [o for _, o, _ in _outcomes(json.loads(remote.stdout))] == [
        o for _, o, _ in _outcomes(json.loads(local.stdout))
    ]
