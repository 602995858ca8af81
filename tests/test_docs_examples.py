"""The documented examples run as written: every ```console``` and ```python``` block of README.md
and docs/*.md (new documents and blocks are picked up by themselves).

Each document is read top to bottom in a scratch folder holding a copy of the workspace
`assay demo` builds (``assay-demo/``, as a user who ran the demo has it), so the examples use
the demo's files. In a console block:

- ``$ assay ...`` runs the real command (these sources' ``assay.cli.main``, as the installed
  ``assay`` script does) in this process, in the document's current folder and without the
  environment's ``ASSAY_WORKSPACE`` and ``ASSAY_STORE_URL``; except with ``--engine spark``, which
  runs in a process of its own (in this one it would share, and at its end stop, the suite's
  SparkSession). tests/test_cli.py runs every command as a process of its own;
- ``$ cd DIR`` changes the folder for the rest of the document, any other ``$ ...`` line runs in
  bash; a line ending in ``\\`` continues;
- the exit code expected is 0, or 2 when the output shown holds a line starting ``error:``, or
  the N of a trailing ``# exits N`` comment on the command;
- the output shown under a command is checked loosely: every word of each line must be in what
  the command printed, in any order; ``…`` (or ``...``) elides, and a word holding it is not checked.

A block of any other language whose fence names a file (```` ```csv scores.csv ````) writes that
file in the document's current folder, for the examples after it (docs/reading.md's sample files),
in UTF-8 or in the encoding the fence names (```` ```csv prices.csv encoding=latin-1 ````).

A python block is run with ``python -c`` in the document's current folder and must exit 0.

A block that cannot run as written (an install step, an illustrative fragment) is marked by the
line ``<!-- not-run: the reason -->`` right above its fence; those are listed by
``test_blocks_not_run_stay_few`` and must stay few.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from _demo_workspace import cli_env, copy
from _invoke import completed

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
FILE_NAME = re.compile(r"^([\w.-]+)(?:\s+encoding=([\w-]+))?$")
NOT_RUN = re.compile(r"<!--\s*not-run:\s*(.*?)\s*-->\s*$")
EXITS = re.compile(r"\s+#\s*exits\s+(\d+)\b.*$")
MOST_NOT_RUN = 3
CLI_HIDDEN = ("ASSAY_WORKSPACE", "ASSAY_STORE_URL")  # what cli_env takes out of a subprocess's environment


@dataclass(frozen=True)
class Block:
    document: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    not_run: str | None  # the reason, when marked

    @property
    def where(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def blocks(document: Path) -> list[Block]:
    text = document.read_text()
    found = []
    for match in FENCE.finditer(text):
        language, name = match.group(1), match.group(2).strip()
        if language not in ("console", "python"):
            named = FILE_NAME.match(name)
            if named:
                line = text[: match.start()].count("\n") + 1
                kind = f"file:{named.group(1)}:{named.group(2) or 'utf-8'}"
                found.append(Block(document, line, kind, match.group(3), None))
            continue
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marked = NOT_RUN.search(before)
        line = text[: match.start()].count("\n") + 1
        found.append(Block(document, line, language, match.group(3), marked.group(1) if marked else None))
    return found


@dataclass
class Step:
    command: str
    exits: int | None
    shown: list[str]


def steps(block: Block) -> list[Step]:
    """The commands of a console block, each with the output shown under it."""
    found: list[Step] = []
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1].rstrip() + " " + lines[i].strip()
            exits = EXITS.search(command)
            if exits:
                command = command[: exits.start()]
            found.append(Step(command.strip(), int(exits.group(1)) if exits else None, []))
        elif line.strip():
            assert found, f"{block.where}: output before any `$ ` command: {line!r}"
            found[-1].shown.append(line)
        i += 1
    assert found, (
        f"{block.where}: a console block without a `$ ` command (mark it not-run if it is no example)"
    )
    return found


def words(text: str) -> set[str]:
    return set(re.sub(r"[│┃╭╮╰╯─━┏┓┗┛┡┩└┘┌┐┳┻╇┼├┤┠┨]", " ", text).split())


def run_step(step: Step, folder: Path, block: Block) -> Path:
    """Run one command; return the folder the document is in afterwards."""
    argv = shlex.split(step.command)
    if argv[0] == "cd":
        target = (folder / argv[1]).resolve()
        assert target.is_dir(), f"{block.where}: `{step.command}`: no such folder"
        return target
    if argv[0] == "assay" and "spark" not in argv:
        done = assay_here(argv[1:], folder)
    elif argv[0] == "assay":
        command = [sys.executable, "-m", "assay", *argv[1:]]
        done = subprocess.run(command, cwd=folder, env=cli_env(), capture_output=True, text=True, timeout=300)
    else:
        done = subprocess.run(
            ["bash", "-c", step.command],
            cwd=folder,
            env=cli_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
    printed = done.stdout + done.stderr
    expected = step.exits
    if expected is None:
        expected = 2 if any(line.startswith("error:") for line in step.shown) else 0
    assert done.returncode == expected, (
        f"{block.where}: `{step.command}` exited {done.returncode}, "
        f"the example implies {expected}:\n{printed}"
    )
    seen = words(printed)
    for line in step.shown:
        shown = {w for w in words(line) if "…" not in w and "..." not in w}  # an elided word is no word
        missing = sorted(shown - seen)
        assert not missing, f"{block.where}: `{step.command}` did not print {missing} of {line!r}:\n{printed}"
    return folder


def assay_here(args: list[str], folder: Path) -> subprocess.CompletedProcess[str]:
    """``assay ARGS...`` in this process, in ``folder``, in the environment ``cli_env`` gives."""
    hidden = {name: os.environ.pop(name) for name in CLI_HIDDEN if name in os.environ}
    try:
        with contextlib.chdir(folder):
            return completed(*args)
    finally:
        os.environ.update(hidden)


def run_python(block: Block, folder: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", block.text],
        cwd=folder,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{block.where}: the python example failed:\n{done.stdout}{done.stderr}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_examples_run_as_written(document: Path, tmp_path: Path) -> None:
    runnable = [b for b in blocks(document) if b.not_run is None]
    if not runnable:
        return
    copy(tmp_path / "assay-demo")
    folder = tmp_path
    for block in runnable:
        if block.language.startswith("file:"):
            _, name, encoding = block.language.split(":")
            (folder / name).write_bytes(block.text.encode(encoding))
            continue
        if block.language == "python":
            run_python(block, folder)
            continue
        for step in steps(block):
            folder = run_step(step, folder, block)


RUN_BY = re.compile(r"\b(tests/[\w/]+\.py)\b")


def run_by(block: Block) -> Path | None:
    """The test module a not-run block's reason names as running it (a deployment's commands,
    which start servers of their own), if that module exists and reads the block's document."""
    named = RUN_BY.search(block.not_run or "")
    if named is None:
        return None
    module = ROOT / named.group(1)
    if not module.is_file() or block.document.name not in module.read_text(encoding="utf-8"):
        return None
    return module


