"""File checksums, read in blocks so that a large file never sits in memory."""

from __future__ import annotations

import hashlib
from pathlib import Path


def digest(path: Path, algorithm: str = "sha256") -> str:
    """The hex digest of a file's bytes.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "x"
    >>> _ = p.write_bytes(b"abc")
    >>> digest(p)[:12]
    'ba7816bf8f01'
    """
    hasher = hashlib.new(algorithm)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(block)
    return hasher.hexdigest()
