"""Pages of long lists: every list the control plane shows is cut into pages of at most
:data:`MAX_PER_PAGE` items, and says how many there are in all.

>>> p = Page.of(page=2, per_page=20)
>>> p.offset, p.limit
(20, 20)
>>> p.wrap(["a"], total=41)["pages"]
3
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.errors import ConfigError

MAX_PER_PAGE = 200
DEFAULT_PER_PAGE = 50
MAX_PAGE = 1_000_000
"""The last page a request may ask for: 200 million items at 200 a page, far past any list kept,
and an offset every store holds in a 64-bit integer (a page of 30 digits was a 500)."""


@dataclass(frozen=True)
class Page:
    page: int = 1
    per_page: int = DEFAULT_PER_PAGE

    @classmethod
    def of(cls, page: int | None = None, per_page: int | None = None) -> Page:
        """A page from a request's ``page`` and ``per_page``; a ConfigError when out of range."""
        number = 1 if page is None else page
        size = DEFAULT_PER_PAGE if per_page is None else per_page
        if not 1 <= number <= MAX_PAGE:
            raise ConfigError(f"page must be between 1 and {MAX_PAGE}, not {number}")
        if not 1 <= size <= MAX_PER_PAGE:
            raise ConfigError(f"per_page must be between 1 and {MAX_PER_PAGE}, not {size}")
        return cls(number, size)

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page

    @property
    def limit(self) -> int:
        return self.per_page

    def cut(self, items: Sequence[Any]) -> list[Any]:
        """This page of a list held whole."""
        return list(items[self.offset : self.offset + self.per_page])

    def wrap(self, items: Sequence[Any], *, total: int) -> dict[str, Any]:
        """The JSON of a page: its items, where it is, and how many there are in all."""
        return {
            "items": list(items),
            "page": self.page,
            "per_page": self.per_page,
            "total": total,
            "pages": max(1, -(-total // self.per_page)),
        }
