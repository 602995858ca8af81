"""Outcomes from metrics: each verdict kind of :mod:`assay.rules.plan`, interpreted.

Failures of the data are values here (``failed``); a rule that cannot be judged (a dynamic
expression that fails, a metric the engine could not compute) is ``config_error`` (Glue's
``Error``), never ``failed``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.judge import anomaly, dynamic
from assay.lang.dqdl import ast
from assay.lang.dqdl.ast import Op
from assay.lang.dqdl.printer import condition_text
from assay.rules import predicates
from assay.rules.plan import AllOne, Anomalous, Compare, Compliance, Fixed, Verdict
from assay.store import MetricKey
from assay.vocabulary import Outcome

PASSED, FAILED, ERROR = Outcome.PASSED, Outcome.FAILED, Outcome.CONFIG_ERROR

HistoryLookup = Callable[[MetricKey, int], list[float]]


@dataclass(frozen=True)
class Judgement:
    outcome: Outcome
    message: str | None = None
    expected: dict[str, Any] | None = None  # the bounds the value was compared with (see bounds())


def fmt(value: float | None) -> str:
    """A number the way Glue prints it in messages (Java's Double.toString for common values).

    >>> fmt(4), fmt(0.75), fmt(None), fmt(float("nan"))
    ('4.0', '0.75', 'NULL', 'NaN')
    """
    if value is None:
        return "NULL"
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == int(value) and abs(value) < 1e7:
        return f"{value:.1f}"
    return repr(float(value))


def not_met(value: float | None) -> str:
    return f"Value: {fmt(value)} does not meet the constraint requirement!"


def bounds(op: Op, values: Sequence[float | None]) -> dict[str, Any]:
    """The bounds a condition set, its dynamic parts evaluated: ``low`` and ``high``, or
    ``values`` for ``=``, ``!=``, ``in`` and ``not in`` (the ``expected`` of a result's JSON).

    >>> bounds(Op.GE, [8.8]), bounds(Op.BETWEEN, [1.0, 2.0]), bounds(Op.IN, [1.0, 2.0])
    ({'low': 8.8}, {'low': 1.0, 'high': 2.0}, {'values': [1.0, 2.0]})
    """
    if op in (Op.GT, Op.GE):
        return {"low": values[0]}
    if op in (Op.LT, Op.LE):
        return {"high": values[0]}
    if op in (Op.BETWEEN, Op.NOT_BETWEEN):
        return {"low": values[0], "high": values[1]}
    return {"values": list(values)}


_EXPECTED = {
    Op.GT: "more than {0}",
    Op.GE: "at least {0}",
    Op.LT: "less than {0}",
    Op.LE: "at most {0}",
    Op.BETWEEN: "between {0} and {1}",
    Op.NOT_BETWEEN: "not between {0} and {1}",
    Op.EQ: "{0}",
    Op.NE: "anything but {0}",
}


def expected_text(op: Op, values: Sequence[float | None], shown: Callable[[float], str] = fmt) -> str:
    """What a condition expected, its bounds evaluated, in words; ``shown`` writes a bound.

    >>> expected_text(Op.GE, [0.8 * 11]), expected_text(Op.BETWEEN, [1.1 * 7, 20])
    ('at least 8.8', 'between 7.7 and 20.0')
    >>> expected_text(Op.IN, [1, 2])
    'one of 1.0, 2.0'
    """
    texts = ["NULL" if v is None else shown(float(f"{v:.10g}")) for v in values]
    pattern = _EXPECTED.get(op)
    if pattern is not None:
        return pattern.format(*texts)
    return ("one of " if op is Op.IN else "none of ") + ", ".join(texts)


def percent(share: float) -> str:
    """A share as a percentage with as many decimals as it takes to tell it apart from 0 % and
    100 %: a rule that failed on 2 of 50,000 rows passed 99.996 %, not "100.00 %".

    >>> percent(1 / 3), percent(49_998 / 50_000), percent(1 / 10**7), percent(1.0)
    ('33.33', '99.996', '0.00001', '100.00')
    """
    for decimals in range(2, 16):
        text = f"{share * 100:.{decimals}f}"
        if (0.0 < share < 1.0 and float(text) not in (0.0, 100.0)) or share in (0.0, 1.0):
            return text
    return text


def shortfall(value: float | None, total: float, noun: str, threshold: ast.Condition | None) -> str:
    """Why a compliance rule failed: the share that passed and how many of ``total`` failed.

    A threshold that every row passing does not meet (``with threshold < 1``) is said as such,
    never as "100.00 % of rows passed" beside a Failed outcome.

    >>> shortfall(49_998 / 50_000, 50_000, "rows", None)
    '99.996 % of rows passed the threshold (2 of 50,000 rows failed)'
    >>> from assay.lang.dqdl import parse_text
    >>> rule = parse_text('Rules = [ ColumnValues "x" > 0 with threshold < 1 ]').ruleset.rules[0]
    >>> shortfall(1.0, 2, "rows", rule.threshold)
    'every one of the 2 rows passed, and the threshold requires < 1: a share of 1.0 does not meet it'
    """
    share = value if value is not None and math.isfinite(value) else 0.0
    failed = round(total * (1.0 - share))
    if failed == 0 and share == 1.0 and threshold is not None:
        return (
            f"every one of the {int(total):,} {noun} passed, and the threshold requires "
            f"{condition_text(threshold)}: a share of 1.0 does not meet it"
        )
    message = (
        f"{percent(share)} % of {noun} passed the threshold ({failed:,} of {int(total):,} {noun} failed)"
    )
    if threshold is not None:
        message += f"; the threshold requires {condition_text(threshold)}"
    return message


def _meets(value: float | None, op: Op, operands: Sequence[float | None]) -> bool:
    if value is None or math.isnan(value):
        return False
    return predicates.python_compare(value, op, list(operands))


def undated(column: str) -> str:
    """Why a date rule on the text column ``column``, of which no value is a date, is an Error."""
    return (
        f"Column '{column}' holds text of which no value is a date or time: dates are read in "
        "ISO 8601 (2024-01-31, 2024-01-31 12:00:00), never guessed from another format"
    )


def judge(verdict: Verdict, values: Mapping[str, float | None], history: HistoryLookup) -> Judgement:
    """Apply a verdict to the values (metric displays and hidden names) of one rule."""
    try:
        return _judge(verdict, values, history)
    except dynamic.DynamicError as error:
        return Judgement(ERROR, f"Dynamic rule could not be evaluated: {error}")


def _judge(verdict: Verdict, values: Mapping[str, float | None], history: HistoryLookup) -> Judgement:
    if isinstance(verdict, Fixed):
        return Judgement(PASSED if verdict.passed else FAILED, None if verdict.passed else verdict.message)
    if isinstance(verdict, Compare):
        value = values.get(verdict.metric)
        key = verdict.history
        condition = verdict.condition
        operands = [dynamic.number(o, lambda k: history(key, k)) for o in condition.operands]
        expected = bounds(condition.op, operands)
        if _meets(value, condition.op, operands):
            return Judgement(PASSED, expected=expected)
        message = not_met(value)  # Glue's words, which scripts ported from Glue compare
        if any(dynamic.is_dynamic(o) for o in condition.operands):
            shown = expected_text(condition.op, operands)
            message += f" Expected {shown} ({condition_text(condition)})"
        return Judgement(FAILED, message, expected)
    if isinstance(verdict, AllOne):
        for metric in verdict.metrics:
            if values.get(metric) != 1.0:
                return Judgement(FAILED, not_met(values.get(metric)))
        return Judgement(PASSED)
    if isinstance(verdict, Compliance):
        rows = values.get(verdict.rows) or 0.0
        if rows == 0:
            if verdict.empty_passes:
                return Judgement(PASSED, "No rows matched the filter")
            return Judgement(FAILED, "There are no rows to evaluate")
        if verdict.dated is not None:
            column, present, dated = verdict.dated
            if values.get(present) and not values.get(dated):
                return Judgement(ERROR, undated(column))
        value = values.get(verdict.metric)
        key = verdict.history
        threshold = verdict.threshold
        if threshold is None:
            passed, expected = value == 1.0, {"low": 1.0}
        else:
            operands = [dynamic.number(o, lambda k: history(key, k)) for o in threshold.operands]
            passed, expected = _meets(value, threshold.op, operands), bounds(threshold.op, operands)
        if passed:
            return Judgement(PASSED, expected=expected)
        message = shortfall(value, rows, verdict.rows, threshold)
        if threshold is not None and any(dynamic.is_dynamic(o) for o in threshold.operands):
            message += f" (a share of {expected_text(threshold.op, operands)})"
        return Judgement(FAILED, message, expected)
    if isinstance(verdict, Anomalous):
        value = values.get(verdict.metric)
        if value is None or math.isnan(value):
            return Judgement(FAILED, not_met(value))
        past = history(verdict.history, anomaly.WINDOW)
        band = anomaly.band(past)
        if band is None:
            return Judgement(
                PASSED,
                f"Not enough history to detect anomalies: {len(past)} of "
                f"{anomaly.MIN_HISTORY} earlier values",
            )
        band_bounds = {"low": band.low, "high": band.high}
        if band.contains(value):
            return Judgement(PASSED, expected=band_bounds)
        return Judgement(
            FAILED,
            f"Value {fmt(value)} is outside the expected range [{fmt(band.low)}, {fmt(band.high)}] "
            f"predicted from {band.points} earlier values (expected about {fmt(band.expected)})",
            band_bounds,
        )
    raise TypeError(f"unknown verdict {verdict!r}")


def combine(op: str, children: list[Judgement]) -> Judgement:
    """A composite in COLUMN mode: AND fails if a child fails, OR passes if a child passes; a
    child in error makes the composite an error unless another child already decides it."""
    outcomes = [c.outcome for c in children]
    decisive, other = (FAILED, PASSED) if op == "and" else (PASSED, FAILED)
    if decisive in outcomes:
        result = decisive
    elif ERROR in outcomes:
        result = ERROR
    else:
        result = other
    if result == PASSED:
        return Judgement(PASSED)
    reasons = [c.message for c in children if c.outcome == result and c.message]
    return Judgement(result, "; ".join(reasons) or None)
