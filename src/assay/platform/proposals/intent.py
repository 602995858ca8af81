"""What a sentence asks about, matched to proposals offline: no model, no download.

A sentence ("settlement never before execution", "no missing customer ids", "volume per
region") is cut into words; each word is matched to the **columns** a proposal is about (their
names cut at ``_`` and case changes, and their descriptions in the document's ``columns:``)
and to its **kind** through :data:`SYNONYMS`, a small hand-made table of the words people use
for each kind. Two words match when they are equal after plural and verb endings are cut
(``ids`` → ``id``, ``settlement`` → ``settle``) or one begins the other (``exec`` and
``execution``). A column word counts 2, weighted by its rarity (a word that names every column,
``id``, says little), a description word 0.5, a kind word 1. Proposals that match no column the
sentence names are left out (unless they are about no column: a volume or freshness), and so are
those scoring under :data:`KEEP` of the best one; ties go to the kind the sentence names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from assay.platform.proposals.candidate import Candidate

SYNONYMS: dict[str, tuple[str, ...]] = {
    "completeness": (
        "missing", "null", "nulls", "empty", "blank", "complete", "completeness", "present",
        "filled", "absent", "lack", "always", "every",
    ),
    "uniqueness": (
        "unique", "uniqueness", "duplicate", "duplicates", "distinct", "once", "key", "twice", "repeat",
    ),
    "values": (
        "value", "values", "allowed", "category", "categories", "set", "valid", "unknown", "new",
        "list", "only", "known", "domain",
    ),
    "range": (
        "range", "between", "min", "max", "minimum", "maximum", "negative", "bound", "bounds",
        "limit", "outlier", "large", "small", "high", "low",
    ),
    "volume": ("volume", "count", "rows", "row", "many", "drop", "spike", "traffic", "size", "number", "per"),
    "freshness": (
        "fresh", "freshness", "late", "stale", "delay", "arrive", "arrival", "timely", "recent", "old",
    ),
    "order": (
        "before", "after", "order", "earlier", "later", "precede", "never", "exceed", "greater",
        "less", "than", "sequence", "ahead", "behind",
    ),
    "classify": (
        "classify", "classified", "pii", "personal", "private", "privacy", "mask", "sensitive",
        "email", "phone", "identity", "card", "gdpr", "protect", "leak",
    ),
}  # fmt: skip
"""The words people use for each kind of check (lowercase; matched like column words)."""

STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "by",
        "and",
        "or",
        "no",
        "not",
        "is",
        "are",
        "be",
        "it",
        "its",
        "at",
        "with",
        "from",
        "as",
        "that",
        "this",
        "we",
        "i",
        "our",
        "should",
        "must",
        "any",
        "all",
        "each",
    ]
)
KEEP = 0.6
COLUMN, DESCRIPTION, KIND = 2.0, 0.5, 1.0
_WORD = re.compile(r"[A-Za-z][a-z]*|[a-z]+|[0-9]+")
_ENDINGS = ("ments", "ment", "ings", "ing", "ed", "s", "ion")  # one ending, tried in this order


def words(text: str) -> list[str]:
    """The words of a sentence or a column name, lowercased, stop words left out.

    >>> words("No missing customerIds"), words("settled_at")
    (['missing', 'customer', 'ids'], ['settled'])
    """
    found = [w.lower() for w in _WORD.findall(text.replace("_", " "))]
    return [w for w in found if w not in STOP]


def stem(word: str) -> str:
    """``word`` without a plural or verb ending (kept at three letters at least).

    >>> [stem(w) for w in ("ids", "settlement", "settled", "execution", "regions", "fees")]
    ['id', 'settle', 'settl', 'execut', 'region', 'fee']
    """
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 2:
            return word[: -len(ending)]
    return word


def same(a: str, b: str) -> bool:
    """Whether two words name the same thing: equal stems, or one (of 4 letters or more) begins
    the other.

    >>> same("execution", "executed"), same("exec", "execution"), same("id", "idle"), same("fee", "fees")
    (True, True, False, True)
    """
    x, y = stem(a), stem(b)
    if x == y:
        return True
    short, long = sorted((x, y), key=len)
    return len(short) >= 4 and long.startswith(short)


def rank(
    candidates: Sequence[Candidate], intent: str, descriptions: Mapping[str, str] | None = None
) -> list[Candidate]:
    """The candidates ``intent`` asks about, best first (each with its :attr:`Candidate.score`).

    >>> from assay.platform.proposals.candidate import Backtest
    >>> def c(kind, *cols):
    ...     return Candidate(kind, ",".join(cols), cols, {}, {}, Backtest(0, 0), ())
    >>> found = rank([c("completeness", "customer_id"), c("completeness", "trade_id"),
    ...               c("uniqueness", "trade_id"), c("order", "settled_at", "executed_at")],
    ...              "no missing customer ids")
    >>> [(x.kind, x.target, x.score) for x in found]
    [('completeness', 'customer_id', 4.0)]
    """
    asked = words(intent)
    if not asked:
        return list(candidates)
    columns = sorted({column for c in candidates for column in c.columns})
    column_words = {column: words(column) for column in columns}
    described = {column: words((descriptions or {}).get(column, "")) for column in columns}
    # how many columns each asked word names: a word naming many says little about which
    naming = {w: sum(1 for ws in column_words.values() if any(same(w, x) for x in ws)) for w in asked}
    names_a_column = any(naming.values())
    scored = []
    for candidate in candidates:
        column_score = 0.0
        for w in asked:
            if naming[w] and any(same(w, x) for column in candidate.columns for x in column_words[column]):
                column_score += COLUMN / naming[w]
            elif any(same(w, x) for column in candidate.columns for x in described[column]):
                column_score += DESCRIPTION
        kind_score = KIND * sum(1 for w in asked if any(same(w, x) for x in SYNONYMS.get(candidate.kind, ())))
        if names_a_column and column_score == 0 and candidate.columns:
            continue
        score = column_score + kind_score
        if score > 0:
            candidate.score = round(score, 3)
            scored.append((kind_score, candidate))
    if not scored:
        return []
    best = max(c.score for _, c in scored)
    kept = [(k, c) for k, c in scored if c.score >= KEEP * best]
    # ties: the one whose kind the sentence names first ("volume per region": the volume)
    return [c for _, c in sorted(kept, key=lambda item: (-item[1].score, -item[0]))]
