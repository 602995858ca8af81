"""A check document as an AWS Glue DQDL ruleset (``assay check export-dqdl``).

Each expectation becomes one DQDL rule that judges the same rows to the same outcome, or a
``#`` comment that says why it cannot: nothing is dropped silently. A rule is written only where
it is *exactly* equivalent on the rows it is given (docs/checks-convert.md has the tables and the
reasons); what DQDL has no word for (slices, ``by:`` groups, ``advisory``, ``min_history``,
owners) is written as comments where the rule would be. The expectation's id and severity become
the rule's labels (DQDL.md §4 Labels), so Glue's outcomes can be read back per expectation.

>>> from assay.platform.checks.document import parse_document
>>> document = parse_document('''
... apiVersion: assay/v1
... kind: DatasetChecks
... dataset: {name: shop.orders, source: {path: orders.csv}}
... profiles:
...   - id: daily
...     metrics: [row_count, {null_rate: [email]}]
... expectations:
...   - {id: volume, metric: daily.row_count, expect: "> 0"}
...   - {id: email, metric: daily.null_rate(email), expect: "<= 0.01", severity: warning}
... ''')
>>> print(export_dqdl(document))  # doctest: +NORMALIZE_WHITESPACE
# DQDL ruleset exported from the assay check document of dataset shop.orders.
# source: orders.csv
Rules = [
    # volume
    RowCount > 0 labels=["expectation"="volume", "severity"="error"],
    # email
    Completeness "email" >= 0.99 labels=["expectation"="email", "severity"="warning"]
]
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from assay.errors import ConfigError
from assay.lang import sqlsafe
from assay.lang.dqdl import ast, catalog
from assay.lang.dqdl.ast import CondKind, Op
from assay.lang.dqdl.printer import condition_text, rule_text
from assay.platform.checks.conditions import parse_expect
from assay.platform.checks.document import Document, Expectation, MetricSpec, Profile
from assay.platform.checks.rules import RuleError, parse_rule


class NotExported(Exception):
    """An expectation with no exactly equivalent DQDL rule; the message says why."""


@dataclass(frozen=True)
class ExportEntry:
    """One expectation in the exported ruleset: its rule text (None when it has no DQDL
    equivalent) and the comment lines written above it."""

    expectation: str
    rule: str | None
    notes: tuple[str, ...] = ()


def export_dqdl(document: Document) -> str:
    """The document as DQDL text that :func:`assay.dqdl.parse` accepts.

    Raises :class:`ConfigError` when no expectation has a DQDL equivalent (a ruleset with no
    rule is not DQDL); the message lists why, expectation by expectation. See the module's
    docstring for an example.
    """
    entries = export_entries(document)
    if not any(entry.rule is not None for entry in entries):
        reasons = "; ".join(f"{e.expectation}: {' '.join(e.notes)}" for e in entries) or "no expectations"
        raise ConfigError(
            f"dataset {document.dataset.name}: no expectation has a DQDL equivalent ({reasons})"
        )
    lines = [f"# {line}" for line in _header(document)]
    lines.append("Rules = [")
    written = [i for i, entry in enumerate(entries) if entry.rule is not None]
    for i, entry in enumerate(entries):
        heading = (entry.expectation,) if entry.rule is not None else ()  # a note names it otherwise
        lines.extend(f"    # {_one_line(note)}" for note in (*heading, *entry.notes))
        if entry.rule is not None:
            lines.append(f"    {entry.rule}" + ("," if i != written[-1] else ""))
    lines.append("]")
    return "\n".join(lines) + "\n"


def export_entries(document: Document) -> list[ExportEntry]:
    """Each expectation's rule (or the reason it has none), in document order.

    >>> from assay.platform.checks.document import parse_document
    >>> document = parse_document('''
    ... apiVersion: assay/v1
    ... kind: DatasetChecks
    ... dataset: {name: t, source: {path: t.csv}}
    ... profiles: [{id: p, dimensions: [region], metrics: [row_count]}]
    ... expectations:
    ...   - {id: by-region, metric: p.row_count, by: [region], expect: "> 0"}
    ... ''')
    >>> export_entries(document)[0].notes
    ('not exported: by-region: judged per value of region (by:), DQDL has no groups',)
    """
    return [_entry(document, expectation) for expectation in document.expectations]


# --- the document around the rules -----------------------------------------------------------------


def _header(document: Document) -> list[str]:
    dataset = document.dataset
    lines = [
        f"DQDL ruleset exported from the assay check document of dataset {dataset.name}.",
        f"source: {dataset.source.describe()}",
    ]
    if dataset.owners.team or dataset.owners.contact:
        owners = ", ".join(part for part in (dataset.owners.team, dataset.owners.contact) if part)
        lines.append(f"owners (not exported, DQDL has no owners): {owners}")
    for profile in document.profiles:
        if profile.slice is not None:
            lines.append(
                f"profile {profile.id}: assay measures the rows of one slice ({profile.slice.column} on the "
                "run's date); DQDL has no slices: evaluate this ruleset on one slice's rows."
            )
        if profile.dimensions:
            lines.append(
                f"profile {profile.id}: dimensions {', '.join(profile.dimensions)} not exported "
                "(DQDL has no groups, so no outcome names the values that explain a change)."
            )
        if profile.schedule:
            lines.append(f"profile {profile.id}: schedule '{profile.schedule}' not exported.")
    return lines


def _entry(document: Document, expectation: Expectation) -> ExportEntry:
    eid = expectation.id
    notes: list[str] = []
    if expectation.by:
        why = f"judged per value of {', '.join(expectation.by)} (by:), DQDL has no groups"
        return ExportEntry(eid, None, (f"not exported: {eid}: {why}",))
    if expectation.history == "same_weekday":
        why = "judged against its weekday's history (history: same_weekday); DQDL's last(k) reads every run"
        return ExportEntry(eid, None, (f"not exported: {eid}: {why}",))
    profile = document.expectation_profile(expectation)
    try:
        node = _rule(profile, expectation)
        node = _with_labels(node, expectation)
        text = rule_text(node)
        parse_rule(text)  # the printed rule must read back: a column named like a date cannot
    except NotExported as error:
        return ExportEntry(eid, None, (f"not exported: {eid}: {error}",))
    except RuleError as error:
        return ExportEntry(eid, None, (f"not exported: {eid}: cannot be written in DQDL ({error})",))
    spec = _spec(profile, expectation)
    if _whole_source(spec):
        if profile.slice is not None:  # the ruleset is evaluated on one slice's rows (the header)
            why = (
                "freshness over the whole source (over: source), and this ruleset is evaluated on one "
                f"slice's rows; on the whole source it is: {text}"
            )
            return ExportEntry(eid, None, (f"not exported: {eid}: {why}",))
        if profile.filter is not None:
            notes.append(
                "freshness over the whole source (over: source): the profile's filter is not applied to it"
            )
    if expectation.description:
        notes.append(expectation.description)
    if expectation.owner:
        notes.append(f"owner (not exported): {expectation.owner}")
    if expectation.mode == "advisory":
        notes.append(
            "advisory in assay (never in pass rates or gates); DQDL has no advisory mode: "
            "Glue counts this rule in its score (label mode=advisory)"
        )
    if spec is not None and spec.where is not None and spec.where.sample_rows:
        notes.append(
            f"sample_rows {spec.where.sample_rows} not exported: the CustomSql count keeps no example rows"
        )
    if expectation.min_history:
        notes.append(
            f"min_history {expectation.min_history} not exported: DQDL judges from the first run "
            "(with no history, last(k) is 0.0)"
        )
    return ExportEntry(eid, text, tuple(notes))


def _with_labels(node: ast.RuleNode, expectation: Expectation) -> ast.RuleNode:
    """The expectation's id, severity and mode as labels; a rule's own labels win."""
    ours = {"expectation": expectation.id, "severity": expectation.severity}
    if expectation.mode == "advisory":
        ours["mode"] = "advisory"
    theirs = {label.key: label.value for label in node.labels or ()}
    merged = {**ours, **theirs}
    if len(merged) > 10:  # Glue's limit (DQDL.md §4 Labels): keep the author's labels
        merged = theirs
    labels = tuple(ast.Label(key, value) for key, value in merged.items())
    return replace(node, labels=labels or None)


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --- metric expectations ----------------------------------------------------------------------------


def _rule(profile: Profile, expectation: Expectation) -> ast.RuleNode:
    if expectation.rule is not None:
        return _copied_rule(profile, expectation.rule)
    spec = _spec(profile, expectation)
    assert spec is not None and expectation.expect is not None
    condition = parse_expect(expectation.expect, duration=spec.kind == "freshness")
    # a freshness over the source reads every row, before the profile's filter (checks.md)
    where = _Filter(profile, applied=not _whole_source(spec))
    return TRANSLATORS[spec.kind](spec, condition, where)


def _spec(profile: Profile, expectation: Expectation) -> MetricSpec | None:
    """The metric an expectation reads (None for a DQDL rule)."""
    if expectation.metric is None:
        return None
    return profile.spec(expectation.reference.key)


def _whole_source(spec: MetricSpec | None) -> bool:
    """Whether the metric reads every row of the source (``freshness: {column, over: source}``)."""
    return spec is not None and spec.kind == "freshness" and spec.over == "source"


Translator = Callable[[MetricSpec, ast.Condition, "_Filter"], ast.RuleNode]


def _row_count(spec: MetricSpec, cond: ast.Condition, where: _Filter) -> ast.RuleNode:
    """The number of rows: RowCount, the same number (dynamic conditions keep their meaning)."""
    return where.apply(ast.Rule("RowCount", (), cond))


def _same_number(rule_type: str) -> Translator:
    """A DQDL rule whose metric is the same number as assay's (both ignore NULLs), so that
    dynamic conditions keep their meaning too."""

    def translate(spec: MetricSpec, cond: ast.Condition, where: _Filter) -> ast.RuleNode:
        return where.apply(ast.Rule(rule_type, (_param(spec),), cond))

    return translate


def _null_rate(spec: MetricSpec, cond: ast.Condition, where: _Filter) -> ast.RuleNode:
    """null_rate = 1 - Completeness: the bounds become 1 - x and the operator turns around."""
    return where.apply(ast.Rule("Completeness", (_param(spec),), _complement(cond)))


def _null_count(spec: MetricSpec, cond: ast.Condition, where: _Filter) -> ast.RuleNode:
    """``= 0`` is IsComplete; any other condition counts the NULLs with CustomSql."""
    if cond.op is Op.EQ and _static(cond.operands[0]) == 0:
        return where.apply(ast.Rule("IsComplete", (_param(spec),)))
    assert spec.column is not None
    is_null = exp.Is(this=exp.column(spec.column, quoted=True), expression=exp.Null())
    return _count_sql(is_null, cond, where)


def _blanks(spec: MetricSpec, cond: ast.Condition, where: _Filter) -> ast.RuleNode:
    """Blank text has no DQDL rule: Glue's Completeness counts only NULLs, and a blank CSV cell
    of a text column is the empty string (docs/dqdl.md)."""
    raise NotExported(f"{spec.kind} counts blank text; DQDL's Completeness counts NULLs only")


def _count_where(spec: MetricSpec, cond: ast.Condition, where: _Filter) -> ast.RuleNode:
    """The rows satisfying the condition, counted by CustomSql: the same number."""
    assert spec.where is not None
    predicate = _predicate(spec.where.condition, f"count_where '{spec.where.name}' condition")
    return _count_sql(predicate, cond, where)


def _freshness(spec: MetricSpec, cond: ast.Condition, where: _Filter) -> ast.RuleNode:
    """freshness = now - max(c): a bound on it is a bound on max(c) at ``now() - D``. Not
    DataFreshness, which needs *every* row to be that fresh (rules/values.py)."""
    cutoffs = [_cutoff(o) for o in cond.operands]
    flipped = _FLIP.get(cond.op, cond.op)
    if cond.op in (Op.BETWEEN, Op.NOT_BETWEEN):
        cutoffs.reverse()
    return _extreme("max", spec, flipped, tuple(cutoffs), where)


def _min(spec: MetricSpec, cond: ast.Condition, where: _Filter) -> ast.RuleNode:
    """A bound on min(c) as ColumnValues counts (see :func:`_extreme`)."""
    return _extreme("min", spec, cond.op, _static_operands(cond, "min"), where)


def _max(spec: MetricSpec, cond: ast.Condition, where: _Filter) -> ast.RuleNode:
    """A bound on max(c) as ColumnValues counts (see :func:`_extreme`)."""
    return _extreme("max", spec, cond.op, _static_operands(cond, "max"), where)


def _reconcile(spec: MetricSpec, cond: ast.Condition, where: _Filter) -> ast.RuleNode:
    raise NotExported("a reconciliation has no DQDL rule: DatasetMatch says tables differ, not which rows")


TRANSLATORS: dict[str, Translator] = {
    "row_count": _row_count,
    "freshness": _freshness,
    "null_rate": _null_rate,
    "null_count": _null_count,
    "blank_rate": _blanks,
    "blank_count": _blanks,
    "missing_rate": _blanks,
    "distinct_count": _same_number("DistinctValuesCount"),
    "min": _min,
    "max": _max,
    "mean": _same_number("Mean"),
    "sum": _same_number("Sum"),
    "count_where": _count_where,
    "reconcile": _reconcile,
}
"""One translator per metric kind (document.METRIC_KINDS); a test checks that none is missing."""


# --- min, max and freshness: existence counts with thresholds ------------------------------------


_FLIP = {Op.GT: Op.LT, Op.GE: Op.LE, Op.LT: Op.GT, Op.LE: Op.GE}


def _extreme(
    which: str, spec: MetricSpec, op: Op, bounds: tuple[ast.Operand, ...], where: _Filter
) -> ast.RuleNode:
    """``max(c) op x`` (or ``min``) as rules on rows, exact with NULLs and without.

    ColumnValues alone needs *every* row, NULLs included, to satisfy it, so it says nothing
    exact about max(c) on a column with NULLs. Counting does: ``with threshold > 0`` passes when
    some row satisfies the comparison (``max(c) > x`` ⇔ some value > x), ``with threshold = 0``
    when none does (``max(c) <= x`` ⇔ no value > x, and at least one value: Completeness > 0,
    since assay never passes a condition on the max of no values).
    """
    column = _param(spec)

    def values(cmp: Op, bound: ast.Operand, share: Op) -> ast.Rule:
        kind = CondKind.NUMBER if isinstance(bound, ast.Number) else CondKind.DATE
        threshold = ast.Tag("threshold", ast.Condition(CondKind.NUMBER, share, (ast.Number("0"),)))
        return ast.Rule("ColumnValues", (column,), ast.Condition(kind, cmp, (bound,)), tags=(threshold,))

    some_value = ast.Rule(
        "Completeness", (column,), ast.Condition(CondKind.NUMBER, Op.GT, (ast.Number("0"),))
    )

    def holds(cmp: Op, bound: ast.Operand) -> list[ast.Rule]:
        """``which(c) cmp bound`` as a conjunction of rules."""
        # max(c) > x: some value > x. max(c) <= x: no value > x (and some value). min mirrors it.
        exists = {"max": (Op.GT, Op.GE), "min": (Op.LT, Op.LE)}[which]
        if cmp in exists:
            return [values(cmp, bound, Op.GT)]
        opposite = {Op.LT: Op.GE, Op.LE: Op.GT, Op.GT: Op.LE, Op.GE: Op.LT}[cmp]
        return [values(opposite, bound, Op.EQ), some_value]

    def conjunction(parts: list[ast.Rule]) -> list[ast.Rule]:
        # "some value" is implied by a rule that finds one.
        if any(p.threshold is not None and p.threshold.op is Op.GT for p in parts):
            parts = [p for p in parts if p is not some_value]
        return parts

    if op in (Op.GT, Op.GE, Op.LT, Op.LE):
        return where.apply_all(_and(holds(op, bounds[0])))
    if op is Op.BETWEEN:
        return where.apply_all(_and(conjunction(holds(Op.GT, bounds[0]) + holds(Op.LT, bounds[1]))))
    if op is Op.EQ:
        return where.apply_all(_and(conjunction(holds(Op.GE, bounds[0]) + holds(Op.LE, bounds[0]))))
    if op is Op.NOT_BETWEEN:
        return where.apply_all(_or([_and(holds(Op.LE, bounds[0])), _and(holds(Op.GE, bounds[1]))]))
    if op is Op.NE:
        return where.apply_all(_or([_and(holds(Op.LT, bounds[0])), _and(holds(Op.GT, bounds[0]))]))
    raise NotExported(f"'{op.value}' on {which}() has no exact DQDL rule")


def _and(parts: Sequence[ast.RuleNode]) -> ast.RuleNode:
    return parts[0] if len(parts) == 1 else ast.Composite("and", "and", tuple(parts))


def _or(parts: Sequence[ast.RuleNode]) -> ast.RuleNode:
    return parts[0] if len(parts) == 1 else ast.Composite("or", "or", tuple(parts))


def _static_operands(cond: ast.Condition, which: str) -> tuple[ast.Operand, ...]:
    out = []
    for operand in cond.operands:
        value = _static(operand)
        if value is None:
            raise NotExported(
                f"a dynamic bound ({condition_text(cond)}) on {which}() reads stored history, and the "
                "exact DQDL form (ColumnValues counts) compares rows, which cannot"
            )
        out.append(_number(value))
    return tuple(out)


_ARITHMETIC: dict[str, Callable[[Decimal, Decimal], Decimal]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
}

_UNITS = (("days", 86400), ("hours", 3600), ("minutes", 60))


def _cutoff(operand: ast.Operand) -> ast.Now:
    """``now() - D`` for a freshness bound of D seconds, in the largest unit that divides it."""
    seconds = _static(operand)
    if seconds is None:
        raise NotExported(
            "a dynamic bound on freshness reads stored history, and the exact DQDL form "
            "(ColumnValues against now()) compares rows, which cannot"
        )
    if seconds == 0:
        return ast.Now()
    for unit, size in _UNITS:
        amount = abs(seconds) / size
        if amount == amount.to_integral_value():
            return ast.Now("-" if seconds > 0 else "+", int(amount), unit)
    raise NotExported(
        f"a freshness bound of {seconds} seconds is not a whole number of minutes, the finest DQDL unit"
    )


# --- numbers -----------------------------------------------------------------------------------------


def _static(operand: ast.Operand) -> Decimal | None:
    """The operand's value when it reads no history (numbers and arithmetic over them)."""
    if isinstance(operand, ast.Number):
        return Decimal(operand.text)
    if isinstance(operand, ast.Paren):
        return _static(operand.inner)
    if isinstance(operand, ast.BinOp):
        left, right = _static(operand.left), _static(operand.right)
        if left is None or right is None:
            return None
        if operand.op == "/" and right == 0:
            raise NotExported("the condition divides by zero")
        return _ARITHMETIC[operand.op](left, right)
    return None


