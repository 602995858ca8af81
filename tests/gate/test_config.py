"""The gate's table and columns come from the table's configuration or from flags, never from a
silent default (issue 8, section 7); a control CSV of 'all' rules needs no contributor type."""

from __future__ import annotations

from pathlib import Path

import pytest

from _invoke import assay as invoke
from gate.conftest import HEADER, RULES

ALL_RULES = RULES.replace(",bank,", ",all,")


def assay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = invoke(*args)
    return code, capsys.readouterr().err


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    batch = tmp_path / "jan.csv"
    batch.write_text(f"{HEADER}\nB1,A1,2025-01-31,ACTIVE,1000,1000,0\nB1,A2,2025-01-31,ACTIVE,20,20,0\n")
    rules = tmp_path / "rules.csv"
    rules.write_text(ALL_RULES)
    return batch, rules, tmp_path / "ws"


def test_without_a_table_or_a_configuration_the_gate_says_what_to_pass(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    batch, rules, ws = files
    code, err = assay(
        capsys, "gate", str(batch), "--rules", str(rules), "--contributor", "B1", "--workspace", str(ws)
    )
    assert code == 2 and "--table" in err and "gate:" in err
    code, err = assay(
        capsys,
        "gate",
        str(batch),
        "--rules",
        str(rules),
        "--contributor",
        "B1",
        "--table",
        "t.a",
        "--workspace",
        str(ws),
    )
    assert code == 2 and "--key" in err and "checks/t.a.yaml" in err


def test_the_table_configuration_supplies_the_columns_and_a_flag_wins(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    batch, rules, ws = files
    (ws / "checks").mkdir(parents=True)
    (ws / "checks" / "silver.accounts.yaml").write_text(
        "gate: {key: account_id, order: statement_date, contributor_column: contributor_id}\n"
    )
    code, err = assay(
        capsys, "gate", str(batch), "--rules", str(rules), "--contributor", "B1", "--workspace", str(ws)
    )
    assert code == 0, err
    code, err = assay(
        capsys,
        "gate",
        str(batch),
        "--rules",
        str(rules),
        "--contributor",
        "B1",
        "--key",
        "nope",
        "--workspace",
        str(ws),
    )
    assert code == 2 and "'nope'" in err


def test_a_typed_control_file_needs_a_contributor_type(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    batch, rules, ws = files
    rules.write_text(RULES)  # T01 is for 'bank' only
    code, err = assay(
        capsys,
        "gate",
        str(batch),
        "--rules",
        str(rules),
        "--contributor",
        "B1",
        "--table",
        "silver.accounts",
        "--key",
        "account_id",
        "--order",
        "statement_date",
        "--contributor-column",
        "contributor_id",
        "--workspace",
        str(ws),
    )
    assert code == 2 and "--contributor-type" in err and "bank" in err
