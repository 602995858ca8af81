"""An expectation's ``rule``: one DQDL rule, written as it would be inside ``Rules = [ ... ]``."""

from __future__ import annotations

from assay.lang.dqdl import ast
from assay.lang.dqdl.errors import DQDLSyntaxError
from assay.lang.dqdl.parser import parse_text

_PREFIX = "Rules = [ "


class RuleError(Exception):
    """A ``rule`` that is not one DQDL rule."""


def parse_rule(text: str) -> ast.Ruleset:
    """A ruleset holding exactly the one rule ``text``.

    >>> parse_rule('Completeness "email" >= 0.99').rules[0].type
    'Completeness'
    """
    try:
        ruleset = parse_text(f"{_PREFIX}{text} ]").ruleset
    except DQDLSyntaxError as error:
        column = error.column - len(_PREFIX) if error.line == 1 else error.column
        where = "at the end of the rule" if column > len(text) else f"column {max(column, 1)} of the rule"
        raise RuleError(f"{error.reason} ({where})") from None
    if len(ruleset.rules or ()) != 1:
        raise RuleError("write one rule per expectation")
    return ruleset
