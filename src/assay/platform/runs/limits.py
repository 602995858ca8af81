"""What one machine lets a run's engine use: ``engine:`` of the workspace's ``assay.yaml``.

```yaml
engine:
  memory_limit: 2GB              # DuckDB holds at most this much; the rest spills to disk
  threads: 2                     # default: one per core
  max_temp_directory_size: 50GB  # default: 90 % of the free disk
```

Every run of the workspace (``dqdl run``, ``profile``, ``gate``, ``check run``, a worker's runs)
opens its DuckDB engine within these limits, spilling into ``tmp/duckdb/<run id>/`` inside the
workspace, which the driver removes when the run ends (docs/operations.md, "Memory limit and
spilling"). A file without ``engine:`` leaves DuckDB's defaults (80 % of the memory) but still
spills into the workspace, never into the folder the process started in.

>>> import tempfile
>>> root = Path(tempfile.mkdtemp())
>>> _ = (root / "assay.yaml").write_text("engine:\\n  memory_limit: 2GB\\n  threads: 2\\n")
>>> limits = engine_limits(root, "r1")
>>> limits.memory_limit, limits.threads, limits.temp_directory.relative_to(root).as_posix()
('2GB', 2, 'tmp/duckdb/r1')
>>> _ = (root / "assay.yaml").write_text("engine:\\n  memory_limit: lots\\n")
>>> engine_limits(root, "r1")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
assay.errors.ConfigError: .../assay.yaml: engine.memory_limit: 'lots' is not a size (write it as 512MB, ...)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from assay.engine import Limits
from assay.lang import yamlsafe

CONFIG_FILE = "assay.yaml"
SPILL_FOLDER = ("tmp", "duckdb")  # under the workspace; one folder a run inside it

# DuckDB's own units (a size is passed to it as written, never parsed into SQL text)
_SIZE = re.compile(r"\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.IGNORECASE)


class _Settings(BaseModel):
    """``engine:`` of ``assay.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    memory_limit: str | None = None
    threads: int | None = Field(default=None, ge=1)
    max_temp_directory_size: str | None = None

    @field_validator("memory_limit", "max_temp_directory_size", mode="before")
    @classmethod
    def _size(cls, value: Any) -> Any:
        if value is not None and not (isinstance(value, str) and _SIZE.fullmatch(value.strip())):
            raise ValueError(f"{value!r} is not a size (write it as 512MB, 2GB or 1.5GiB)")
        return value.strip() if isinstance(value, str) else value


def engine_limits(workspace: Path, run_id: str) -> Limits:
    """The limits of run ``run_id``'s engine in the workspace at ``workspace``: ``engine:`` of its
    ``assay.yaml`` (every mistake in it one ConfigError naming the file and the field), spilling
    into :func:`spill_folder`."""
    config = workspace / CONFIG_FILE
    settings = yamlsafe.model_part(config, "engine", _Settings)
    return Limits(
        memory_limit=settings.memory_limit,
        threads=settings.threads,
        temp_directory=spill_folder(workspace, run_id),
        max_temp_directory_size=settings.max_temp_directory_size,
    )


def spill_folder(workspace: Path, run_id: str) -> Path:
    """Where run ``run_id``'s engine spills: ``tmp/duckdb/<run id>`` in the workspace (a folder
    of its own, so that a worker's runs side by side never remove each other's files)."""
    return workspace.joinpath(*SPILL_FOLDER, run_id)