def test_blocks_not_run_stay_few() -> None:
    marked = [b for d in DOCUMENTS for b in blocks(d) if b.not_run is not None]
    listing = "\n".join(f"  {b.where}: {b.not_run}" for b in marked)
    print(f"{len(marked)} documented block(s) not run here:\n{listing}")
    assert all(b.not_run for b in marked), "a not-run marker needs its reason"
    # a block a named test runs as written (reading it out of the document) is run, elsewhere
    unrun = [b for b in marked if run_by(b) is None]
    listing = "\n".join(f"  {b.where}: {b.not_run}" for b in unrun)
    assert len(unrun) <= MOST_NOT_RUN, f"more than {MOST_NOT_RUN} examples are not run:\n{listing}"


def test_the_parser_reads_markers_exit_codes_and_output(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text(
        "<!-- not-run: installs packages -->\n```console\npip install assay\n```\n\n"
        "```console\n$ assay dqdl validate a.dqdl \\\n    --json   # exits 2\nerror: a.dqdl: no such\n```\n"
        "```python\nprint(1)\n```\n```csv\na,b\n```\n```csv data.csv\na,b\n```\n"
    )
    first, second, third, fourth = blocks(doc)
    assert (fourth.language, fourth.text) == ("file:data.csv:utf-8", "a,b\n")
    assert first.not_run == "installs packages" and second.not_run is None and third.language == "python"
    (step,) = steps(second)
    assert (step.command, step.exits, step.shown) == (
        "assay dqdl validate a.dqdl --json",
        2,
        ["error: a.dqdl: no such"],
    )
    assert second.line == 6
