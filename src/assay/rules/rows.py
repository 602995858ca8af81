"""Rules row by row: each row's state for each rule, as SQL.

A leaf's state on a row is ``P`` (passed), ``F`` (failed) or, for a row its where clause left
out, the *filtered label*: ``P`` by default, ``S`` (skipped) on request (DQDL.md §9).
Composites combine their children's states: ``and`` fails if any child fails, ``or`` passes if
any child passes; a composite whose children were all skipped is skipped. A rule with a part
that has no row-level meaning (RowCount, Mean...) is skipped on every row, as Deequ does.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from assay.lang.dqdl import ast
from assay.rules.plan import ROW_SOURCE, LeafPlan, RowCheck

PASS, FAIL, SKIP = "P", "F", "S"


@dataclass(frozen=True)
class LeafState:
    index: int  # the leaf's position in the query's state columns


@dataclass(frozen=True)
class Combined:
    op: str
    children: tuple[StateTree, ...]


StateTree = LeafState | Combined


def state_column(index: int) -> str:
    return f"__s{index}"


def leaf_state(check: RowCheck, filtered: str) -> exp.Expr:
    """``CASE WHEN <excluded> THEN filtered WHEN <predicate> THEN 'P' ELSE 'F' END``."""
    case = exp.Case()
    if check.filter is not None:
        excluded = exp.Not(this=exp.func("coalesce", check.filter.copy(), exp.false()))
        case = case.when(excluded, exp.Literal.string(filtered))
    return case.when(check.predicate.copy(), exp.Literal.string(PASS)).else_(exp.Literal.string(FAIL))


def tree_state(tree: StateTree) -> exp.Expr:
    """The state expression of a tree over the leaf state columns."""
    if isinstance(tree, LeafState):
        return exp.column(state_column(tree.index), quoted=True)
    states = [tree_state(child) for child in tree.children]

    def any_is(value: str) -> exp.Expr:
        return exp.or_(*(exp.EQ(this=s.copy(), expression=exp.Literal.string(value)) for s in states))

    def all_skipped() -> exp.Expr:
        return exp.and_(*(exp.EQ(this=s.copy(), expression=exp.Literal.string(SKIP)) for s in states))

    decisive, other = (FAIL, PASS) if tree.op == "and" else (PASS, FAIL)
    return (
        exp.Case()
        .when(any_is(decisive), exp.Literal.string(decisive))
        .when(all_skipped(), exp.Literal.string(SKIP))
        .else_(exp.Literal.string(other))
    )


def _bind_rows(helper: exp.Expr, source: exp.Table) -> exp.Expr:
    """``helper`` with each reference to table :data:`ROW_SOURCE` replaced by ``source``."""

    def bind(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Table) and node.name == ROW_SOURCE and not node.db:
            table = source.copy()
            table.set("alias", node.args.get("alias"))
            return table
        return node

    return helper.transform(bind)


class RowLayout:
    """The row checks of a set of rules laid out as state columns.

    ``add`` registers a top-level rule and returns its state tree, or None when the rule has no
    row-level form (it is then skipped on every row).
    """

    def __init__(self, filtered: str = PASS) -> None:
        self.filtered = filtered
        self.checks: list[RowCheck] = []

    def add(
        self, node: ast.RuleNode, plans: dict[int, LeafPlan], *, row_mode: bool = False
    ) -> StateTree | None:
        if isinstance(node, ast.Rule):
            plan = plans[id(node)]
            if plan.error is not None or plan.row is None:
                return None
            if row_mode and not plan.row.in_row_composites:
                return None
            if not row_mode and not plan.row.in_row_level:
                return None
            self.checks.append(plan.row)
            return LeafState(len(self.checks) - 1)
        children = [self.add(child, plans, row_mode=row_mode) for child in node.children]
        if any(child is None for child in children):
            return None
        return Combined(node.op, tuple(c for c in children if c is not None))

    def helpers(self, source: exp.Table) -> list[exp.Expr]:
        """Each check's helpers, aliased by name, reading ``source`` where they read all rows."""
        return [
            exp.alias_(_bind_rows(helper, source), name, quoted=True)
            for check in self.checks
            for name, helper in check.helpers
        ]

    def states(self) -> list[exp.Expr]:
        return [
            exp.alias_(leaf_state(check, self.filtered), state_column(i), quoted=True)
            for i, check in enumerate(self.checks)
        ]

    def select(self, source: exp.Table, extra: list[exp.Expr] | None = None) -> exp.Select:
        """``SELECT *, <states> FROM (SELECT *, <helpers> FROM source AS primary) AS primary``.

        Predicates refer to the row's columns as ``primary.<c>`` or unqualified; the helper layer
        computes what a state cannot hold itself because it reads other rows (uniqueness)."""
        inner = exp.select(exp.Star(), *self.helpers(source)).from_(
            exp.alias_(source.copy(), "primary", table=True, quoted=True)
        )
        projections = [exp.Star(), *self.states(), *(extra or [])]
        return exp.select(*projections).from_(
            exp.alias_(exp.Subquery(this=inner), "primary", table=True, quoted=True)
        )
