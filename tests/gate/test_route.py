"""Routing's plan: every row committed, quarantined or held, and the gate's stages below the platform."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import assay.gate
from assay.errors import PlatformError
from assay.gate.route import RouteCountError, RoutePlan


def test_a_plan_whose_counts_do_not_add_up_is_a_named_platform_error() -> None:
    with pytest.raises(
        RouteCountError, match="5 rows, but 3 committed \\+ 1 quarantined \\+ 0 held"
    ) as raised:
        RoutePlan.counted(total=5, committed=3, quarantined=1, held=0)
    assert isinstance(raised.value, PlatformError) and raised.value.exit_code == 3
    plan = RoutePlan.counted(total=5, committed=3, quarantined=1, held=1)
    assert plan.total == plan.committed + plan.quarantined + plan.held


def _imports(path: Path) -> list[tuple[int, str]]:
    """The modules ``path`` imports, at any depth, except under ``if TYPE_CHECKING:``."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def test_the_gate_stages_import_neither_the_platform_nor_the_monitor() -> None:
    """gate/ is a library of stages below the platform (DESIGN.md, "Layout"): not even a
    function-level import reaches up, and no module of it is longer than 700 lines."""
    folder = Path(assay.gate.__file__).parent
    upward = [
        f"{path.name}:{line}: {module}"
        for path in sorted(folder.glob("*.py"))
        for line, module in _imports(path)
        if module.split(".")[:2] in (["assay", "platform"], ["assay", "monitor"])
    ]
    assert upward == []
    long = [path.name for path in folder.glob("*.py") if len(path.read_text().splitlines()) > 700]
    assert long == []
