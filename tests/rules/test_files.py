"""File rules on local paths (assay/rules/files.py)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pyarrow as pa
import pytest

from assay.dqdl import evaluate

NOW = "2026-06-10T12:00:00+00:00"
STAMP = 1781092800.0  # 2026-06-10T12:00:00Z


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    drop = tmp_path / "drop"
    drop.mkdir()
    for name, content, age_hours in [
        ("a.csv", b"x,y\n1,2\n", 1),
        ("b.csv", b"x,y\n3,4\n", 30),
        ("c.csv", b"x,y\n1,2\n", 2),
    ]:
        path = drop / name
        path.write_bytes(content)
        os.utime(path, (STAMP - age_hours * 3600, STAMP - age_hours * 3600))
    return drop


def rules(*texts: str) -> str:
    return "Rules = [ " + ", ".join(texts) + " ]"


def outcomes(text: str, data: object = None, **kw: object) -> list[tuple[str, str | None]]:
    result = evaluate(text, data if data is not None else pa.table({"x": [1]}), now=NOW, **kw)
    return [(r.outcome, r.message) for r in result.rules]


def test_file_freshness_and_threshold(folder: Path) -> None:
    fresh = f'FileFreshness "{folder}" > (now() - 1 days)'
    (strict, tolerant) = outcomes(rules(fresh, f"{fresh} with threshold > 0.6"))
    assert strict[0] == "Failed" and "66.67 % of files passed the threshold (1 of 3 files failed)" in (
        strict[1] or ""
    )
    assert tolerant[0] == "Passed"


def test_file_freshness_with_recent_files(folder: Path) -> None:
    text = f'Rules = [ FileFreshness "{folder}" > (now() - 1 days) with recentFiles = 2 ]'
    assert outcomes(text)[0][0] == "Passed"


def test_file_size(folder: Path) -> None:
    size = f'FileSize "{folder}"'
    text = rules(f"{size} < 1 KB", f"{size} > 8 B", f"{size} between 1 B and 100 B")
    assert [o for o, _ in outcomes(text)] == ["Passed", "Failed", "Passed"]


def test_file_uniqueness(folder: Path) -> None:
    result = evaluate(f'Rules = [ FileUniqueness "{folder}" > 0.3 ]', pa.table({"x": [1]}))
    assert result.rules[0].outcome == "Passed"
    assert result.rules[0].metrics["Dataset.*.FileUniqueness"] == pytest.approx(1 / 3)


def test_file_match(folder: Path) -> None:
    good = hashlib.sha256(b"x,y\n1,2\n").hexdigest()
    md5 = hashlib.md5(b"x,y\n3,4\n").hexdigest()
    a, b, c = (f'"{folder / name}"' for name in ("a.csv", "b.csv", "c.csv"))
    text = rules(
        f"FileMatch {a} {c}",
        f"FileMatch {a} {b}",
        f'FileMatch {a} in ["{good}"]',
        f'FileMatch {b} in ["{md5}"] with hashAlgorithm = "MD5"',
    )
    assert [o for o, _ in outcomes(text)] == ["Passed", "Failed", "Passed", "Passed"]


def test_without_a_path_the_data_file_is_checked(folder: Path) -> None:
    assert outcomes("Rules = [ FileSize < 1 KB ]", folder / "a.csv")[0][0] == "Passed"
    (outcome, message) = outcomes("Rules = [ FileSize < 1 KB ]")[0]
    assert outcome == "Error" and "needs a path" in (message or "")


def test_remote_and_missing_paths_are_errors(tmp_path: Path) -> None:
    remote, missing = outcomes(
        f'Rules = [ FileSize "https://example.com/x" < 1 KB, FileSize "{tmp_path / "none"}" < 1 KB ]'
    )  # s3:// objects are read: tests/storage/test_file_rules.py
    assert remote[0] == "Error" and "local paths and s3:// only" in (remote[1] or "")
    assert missing[0] == "Error" and "does not exist" in (missing[1] or "")


@pytest.fixture
def drops(tmp_path: Path) -> Path:
    """A landing folder: two CSV files with the same content and a newer temporary file."""
    drop = tmp_path / "landing"
    drop.mkdir()
    for name, content, age_hours in [
        ("old.csv", b"x\n1\n", 3),
        ("mid.csv", b"x\n1\n", 2),
        ("new.tmp", b"partial", 1),
    ]:
        path = drop / name
        path.write_bytes(content)
        os.utime(path, (STAMP - age_hours * 3600, STAMP - age_hours * 3600))
    return drop


def test_recent_files_apply_before_uri_regex_unless_filter_order_says_otherwise(drops: Path) -> None:
    base = f'FileUniqueness "{drops}" = 1.0 with recentFiles = 2 with uriRegex = "\\.csv$"'
    default, reordered, listed_once = outcomes(
        rules(
            base,
            f'{base} with filterOrder = ["uriRegex","recentFiles"]',
            f'{base} with filterOrder = ["uriRegex"]',
        )
    )
    # recentFiles first (Glue's default): new.tmp and mid.csv, of which mid.csv is a .csv file.
    assert default == ("Passed", None)
    # uriRegex first: old.csv and mid.csv, the two most recent CSV files, hold the same bytes.
    assert reordered[0] == "Failed" and listed_once[0] == "Failed"


def test_uri_regex_may_use_a_lookahead_as_glue_documents(drops: Path) -> None:
    (counted,) = evaluate(
        rules(f'FileUniqueness "{drops}" >= 0 with uriRegex = "^(?!.*\\.tmp$).*"'),
        pa.table({"x": [1]}),
        now=NOW,
    ).rules
    assert counted.outcome == "Passed"
    assert counted.metrics == {"Dataset.*.FileUniqueness": 0.0}  # old.csv and mid.csv, equal


@pytest.mark.parametrize(
    ("order", "message"),
    [('["recentFiles","size"]', "unknown filter 'size'"), ('"uriRegex"', "filterOrder is a list")],
)
def test_a_bad_filter_order_is_an_error(drops: Path, order: str, message: str) -> None:
    ((outcome, text),) = outcomes(rules(f'FileUniqueness "{drops}" > 0 with filterOrder = {order}'))
    assert outcome == "Error" and message in (text or "")
