"""The workspace: one folder holding everything runs need (DESIGN.md, "The workspace").

```
assay.db           metric store (unless --store / ASSAY_STORE_URL names another)
warehouse/         Iceberg catalog and table data
dq_error/          quarantined rows
runs/<run_id>.json run summaries
checks/            check documents
```
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from assay.errors import ConfigError

DEFAULT = ".assay"


class Workspace:
    """A workspace folder; created on first use.

    >>> import tempfile
    >>> ws = Workspace(Path(tempfile.mkdtemp()) / "ws")
    >>> ws.runs.name
    'runs'
    """

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root or os.environ.get("ASSAY_WORKSPACE") or DEFAULT)

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    @property
    def store_path(self) -> Path:
        return self.root / "assay.db"

    def ensure(self) -> Path:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ConfigError(f"cannot create workspace {self.root}: {error.strerror}") from None
        return self.root

    def existing(self, store: str | None = None) -> Path:
        """The workspace a command only reads (its store, unless ``store`` names another, or
        its tables): refused if it does not exist, rather than created empty by a typo."""
        if store is None and not self.root.is_dir():
            raise ConfigError(
                f"no workspace at {self.root}: nothing was recorded there "
                "(--workspace or ASSAY_WORKSPACE names the one runs wrote to)"
            )
        return self.root

    def write_run(self, run_id: str, summary: dict[str, Any]) -> Path:
        """Write ``runs/<run_id>.json`` atomically (a reader never sees half a file)."""
        self.ensure()
        self.runs.mkdir(exist_ok=True)
        path = self.runs / f"{run_id}.json"
        partial = path.with_suffix(".json.partial")
        partial.write_text(json.dumps(summary, indent=2, default=str) + "\n")
        partial.replace(path)
        return path


def store_url(explicit: str | None = None) -> str | None:
    """The metric store URL from ``--store`` or ``ASSAY_STORE_URL``.

    None means the SQLite file of the workspace."""
    return explicit or os.environ.get("ASSAY_STORE_URL") or None
