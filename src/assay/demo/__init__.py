"""``assay demo``: DQDL on a sample order export, a credit bureau gated month by month, and a
vendor's daily file judged against its own history.

Everything happens in a workspace folder the demo owns (``./assay-demo`` by default), which it
clears and rebuilds on every run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from rich.console import Console

from assay.errors import ConfigError
from assay.workspace import Workspace

MARKER = ".assay-demo"


def prepare(root: Path) -> Workspace:
    """An empty workspace for the demo: a folder the demo made before is cleared; a folder that is
    not empty and was not made by the demo is refused (the demo never deletes anyone's data)."""
    if root.exists() and any(root.iterdir()):
        if not (root / MARKER).exists():
            raise ConfigError(
                f"{root} is not empty and was not made by `assay demo`; choose another --workspace"
            )
        shutil.rmtree(root)
    workspace = Workspace(root)
    workspace.ensure()
    (root / MARKER).write_text("made by `assay demo`; it clears this folder on every run\n")
    return workspace


def run_demo(console: Console, root: Path) -> None:
    """Build the demo in ``root`` (see :func:`prepare`) and tell its story."""
    from assay.demo.credit import Bureau
    from assay.demo.orders import run_orders
    from assay.demo.vendor import run_vendor

    workspace = prepare(root)
    console.print(f"[bold]assay demo[/bold] in {root}\n", highlight=False)
    run_orders(console, workspace)
    console.print()
    Bureau(console, workspace).run()
    console.print()
    run_vendor(console, workspace)
