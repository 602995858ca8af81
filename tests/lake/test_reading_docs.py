"""Every example of docs/reading.md runs as written, on the files the page shows."""

from __future__ import annotations

import gzip
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import app

PAGE = Path(__file__).parent.parent.parent / "docs" / "reading.md"
BLOCK = re.compile(r"^```(\w+)(?: (\S+))?\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _blocks() -> list[tuple[str, str | None, str]]:
    return [(m.group(1), m.group(2), m.group(3)) for m in BLOCK.finditer(PAGE.read_text())]


def test_the_page_has_examples() -> None:
    commands = [b for b in _blocks() if b[0] == "console"]
    files = [b for b in _blocks() if b[1] is not None]
    assert len(commands) >= 6 and len(files) >= 8


def test_every_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.delenv("ASSAY_STORE_URL", raising=False)
    runner = CliRunner()
    ran = 0
    for kind, name, body in _blocks():
        if name is not None:
            # the prices example is written in latin-1, as such files are
            encoding = "latin-1" if name == "prices.csv" else "utf-8"
            (tmp_path / name).write_bytes(body.encode(encoding))
            continue
        if kind != "console":
            continue
        for line in body.splitlines():
            words = shlex.split(line.removeprefix("$ "))
            if words[:2] == ["gzip", "-k"]:
                source = tmp_path / words[2]
                source.with_name(source.name + ".gz").write_bytes(gzip.compress(source.read_bytes()))
                continue
            assert words[0] == "assay", line
            result = runner.invoke(app, words[1:])
            assert result.exit_code == 0, (line, result.output)
            ran += 1
    assert ran >= 7
