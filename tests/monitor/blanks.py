"""``Column.<c>.BlankCount`` as the csv branch's profile will record it, for the monitor's tests.

The profile of this branch records nulls only; issue 8 section 3 adds a per-column metric
``BlankCount`` (non-null text values that are empty or whitespace-only). Until it lands, the
monitor's tests and bench scripts measure it here, in a second query over the same registered
table, and hand it to the monitor through the profile's metrics: the monitor reads nothing else.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import sqlglot.expressions as exp

import assay.monitor
from assay.engine import Engine
from assay.engine.base import Column, DataKind
from assay.measure.profile import LoadProfile
from assay.store import MetricKey


class _WithBlanks(LoadProfile):
    blanks: dict[str, int]

    def metrics(self) -> dict[MetricKey, float | None]:
        out = super().metrics()
        for name, count in self.blanks.items():
            out[MetricKey.column(name, "BlankCount")] = float(count)
        return out


def _blank_counts(engine: Engine, table: str, columns: Sequence[Column]) -> dict[str, int]:
    texts = [c for c in columns if c.kind == DataKind.STRING]
    if not texts:
        return {}
    sums = [
        exp.Sum(
            this=exp.If(
                this=exp.EQ(
                    this=exp.Trim(this=exp.column(c.name, quoted=True)), expression=exp.Literal.string("")
                ),
                true=exp.Literal.number(1),
                false=exp.Literal.number(0),
            )
        ).as_(f"b{i}")
        for i, c in enumerate(texts)
    ]
    row = engine.query(exp.select(*sums).from_(exp.to_table(table, quoted=True))).to_pylist()[0]
    return {c.name: int(row[f"b{i}"] or 0) for i, c in enumerate(texts)}


@contextlib.contextmanager
def measured() -> Iterator[None]:
    """Within this block, every profile also records ``Column.<c>.BlankCount`` for text columns."""
    real: Callable[..., LoadProfile] = assay.monitor.measure

    def measure(engine: Engine, table: str, columns: Sequence[Column], *args: Any, **kw: Any) -> LoadProfile:
        load = real(engine, table, columns, *args, **kw)
        out = _WithBlanks(load.rows, load.columns)
        out.blanks = _blank_counts(engine, table, columns)
        return out

    assay.monitor.measure = measure  # type: ignore[assignment]
    try:
        yield
    finally:
        assay.monitor.measure = real  # type: ignore[assignment]
