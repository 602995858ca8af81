"""The documentation keeps up with the code: every rule type and every CLI option is documented
(datasette's habit: a test fails when something is undocumented)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from assay.cli import app
from assay.lang.dqdl.catalog import RULE_TYPES

ROOT = Path(__file__).parent.parent
DOCS = "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])


@pytest.mark.parametrize("name", [t.name for t in RULE_TYPES])
def test_every_rule_type_is_documented(name: str) -> None:
    assert name in (ROOT / "docs" / "dqdl.md").read_text()


def _options(group: typer.Typer, prefix: str) -> list[tuple[str, str]]:
    command = typer.main.get_command(group)
    found: list[tuple[str, str]] = []

    def walk(cmd: object, path: str) -> None:
        for param in getattr(cmd, "params", []):
            for opt in getattr(param, "opts", []):
                if opt.startswith("--") and opt not in ("--help", "--version"):
                    found.append((path, opt))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(command, prefix)
    return found


@pytest.mark.parametrize(("command", "option"), _options(app, "assay"))
def test_every_cli_option_is_documented(command: str, option: str) -> None:
    assert option in DOCS, f"{command} {option} is not documented"
