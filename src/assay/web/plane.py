"""What the web application holds for its whole life: the workspace, the metric store, the clock,
and the workspace's documents (read again only when a file changes).

>>> import tempfile
>>> from datetime import UTC, datetime
>>> clock = datetime(2026, 12, 1, tzinfo=UTC)
>>> plane = Plane(Settings(Path(tempfile.mkdtemp()), store_url="sqlite://", now=clock))
>>> plane.clock().isoformat()
'2026-12-01T00:00:00+00:00'
>>> plane.close()
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from assay import names
from assay.errors import ConfigError
from assay.web.attempts import FAILURES, WINDOW, Attempts
from assay.workspace import Workspace

NAME = re.compile(r"^[^/\\]{1,200}$")  # control characters: names.check_name, first
"""What a dataset, event, expectation or user name in a URL may be: 1 to 200 characters, no
control character and no slash. Names are looked up (an unknown one is a 404), never used as
paths; the one file name made from a name (a new check document's) is checked apart
(:data:`FILE_NAME`)."""

FILE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@-]{0,199}$")
"""A dataset name that may name a new check document's file, ``checks/<name>.yaml``."""

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
PREFIX = re.compile(r"^[0-9a-f-]{4,36}$")


class NotFound(ConfigError):
    """A name or id in a URL that names nothing (HTTP 404)."""


def check_name(value: str, what: str = "name") -> str:
    r"""``value`` if it can be a name: a character no name may hold is a :class:`ConfigError`
    (HTTP 400, :func:`assay.names.check_name`), a slash or a name too long names nothing
    (:class:`NotFound`).

    >>> check_name("payments.trades")
    'payments.trades'
    >>> check_name("a\x00", "dataset")
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: dataset 'a\x00' holds U+0000 (a control character) at position 2: remove it
    >>> check_name("../x", "dataset")
    Traceback (most recent call last):
    ...
    assay.web.plane.NotFound: no such dataset: '../x'
    """
    names.check_name(value, what)
    if not NAME.match(value):
        raise NotFound(f"no such {what}: {value!r}")
    return value


def check_filter(value: str | None, what: str = "dataset") -> str | None:
    """A list's filter by name (``?dataset=``), refused as a name would be; None: no filter."""
    return None if value is None else names.check_name(value, what)


MAX_ID = 2**63 - 1
"""The largest id a store keeps (a signed 64-bit integer, SQLite's and PostgreSQL's bigint)."""


def check_id(value: int, what: str) -> int:
    """``value`` if it can be an id of the store, else :class:`NotFound` (a larger one names
    nothing, and the database would refuse it as a number it cannot hold).

    >>> check_id(12, "decision")
    12
    >>> check_id(10**30, "decision")
    Traceback (most recent call last):
    ...
    assay.web.plane.NotFound: no decision 1000000000000000000000000000000
    """
    if not 1 <= value <= MAX_ID:
        raise NotFound(f"no {what} {value}")
    return value


def check_run_id(value: str) -> str:
    """``value`` if it is a run id (a UUID), else :class:`NotFound`."""
    if not UUID.match(value):
        raise NotFound(f"no such run: {value!r}")
    return value


@dataclass(frozen=True)
class Settings:
    """How ``assay serve`` was started."""

    workspace: Path
    store_url: str | None = None
    now: datetime | None = None  # a fixed clock (the demo's, a replay's); None: the real one
    secure_cookies: bool = False  # cookies only over HTTPS (behind a TLS proxy)
    page_size: int = 50
    login_failures: int = FAILURES  # wrong secrets an address may send within login_window s
    login_window: float = WINDOW


P = ParamSpec("P")
T = TypeVar("T")


def one_transaction(compute: Callable[Concatenate[Plane, P], T]) -> Callable[Concatenate[Plane, P], T]:
    """``compute(plane, ...)`` (the data of one page) with every store read of it in one
    transaction on one connection: a dataset page made 17 reads, each checking a pooled connection
    out (a round trip to ping it), beginning and committing; on PostgreSQL a third of the page's
    time. The page also reads one state of the store throughout."""

    @functools.wraps(compute)
    def read(plane: Plane, /, *args: P.args, **kwargs: P.kwargs) -> T:
        with plane.store.transaction():
            return compute(plane, *args, **kwargs)

    return read


@dataclass
class _Cached:
    stamp: Any  # what the files were when read: (mtime, size), per file
    value: Any


@dataclass
class Plane:
    """The workspace and store a web application serves, opened once."""

    settings: Settings
    workspace: Workspace = field(init=False)
    store: Any = field(init=False)
    attempts: Attempts = field(init=False)
    _documents: dict[Path, _Cached] = field(default_factory=dict, init=False)
    _events: _Cached | None = field(default=None, init=False)
    _kinds: dict[tuple[Path, Any], _Cached] = field(default_factory=dict, init=False)
    _listing: _Cached | None = field(default=None, init=False)
    _summary: _Cached | None = field(default=None, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        from assay.store import MetricStore

        self.attempts = Attempts(self.settings.login_failures, self.settings.login_window)
        self.workspace = Workspace(self.settings.workspace)
        self.workspace.ensure()
        self.store = MetricStore.open(self.settings.store_url, workspace=self.workspace.root)

    @property
    def root(self) -> Path:
        return self.workspace.root

    @property
    def checks(self) -> Path:
        return self.workspace.root / "checks"

    def clock(self) -> datetime:
        """The instant scores, freshness and "now" are read at."""
        return self.settings.now or datetime.now(UTC)

    def close(self) -> None:
        self.store.close()

    # --- documents ------------------------------------------------------------------------------

    def check_documents(self) -> dict[str, tuple[Path, Any]]:
        """Every valid check document in ``checks/``, by dataset name (the first file wins, as
        :func:`~assay.platform.checks.document.find_document` has it)."""
        from assay.platform.checks.document import is_check_document

        found: dict[str, tuple[Path, Any]] = {}
        for path in self._yaml_files():
            if not self._kind(path, is_check_document):
                continue
            document = self._parsed(path)
            if document is not None and document.dataset.name not in found:
                found[document.dataset.name] = (path, document)
        return found

    def document(self, dataset: str) -> tuple[Path, Any] | None:
        """The check document of ``dataset`` and its path, or None."""
        return self.check_documents().get(dataset)

    def events(self) -> dict[str, Any]:
        """The events the workspace's contracts declare, by name (an unreadable file is skipped:
        ``assay check validate`` says what is wrong with it)."""
        from assay.platform.events.document import is_event_contract

        paths = [p for p in self._yaml_files() if self._kind(path=p, test=is_event_contract)]
        stamp = tuple((p, *self._stamp(p)) for p in paths)
        with self._lock:
            if self._events is not None and self._events.stamp == stamp:
                cached: dict[str, Any] = self._events.value
                return cached
        from assay.platform.events.document import ContractError
        from assay.platform.events.event import events, load_contracts

        try:
            found: dict[str, Any] = events(load_contracts(paths)) if paths else {}
        except ContractError:
            found = {}
        with self._lock:
            self._events = _Cached(stamp, found)
        return found

    def relative(self, path: Path) -> str:
        """``path`` as the workspace names it (documents are shown and audited so)."""
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return path.name

    def catalog_summary(self, compute: Any) -> Any:
        """What ``compute()`` answers (the catalog's rollups and facets), computed again only
        when the store's kept catalog entries changed (:meth:`catalog_state`): grouping 10,000
        kept scores took a fifth of a catalog request."""
        state = self.store.catalog_state()
        with self._lock:
            if self._summary is not None and self._summary.stamp == state:
                return self._summary.value
        value = compute()
        with self._lock:
            self._summary = _Cached(state, value)
        return value

    def _yaml_files(self) -> list[Path]:
        """The YAML files of ``checks/``, listed again only when the folder changes (a file
        added, removed or renamed changes the folder's own time): a listing of 1,000 documents
        took a fifth of a catalog request."""
        folder = self.checks
        stamp = self._stamp(folder)
        with self._lock:
            if self._listing is not None and self._listing.stamp == stamp:
                cached: list[Path] = self._listing.value
                return cached
        found = sorted(p for p in folder.glob("*.yaml") if p.is_file()) if folder.is_dir() else []
        with self._lock:
            self._listing = _Cached(stamp, found)
        return found

    def _kind(self, path: Path, test: Any) -> bool:
        """Whether ``test`` (is a check document, is an event contract) holds for the file at
        ``path``, read again only when the file changes."""
        stamp = self._stamp(path)
        with self._lock:
            cached = self._kinds.get((path, test))
            if cached is not None and cached.stamp == stamp:
                return bool(cached.value)
        value = bool(test(path))
        with self._lock:
            self._kinds[(path, test)] = _Cached(stamp, value)
        return value

    @staticmethod
    def _stamp(path: Path) -> tuple[int, int]:
        try:
            stat = path.stat()
        except OSError:
            return (0, 0)
        return (stat.st_mtime_ns, stat.st_size)

    def _parsed(self, path: Path) -> Any:
        from assay.platform.checks.document import DocumentError, load_document

        stamp = self._stamp(path)
        with self._lock:
            cached = self._documents.get(path)
            if cached is not None and cached.stamp == stamp:
                return cached.value
        try:
            document = load_document(path)
        except DocumentError:
            document = None
        with self._lock:
            self._documents[path] = _Cached(stamp, document)
        return document
