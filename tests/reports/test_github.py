"""``assay check validate --format github`` (issue 32, "CI reports"): a document's mistakes as
GitHub Actions annotations, one workflow command each, escaped as the runner reads them back."""

from __future__ import annotations

import re
from pathlib import Path

from _invoke import completed
from assay.platform.reports.github import annotation

# two mistakes, each with its place; a folder with a comma and a message with a colon
BROKEN = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: shop.orders, source: {path: ../orders.csv}}
profiles:
  - id: daily
    metrics: [row_count]
expectations:
  - {id: has-rows, metric: daily.row_count, expect: "> "}
  - {id: has-rows, metric: daily.row_count, expect: "> 0", severity: fatal}
"""
COMMAND = re.compile(r"::(error|warning) ([^:]*)::(.*)")


def unescape(text: str) -> str:
    """What the runner reads back (the toolkit's escapes, undone; %25 last)."""
    for escaped, plain in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, plain)
    return text


def read(line: str) -> tuple[str, dict[str, str], str]:
    matched = COMMAND.fullmatch(line)
    assert matched, line
    level, properties, message = matched.groups()
    pairs = (item.split("=", 1) for item in properties.split(","))
    return level, {k: unescape(v) for k, v in pairs}, unescape(message)


def test_each_mistake_is_an_error_annotation_at_its_line_and_column(tmp_path: Path) -> None:
    doc = tmp_path / "ci,checks" / "orders.yaml"
    doc.parent.mkdir()
    doc.write_text(BROKEN)
    text = completed("check", "validate", str(doc))
    done = completed("check", "validate", str(doc), "--format", "github")
    assert (text.returncode, done.returncode) == (2, 2)
    annotations = [read(line) for line in done.stdout.splitlines()]
    # the same mistakes as the text format's file:line:col: message lines, in the same order
    shown = text.stderr.splitlines()[:-1]
    assert len(annotations) == len(shown) >= 3
    assert [f"{p['file']}:{p['line']}:{p['col']}: {message}" for _, p, message in annotations] == shown
    assert {level for level, _, _ in annotations} == {"error"}
    assert all(p["title"] == "assay check validate" and p["file"] == str(doc) for _, p, _ in annotations)
    assert "%2C" in done.stdout.splitlines()[0]  # the comma of the folder, escaped in the property
    assert done.stderr.splitlines()[-1] == text.stderr.splitlines()[-1]  # the count, on stderr as before


def test_a_mistake_without_a_place_is_annotated_on_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "checks" / "gone.yaml"
    done = completed("check", "validate", str(missing), "--format", "github")
    assert done.returncode == 2
    [(level, properties, message)] = [read(line) for line in done.stdout.splitlines()]
    assert (level, properties["file"], message) == (
        "error",
        str(missing),
        f"{missing}: no such check document",
    )
    assert "line" not in properties and f"error: {message}" in done.stderr


def test_a_valid_document_prints_what_it_always_printed(tmp_path: Path) -> None:
    doc = tmp_path / "orders.yaml"
    doc.write_text(
        BROKEN.replace('"> "', '"> 0"').split(
            '  - {id: has-rows, metric: daily.row_count, expect: "> 0", sev'
        )[0]
    )
    done = completed("check", "validate", str(doc), "--format", "github")
    assert (done.returncode, done.stdout.startswith(f"{doc}: valid; dataset shop.orders")) == (0, True)


def test_properties_and_messages_are_escaped_as_the_runner_reads_them() -> None:
    message = "100% sure:\r\nnext, line"
    line = annotation("warning", message, file="a:b,c%.yaml", line=3, col=1, title="t: x, y")
    assert "\n" not in line and "\r" not in line
    level, properties, read_back = read(line)
    assert (level, read_back) == ("warning", message)
    assert properties == {"file": "a:b,c%.yaml", "line": "3", "col": "1", "title": "t: x, y"}


def test_dqdl_validate_annotates_its_warnings_and_its_syntax_error(tmp_path: Path) -> None:
    accepted, broken = tmp_path / "accepted.dqdl", tmp_path / "broken.dqdl"
    accepted.write_text("Rules = [\n    RowCount > 0\n]]\n")  # Glue ignores what follows; we warn
    broken.write_text('Rules = [\n    RowCount > ,\n    IsComplete "id"\n]\n')
    text = completed("dqdl", "validate", str(accepted))
    done = completed("dqdl", "validate", str(accepted), "--format", "github")
    assert (text.returncode, done.returncode) == (0, 0)
    [warning, valid_line] = done.stdout.splitlines()
    level, properties, message = read(warning)
    assert text.stderr.strip() == f"{accepted}:{properties['line']}:{properties['col']}: warning: {message}"
    assert (level, properties["file"], properties["line"]) == ("warning", str(accepted), "3")
    assert valid_line == f"{accepted}: valid DQDL, 1 rule(s), 0 analyzer(s)" and done.stderr == ""

    done = completed("dqdl", "validate", str(broken), "--format", "github")
    assert done.returncode == 2
    [(level, properties, message)] = [read(line) for line in done.stdout.splitlines()]
    assert (level, properties["line"], properties["col"]) == ("error", "2", "16")
    assert f"error: {broken}:2:16: {message}" in done.stderr  # the caret excerpt stays on stderr
    refused = completed("dqdl", "validate", str(accepted), "--format", "github", "--json")
    assert refused.returncode == 2 and "--json and --format github" in refused.stderr
