"""What a data provider or an author wrote is shown on an operator's console, never obeyed: an
escape sequence in a cell or in a document's field is printed as its escape (assay/_terminal.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from _demo_workspace import cli_env
from _invoke import completed

# retitles the terminal, then clears it; a right-to-left override
HOSTILE = "X\x1b]0;pwned\x07\x1b[2J"
BIDI = "ab\u202ecd"
FORBIDDEN = ("\x1b", "\x07", "\u202e", "\x9b")


def _clean(text: str) -> None:
    for character in FORBIDDEN:
        assert character not in text, f"{character!r} reached the console"


def test_a_never_seen_value_with_escape_sequences_is_shown_escaped(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "checks").mkdir(parents=True)
    (workspace / "checks" / "venues.yaml").write_text("categorical: [venue]\n")
    for day, extra in (("2026-11-01", []), ("2026-11-02", [HOSTILE, BIDI])):
        rows = ["id,venue", *(f"{i},V{i % 2}" for i in range(10))]
        rows += [f"{20 + i},{v}" for i, v in enumerate(extra)]
        load = tmp_path / f"venues-{day}.csv"
        load.write_text("\n".join(rows) + "\n")
        done = completed(
            "profile", str(load), "--dataset", "venues", "--load-date", day, "--workspace", str(workspace)
        )
        assert done.returncode == 0, done.stderr
        _clean(done.stdout + done.stderr)
    listed = completed("decisions", "list", "--workspace", str(workspace))
    _clean(listed.stdout + listed.stderr)
    assert "X\\x1b]0;pwned\\x07\\x1b[2J" in listed.stdout.replace("\n", "")
    assert "ab\\u202ecd" in listed.stdout
    # JSON keeps the value itself: the encoder escapes it for the terminal already
    as_json = completed("decisions", "list", "--workspace", str(workspace), "--json")
    _clean(as_json.stdout)
    assert {d["value"] for d in json.loads(as_json.stdout)["decisions"]} >= {HOSTILE, BIDI}


def test_a_document_field_and_an_error_quoting_it_are_shown_escaped(tmp_path: Path) -> None:
    (tmp_path / "orders.csv").write_text("id\n1\n")
    document = tmp_path / "orders.yaml"
    document.write_text(
        "apiVersion: assay/v1\nkind: DatasetChecks\n"
        'dataset: {name: shop.orders, source: {path: orders.csv}, owners: {team: "ops\\e]0;x\\a"}}\n'
        "profiles: [{id: daily, metrics: [row_count]}]\n"
        'expectations: [{id: rows, metric: daily.row_count, expect: "> 0"}, '
        '{id: col, rule: "IsComplete \\"no\\e[2Jpe\\""}]\n'
    )
    done = completed("check", "run", str(document), "--workspace", str(tmp_path), "--at", "2026-12-01")
    assert done.returncode == 0, done.stderr
    _clean(done.stdout + done.stderr)
    assert "no\\x1b[2Jpe" in done.stdout


def test_a_dataset_name_with_a_control_or_bidi_character_is_refused_by_every_flow(tmp_path: Path) -> None:
    (tmp_path / "orders.csv").write_text("id\n1\n")
    (tmp_path / "rules.dqdl").write_text("Rules = [ RowCount > 0 ]\n")
    workspace = str(tmp_path / "ws")
    rules, data = str(tmp_path / "rules.dqdl"), str(tmp_path / "orders.csv")
    for name, shown in (("ord\x1b[2Jers", "U+001B"), ("ord\u202eers", "U+202E"), ("ord\x00ers", "U+0000")):
        runs = (
            ("dqdl", "run", rules, "--data", data, "--dataset", name),
            ("profile", data, "--dataset", name, "--load-date", "2026-11-01"),
        )
        for args in runs:
            done = completed(*args, "--workspace", workspace)
            assert done.returncode == 2, (args, done.stderr)
            assert f"holds {shown}" in done.stderr and "Traceback" not in done.stderr
            _clean(done.stdout + done.stderr)
    assert not (tmp_path / "ws" / "runs").exists() or not any((tmp_path / "ws" / "runs").iterdir())


def test_a_document_whose_dataset_name_holds_an_escape_is_refused_where_it_is(tmp_path: Path) -> None:
    document = tmp_path / "orders.yaml"
    document.write_text(
        "apiVersion: assay/v1\nkind: DatasetChecks\n"
        'dataset: {name: "ord\\e[2Jers", source: {path: orders.csv}}\n'
        "profiles: [{id: daily, metrics: [row_count]}]\n"
    )
    done = completed("check", "validate", str(document))
    assert done.returncode == 2
    assert "orders.yaml:3" in done.stderr
    assert "holds U+001B (a control character) at position 4" in done.stderr
    _clean(done.stdout + done.stderr)


def test_a_table_piped_to_a_file_keeps_each_row_on_one_line_in_ascii(tmp_path: Path) -> None:
    """stdout a pipe and no COLUMNS (a CI log, `| grep`): a row of the outcome table and the
    summary each stay on one line, drawn in ASCII (Rich alone folds them at 80 columns)."""
    (tmp_path / "orders.csv").write_text("id,amount\n1,10\n2,20\n3,30\n")
    long = 'ColumnValues "amount" between 15 and 25 where "amount > 1 and amount < 1000 and id is not null"'
    (tmp_path / "rules.dqdl").write_text(f"Rules = [ RowCount > 5, {long} ]\n")
    env = {k: v for k, v in cli_env().items() if k != "COLUMNS"}
    done = subprocess.run(
        [sys.executable, "-m", "assay", "dqdl", "run", "rules.dqdl", "--data", "orders.csv"],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert done.stdout.isascii(), done.stdout
    assert any("RowCount > 5" in line and "Value: 3.0 does not meet the constraint requirement!" in line
               for line in lines), done.stdout  # fmt: skip
    assert any(long in line and "(2 of 3 rows failed)" in line for line in lines), done.stdout
    assert any(line.startswith("0 passed, 2 failed") and "engine queries: 1" in line for line in lines)
