"""What a reconciliation found, as numbers a person or an expectation reads, and sample keys.

``equal`` holds when no row is only on one side, none changed, and no key is NULL or repeated on
either side (those rows cannot be matched, so the sides are not shown to be equal).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from assay.privacy import Masker

KINDS = ("only_in_source", "only_in_target", "changed")
"""The three kinds of difference, in the order they are counted and shown."""

SIDES = ("source", "target")


def json_value(value: Any) -> Any:
    """A cell as JSON: numbers and text as they are, a decimal as its exact text, a date or a
    time in ISO form, bytes as hex.

    >>> json_value(Decimal("1.50")), json_value(dt.date(2026, 1, 2)), json_value(None)
    ('1.50', '2026-01-02', None)
    """
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


@dataclass(frozen=True)
class Moved:
    """What crossed from one engine to assay: checksum rows, data rows, and their Arrow bytes."""

    checksum_rows: int = 0
    rows: int = 0
    bytes: int = 0

    def plus(self, *, checksum_rows: int = 0, rows: int = 0, size: int = 0) -> Moved:
        return Moved(self.checksum_rows + checksum_rows, self.rows + rows, self.bytes + size)

    def to_dict(self) -> dict[str, int]:
        return {"checksum_rows": self.checksum_rows, "rows": self.rows, "bytes": self.bytes}


@dataclass(frozen=True)
class Anomalies:
    """One side's rows that cannot be matched: rows with a NULL in the key, and keys held by
    more than one row, with samples of each."""

    null_key_rows: int = 0
    duplicate_keys: int = 0
    duplicate_rows: int = 0
    null_key_samples: tuple[dict[str, Any], ...] = ()
    duplicate_samples: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Result:
    """The counts of each kind of difference, per compared column, and samples."""

    source: str
    target: str
    mode: str  # rows (one engine), checksums (across engines) or groups (--group-by)
    key: tuple[str, ...]
    columns: tuple[str, ...]
    tolerance: dict[str, Decimal]
    rows: dict[str, int]
    counts: dict[str, int]
    changed_by_column: dict[str, int]
    samples: dict[str, list[dict[str, Any]]]
    anomalies: dict[str, Anomalies] = field(default_factory=dict)
    moved: dict[str, Moved] | None = None
    group_by: str | None = None

    @property
    def differences(self) -> int:
        return sum(self.counts.get(kind, 0) for kind in KINDS)

    @property
    def unmatched(self) -> int:
        """Rows left out of the comparison: NULL keys and repeated keys on either side."""
        return sum(a.null_key_rows + a.duplicate_rows for a in self.anomalies.values())

    @property
    def equal(self) -> bool:
        return self.differences == 0 and self.unmatched == 0

    def metrics(self) -> dict[str, float]:
        """The numbers an expectation judges (``reconcile:`` metrics of a check document)."""
        return {
            **{kind: float(self.counts.get(kind, 0)) for kind in KINDS},
            "differences": float(self.differences),
            "null_keys": float(sum(a.null_key_rows for a in self.anomalies.values())),
            "duplicate_keys": float(sum(a.duplicate_keys for a in self.anomalies.values())),
        }

    def masked(self, masker: Masker) -> Result:
        """The result with every sample key's classified columns masked (docs/privacy.md): what
        ``assay reconcile`` prints and writes for a dataset that classifies its key."""
        if not masker:
            return self

        def keys(samples: Iterable[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
            return tuple({**sample, "key": masker.row(sample["key"])} for sample in samples)

        return replace(
            self,
            samples={kind: list(keys(found)) for kind, found in self.samples.items()},
            anomalies={
                side: replace(
                    a, null_key_samples=keys(a.null_key_samples), duplicate_samples=keys(a.duplicate_samples)
                )
                for side, a in self.anomalies.items()
            },
        )

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "source": self.source,
            "target": self.target,
            "mode": self.mode,
            "key": list(self.key),
            "columns": list(self.columns),
            "tolerance": {c: str(v) for c, v in self.tolerance.items()},
            "rows": dict(self.rows),
            "equal": self.equal,
            **{kind: self.counts.get(kind, 0) for kind in KINDS},
            "differences": self.differences,
            "changed_by_column": dict(self.changed_by_column),
            "null_keys": {side: a.null_key_rows for side, a in self.anomalies.items()},
            "duplicate_keys": {side: a.duplicate_keys for side, a in self.anomalies.items()},
            "samples": {
                **self.samples,
                "null_keys": {side: list(a.null_key_samples) for side, a in self.anomalies.items()},
                "duplicate_keys": {side: list(a.duplicate_samples) for side, a in self.anomalies.items()},
            },
        }
        if self.group_by is not None:
            found["group_by"] = self.group_by
        if self.moved is not None:
            found["moved"] = {side: m.to_dict() for side, m in self.moved.items()}
        return found