def _number(value: Decimal) -> ast.Number:
    text = format(value.normalize(), "f")
    return ast.Number("0" if text in ("-0", "0") else text)


def _complement(cond: ast.Condition) -> ast.Condition:
    """The condition on ``1 - m`` that holds exactly when ``cond`` holds on ``m``."""
    values = []
    for operand in cond.operands:
        value = _static(operand)
        if value is None:
            raise NotExported(
                f"a dynamic bound ({condition_text(cond)}) reads assay's history of null_rate; "
                "Completeness (1 - null_rate) would read its own history, so the bound cannot be inverted"
            )
        values.append(_number(Decimal(1) - value))
    op = _FLIP.get(cond.op, cond.op)
    if cond.op in (Op.BETWEEN, Op.NOT_BETWEEN):
        values.reverse()
    return ast.Condition(CondKind.NUMBER, op, tuple(values))


# --- SQL: the profile's filter, count_where conditions, CustomSql -------------------------------------


def _predicate(text: str, what: str) -> exp.Expression:
    """User SQL parsed into a checked tree (never pasted). The schema is not known here, so the
    columns are the ones the text names; the run checks them against the data."""
    try:
        names = sorted({c.name for c in sqlglot.parse_one(text, read="spark").find_all(exp.Column)})
    except SqlglotError:
        names = []
    try:
        return sqlsafe.parse_predicate(text, names)
    except sqlsafe.SQLRejected as error:
        raise NotExported(f"the {what} is not safe SQL: {error.reason}") from None


