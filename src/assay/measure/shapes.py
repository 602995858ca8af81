"""Value shapes: how many of a column's values look like e-mail addresses, phone numbers, identity
numbers or card numbers, read from a small sample of every profiled load.

A profile (:func:`assay.measure.profile.profile_query`) reads the first :data:`SAMPLE_ROWS` rows of
the load once more, in the same statement, and hands the text and integer columns' values of those
rows to :func:`read`; only the number read and the shares are kept (``Column.<c>.EmailShare``
...), never a value.
``assay propose`` reads them to suggest classifying a column (``dataset.classified``) whose values
look personal (:mod:`assay.platform.proposals.kinds.classify`).

Decisions (docs/privacy.md, "Suggested classifications"):

- **A sample, not every row.** The shapes only feed suggestions, and testing four patterns and a
  checksum on every value of every text column doubled the cost of some profiles (a Luhn check of
  500,000 card-shaped values in SQL took a profile from 1.1 to 11.8 s). The first rows are the ones
  every engine reads alike (DuckDB keeps a file's order, Spark's ``LIMIT`` takes its first rows), so
  DuckDB and Spark store the same shares; 200 rows estimate a share within a few points, and a
  suggestion asks for 90 %.
- **Shapes that identify a person, and little else.** A bare run of digits is an account number as
  often as a phone number, so a phone number needs a ``+`` or a separator and 9 to 15 digits; an
  identity number is one of the national formats listed in :data:`IDENTITY` (Malaysia's NRIC, the US
  SSN with its dashes, the UK National Insurance number, Singapore's NRIC/FIN); a card number is 13
  to 19 digits (spaces or dashes between groups) whose Luhn checksum holds, which one random number
  in ten passes.
- A value is counted under every shape it has (an NRIC written ``850101-14-5678`` is also
  phone-shaped); the proposal picks one per column (:data:`PRECEDENCE`).

>>> read(["ann@example.com", "bob@example.org", "", None, "n/a"])
(3, {'email': 0.6667})
>>> read(["4111 1111 1111 1111", "4111111111111112"])
(2, {'card_number': 0.5})
>>> read([]), read([None, " "])
((0, {}), (0, {}))
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from sqlglot import exp

from assay.engine import Column, DataKind
from assay.engine.base import as_text

SAMPLE_ROWS = 200
"""The rows of each load whose values are shaped: the first ones."""

EMAIL = re.compile(r"[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
PHONE = re.compile(r"\+?\(?[0-9][0-9 ()-]{5,22}[0-9]")
IDENTITY = {
    "MY NRIC": re.compile(r"[0-9]{2}(0[1-9]|1[0-2])(0[1-9]|[12][0-9]|3[01])-?[0-9]{2}-?[0-9]{4}"),
    "US SSN": re.compile(r"[0-9]{3}-[0-9]{2}-[0-9]{4}"),
    "UK NINO": re.compile(r"[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D]"),
    "SG NRIC/FIN": re.compile(r"[STFGM][0-9]{7}[A-Z]"),
}
CARD = re.compile(r"[0-9]{4}([ -]?[0-9]{1,4}){2,4}[0-9]*")

SHAPES = ("email", "phone", "identity_number", "card_number")
"""Every shape, as the proposals and docs name it."""

METRICS = {
    "email": "EmailShare",
    "phone": "PhoneShare",
    "identity_number": "IdentityNumberShare",
    "card_number": "CardNumberShare",
}
"""The stored metric of each shape's share of a column's sampled values."""

SAMPLED = "ShapeSample"
"""The stored metric of how many of a column's values were sampled (non-null, not blank)."""

PRECEDENCE = ("card_number", "identity_number", "email", "phone")
"""Which shape a column is said to have when several reach the threshold: the most specific first."""


SHAPED = (DataKind.STRING, DataKind.INTEGER)
"""The kinds of column whose values are shaped: text, and integers, which hold phone and card
numbers as often as text does."""


def shaped(columns: Sequence[Column]) -> list[int]:
    """The positions of the columns whose values are shaped."""
    return [i for i, column in enumerate(columns) if column.kind in SHAPED]


