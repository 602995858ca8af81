"""Whether runs emit OpenLineage events, and where to: the client's own configuration, and
``lineage:`` of the workspace's ``assay.yaml``.

The official client (``pip install 'assay[openlineage]'``) is configured as it always is: an
``openlineage.yml`` (``OPENLINEAGE_CONFIG``, the current folder, ``~/.openlineage/``),
``OPENLINEAGE_URL`` or ``OPENLINEAGE__TRANSPORT__*`` variables. Left to itself the client prints
events to the console when it finds none of these; assay emits nothing then, and does not even
import the client (a run pays nothing for a feature nobody configured). ``assay.yaml`` may add:

```yaml
lineage:
  enabled: false        # no events from this workspace, whatever the environment says
  namespace: assay      # the jobs' namespace (default: assay)
  timeout: 5            # seconds a run waits at most for its events at its end (default: 5)
  transport:            # the client's transport, as openlineage.yml's transport: writes it
    type: file
    log_file_path: lineage/events.jsonl   # relative: to the workspace
    append: true
```

>>> import tempfile
>>> root = Path(tempfile.mkdtemp())
>>> settings(root, environ={}, cwd=root, home=root) is None
True
>>> settings(root, environ={"OPENLINEAGE_URL": "http://127.0.0.1:5000"}, cwd=root, home=root).timeout
5.0
>>> _ = (root / "assay.yaml").write_text("lineage:\\n  enabled: false\\n")
>>> settings(root, environ={"OPENLINEAGE_URL": "http://127.0.0.1:5000"}, cwd=root, home=root) is None
True
>>> _ = (root / "assay.yaml").write_text("lineage:\\n  timeout: soon\\n")
>>> settings(root, environ={}, cwd=root, home=root)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
assay.errors.ConfigError: .../assay.yaml: lineage.timeout: Input should be a valid number...
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.lang import yamlsafe

CONFIG_FILE = "assay.yaml"
NAMESPACE = "assay"
TIMEOUT = 5.0
# what makes the client configured (its own rules: openlineage/client/client.py)
URL_VARIABLE = "OPENLINEAGE_URL"
CONFIG_VARIABLE = "OPENLINEAGE_CONFIG"
TRANSPORT_PREFIX = "OPENLINEAGE__TRANSPORT__"
DISABLED_VARIABLE = "OPENLINEAGE_DISABLED"
CLIENT_FILE = "openlineage.yml"

_ONE_RUN: ContextVar[dict[str, Any] | None] = ContextVar("assay_lineage_transport", default=None)


class _Lineage(BaseModel):
    """``lineage:`` of ``assay.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    enabled: bool = True
    namespace: str = Field(default=NAMESPACE, min_length=1)
    timeout: float = Field(default=TIMEOUT, gt=0, le=300)
    transport: dict[str, Any] | None = None


@dataclass(frozen=True)
class Settings:
    """Where a run's events go: ``transport`` (the client's ``transport:`` configuration) or,
    when None, wherever the client's own configuration says; ``namespace`` of the jobs;
    ``timeout``, the most a run waits for its events at its end."""

    namespace: str = NAMESPACE
    timeout: float = TIMEOUT
    transport: Mapping[str, Any] | None = field(default=None)


def settings(
    workspace: Path,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    home: Path | None = None,
) -> Settings | None:
    """The workspace's lineage settings, or None when no event is to be emitted (nothing
    configured, ``OPENLINEAGE_DISABLED=true`` or ``lineage: {enabled: false}``). Reads no more
    than ``assay.yaml`` and the environment: the client is imported only to emit."""
    config = workspace / CONFIG_FILE
    part = yamlsafe.model_part(config, "lineage", _Lineage)
    env = os.environ if environ is None else environ
    if not part.enabled or env.get(DISABLED_VARIABLE, "").strip().lower() == "true":
        return None
    chosen = _ONE_RUN.get()
    if chosen is None and part.transport is not None:
        chosen = _in_workspace(part.transport, workspace)
    if chosen is None and not _client_configured(env, cwd or Path.cwd(), home or Path.home()):
        return None
    return Settings(part.namespace, part.timeout, chosen)


@contextmanager
def emitting_to(transport: Mapping[str, Any]) -> Iterator[None]:
    """The runs started inside send their events through ``transport`` (a client transport's
    configuration), whatever else is configured: the demo writes one run's events to a file.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> with emitting_to({"type": "file", "log_file_path": "/tmp/events.jsonl"}):
    ...     settings(root, environ={}, cwd=root, home=root).transport["type"]
    'file'
    """
    token = _ONE_RUN.set(dict(transport))
    try:
        yield
    finally:
        _ONE_RUN.reset(token)


def _client_configured(env: Mapping[str, str], cwd: Path, home: Path) -> bool:
    """Whether the client finds a configuration of its own (else it would print to the console)."""
    if env.get(URL_VARIABLE) or any(k.startswith(TRANSPORT_PREFIX) for k in env):
        return True
    named = env.get(CONFIG_VARIABLE)
    candidates = [Path(named)] if named else []
    candidates += [cwd / CLIENT_FILE, home / ".openlineage" / CLIENT_FILE]
    return any(path.is_file() for path in candidates)


def _in_workspace(transport: Mapping[str, Any], workspace: Path) -> dict[str, Any]:
    """A file transport's relative ``log_file_path`` is the workspace's, not the process's folder."""
    out = dict(transport)
    path = out.get("log_file_path")
    if (
        out.get("type") == "file"
        and isinstance(path, str)
        and "://" not in path
        and not Path(path).is_absolute()
    ):
        out["log_file_path"] = str(workspace / path)
    return out
