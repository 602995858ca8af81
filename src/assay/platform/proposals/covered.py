"""What a document checks already: a proposal that repeats one of its expectations is not made.

A column is covered for completeness by ``IsComplete``/``Completeness``/``IsPrimaryKey`` rules and
``null_rate``/``null_count``/``missing_rate`` metrics; for uniqueness by ``IsUnique``/``Uniqueness``/
``IsPrimaryKey``; for values and ranges by any ``ColumnValues`` rule on it (and ranges by
``min``/``max`` metrics); volume by an expectation on the profile's ``row_count`` (or a
``RowCount`` rule); freshness by any freshness expectation; a row rule by a ``count_where`` whose
condition is the same comparison (``settled_at < executed_at`` is ``executed_at > settled_at``).
"""

from __future__ import annotations

from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from assay.lang.dqdl import ast
from assay.platform.checks.document import Document
from assay.platform.checks.rules import RuleError, parse_rule
from assay.platform.proposals.candidate import Candidate
from assay.privacy import classes

_RULES: dict[str, tuple[str, ...]] = {
    "IsComplete": ("completeness",),
    "Completeness": ("completeness",),
    "IsUnique": ("uniqueness",),
    "Uniqueness": ("uniqueness",),
    "IsPrimaryKey": ("uniqueness", "completeness"),
    "ColumnValues": ("values", "range"),
}
_METRICS: dict[str, tuple[str, ...]] = {
    "null_rate": ("completeness",),
    "null_count": ("completeness",),
    "missing_rate": ("completeness",),
    "min": ("range",),
    "max": ("range",),
}


def covered(document: Document) -> set[tuple[str, str]]:
    """``(kind, target)`` of everything the document checks already.

    >>> from assay.platform.checks.document import parse_document
    >>> doc = parse_document('''apiVersion: assay/v1
    ... kind: DatasetChecks
    ... dataset: {name: t, source: {path: t.csv}}
    ... profiles:
    ...   - id: daily
    ...     metrics: [row_count, {count_where: {name: bad, condition: "b < a"}}]
    ... expectations:
    ...   - {id: v, metric: daily.row_count, expect: "> 0"}
    ...   - {id: o, metric: daily.bad, expect: "= 0"}
    ...   - {id: c, rule: 'IsComplete "id"'}
    ... ''')
    >>> sorted(covered(doc))
    [('completeness', 'id'), ('order', 'a > b'), ('volume', 'row_count')]
    """
    found: set[tuple[str, str]] = {("classify", column) for column in classes(document.dataset.classified)}
    for expectation in document.expectations:
        if expectation.rule is not None:
            try:
                rules = ast.leaves((parse_rule(expectation.rule).rules or ())[0])
            except RuleError:
                continue
            for rule in rules:
                if rule.type == "RowCount":
                    found.add(("volume", "row_count"))
                elif rule.type == "DataFreshness":
                    found.add(("freshness", "*"))
                for kind in _RULES.get(rule.type, ()):
                    found.update((kind, param.text) for param in rule.params)
            continue
        ref = expectation.reference
        spec = document.expectation_profile(expectation).spec(ref.key)
        if spec is None:
            continue
        if spec.kind == "row_count" and not expectation.by:
            found.add(("volume", "row_count"))
        elif spec.kind == "freshness":
            found.add(("freshness", "*"))
        elif spec.where is not None:
            canonical = comparison(spec.where.condition)
            if canonical is not None:
                found.add(("order", canonical))
        elif spec.column is not None:
            found.update((kind, spec.column) for kind in _METRICS.get(spec.kind, ()))
    return found


def key(candidate: Candidate) -> tuple[str, str]:
    """What a candidate would check, as :func:`covered` names it."""
    if candidate.kind == "freshness":
        return ("freshness", "*")
    if candidate.kind == "order":
        return ("order", comparison(str(candidate.evidence["condition"])) or candidate.target)
    return (candidate.kind, candidate.target)


def comparison(condition: str) -> str | None:
    """A comparison of two columns written one way: ``>`` and ``>=``, operands swapped, become
    ``<`` and ``<=`` read the other way round (``b < a`` is ``a > b``); names lowercased.

    >>> comparison("settled_at < executed_at"), comparison('"Executed_At" > settled_at')
    ('executed_at > settled_at', 'executed_at > settled_at')
    """
    try:
        tree = parse_one(condition, dialect="duckdb")
    except SqlglotError:
        return None
    swapped: dict[type[exp.Expr], type[exp.Expr]] = {exp.LT: exp.GT, exp.LTE: exp.GTE}
    if type(tree) in swapped:
        tree = swapped[type(tree)](this=tree.expression, expression=tree.this)
    if not isinstance(tree, exp.GT | exp.GTE):
        return None
    for node in tree.find_all(exp.Identifier):
        node.set("this", node.name.lower())
        node.set("quoted", False)
    return tree.sql(dialect="duckdb")
