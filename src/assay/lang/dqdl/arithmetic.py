"""Numbers in DQDL conditions: literals, NULL, parentheses and ``+ - * /``, with the meaning of
function calls supplied by the caller (stored history for dynamic rules, an error where a rule
compares rows)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.lang.dqdl import ast


def evaluate(
    node: ast.Operand, call: Callable[[ast.Call], Any], scalar: Callable[[Any], Any] = lambda v: v
) -> Any:
    """The value of a numeric operand; ``scalar`` turns a call's result into a number where
    arithmetic needs one. Division by zero raises ZeroDivisionError.

    >>> from assay.dqdl import parse
    >>> cond = parse('Rules = [ RowCount = 1 + 2 * 2 ]').rules[0].condition
    >>> evaluate(cond.operands[0], call=lambda c: 0.0)
    6.0
    """
    if isinstance(node, ast.Number):
        return node.value
    if isinstance(node, ast.Null):
        return None
    if isinstance(node, ast.Paren):
        return evaluate(node.inner, call, scalar)
    if isinstance(node, ast.BinOp):
        left, right = scalar(evaluate(node.left, call, scalar)), scalar(evaluate(node.right, call, scalar))
        if left is None or right is None:
            return None
        if node.op == "+":
            return left + right
        if node.op == "-":
            return left - right
        if node.op == "*":
            return left * right
        if right == 0:
            raise ZeroDivisionError("division by zero in the condition")
        return left / right
    if isinstance(node, ast.Call):
        return call(node)
    raise TypeError(f"{type(node).__name__} is not a number")