def sample(table: str, columns: Sequence[Column]) -> tuple[exp.CTE, exp.Expr] | None:
    """The part of a profile's statement that reads the shapes' sample: the CTE of ``table``'s
    first :data:`SAMPLE_ROWS` rows, its shaped columns as text, and the one value that lists
    them, a list of each column's values (None: no shaped column).

    >>> columns = [Column("e", "VARCHAR", DataKind.STRING), Column("x", "DOUBLE", DataKind.FLOAT)]
    >>> cte, listed = sample("t", columns)
    >>> cte.sql("duckdb")
    '"__shape_rows" AS (SELECT "e" AS "s0" FROM "t" LIMIT 200)'
    >>> listed.sql("duckdb")
    '(SELECT [ARRAY_AGG("s0")] FROM "__shape_rows")'
    """
    positions = shaped(columns)
    if not positions:
        return None
    rows = exp.Select(
        expressions=[exp.alias_(as_text(columns[i]), f"s{i}", quoted=True, copy=False) for i in positions],
        from_=exp.From(this=exp.Table(this=exp.to_identifier(table, quoted=True))),
        limit=exp.Limit(expression=exp.Literal.number(SAMPLE_ROWS)),
    )
    name = exp.to_identifier("__shape_rows", quoted=True)
    cte = exp.CTE(this=rows, alias=exp.TableAlias(this=name))
    listed = exp.Select(
        expressions=[
            exp.Array(expressions=[exp.ArrayAgg(this=exp.column(f"s{i}", quoted=True)) for i in positions])
        ],
        from_=exp.From(this=exp.Table(this=name.copy())),
    )
    return cte, exp.Subquery(this=listed)


def luhn(digits: str) -> bool:
    """Whether a string of digits passes the Luhn checksum of card numbers.

    >>> luhn("4111111111111111"), luhn("4111111111111112"), luhn("79927398713")
    (True, False, True)
    """
    total = 0
    for position, char in enumerate(reversed(digits)):
        digit = ord(char) - 48
        if position % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def shapes_of(value: str) -> list[str]:
    """The shapes one (stripped, non-empty) value has.

    >>> shapes_of("850101-14-5678"), shapes_of("+60 12-345 6789"), shapes_of("850101145678")
    (['phone', 'identity_number'], ['phone'], ['identity_number'])
    >>> shapes_of("2024-01-31"), shapes_of("A1234567"), shapes_of("5500-0000-0000-0004")
    ([], [], ['card_number'])
    """
    found = []
    if "@" in value and EMAIL.fullmatch(value):
        found.append("email")
    if PHONE.fullmatch(value) and _phone(value):
        found.append("phone")
    if any(pattern.fullmatch(value) for pattern in IDENTITY.values()):
        found.append("identity_number")
    if CARD.fullmatch(value):
        digits = value.replace(" ", "").replace("-", "")
        if 13 <= len(digits) <= 19 and luhn(digits):
            found.append("card_number")
    return found


def _phone(value: str) -> bool:
    """A phone number's digits (9 to 15) and the mark that tells it from a bare number: a leading
    ``+``, a space, a dash or brackets; a date's 8 digits are too few."""
    digits = sum(char.isdigit() for char in value)
    marked = value.startswith("+") or any(char in value for char in " -(")
    return 9 <= digits <= 15 and marked


def read(values: Iterable[str | None]) -> tuple[int, dict[str, float]]:
    """How many of ``values`` are read (non-null, non-blank), and each shape's share of those
    (rounded to 4 places; the shapes no value has left out, ``{}`` when none is read).

    >>> read(["a@b.example", " ", None, "x"])
    (2, {'email': 0.5})
    """
    counts = dict.fromkeys(SHAPES, 0)
    seen = 0
    for value in values:
        text = value.strip() if isinstance(value, str) else None
        if not text:
            continue
        seen += 1
        if len(text) > 254:  # longer than any address, number or identity
            continue
        for shape in shapes_of(text):
            counts[shape] += 1
    if not seen:
        return 0, {}
    return seen, {shape: round(n / seen, 4) for shape, n in counts.items() if n}


__all__ = [
    "METRICS",
    "PRECEDENCE",
    "SAMPLED",
    "SAMPLE_ROWS",
    "SHAPED",
    "SHAPES",
    "luhn",
    "read",
    "sample",
    "shaped",
    "shapes_of",
]
