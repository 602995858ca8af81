"""An expectation's ``rule``: one DQDL rule, written as it would be inside ``Rules = [ ... ]``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sqlglot import exp

from assay.judge.evaluation import judge_rule, plan_values, rule_metrics, stored_metrics
from assay.lang.dqdl import ast
from assay.lang.dqdl.errors import DQDLSyntaxError
from assay.lang.dqdl.parser import parse_text
from assay.measure import Measurements, ScanPlan
from assay.rules.compiler import CompiledRule, compile_rule
from assay.rules.plan import Context
from assay.store import MetricKey
from assay.vocabulary import Outcome

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


class CompiledRules:
    """The DQDL ``rule`` expectations of one profile, compiled against its rows (the view
    ``primary``) into one scan, whose statement the profile's query joins (one query in all)."""

    def __init__(self, rules: Mapping[str, ast.Ruleset], ctx: Context) -> None:
        self.ctx = ctx
        self.rules = dict(rules)
        self.compiled: dict[str, CompiledRule] = {
            eid: compile_rule((ruleset.rules or ())[0], ctx, i)
            for i, (eid, ruleset) in enumerate(self.rules.items())
        }
        self.scan: ScanPlan = ctx.scan
        self.decode: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None

    def statement(self) -> exp.Select | None:
        if not self.scan.requests:
            return None
        query, self.decode = self.scan.statement()
        return query

    @property
    def slots(self) -> list[str]:
        return list(self.scan.requests)

    def measurements(self, row: Mapping[str, Any], errors: Mapping[str, str] | None = None) -> Measurements:
        values = self.decode(row) if self.decode is not None else dict(row)
        return Measurements(
            values={k: v for k, v in values.items() if k in self.scan.requests}, errors=dict(errors or {})
        )

    def values(self, measured: Measurements) -> dict[int, dict[str, float | None] | str]:
        plans = [plan for rule in self.compiled.values() for plan in rule.leaves.values()]
        return {id(plan): plan_values(plan, measured) for plan in plans}

    def stored(self, measured: Measurements) -> dict[MetricKey, float | None]:
        """The rules' metrics, keyed as a DQDL evaluation stores them."""
        plans = [plan for rule in self.compiled.values() for plan in rule.leaves.values()]
        return stored_metrics(plans, self.values(measured))

    def judge(
        self, eid: str, measured: Measurements, history: Callable[[MetricKey, int], list[float]]
    ) -> tuple[Outcome, str | None, dict[str, float | None]]:
        """The rule's outcome, message and metric values, judged as a DQDL evaluation judges them."""
        compiled = self.compiled[eid]
        values = self.values(measured)
        judgement = judge_rule(compiled, values, history)
        return judgement.outcome, judgement.message, rule_metrics(compiled, values)
