"""Where a document may read data from: the workspace's folders and the servers an admin declared.

A check or event document names its source, and a document can be written by any author from the
web: a path in it would otherwise read any file the server can read (``{path: /etc/*}`` lists a
folder, ``../../x.csv`` returns another tenant's rows as samples) and a URL would probe any host and
port. So every source a document names is resolved and checked before anything opens it:

- a path (a file, a glob, a DuckDB database) must resolve, ``..`` and symlinks followed, inside the
  workspace folder or a folder listed under ``sources: paths:`` in ``assay.yaml``; each file a glob
  matches is checked too (a symlink inside the workspace may point out of it);
- a PostgreSQL source must name a server listed under ``sources: servers:`` (``host``, ``host:port``
  or a URL; the port defaults to 5432). No server is implied, not even the store's: its tables hold
  users and token hashes that no author may read through a check;
- an ``s3://bucket/key`` source (an object, a prefix, a glob) must lie under a prefix listed
  under ``sources: buckets:``, compared segment by segment (``s3://drops/in`` does not allow
  ``s3://drops/inbox``); a key holding ``..``, ``.``, a backslash or a %-escape is refused as
  written, never decoded first. No bucket is implied, not even the one ``storage:`` writes to;
- an Iceberg source is a table of the workspace's own warehouse, named, never a path.

``assay.yaml``::

    sources:
      paths: [/srv/vendor-drops, ../shared]   # relative to the workspace folder
      servers: [warehouse.internal:5432]
      buckets: [s3://vendor-drops/daily]

A refused source is a :class:`SourceRefused` (a :class:`~assay.errors.ConfigError`: exit 2, a
``config_error`` outcome in a run, 403 on the web) that names the rule, and nothing is opened: no
file is listed and no connection is tried, so the answer says nothing about what is there.

>>> import tempfile
>>> root = Path(tempfile.mkdtemp())
>>> policy = SourcePolicy.of(root)
>>> policy.path("../data/orders.csv", base=root / "checks") == root / "data" / "orders.csv"
True
>>> policy.path("/etc/passwd", base=root / "checks")
Traceback (most recent call last):
...
assay.platform.sources.SourceRefused: source /etc/passwd is outside the workspace's data folders (...)
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.errors import ConfigError
from assay.lake import storage
from assay.lang import yamlsafe

CONFIG_FILE = "assay.yaml"
DEFAULT_PORT = 5432


class SourceRefused(ConfigError):
    """A document names a source outside what the workspace allows (403 on the web)."""


class _Settings(BaseModel):
    """``sources:`` of ``assay.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    paths: list[str] = Field(default_factory=list)
    servers: list[str] = Field(default_factory=list)
    buckets: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class Server:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def parse_server(text: str) -> Server | None:
    """``host``, ``host:port`` or a URL as a server, or None when it names none.

    >>> parse_server("postgresql://ana:secret@db.internal:6543/analytics")
    Server(host='db.internal', port=6543)
    >>> parse_server("db.internal")
    Server(host='db.internal', port=5432)
    >>> parse_server("db:notaport") is None
    True
    """
    text = text.strip()
    try:
        parts = urlsplit(text if "://" in text else f"//{text}")
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if not host:
        return None
    return Server(host, port or DEFAULT_PORT)


