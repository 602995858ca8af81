"""Numbers in conditions, including Glue's dynamic rules over stored history (DQDL.md §7).

``last(k)`` is the k previous values of the rule's metric (most recent first), read from the
metric store. With no history it is ``[0.0]``; with fewer than k values it is all of them.
Reducers ``avg median max min sum std abs`` and ``index(list, i)`` turn lists into numbers;
a list left unreduced is an error unless it came from ``last()``/``last(1)``. ``std`` is the
population standard deviation, like the StandardDeviation rule.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from assay.lang.dqdl import arithmetic, ast


class DynamicError(Exception):
    """A dynamic expression that cannot be evaluated (unknown function, unreduced list...)."""


@dataclass(frozen=True)
class Series:
    values: tuple[float, ...]
    scalar_ok: bool  # last() and last(1) may stand where a number is expected


History = Callable[[int], list[float]]
"""``history(k)``: the k most recent earlier values of the metric, most recent first."""

_REDUCERS: dict[str, Callable[[list[float]], float]] = {
    "avg": statistics.fmean,
    "median": statistics.median,
    "max": max,
    "min": min,
    "sum": lambda xs: float(sum(xs)),
    "std": statistics.pstdev,
}


def number(node: ast.Operand, history: History) -> float | None:
    """Evaluate a numeric operand to a number (None for NULL).

    >>> from assay.dqdl import parse
    >>> cond = parse('Rules = [ RowCount > avg(last(3)) + 1 ]').rules[0].condition
    >>> number(cond.operands[0], lambda k: [8.0, 6.0, 4.0][:k])
    7.0
    """
    return _scalar(_evaluate(node, history))


def _scalar(value: float | Series | None) -> float | None:
    if isinstance(value, Series):
        if value.scalar_ok and len(value.values) == 1:
            return value.values[0]
        raise DynamicError(
            "a list of past values must be reduced first, e.g. avg(last(5)) or index(last(5), 0)"
        )
    return value


def _evaluate(node: ast.Operand, history: History) -> float | Series | None:
    try:
        result: float | Series | None = arithmetic.evaluate(node, lambda call: _call(call, history), _scalar)
    except ZeroDivisionError:
        raise DynamicError("division by zero") from None
    except TypeError as error:
        raise DynamicError(str(error)) from None
    return result


def _call(node: ast.Call, history: History) -> float | Series:
    name, args = node.name, node.args
    if name == "last":
        if len(args) > 1:
            raise DynamicError("last() takes at most one argument")
        k = 1 if not args else number(args[0], history)
        if k is None or k != int(k) or k < 1:
            raise DynamicError(f"last(k) needs a whole number k >= 1, not {k}")
        values = history(int(k))
        return Series(tuple(values) if values else (0.0,), int(k) == 1)
    if name == "index":
        if len(args) != 2:
            raise DynamicError("index() takes a list and a position: index(last(5), 0)")
        series, position = _series(args[0], history), number(args[1], history)
        if position is None or position != int(position):
            raise DynamicError("index() needs a whole-number position")
        if not 0 <= position < len(series):
            raise DynamicError(f"index {int(position)} is out of range for a list of {len(series)} values")
        return series[int(position)]
    if name == "abs":
        if len(args) != 1:
            raise DynamicError("abs() takes one argument")
        value = number(args[0], history)
        if value is None:
            raise DynamicError("abs() of NULL")
        return abs(value)
    reducer = _REDUCERS.get(name)
    if reducer is None:
        known = "last, avg, median, max, min, sum, std, abs, index"
        raise DynamicError(f"unknown function '{name}': use one of {known}")
    if len(args) != 1:
        raise DynamicError(f"{name}() takes one argument")
    return float(reducer(_series(args[0], history)))


def _series(node: ast.Operand, history: History) -> list[float]:
    value = _evaluate(node, history)
    if isinstance(value, Series):
        return list(value.values)
    if value is None:
        raise DynamicError("NULL is not a list of values")
    return [value]


def is_dynamic(node: ast.Operand) -> bool:
    """True when the operand reads history (calls a function)."""
    if isinstance(node, ast.Call):
        return True
    if isinstance(node, ast.Paren):
        return is_dynamic(node.inner)
    if isinstance(node, ast.BinOp):
        return is_dynamic(node.left) or is_dynamic(node.right)
    return False
