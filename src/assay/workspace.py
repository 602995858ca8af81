"""The workspace: one folder holding everything runs need (DESIGN.md, "The workspace").

```
assay.db           metric store (unless --store / ASSAY_STORE_URL names another)
warehouse/         Iceberg catalog and table data
dq_error/          quarantined rows
runs/<run_id>.json run summaries
checks/            check documents
assay.yaml         settings (sources:, storage:, ...)
```

``storage:`` in ``assay.yaml`` can put ``runs/`` and ``dq_error/`` under an ``s3://`` prefix each
(:mod:`assay.lake.storage`); the workspace folder then keeps only what runs stage there.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError
from assay.lang import yamlsafe

if TYPE_CHECKING:
    from assay.lake.catalogs import RestSettings, SqlSettings
    from assay.lake.iceberg import Warehouse
    from assay.lake.storage import StorageSettings

DEFAULT = ".assay"
CONFIG_FILE = "assay.yaml"


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
    def checks(self) -> Path:
        """The folder of the dataset documents (``checks/``)."""
        return self.root / "checks"

    def document_for(self, dataset: str) -> Path | None:
        """The document of ``dataset``, by one rule for every reader (the gate's settings, its
        domain columns, the monitor's configuration): ``checks/<dataset>.yaml`` if it exists,
        else the one check document (``kind: DatasetChecks``) whose ``dataset: name:`` is
        ``dataset``, whatever its file is called. None: the dataset has no document.

        >>> import tempfile
        >>> ws = Workspace(Path(tempfile.mkdtemp()))
        >>> ws.checks.mkdir()
        >>> _ = (ws.checks / "accounts.yaml").write_text(
        ...     "kind: DatasetChecks\\ndataset:\\n  name: silver.accounts\\n")
        >>> ws.document_for("silver.accounts").name, ws.document_for("silver.other")
        ('accounts.yaml', None)
        """
        named = self.checks / f"{dataset}.yaml"
        if named.is_file():
            return named
        if not self.checks.is_dir():
            return None
        for path, name in _document_names(self.checks):
            if name == dataset:
                return path
        return None

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

    def warehouse(self) -> Warehouse:
        """The workspace's Iceberg catalog, open: the one ``catalog:`` of its assay.yaml names
        (:mod:`assay.lake.catalogs`), else its own SQLite file. Every reader and writer of tables
        opens it here, so that none of them reads another catalog than the gate commits to.

        >>> import tempfile
        >>> with Workspace(Path(tempfile.mkdtemp())).warehouse() as warehouse:
        ...     warehouse.exists("silver.accounts")
        False
        """
        from assay.lake.iceberg import Warehouse

        return Warehouse.open(self.root, self.catalog(), self.root / CONFIG_FILE)

    def catalog(self) -> SqlSettings | RestSettings | None:
        """The shared catalog ``catalog:`` of the workspace's assay.yaml names, None without one."""
        from assay.lake import catalogs

        config = self.root / CONFIG_FILE
        return catalogs.settings(yamlsafe.file_part(config, "catalog"), config)

    @cached_property
    def storage(self) -> StorageSettings:
        """``storage:`` of the workspace's ``assay.yaml`` (the AWS environment's alone without it)."""
        from assay.lake import storage  # pydantic: not for every command's start (tests/test_cli.py)

        config = self.root / CONFIG_FILE
        return storage.StorageSettings.of(yamlsafe.file_part(config, "storage"), config)

    def published(self, path: Path) -> str:
        """Where the workspace file ``path`` is published: under ``storage: dq_error:`` or
        ``runs:`` when its folder is placed on S3, else the path itself.

        >>> import tempfile
        >>> ws = Workspace(tempfile.mkdtemp())
        >>> ws.published(ws.root / "runs" / "r1.json") == str(ws.root / "runs" / "r1.json")
        True
        """
        from assay.lake import storage

        relative = path.relative_to(self.root).parts
        prefix = {"dq_error": self.storage.dq_error, "runs": self.storage.runs}.get(relative[0])
        if prefix is None:
            return str(path)
        return str(storage.location(prefix).child(*relative[1:]))

    def write_run(self, run_id: str, summary: dict[str, Any]) -> str:
        """Write ``runs/<run_id>.json`` atomically (a reader never sees half a file), in the
        folder or as one object under ``storage: runs:``; returns where it went."""
        from assay.lake import storage

        target = self.published(self.runs / f"{run_id}.json")
        if storage.is_url(target):
            storage.put(target, (json.dumps(summary, indent=2, default=str) + "\n").encode(), self.storage)
            return target
        self.ensure()
        self.runs.mkdir(exist_ok=True)
        path = self.runs / f"{run_id}.json"
        partial = path.with_suffix(".json.partial")
        partial.write_text(json.dumps(summary, indent=2, default=str) + "\n")
        partial.replace(path)
        return str(path)


def is_check_document(path: Path) -> bool:
    """Whether the YAML file at ``path`` says ``kind: DatasetChecks`` (read cheaply, never fails)."""
    try:
        with path.open(encoding="utf-8") as handle:
            head = handle.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    return bool(re.search(r"^kind:\s*['\"]?DatasetChecks['\"]?\s*(#.*)?$", head, re.MULTILINE))


_NAMES: dict[str, tuple[int, int, object]] = {}
"""What each check document names, by its path, with the file's ``(mtime_ns, size)`` when read."""


def _document_names(folder: Path) -> Iterator[tuple[Path, object]]:
    """Each ``*.yaml`` file of ``folder`` in name order, with the dataset its check document names
    (None: not a check document, or unreadable).

    A file is parsed again only when its modification time or size changed since this process
    last read it: a worker running a morning of 10,000 due documents, or the web serving them,
    looked each document's name up by parsing every document of the folder, 10,000 parses for
    each run. A listing with one ``stat`` per file (os.scandir) stays, so a document added,
    removed, renamed or edited is seen on the next lookup, exactly as before."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(
                (e for e in listing if e.name.endswith(".yaml") and not e.name.startswith(".")),
                key=lambda e: e.name,
            )
    except OSError:
        return
    for entry in entries:
        try:
            if not entry.is_file():
                continue
            stat = entry.stat()
        except OSError:
            continue
        cached = _NAMES.get(entry.path)
        if cached is not None and cached[0] == stat.st_mtime_ns and cached[1] == stat.st_size:
            name = cached[2]
        else:
            path = Path(entry.path)
            name = _names(path) if is_check_document(path) else None
            _NAMES[entry.path] = (stat.st_mtime_ns, stat.st_size, name)
        yield Path(entry.path), name


def _names(path: Path) -> object:
    """The ``dataset: name:`` of the check document at ``path`` (None if it cannot be read)."""
    try:
        raw = yamlsafe.load(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, ConfigError):
        return None
    found = raw.get("dataset") if isinstance(raw, dict) else None
    return found.get("name") if isinstance(found, dict) else None


def store_url(explicit: str | None = None) -> str | None:
    """The metric store URL from ``--store`` or ``ASSAY_STORE_URL``.

    None means the SQLite file of the workspace."""
    return explicit or os.environ.get("ASSAY_STORE_URL") or None