@dataclass(frozen=True)
class SourcePolicy:
    """The folders and servers documents of one workspace may read."""

    roots: tuple[Path, ...]
    servers: tuple[Server, ...] = ()
    config: Path | None = None
    buckets: tuple[storage.Location, ...] = ()

    @classmethod
    def of(cls, workspace: Path) -> SourcePolicy:
        """The policy of the workspace at ``workspace`` (its folder, plus ``sources:`` of its
        ``assay.yaml``); every mistake in that part of the file is one ConfigError."""
        root = workspace.resolve()
        config = workspace / CONFIG_FILE
        raw = yamlsafe.file_part(config, "sources")
        try:
            settings = _Settings.model_validate(raw or {})
        except ValidationError as error:
            lines = [
                f"{config}: sources.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()
            ]
            raise ConfigError("\n".join(lines)) from None
        roots = [root]
        for entry in settings.paths:
            folder = Path(os.path.expanduser(entry))
            roots.append((folder if folder.is_absolute() else root / folder).resolve())
        servers = []
        for entry in settings.servers:
            server = parse_server(entry)
            if server is None:
                raise ConfigError(f"{config}: sources.servers: {entry!r} names no server (write host:port)")
            servers.append(server)
        buckets = []
        for entry in settings.buckets:
            if not storage.is_url(entry):
                raise ConfigError(f"{config}: sources.buckets: {entry!r} is not an s3://bucket/prefix URL")
            try:
                buckets.append(storage.location(entry))
            except ConfigError as error:
                raise ConfigError(f"{config}: sources.buckets: {error.message}") from None
        return cls(tuple(roots), tuple(servers), config, tuple(buckets))

    def _where(self) -> str:
        folders = ", ".join(str(r) for r in self.roots)
        return (
            f"allowed: {folders}; an admin adds folders under sources: paths: in {self.config or CONFIG_FILE}"
        )

    def path(self, text: str, *, base: Path) -> Path:
        """``text`` (a file or glob, relative to ``base``) as an absolute path, refused unless the
        part a glob cannot leave (all of it, for a plain path) lies in an allowed folder."""
        if "\x00" in text:
            raise SourceRefused(f"source {text!r} holds a NUL character")
        given = Path(os.path.expanduser(text)) if text.startswith("~") else Path(text)
        absolute = Path(os.path.normpath(given if given.is_absolute() else base / given))
        if not self._inside(_fixed_part(absolute)):
            raise SourceRefused(f"source {text} is outside the workspace's data folders ({self._where()})")
        return absolute

    def files(self, text: str, *, base: Path) -> list[Path]:
        """The existing files ``text`` names (a file or a glob, relative to ``base``), in name
        order, found once and each refused unless it lies in an allowed folder (a symlink inside
        the workspace may point out of it); [] when none exists (an absent source)."""
        pattern = str(self.path(text, base=base))
        found = sorted(Path(p) for p in glob.glob(pattern)) if glob.has_magic(pattern) else [Path(pattern)]
        matches = [p for p in found if p.exists()]
        self.paths(matches, text)
        return matches

    def objects(self, text: str) -> list[storage.StoredObject]:
        """The objects the ``s3://`` source ``text`` names (an object, a prefix or a glob), in key
        order, refused before anything is listed unless the part a glob cannot leave lies under a
        prefix of ``sources: buckets:``; [] when none exists (an absent source)."""
        self.bucket(text)
        found = storage.objects(text)
        for item in found:
            self.bucket(item.url, text)
        return found

    def bucket(self, url: str, text: str | None = None) -> storage.Location:
        """Refuse the ``s3://`` location ``url`` unless it lies under an allowed prefix (no
        request is made)."""
        try:
            where = storage.location(url)
        except ConfigError as error:
            raise SourceRefused(f"source {error.message}") from None
        fixed = [p for p in where.key.split("/") if p]
        for i, part in enumerate(fixed):
            if glob.has_magic(part):
                fixed = fixed[:i]
                break
        for allowed in self.buckets:
            prefix = [p for p in allowed.key.split("/") if p]
            if allowed.bucket == where.bucket and fixed[: len(prefix)] == prefix:
                return where
        declared = ", ".join(str(b) for b in self.buckets) or "none"
        reaches = f"{text} reaches {url}" if text else url
        raise SourceRefused(
            f"source {reaches}, which is under no bucket prefix the workspace allows (declared: {declared}; "
            f"an admin adds one under sources: buckets: in {self.config or CONFIG_FILE})"
        )

    def paths(self, matches: Sequence[Path], text: str) -> None:
        """Refuse ``matches`` (the files a source found) unless each lies in an allowed folder."""
        for match in matches:
            if not self._inside(match):
                raise SourceRefused(
                    f"source {text} reaches {match}, which is outside the workspace's data folders "
                    f"({self._where()})"
                )

    def server(self, url: str, what: str) -> None:
        """Refuse the server of ``url`` unless an admin declared it (no connection is tried)."""
        server = parse_server(url)
        if server is None:
            raise SourceRefused(f"{what}: the URL names no server")
        if server not in self.servers:
            declared = ", ".join(str(s) for s in self.servers) or "none"
            raise SourceRefused(
                f"{what}: server {server} is not one the workspace allows (declared: {declared}; an admin "
                f"adds it under sources: servers: in {self.config or CONFIG_FILE})"
            )

    def _inside(self, path: Path) -> bool:
        resolved = path.resolve()
        return any(resolved == root or resolved.is_relative_to(root) for root in self.roots)


def confine(source: Any, *, base: Path, workspace: Path) -> None:
    """Refuse a check document's ``source`` unless the workspace at ``workspace`` allows it."""
    policy = SourcePolicy.of(workspace)
    if source.path is not None and storage.is_url(source.path):
        policy.bucket(source.path)  # its objects are checked again as a run lists them
    elif source.path is not None:
        policy.files(source.path, base=base)
    elif source.duckdb is not None:
        policy.paths([policy.path(source.duckdb.path, base=base)], source.duckdb.path)
    elif source.postgres is not None:
        policy.server(source.postgres.url, f"postgres source {source.postgres.table}")


def _fixed_part(path: Path) -> Path:
    """The part of ``path`` before its first glob character: what a glob cannot leave."""
    parts = path.parts
    for i, part in enumerate(parts):
        if glob.has_magic(part):
            return Path(*parts[:i]) if i else Path(path.anchor or ".")
    return path
