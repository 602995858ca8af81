"""The monitor is a stage library: its settings, its history read model and its drift judgements
take values and return values. The profile run (the Run, its commit, its alerts) is the
platform's (issue 29): nothing under ``assay/monitor/`` imports the platform or the gate, not
even inside a function, and the judgements are one small class each in one table."""

from __future__ import annotations

import ast
from pathlib import Path

import assay

SRC = Path(assay.__file__).parent


def _imports(path: Path) -> list[str]:
    """Every module a file imports, at any depth, except under ``if TYPE_CHECKING:``."""
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
            found.extend(f"{node.module}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def test_the_monitor_imports_neither_the_platform_nor_the_gate() -> None:
    package = SRC / "monitor"
    assert package.is_dir(), "assay.monitor is a package"
    wrong = {
        f"{path.relative_to(SRC)}: {name}"
        for path in sorted(package.rglob("*.py"))
        for name in _imports(path)
        if name.startswith(("assay.platform", "assay.gate"))
    }
    assert not wrong


def test_the_drift_judgements_are_pure() -> None:
    files = sorted((SRC / "judge" / "drift").rglob("*.py"))
    assert files
    io = (
        "assay.platform",
        "assay.gate",
        "assay.monitor",
        "assay.lake",
        "assay.engine.registry",
        "assay.store",
    )
    wrong = {
        f"{path.relative_to(SRC)}: {name}"
        for path in files
        for name in _imports(path)
        # the store's record types and type vocabulary are values; reading the store is I/O
        if name.startswith(io) and not name.startswith("assay.store.profiles")
    }
    assert not wrong


def test_one_small_class_per_judgement_in_one_table() -> None:
    from assay.judge.drift import JUDGEMENTS

    assert [j.kind for j in JUDGEMENTS] == [
        "schema",
        "volume",
        "null_rate",
        "range",
        "new_value",
        "shape",
        "default_value",
        "swap",
        "swap",
        "vanished_value",
        "duplicate_load",
    ]
    assert all(j.statement and "\n" not in j.statement for j in JUDGEMENTS)


def test_every_module_is_at_most_700_lines() -> None:
    modules = [*(SRC / "monitor").rglob("*.py"), *(SRC / "judge" / "drift").rglob("*.py")]
    modules.append(SRC / "platform" / "runs" / "profile.py")
    long = {str(p.relative_to(SRC)): n for p in modules if (n := len(p.read_text().splitlines())) > 700}
    assert not long


def test_the_profile_run_is_the_platforms_in_steps() -> None:
    from assay.platform.runs.driver import Flow
    from assay.platform.runs.profile import ProfileFlow

    # the driver owns the outline and the commit; the flow hands it these steps
    steps = ("read", "measure", "persist", "judge", "settle")
    assert issubclass(ProfileFlow, Flow) and all(callable(getattr(ProfileFlow, step, None)) for step in steps)
