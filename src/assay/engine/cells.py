"""A CSV's text cells as values, alike on every engine: trimmed, blank and null-token cells NULL,
a decimal comma read as a point, and the shapes of ISO-8601 dates and times.

The file readers (:mod:`assay.lake.typed_csv`) and an engine's own type detection
(:meth:`assay.engine.spark.SparkEngine.register_csv_text`) build their queries from these, so
that a cell means the same whichever engine reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from sqlglot import exp

# Tokens that are NULL in a column inferred as a number, date or boolean (never in a text column,
# where they may be values: the ISO code of Namibia is NA).
NULL_TOKENS = ("NA", "N/A", "NULL", "null")

_ISO_DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}"
_CLOCK = r"[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]{1,9})?)?"
_OFFSET = r" ?(Z|[+-]([01][0-9]|2[0-3])(:?[0-5][0-9])?)"  # an offset under a day
# The shapes of an ISO date, date-time and date-time with a UTC offset, on both engines (the
# Spark engine's detection is assay's own). An offset needs a time: a date with a zone
# (XML Schema's xs:date, "2024-01-01+02:00") is a day somewhere, no instant, and stays text.
DATE_TIME_SHAPES = {
    "DATE": f"{_ISO_DATE}$",
    "TIMESTAMP": f"{_ISO_DATE}{_CLOCK}$",
    "TIMESTAMPTZ": f"{_ISO_DATE}{_CLOCK}{_OFFSET}$",
}
DATE_TIME = f"{_ISO_DATE}({_CLOCK}({_OFFSET})?)?$"  # any of them
ZONED = DATE_TIME_SHAPES["TIMESTAMPTZ"]


class Reading(Protocol):
    """What the cells need of a file's reading (:class:`assay.lake.files.ReadOptions` has it)."""

    @property
    def null_tokens(self) -> tuple[str, ...]: ...

    @property
    def decimal_comma(self) -> bool: ...


def cell(column: str) -> exp.Expr:
    """The column's cell, trimmed."""
    return exp.Trim(this=exp.column(column, quoted=True))


def blanks(read: Reading) -> tuple[str, ...]:
    """The trimmed cells that are NULL in a number, date or time column: blank, or a null token."""
    return ("", *read.null_tokens)


def nulled(text: exp.Expr, read: Reading) -> exp.Expr:
    """``text`` (a trimmed cell) with blank and null-token values as NULL: ``CASE WHEN t = '' OR
    t = 'NA' ... THEN NULL ELSE t END``. Not ``IN (...)``: DuckDB plans an IN list as a join. Nor
    nested NULLIFs: the engine expands each into a CASE that repeats its argument twice, so five
    of them repeated the trimmed cell 32 times, and binding a 400-column file's view took seconds."""
    matches = [exp.EQ(this=text.copy(), expression=exp.Literal.string(t)) for t in blanks(read)]
    return exp.Case(ifs=[exp.If(this=exp.or_(*matches), true=exp.Null())], default=text.copy())


def as_number(text: exp.Expr, read: Reading) -> exp.Expr:
    """A number's text as the engines read it: a decimal comma made a point (``--decimal-comma``)."""
    if read.decimal_comma:
        return exp.func("replace", text, exp.Literal.string(","), exp.Literal.string("."))
    return text


def value(column: str, read: Reading) -> exp.Expr:
    """The cell, trimmed, with blank and null-token cells as NULL (:func:`nulled`)."""
    return nulled(cell(column), read)


def tokens_pattern(tokens: Sequence[str]) -> str:
    """A regular expression matching any of ``tokens`` literally (and nothing else around it
    unless the caller adds it), for RE2 (the engines' and Arrow's) and Java's (Spark's).

    >>> print(tokens_pattern(NULL_TOKENS))
    (?:NA|N\\x{2f}A|NULL|null)
    """
    return "(?:" + "|".join(_re2_literal(t) for t in tokens) + ")"


def _re2_literal(text: str) -> str:
    """``text`` as a regular expression matching it literally, for RE2 (the engines' and Arrow's):
    each character not a letter or digit written as its code point.

    >>> print(_re2_literal("N/A"))
    N\\x{2f}A
    """
    return "".join(c if c.isalnum() and c.isascii() else f"\\x{{{ord(c):x}}}" for c in text)
