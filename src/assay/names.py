"""How a name a user writes finds a column: one rule for rules, conditions and queries.

Spark, which Glue runs on, matches names regardless of case; assay does too, after an exact
match, and failing that also regardless of surrounding spaces (a CSV header's ``"Amount "``).
Two input columns whose names are equal but for case are one name to the engines, so the later
is held under another name (``A_1``, its input's name ``A`` kept as its source): a reference
that is not exactly a held name and matches such a column is ambiguous, never the other column.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence


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
