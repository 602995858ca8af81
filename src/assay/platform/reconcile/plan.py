"""The columns a reconciliation reads, checked against both sides before any query runs: the key
on both sides, each compared column on both sides, a tolerance only on a numeric column, and the
kind each column is hashed as when the sides are on different engines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from assay.engine import Column, DataKind
from assay.errors import ConfigError
from assay.platform.reconcile.spec import Spec


@dataclass(frozen=True)
class Compared:
    """A column read on both sides: its name, the kind both sides agree on (an integer on one
    side and a decimal on the other is a decimal), and its tolerance (None: exact)."""

    name: str
    kind: DataKind
    tolerance: Decimal | None = None


@dataclass(frozen=True)
class Plan:
    key: tuple[Compared, ...]
    columns: tuple[Compared, ...]


def _kind(name: str, source: Column, target: Column) -> DataKind:
    if source.kind.numeric and target.kind.numeric:
        if source.kind is DataKind.INTEGER and target.kind is DataKind.INTEGER:
            return DataKind.INTEGER
        return DataKind.DECIMAL
    if source.kind.numeric != target.kind.numeric:
        raise ConfigError(
            f"column {name} is {source.kind.value} ({source.type}) in the source but "
            f"{target.kind.value} ({target.type}) in the target: compare columns of one kind"
        )
    return source.kind if source.kind is target.kind else DataKind.STRING


def plan(spec: Spec, source: Sequence[Column], target: Sequence[Column]) -> Plan:
    """The key and the compared columns of ``spec`` against the two sides' columns; each
    mistake a ConfigError that names the column and the side.

    >>> cols = [Column("id", "BIGINT", DataKind.INTEGER), Column("amount", "DOUBLE", DataKind.FLOAT)]
    >>> plan(Spec.of(["id"]), cols, cols).columns
    (Compared(name='amount', kind=<DataKind.DECIMAL: 'decimal'>, tolerance=None),)
    >>> plan(Spec.of(["nope"]), cols, cols)
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: --key nope: no such column in the source (columns: id, amount)
    """
    by_side = {"source": {c.name: c for c in source}, "target": {c.name: c for c in target}}

    def find(name: str, option: str) -> tuple[Column, Column]:
        found = []
        for side, columns in by_side.items():
            if name not in columns:
                raise ConfigError(
                    f"{option} {name}: no such column in the {side} (columns: {', '.join(columns)})"
                )
            found.append(columns[name])
        return found[0], found[1]

    key = []
    for name in spec.key:
        s, t = find(name, "--key")
        key.append(Compared(name, _kind(name, s, t)))
    if spec.columns is None:
        names = [n for n in by_side["source"] if n in by_side["target"] and n not in spec.key]
        if spec.group_by is not None:
            names = [n for n in names if n != spec.group_by]
    else:
        names = list(spec.columns)
    unknown = sorted(set(spec.tolerances) - set(names))
    if unknown:
        raise ConfigError(
            f"--tolerance {unknown[0]}: not a compared column (compared: {', '.join(names) or 'none'})"
        )
    columns = []
    for name in names:
        s, t = find(name, "--columns")
        kind = _kind(name, s, t)
        bound = spec.tolerances.get(name)
        if bound is not None and not kind.numeric:
            raise ConfigError(f"--tolerance {name}={bound}: {name} is not numeric ({s.type})")
        columns.append(Compared(name, kind, bound))
    if spec.group_by is not None:
        find(spec.group_by, "--group-by")
    return Plan(tuple(key), tuple(columns))
