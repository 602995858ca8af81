"""What a reconciliation compares: the key, the columns, the tolerances, how many sample keys,
and optionally a column whose groups are compared by aggregates instead of rows.

A key is one or more columns; a compared column is equal on both sides when both values are
NULL, or equal, or (a numeric column given a tolerance ``C=ABS``) ``|a - b| <= ABS``.

>>> Spec.of(["id"], tolerances=["amount=0.01"]).tolerances
{'amount': Decimal('0.01')}
>>> parse_tolerance("amount=-1")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
assay.errors.ConfigError: --tolerance amount=-1: the tolerance is a number >= 0 (...)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from assay.errors import ConfigError

DEFAULT_SAMPLES = 10


def parse_tolerance(text: str) -> tuple[str, Decimal]:
    """``COLUMN=ABS`` as its column and its non-negative bound."""
    column, equals, bound = text.partition("=")
    hint = "write COLUMN=ABS, e.g. amount=0.01"
    if not equals or not column.strip():
        raise ConfigError(f"--tolerance {text}: {hint}")
    try:
        value = Decimal(bound.strip())
    except InvalidOperation:
        raise ConfigError(f"--tolerance {text}: {bound!r} is not a number ({hint})") from None
    if not value.is_finite() or value < 0:
        raise ConfigError(f"--tolerance {text}: the tolerance is a number >= 0 ({hint})")
    return column.strip(), value


@dataclass(frozen=True)
class Spec:
    """The key columns, the compared columns (None: those both sides share, minus the key),
    the tolerance of each numeric column, the number of sample keys of each kind, and the
    column of a grouped comparison (None: compare rows)."""

    key: tuple[str, ...]
    columns: tuple[str, ...] | None = None
    tolerances: dict[str, Decimal] = field(default_factory=dict)
    samples: int = DEFAULT_SAMPLES
    group_by: str | None = None

    @classmethod
    def of(
        cls,
        key: Sequence[str],
        *,
        columns: Sequence[str] | None = None,
        tolerances: Sequence[str] = (),
        samples: int = DEFAULT_SAMPLES,
        group_by: str | None = None,
    ) -> Spec:
        """A spec from the command line's words, each mistake a ConfigError naming the option."""
        keys = tuple(k.strip() for k in key)
        if not keys or any(not k for k in keys):
            raise ConfigError("--key: name the key column (repeat --key for a key of several columns)")
        if len(set(keys)) != len(keys):
            raise ConfigError(f"--key: a column is named twice ({', '.join(keys)})")
        if columns is not None:
            columns = tuple(c.strip() for c in columns if c.strip())
            if not columns:
                raise ConfigError("--columns: name at least one column (C1,C2)")
            both = sorted(set(columns) & set(keys))
            if both:
                raise ConfigError(
                    f"--columns: {', '.join(both)} is the key; the key is matched, not compared"
                )
        bounds: dict[str, Decimal] = {}
        for text in tolerances:
            column, bound = parse_tolerance(text)
            bounds[column] = bound
        if samples < 0:
            raise ConfigError(f"--samples {samples}: a number >= 0")
        return cls(keys, None if columns is None else tuple(columns), bounds, samples, group_by)
