"""Names a user writes: which ones may be names at all (:func:`check_name`, one rule for the
CLI and the web), and how a name finds a column (:func:`match_name`, one rule for rules,
conditions and queries).

Spark, which Glue runs on, matches names regardless of case; assay does too, after an exact
match, and failing that also regardless of surrounding spaces (a CSV header's ``"Amount "``).
Two input columns whose names are equal but for case are one name to the engines, so the later
is held under another name (``A_1``, its input's name ``A`` kept as its source): a reference
that is not exactly a held name and matches such a column is ambiguous, never the other column.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping, Sequence

from assay.errors import ConfigError

BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Unicode's Bidi_Control characters (UAX #9): marks, embeddings, overrides and isolates. In a
name they make it read otherwise than it is stored (``U+202E`` turns ``txt.exe`` around), so
two names that look alike are not alike, and a terminal or a page shows a lie."""


def check_name(name: str, what: str = "name") -> str:
    r"""``name`` if it may name a dataset (or an event, an expectation, …), else a
    :class:`ConfigError` that says which character is refused and where: a name is not empty and
    holds no control character (C0, DEL, C1: NUL, escape sequences and line breaks among them)
    and no bidi control (:data:`BIDI_CONTROLS`).

    >>> check_name("payments.trades", "dataset name")
    'payments.trades'
    >>> check_name("a\u202eb", "dataset")
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: dataset 'a\u202eb' holds U+202E (a bidi control) at position 2: remove it
    """
    if not name:
        raise ConfigError(f"{what} is empty: write a name")
    for position, character in enumerate(name, start=1):
        if character in BIDI_CONTROLS:
            kind = "a bidi control"
        elif unicodedata.category(character) == "Cc":
            kind = "a control character"
        else:
            continue
        raise ConfigError(
            f"{what} {name!r} holds U+{ord(character):04X} ({kind}) at position {position}: remove it"
        )
    return name


def _spaceless(text: str) -> str:
    return text.strip().casefold()


_FOLDS: tuple[Callable[[str], str], ...] = (str.casefold, _spaceless)


def match_name(
    name: str, held: Sequence[str], sources: Mapping[str, str] | None = None
) -> tuple[str | None, list[str]]:
    """The held name ``name`` refers to, and ``(None, matches)`` when it is ambiguous (``(None,
    [])`` when there is none). ``sources`` maps a held name the engine chose to the input's.

    >>> held = ["a", "A_1", "Total "]
    >>> [match_name(n, held, {"A_1": "A"}) for n in ("a", "A_1", "total", "A")]
    [('a', []), ('A_1', []), ('Total ', []), (None, ['a', 'A_1'])]
    """
    if name in held:
        return name, []
    given = sources or {}
    for fold in _FOLDS:
        matches = [h for h in held if fold(name) in (fold(h), fold(given.get(h, h)))]
        if len(matches) == 1 and matches[0] not in given:
            return matches[0], []
        if matches:
            return None, matches
    return None, []
