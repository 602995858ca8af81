"""Classified columns never leave assay in clear: THE masking of every output path.

A dataset's check document classifies columns (``dataset.classified: {pii: [new_ic, email]}``,
docs/privacy.md). Wherever the data itself leaves assay (a check's sample rows, a dry run's rows,
a decision's example values, a notification, a profile's top values), a classified value is
replaced by a keyed hash: HMAC-SHA256 with the workspace's secret, shown as ``pii:`` and the first
:data:`DIGITS` hex digits. Equal values give equal hashes, so "the same key failed twice" can
still be said; without the secret a hash cannot be turned back by trying every identity number.

The secret is ``<workspace>/privacy.key``: 32 random bytes (hex), created once with permissions
0600, never printed. Deleting it rotates it: the next run creates a new one, and hashes shown
after no longer match those shown before.

>>> masker = Masker({"email": "pii"}, b"k" * 32)
>>> masker.row({"id": 7, "email": "ana@example.com"})
{'id': 7, 'email': 'pii:ee715d102aea'}
>>> masker.value("email", "ana@example.com") == masker.value("email", "ana@example.com")
True
>>> masker.value("email", None) is None, masker.value("id", 7)
(True, 7)
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import ConfigError

SECRET_FILE = "privacy.key"
DIGITS = 12  # 48 bits: equal values match at a glance; two values of a load collide about never
_SECRET_BYTES = 32
_CLASS = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def classes(classified: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Each column's class from a ``classified:`` section (class -> columns); a ValueError names
    a class that is not a name or a column classified twice.

    >>> classes({"pii": ["new_ic", "email"], "sensitive": ["credit_limit"]})
    {'new_ic': 'pii', 'email': 'pii', 'credit_limit': 'sensitive'}
    >>> classes({"pii": ["email"], "contact": ["email"]})
    Traceback (most recent call last):
    ...
    ValueError: column email is classified twice (pii and contact)
    """
    out: dict[str, str] = {}
    for name, columns in classified.items():
        if not _CLASS.match(name):
            raise ValueError(f"'{name}' is not a class name: use letters, digits, '_' and '-'")
        for column in columns:
            if column in out:
                raise ValueError(f"column {column} is classified twice ({out[column]} and {name})")
            out[column] = name
    return out


def secret(root: Path) -> bytes:
    """The workspace's secret, created (0600, exclusively: two runs starting at once agree on one)
    the first time it is asked for."""
    path = root / SECRET_FILE
    try:
        return bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        pass
    except ValueError:
        raise ConfigError(f"{path} is not a privacy secret: delete it to create a new one") from None
    root.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another run created it between the read and here: take theirs
        return secret(root)
    with os.fdopen(fd, "w") as out:
        out.write(secrets.token_hex(_SECRET_BYTES))
    return secret(root)


@dataclass(frozen=True)
class Masker:
    """Masks the values of ``classes`` (column -> class) with ``key``; other columns pass."""

    classes: Mapping[str, str] = field(default_factory=dict)
    key: bytes = b""

    @classmethod
    def none(cls) -> Masker:
        """Masks nothing: a dataset without classified columns."""
        return cls({}, b"")

    def __bool__(self) -> bool:
        return bool(self.classes)

    def hash(self, column: str, value: Any) -> str:
        """``value`` of ``column`` as its class and keyed hash (the text of the value is hashed,
        so that 7 and '7' of two sources still match)."""
        digest = hmac.new(self.key, str(value).encode(), hashlib.sha256).hexdigest()
        return f"{self.classes[column]}:{digest[:DIGITS]}"

    def value(self, column: str, value: Any) -> Any:
        """``value`` masked if ``column`` is classified (a NULL stays NULL: that it is missing is
        not personal data, and null-rate evidence needs it)."""
        if value is None or column not in self.classes:
            return value
        return self.hash(column, value)

    def row(self, row: Mapping[str, Any]) -> dict[str, Any]:
        return {name: self.value(name, value) for name, value in row.items()}

    def rows(self, rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return [self.row(row) for row in rows]

    def counts(self, column: str, counts: Mapping[str, int] | None) -> dict[str, int] | None:
        """A column's value counts with its values masked (a profile's top values, value set)."""
        if counts is None or column not in self.classes:
            return None if counts is None else dict(counts)
        out: dict[str, int] = {}
        for value, count in counts.items():
            masked = self.value(column, value)
            out[masked] = out.get(masked, 0) + count
        return out


def masker(classes: Mapping[str, str], root: Path) -> Masker:
    """The masker of a dataset's ``classes`` in the workspace at ``root`` (no secret is created
    for a dataset that classifies nothing)."""
    return Masker(dict(classes), secret(root)) if classes else Masker.none()


def mask_profile(profile: Any, masker: Masker) -> Any:
    """A load's column profile (:class:`assay.measure.profile.LoadProfile`) as it may be kept and
    shown: a classified column's value counts hashed (its new values are still found, each as its
    hash), and its minimum, maximum, mean and quantiles dropped, since a hash has no order and a
    minimum of identity numbers is one of them."""
    from dataclasses import replace

    if not masker or profile is None:
        return profile
    columns = [
        c
        if c.name not in masker.classes
        else replace(
            c,
            minimum=None,
            maximum=None,
            shape=None,
            values=masker.counts(c.name, c.values),
            counts=masker.counts(c.name, c.counts),
        )
        for c in profile.columns
    ]
    return replace(profile, columns=columns)
