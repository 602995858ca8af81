"""The shape of a number column, measured in the profile's one query: its mean, its standard
deviation (of the population, as DQDL's ``StandardDeviation`` rule has it), five approximate
quantiles (DuckDB's ``approx_quantile``, Spark's ``percentile_approx``: one sketch a column, not a
sort).

The drift monitor judges them (:mod:`assay.judge.drift.shape`): a column divided by 1,000, shifted,
or flooded with a default value keeps its range, not its shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from assay.store import MetricKey

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
QUANTILE_NAMES = tuple(f"Quantile{round(q * 100):02d}" for q in QUANTILES)
"""Stored as ``Quantile05`` ... ``Quantile95``."""


@dataclass(frozen=True)
class Shape:
    """A number column's shape in one load (None where it has no non-null value)."""

    mean: float | None
    deviation: float | None  # of the population
    quantiles: tuple[float | None, ...]  # at QUANTILES

    def metrics(self, column: str) -> dict[MetricKey, float | None]:
        """As stored metrics: ``Mean``, ``StandardDeviation`` (DQDL's names), ``Quantile05`` to
        ``Quantile95``."""
        out = {
            MetricKey.column(column, "Mean"): self.mean,
            MetricKey.column(column, "StandardDeviation"): self.deviation,
        }
        for name, value in zip(QUANTILE_NAMES, self.quantiles, strict=True):
            out[MetricKey.column(column, name)] = value
        return out


_DOUBLE = exp.DataType.build("DOUBLE")  # built once: each build parses the type's name


def projections(value: exp.Expr, i: int) -> list[exp.Expr]:
    """The aggregates of column ``i``'s shape, as doubles (an integer's mean is no integer)."""
    x = exp.cast(value, _DOUBLE.copy())
    wanted = exp.Array(expressions=[exp.Literal.number(q) for q in QUANTILES])
    return [
        exp.alias_(exp.Avg(this=x.copy()), f"mean{i}", quoted=True, copy=False),
        exp.alias_(exp.StddevPop(this=x.copy()), f"sd{i}", quoted=True, copy=False),
        exp.alias_(exp.ApproxQuantile(this=x, quantile=wanted), f"q{i}", quoted=True, copy=False),
    ]


def read(row: Mapping[str, Any], i: int) -> Shape:
    """Column ``i``'s shape from the profile's row.

    >>> read({"mean0": 2.5, "sd0": 0.5, "q0": [2, 2, 2.5, 3, 3]}, 0).quantiles
    (2.0, 2.0, 2.5, 3.0, 3.0)
    """
    quantiles = row.get(f"q{i}") or [None] * len(QUANTILES)
    return Shape(
        _number(row.get(f"mean{i}")), _number(row.get(f"sd{i}")), tuple(_number(q) for q in quantiles)
    )


def _number(value: Any) -> float | None:
    return None if value is None else float(value)
