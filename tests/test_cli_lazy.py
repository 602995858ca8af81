"""The command tree built only along the command line's path (assay._cli_lazy) behaves as the
whole tree does: the same help for every command and group, the same refusals, and a stand-in is
never what runs."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from typing import Any

import pytest
import typer

from assay._cli_lazy import command_for
from assay.cli import app


def _paths() -> list[list[str]]:
    found: list[list[str]] = [[]]

    def walk(group: Any, path: list[str]) -> None:
        for name, sub in sorted(group.commands.items()):
            found.append([*path, name])
            if getattr(sub, "commands", None):
                walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def _shown(command: Any, args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            code = command.main(args=args, prog_name="assay", standalone_mode=False)
        except SystemExit as done:  # pragma: no cover - standalone_mode=False returns instead
            code = done.code
        except Exception as error:  # click's usage errors: compare their messages
            code, _ = 2, out.write(f"{type(error).__name__}: {error}")
    return int(code or 0), out.getvalue()


PATHS = _paths()


def test_the_tree_has_the_commands_this_test_walks() -> None:
    # a walk that found nothing would make every comparison below vacuous
    assert len(PATHS) > 45
    assert ["check", "run"] in PATHS and ["profile"] in PATHS


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "assay")
def test_help_is_the_same_as_the_whole_tree_gives(monkeypatch: pytest.MonkeyPatch, path: list[str]) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    args = [*path, "--help"]
    whole = _shown(typer.main.get_command(app), args)
    lazy = _shown(command_for(app, args), args)
    assert lazy == whole
    assert whole[0] == 0 and "Usage: assay" in whole[1]


@pytest.mark.parametrize(
    "args",
    [["nosuch"], ["check", "nosuch"], ["--nosuch"], ["profile"], ["check"], ["--version"], ["check", "run"]],
    ids=" ".join,
)
def test_refusals_and_bare_groups_are_the_same(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert _shown(command_for(app, args), args) == _shown(typer.main.get_command(app), args)


def test_only_the_named_path_is_built_in_full() -> None:
    root = command_for(app, ["check", "run", "x.yaml"])
    # the named command has its options; a sibling at each level is a stand-in without any
    assert any(p.name == "workspace" for p in root.commands["check"].commands["run"].params)
    assert [p.name for p in root.commands["check"].commands["plan"].params] == []
    assert [p.name for p in root.commands["profile"].params] == []
    whole = typer.main.get_command(app)
    assert len(whole.commands["profile"].params) > 5


def _fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter (nothing of rich or typer imported yet); its stdout."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_help_does_not_load_what_it_never_shows() -> None:
    shown = _fresh(
        "import io, sys, contextlib\n"
        "from assay.cli import main\n"
        "sys.argv = ['assay', '--help']\n"
        "with contextlib.redirect_stdout(io.StringIO()) as text:\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        "loaded = [m in sys.modules for m in ('markdown_it', 'rich.markdown')]\n"
        "print('Usage: assay' in text.getvalue(), *loaded)\n"
    )
    assert shown.split() == ["True", "False", "False"]


def test_the_help_renderers_stand_ins_are_the_real_classes_on_use() -> None:
    shown = _fresh(
        "import sys\n"
        "from assay._cli_lazy import load_help_renderer\n"
        "load_help_renderer()\n"
        "import typer.rich_utils as ru\n"
        "assert 'rich.markdown' not in sys.modules and 'rich.traceback' not in sys.modules\n"
        "from rich.console import Console\n"
        "made = ru._make_rich_text(text='**bold** text', style='', markup_mode='markdown')\n"
        "from rich.markdown import Markdown\n"
        "from rich.traceback import Traceback\n"
        "assert type(made) is Markdown and isinstance(made, ru.Markdown)\n"
        "assert ru.Traceback.from_exception.__func__ is Traceback.from_exception.__func__\n"
        "console = Console(width=40, color_system=None)\n"
        "with console.capture() as seen:\n"
        "    console.print(made)\n"
        "print(seen.get().strip())\n"
    )
    assert shown.strip() == "bold text"
