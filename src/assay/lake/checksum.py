"""File checksums, read in blocks so that a large file never sits in memory, and started early.

A command that will need an input's checksum calls :func:`begin` as soon as it knows the path,
before it imports the engine and the store: the file is read and hashed on a thread of its own
(``hashlib`` and file reads release the GIL) while the interpreter, which holds one core,
imports modules. :func:`later` then hands that digest to whoever asks for the same file, if the
file is still the one that was read (same size, modification time and inode); otherwise it
starts a new one. On the 400 MB Parquet file of ``bench/profile.py``, SHA-256 takes 0.23 s of
CPU: read during the query, it took a core from the query; read during the imports, it is free.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from concurrent.futures import CancelledError, Future
from pathlib import Path

BLOCK = 16 << 20  # bytes read and hashed at a time

# Digests begun and not yet taken, by the file's identity (see _identity).
_begun: dict[tuple[str, int, int, int], Checksum] = {}
_lock = threading.Lock()


def digest(path: Path, algorithm: str = "sha256", stop: threading.Event | None = None) -> str:
    """The hex digest of a file's bytes (CancelledError once ``stop`` is set). Read in large
    blocks into one buffer: both the read and the hashing of a block release the GIL, and a
    thread that must take the GIL back once a megabyte waits behind an importing interpreter
    for up to its switch interval each time (the bench's 400 MB took 1 s instead of 0.23 s).

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "x"
    >>> _ = p.write_bytes(b"abc")
    >>> digest(p)[:12]
    'ba7816bf8f01'
    """
    hasher = hashlib.new(algorithm)
    with path.open("rb", buffering=0) as handle:
        size = os.fstat(handle.fileno()).st_size
        buffer = memoryview(bytearray(max(1, min(BLOCK, size))))
        while read := handle.readinto(buffer):
            if stop is not None and stop.is_set():
                raise CancelledError(f"the checksum of {path} was no longer needed")
            hasher.update(buffer[:read])
    return hasher.hexdigest()


class Checksum:
    """A file's SHA-256 being read on a daemon thread: :meth:`result` waits for it (and raises
    what reading raised), :meth:`cancel` stops the reading at its next block."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._future: Future[str] = Future()
        self._stop = threading.Event()
        threading.Thread(target=self._read, name=f"checksum {path.name}", daemon=True).start()

    def _read(self) -> None:
        try:
            self._future.set_result(digest(self.path, stop=self._stop))
        except BaseException as error:  # handed to result()
            self._future.set_exception(error)

    def result(self) -> str:
        return self._future.result()

    def cancel(self) -> None:
        self._stop.set()


def _identity(path: Path) -> tuple[str, int, int, int] | None:
    """What tells one version of a regular file from another; None if it is no regular file."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(found.st_mode):
        return None
    return (os.path.realpath(path), found.st_size, found.st_mtime_ns, found.st_ino)


def begin(path: Path | str) -> Checksum | None:
    """Start reading the checksum of ``path`` for a later :func:`later` (None, and nothing
    started, if it is not a regular file)."""
    path = Path(path)
    key = _identity(path)
    if key is None:
        return None
    with _lock:
        if key not in _begun:
            _begun[key] = Checksum(path)
        return _begun[key]


def later(path: Path | str) -> Checksum | None:
    """The checksum of ``path`` being read: the one :func:`begin` started if the file has not
    changed since, else a new one (None if ``path`` is not a regular file). Each begun checksum
    is handed out once."""
    path = Path(path)
    key = _identity(path)
    if key is None:
        return None
    with _lock:
        found = _begun.pop(key, None)
    return found if found is not None else Checksum(path)
