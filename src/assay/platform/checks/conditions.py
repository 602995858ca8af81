"""An expectation's ``expect``: a DQDL condition over one number and that number's stored history.

The condition is DQDL's (DQDL.md §3): ``> 0``, ``= 0``, ``between 10 and 20`` (exclusive at both
ends, as in Glue), ``in [1, 2]``, arithmetic, and the dynamic functions ``last(k)``, ``avg``,
``min``, ``max``, ``median``, ``std``, ``sum``, ``abs``, ``index``. On a ``freshness`` metric (a
number of seconds) the bounds may be durations: ``<= 6 hours``. The history is the metric's
stored values of earlier runs (most recent first): judging reads numbers, never data.

>>> band = parse_expect("between avg(last(3)) * 0.5 and avg(last(3)) * 1.5")
>>> verdict = judge(band, 40.0, [100.0, 80.0, 90.0])
>>> verdict.holds, verdict.expected
(False, {'low': 45.0, 'high': 135.0})
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from assay.judge import dynamic, verdicts
from assay.lang.dqdl import ast
from assay.lang.dqdl.ast import CondKind
from assay.lang.dqdl.errors import DQDLSyntaxError
from assay.lang.dqdl.parser import parse_condition
from assay.lang.dqdl.printer import condition_text
from assay.rules import predicates

SECONDS = {"days": 86400, "hours": 3600, "minutes": 60}
UNITS = ("day", "hour", "minute")
_ONE = re.compile(r"\b(1\s+)(day|hour|minute)\b")
"""``1 hour`` in a check document is DQDL's ``1 hours`` (DQDL knows plural units only)."""


class ConditionError(Exception):
    """An ``expect`` that is not a condition, or that cannot be evaluated on this history."""


def parse_expect(text: str, *, duration: bool = False) -> ast.Condition:
    """The condition of an ``expect``; with ``duration`` (a freshness metric), durations such as
    ``6 hours`` are allowed and read as seconds.

    >>> parse_expect("<= 6 hours", duration=True).operands, parse_expect("<= 1 day", duration=True).operands
    ((Number(text='21600'),), (Number(text='86400'),))
    """
    text = str(text).strip()
    if duration and any(unit in text for unit in UNITS):
        try:
            condition = parse_condition(_ONE.sub(r"\1\2s", text), CondKind.DURATION)
        except DQDLSyntaxError as error:
            raise ConditionError(f"{error.reason} (column {error.column} of '{text}')") from None
        operands = tuple(
            ast.Number(str(o.amount * SECONDS[o.unit])) if isinstance(o, ast.Duration) else o
            for o in condition.operands
        )
        return replace(condition, kind=CondKind.NUMBER, operands=operands)
    try:
        return parse_condition(text, CondKind.NUMBER)
    except DQDLSyntaxError as error:
        raise ConditionError(f"{error.reason} (column {error.column} of '{text}')") from None


def needs_history(condition: ast.Condition) -> int:
    """How many past values the condition reads at most (0 when it reads none); ``last()`` is 1."""
    deepest = 0

    def walk(node: Any) -> None:
        nonlocal deepest
        if isinstance(node, ast.Call):
            if node.name == "last":
                k = 1
                if node.args and isinstance(node.args[0], ast.Number):
                    k = int(node.args[0].value)
                deepest = max(deepest, k)
            for arg in node.args:
                walk(arg)
        elif isinstance(node, ast.BinOp):
            walk(node.left)
            walk(node.right)
        elif isinstance(node, ast.Paren):
            walk(node.inner)

    for operand in condition.operands:
        walk(operand)
    return deepest


@dataclass(frozen=True)
class Verdict:
    """Whether the observed value satisfies the condition, and the bounds the condition set on
    this history (``low``/``high``, or ``values`` for ``=``, ``!=`` and ``in``)."""

    holds: bool
    expected: dict[str, Any] = field(default_factory=dict)


def judge(condition: ast.Condition, observed: float | None, history: Sequence[float]) -> Verdict:
    """Judge ``observed`` against ``condition``, its dynamic parts read from ``history`` (most
    recent first). A missing observed value (no rows to take a minimum of) never holds."""
    past = list(history)

    def lookup(k: int) -> list[float]:
        return past[:k]

    try:
        bounds = [dynamic.number(o, lookup) for o in condition.operands]
    except dynamic.DynamicError as error:
        raise ConditionError(str(error)) from None
    expected = verdicts.bounds(condition.op, bounds)
    if observed is None or observed != observed:
        return Verdict(False, expected)
    return Verdict(predicates.python_compare(observed, condition.op, bounds), expected)


def text(condition: ast.Condition) -> str:
    """The condition as DQDL prints it."""
    return condition_text(condition)
