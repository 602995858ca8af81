"""``assay demo``: DQDL on a sample order export, a credit bureau gated month by month, a
vendor's daily file judged against its own history, a check document run over 30 days, and the
control plane's summary of it all (scores, a certification badge, proposed checks).

Everything happens in a workspace folder the demo owns (``./assay-demo`` by default), which it
clears and rebuilds on every run.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

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


def run_demo(console: Console, root: Path, *, status: Console | None = None) -> dict[str, Any]:
    """Build the demo in ``root`` (see :func:`prepare`), tell its story on ``console`` and return
    what it did as a JSON object (``assay demo --json``). Progress bars go to ``status`` (the
    CLI's stderr), never to ``console``."""
    from assay.demo.credit import Bureau
    from assay.demo.orders import run_orders
    from assay.demo.scores import run_scores
    from assay.demo.trades import run_trades
    from assay.demo.vendor import run_vendor

    status = status or Console(stderr=True)
    workspace = prepare(root)
    console.print(f"[bold]assay demo[/bold] in {root}\n", highlight=False)
    orders = run_orders(console, workspace, status=status)
    console.print()
    bureau = Bureau(console, workspace, status=status).run()
    console.print()
    vendor = run_vendor(console, workspace, status=status)
    console.print()
    checks = run_trades(console, workspace, status=status)
    console.print()
    control = run_scores(console, workspace, badges=checks.get("badges"))
    return {
        "workspace": str(root),
        "orders": orders,
        "bureau": bureau,
        "vendor": vendor,
        "checks": checks,
        "control": control,
    }
