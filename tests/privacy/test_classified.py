"""The parts of docs/privacy.md below THE test: a document's ``classified:`` section and its
mistakes (with line and column), the workspace's secret, the keyed hash, and ``sample_columns``."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from _invoke import completed
from assay.platform.checks.document import DocumentError, parse_document
from assay.platform.privacy import classified
from assay.privacy import DIGITS, SECRET_FILE, Masker, secret
from assay.workspace import Workspace

HEAD = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: bureau.loans
  source: {path: loans.csv}
"""


@pytest.mark.parametrize(
    ("section", "line", "column", "message"),
    [
        (
            "  classified: {pii: [email], contact: [email]}\n",
            6,
            15,
            "email is classified twice (pii and contact)",
        ),
        ('  classified: {"my class": [email]}\n', 6, 15, "'my class' is not a class name"),
        ("  classified: {pii: email}\n", 6, 15, "pii: a list of columns, such as [email]"),
    ],
)
def test_a_mistake_in_classified_names_its_line_and_column(
    section: str, line: int, column: int, message: str
) -> None:
    with pytest.raises(DocumentError) as raised:
        parse_document(HEAD + section, filename="loans.yaml")
    assert f"loans.yaml:{line}:{column}" in str(raised.value) and message in str(raised.value)


def test_one_function_answers_for_a_check_document_and_for_a_plain_dataset_file(tmp_path: Path) -> None:
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "loans.yaml").write_text(
        HEAD + "  classified: {pii: [email], sensitive: [limit]}\n"
    )
    (tmp_path / "checks" / "trades.yaml").write_text("classified: {pii: [trader]}\ngate: {key: id}\n")
    workspace = Workspace(tmp_path)
    assert classified(workspace, "bureau.loans") == {"email": "pii", "limit": "sensitive"}
    assert classified(workspace, "trades") == {"trader": "pii"}
    assert classified(workspace, "elsewhere") == {}


def test_the_secret_is_created_once_readable_by_its_owner_only(tmp_path: Path) -> None:
    first = secret(tmp_path)
    assert len(first) == 32 and secret(tmp_path) == first
    assert stat.S_IMODE((tmp_path / SECRET_FILE).stat().st_mode) == 0o600
    (tmp_path / SECRET_FILE).unlink()  # rotation: a new secret, other hashes
    masked = [
        Masker({"email": "pii"}, key).value("email", "ana@mail.example") for key in (first, secret(tmp_path))
    ]
    assert masked[0] != masked[1] and all(len(m) == len("pii:") + DIGITS for m in masked)


def test_a_damaged_secret_is_a_configuration_error_naming_the_file(tmp_path: Path) -> None:
    from assay.errors import ConfigError

    (tmp_path / SECRET_FILE).write_text("not hex\n")
    with pytest.raises(ConfigError, match=f"{SECRET_FILE} is not a privacy secret"):
        secret(tmp_path)


def _run(root: Path, sample: str) -> dict[str, object]:
    (root / "loans.csv").write_text("id,new_ic,email,bank\n1,900101-14-5678,ana@mail.example,B1\n")
    (root / "loans.yaml").write_text(
        HEAD
        + "  classified: {pii: [new_ic, email]}\n"
        + "profiles:\n  - id: daily\n    metrics:\n"
        + "      - count_where: {name: foreign, condition: \"email LIKE '%@mail.example'\", "
        + f"sample_rows: 3{sample}}}\n"
        + "expectations:\n  - {id: no-foreign, metric: daily.foreign, expect: '= 0'}\n"
    )
    done = completed("check", "run", str(root / "loans.yaml"), "--workspace", str(root), "--json", "-")
    assert done.returncode == 0, done.stderr
    outcome: dict[str, object] = json.loads(done.stdout)["outcomes"][0]
    return outcome


def test_a_sample_carries_the_key_and_the_offending_column_by_default(tmp_path: Path) -> None:
    outcome = _run(tmp_path, "")
    assert outcome["outcome"] == "failed"
    assert [sorted(row) for row in outcome["samples"]] == [["email", "id"]]  # type: ignore[attr-defined]


def test_sample_columns_choose_them_and_a_classified_one_is_still_masked(tmp_path: Path) -> None:
    outcome = _run(tmp_path, ", sample_columns: [new_ic, bank]")
    assert outcome["samples"] == [
        {"new_ic": Masker({"new_ic": "pii"}, secret(tmp_path)).hash("new_ic", "900101-14-5678"), "bank": "B1"}
    ]


def test_an_unknown_sample_column_is_the_expectations_config_error(tmp_path: Path) -> None:
    outcome = _run(tmp_path, ", sample_columns: [nickname]")
    assert outcome["outcome"] == "config_error"
    assert "sample_columns: column 'nickname' is not a column of the source" in str(outcome["message"])
