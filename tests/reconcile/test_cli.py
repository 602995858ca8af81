"""``assay reconcile``: the JSON contract, exit 0 equal / 1 different / 2 a user's mistake, and
sources confined as every source is."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from _invoke import completed
from reconcile._planted import EXPECTED, found, tables


@pytest.fixture
def files(tmp_path: Path) -> Path:
    source, target = tables()
    pq.write_table(source, tmp_path / "source.parquet")
    pq.write_table(target, tmp_path / "target.parquet")
    pq.write_table(target.slice(0, 19), tmp_path / "clean.parquet")
    return tmp_path


def _run(files: Path, *args: str) -> tuple[int, str, str]:
    done = completed("reconcile", *args, "--workspace", str(files))
    return done.returncode, done.stdout, done.stderr


def test_differences_exit_1_with_the_json_contract(files: Path) -> None:
    code, _, _ = _run(
        files,
        str(files / "source.parquet"),
        str(files / "target.parquet"),
        "--key",
        "id",
        "--tolerance",
        "amount=0.01",
        "--json",
        str(files / "out.json"),
    )
    assert code == 1
    result = json.loads((files / "out.json").read_text())
    assert found(result) == EXPECTED
    assert set(result["samples"]) >= {"only_in_source", "only_in_target", "changed"}


def test_equal_tables_exit_0(files: Path) -> None:
    clean = str(files / "clean.parquet")
    code, stdout, _ = _run(files, clean, clean, "--key", "id", "--columns", "amount,name", "--json", "-")
    assert code == 0
    result = json.loads(stdout)
    assert result["equal"] is True and result["columns"] == ["amount", "name"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--key", "nope"], "--key nope: no such column in the source"),
        (["--key", "id", "--columns", "amount,nope"], "--columns nope: no such column"),
        (["--key", "id", "--tolerance", "amount"], "--tolerance amount: write COLUMN=ABS"),
        (["--key", "id", "--tolerance", "name=1"], "--tolerance name=1: name is not numeric"),
        (["--key", "id", "--tolerance", "amount=x"], "is not a number"),
    ],
)
def test_a_users_mistake_exits_2_naming_it(files: Path, args: list[str], message: str) -> None:
    code, _, stderr = _run(files, str(files / "source.parquet"), str(files / "target.parquet"), *args)
    assert code == 2
    assert message in stderr
    assert "Traceback" not in stderr


def test_a_file_outside_the_workspace_is_refused(
    files: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    other = tmp_path_factory.mktemp("elsewhere")
    pq.write_table(tables()[0], other / "source.parquet")
    code, _, stderr = _run(files, str(other / "source.parquet"), str(files / "target.parquet"), "--key", "id")
    assert code == 2
    assert "outside the workspace's data folders" in stderr


def test_group_by_compares_aggregates_per_group(files: Path) -> None:
    code, stdout, _ = _run(
        files,
        str(files / "source.parquet"),
        str(files / "target.parquet"),
        "--key",
        "id",
        "--group-by",
        "ok",
        "--columns",
        "amount",
        "--json",
        "-",
    )
    assert code == 1
    result = json.loads(stdout)
    assert result["mode"] == "groups" and result["group_by"] == "ok"
    assert result["changed"] == 2 and result["changed_by_column"] == {"count": 0, "amount": 2}


CLASSIFIED = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: bureau.accounts
  source: {path: ../target.parquet}
  classified: {pii: [id]}
"""


def test_a_classified_key_is_masked_in_the_samples(files: Path) -> None:
    """docs/privacy.md: the sample keys of a dataset that classifies its key are keyed hashes, in
    the JSON and on the console."""
    (files / "checks").mkdir()
    (files / "checks" / "accounts.yaml").write_text(CLASSIFIED)
    pair = (
        str(files / "source.parquet"),
        str(files / "target.parquet"),
        "--key",
        "id",
        "--tolerance",
        "amount=0.01",
    )
    code, stdout, _ = _run(files, *pair, "--dataset", "bureau.accounts", "--json", "-")
    assert code == 1
    result = json.loads(stdout)
    assert found(result) == EXPECTED  # the counts are the data's
    keys = [
        s["key"]["id"]
        for kind in ("only_in_source", "only_in_target", "changed")
        for s in result["samples"][kind]
    ]
    assert keys and all(str(k).startswith("pii:") for k in keys)
    clear = json.loads(_run(files, *pair, "--json", "-")[1])  # without --dataset: nothing to mask
    assert all(isinstance(s["key"]["id"], int) for s in clear["samples"]["changed"])
    code, console, _ = _run(files, *pair, "--dataset", "bureau.accounts")
    assert (
        code == 1
        and "id=pii:" in console
        and not any(f"id={k['key']['id']}" in console for k in clear["samples"]["changed"])
    )


def test_an_unknown_dataset_to_mask_by_is_a_mistake(files: Path) -> None:
    code, _, stderr = _run(
        files,
        str(files / "source.parquet"),
        str(files / "target.parquet"),
        "--key",
        "id",
        "--dataset",
        "nope",
    )
    assert code == 2 and "--dataset nope: no check document" in stderr and "Traceback" not in stderr
