"""The shape of a number column, measured in the profile's one query: its mean, its standard
deviation (of the population, as DQDL's ``StandardDeviation`` rule has it), five approximate
quantiles (DuckDB's ``approx_quantile``, Spark's ``percentile_approx``: one sketch a column, not a
sort), and how many of its values are a default value (:data:`DEFAULTS`: 0 and -1, counted as
Elementary's ``zero_count`` is).

The drift monitor judges them (:mod:`assay.judge.drift.shape`,
:mod:`assay.judge.drift.default_value`): a column divided by 1,000 or shifted keeps its range, not
its shape; a fifth of it flooded with 0 keeps both, not its count of zeros.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from assay.engine import Column
from assay.measure.kinds import KINDS
from assay.store import MetricKey

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
QUANTILE_NAMES = tuple(f"Quantile{round(q * 100):02d}" for q in QUANTILES)
"""Stored as ``Quantile05`` ... ``Quantile95``."""
DEFAULTS = ((0.0, "ZeroCount"), (-1.0, "MinusOneCount"))
"""The default values a writer fills a number with when it has none (a sentinel far away, -999,
leaves the range instead), each with the metric counting it."""


@dataclass(frozen=True)
class Shape:
    """A number column's shape in one load (None where it has no non-null value)."""

    mean: float | None
    deviation: float | None  # of the population
    quantiles: tuple[float | None, ...]  # at QUANTILES
    defaults: tuple[int | None, ...] = (None,) * len(DEFAULTS)  # values equal to each of DEFAULTS

    def metrics(self, column: str) -> dict[MetricKey, float | None]:
        """As stored metrics: ``Mean``, ``StandardDeviation`` (DQDL's names), ``Quantile05`` to
        ``Quantile95``, ``ZeroCount`` and ``MinusOneCount``."""
        out = {
            MetricKey.column(column, "Mean"): self.mean,
            MetricKey.column(column, "StandardDeviation"): self.deviation,
        }
        for name, value in zip(QUANTILE_NAMES, self.quantiles, strict=True):
            out[MetricKey.column(column, name)] = value
        for (_, name), count in zip(DEFAULTS, self.defaults, strict=True):
            out[MetricKey.column(column, name)] = None if count is None else float(count)
        return out


_DOUBLE = exp.DataType.build("DOUBLE")  # built once: each build parses the type's name


def projections(column: Column, i: int) -> list[exp.Expr]:
    """The aggregates of number column ``i``'s shape, as doubles (an integer's mean is no
    integer): its mean and deviation are the metric kinds ``mean`` and ``stddev``, the same
    aggregates a check document's ``mean(c)`` and DQDL's ``StandardDeviation`` ask for."""
    x = exp.cast(exp.column(column.name, quoted=True), _DOUBLE.copy())
    wanted = exp.Array(expressions=[exp.Literal.number(q) for q in QUANTILES])
    return [
        exp.alias_(KINDS["mean"].aggregate(column), f"mean{i}", quoted=True, copy=False),
        exp.alias_(KINDS["stddev"].aggregate(column), f"sd{i}", quoted=True, copy=False),
        exp.alias_(exp.ApproxQuantile(this=x.copy(), quantile=wanted), f"q{i}", quoted=True, copy=False),
        *(
            exp.alias_(
                exp.CountIf(this=exp.EQ(this=x.copy(), expression=_literal(v))),
                f"default{k}_{i}",
                quoted=True,
                copy=False,
            )
            for k, (v, _) in enumerate(DEFAULTS)
        ),
    ]


def _literal(value: float) -> exp.Expr:
    number = exp.Literal.number(abs(value))
    return exp.Neg(this=number) if value < 0 else number


def read(row: Mapping[str, Any], i: int) -> Shape:
    """Column ``i``'s shape from the profile's row.

    >>> shape = read({"mean0": 2.5, "sd0": 0.5, "q0": [2, 2, 2.5, 3, 3], "default0_0": 0}, 0)
    >>> shape.quantiles, shape.defaults
    ((2.0, 2.0, 2.5, 3.0, 3.0), (0, None))
    """
    quantiles = row.get(f"q{i}") or [None] * len(QUANTILES)
    defaults = tuple(
        None if (n := row.get(f"default{k}_{i}")) is None else int(n) for k in range(len(DEFAULTS))
    )
    return Shape(
        _number(row.get(f"mean{i}")),
        _number(row.get(f"sd{i}")),
        tuple(_number(q) for q in quantiles),
        defaults,
    )


def _number(value: Any) -> float | None:
    return None if value is None else float(value)