def _spark(tree: exp.Expr, what: str) -> str:
    text = sqlsafe.render(tree, "spark")
    if any(ch in text for ch in '"\\\n'):
        # DQDL strings keep escapes verbatim in where clauses and CustomSql (DQDL.md §1).
        raise NotExported(
            f"the {what} holds a double quote, a backslash or a line break, which DQDL cannot quote"
        )
    return text


class _Filter:
    """A profile's ``filter``, as the ``where`` clause of each of its rules (none when not
    ``applied``: a metric over the whole source)."""

    def __init__(self, profile: Profile, *, applied: bool = True) -> None:
        self.profile = profile
        self.tree = (
            None
            if profile.filter is None or not applied
            else _predicate(profile.filter, f"profile {profile.id}'s filter")
        )

    def apply(self, rule: ast.Rule) -> ast.Rule:
        if self.tree is None:
            return rule
        rule_type = catalog.lookup(rule.type)
        if rule_type is None or not rule_type.where:
            raise NotExported(
                f"profile {self.profile.id} has a filter, and DQDL allows no where clause on {rule.type}"
            )
        tree: exp.Expr = self.tree.copy()
        if rule.where is not None:
            tree = exp.and_(exp.paren(tree), exp.paren(_predicate(rule.where.raw, "rule's where clause")))
        text = _spark(tree, f"profile {self.profile.id}'s filter")
        return replace(rule, where=ast.StringLit(text, text))

    def apply_all(self, node: ast.RuleNode) -> ast.RuleNode:
        if isinstance(node, ast.Rule):
            return self.apply(node)
        return replace(node, children=tuple(self.apply_all(child) for child in node.children))


def _count_sql(predicate: exp.Expr, cond: ast.Condition, where: _Filter) -> ast.Rule:
    """``CustomSql "SELECT COUNT(*) FROM primary WHERE ..." <cond>``; CustomSql takes no where
    clause, so the profile's filter joins the query's WHERE."""
    if where.tree is not None:
        predicate = exp.and_(exp.paren(where.tree.copy()), exp.paren(predicate))
    query = exp.select(exp.Count(this=exp.Star())).from_(exp.to_table("primary")).where(predicate)
    text = _spark(query, "query")
    return ast.Rule("CustomSql", (ast.Param(text, True),), cond)


def _param(spec: MetricSpec) -> ast.Param:
    assert spec.column is not None
    if any(ch in spec.column for ch in '"\\'):
        raise NotExported(
            f"column '{spec.column}' holds a double quote or backslash, which DQDL cannot quote"
        )
    return ast.Param(spec.column, True)


# --- rule expectations --------------------------------------------------------------------------------


def _copied_rule(profile: Profile, text: str) -> ast.RuleNode:
    """A ``rule:`` as written (dynamic conditions included), with the profile's filter added to
    each of its rules' where clauses."""
    node = (parse_rule(text).rules or ())[0]
    return _Filter(profile).apply_all(node)
