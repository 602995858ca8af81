"""What a compiled rule is: the metrics it needs measured, how to judge them, and its row check.

A rule kind (one per DQDL rule type, in the sibling modules) turns a parsed rule into a
:class:`LeafPlan`. Plans are declarations: the planner in :mod:`assay.measure` runs their
requests, :mod:`assay.judge` interprets their verdicts. Nothing here touches data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlglot import exp

from assay.engine import Column, Engine, EngineError
from assay.engine.base import find_column
from assay.lake.readers import Registered
from assay.lang import sqlsafe
from assay.lang.dqdl import ast
from assay.lang.dqdl.printer import condition_text, rule_text
from assay.measure import Measurements, Request, ScanPlan
from assay.store import MetricKey


class RuleError(Exception):
    """This rule cannot be evaluated; it becomes an ``Error`` outcome carrying ``message``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --- verdicts: how a leaf's metrics become an outcome ----------------------------------------


@dataclass(frozen=True)
class Compare:
    """Passes when ``metric`` satisfies ``condition`` (numeric, possibly dynamic: ``last(k)``
    reads the stored history of ``history``)."""

    metric: str
    condition: ast.Condition
    history: MetricKey


@dataclass(frozen=True)
class AllOne:
    """Passes when every metric equals 1.0 (IsComplete, IsUnique, IsPrimaryKey)."""

    metrics: tuple[str, ...]


@dataclass(frozen=True)
class Compliance:
    """Passes when the share of rows satisfying the rule is 1.0, or satisfies ``threshold``.

    ``rows`` names the hidden value holding how many rows were judged; with zero rows the rule passes
    ("No rows matched the filter") unless ``empty_passes`` is False.
    """

    metric: str
    rows: str
    threshold: ast.Condition | None
    history: MetricKey
    empty_passes: bool = True
    # A text column judged as dates: its name, and the hidden values counting its values and
    # those that are dates; none of many being one is an Error (the format is unknown), not rows
    # that failed.
    dated: tuple[str, str, str] | None = None


@dataclass(frozen=True)
class Fixed:
    """An outcome known without measuring (ColumnExists, a rule that is in error)."""

    passed: bool
    message: str | None = None


@dataclass(frozen=True)
class Anomalous:
    """DetectAnomalies: passes unless ``metric`` falls outside the band its history predicts."""

    metric: str
    history: MetricKey


Verdict = Compare | AllOne | Compliance | Fixed | Anomalous


# --- plans ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricSpec:
    """A metric the rule reports: its Glue display name, the key it is stored under, and how
    to compute it from the measured slots."""

    display: str
    stored: MetricKey
    compute: Callable[[Measurements], float | None]
    slots: tuple[str, ...] = ()


ROW_SOURCE = "__assay_row_source"
"""The table name by which a :class:`RowCheck` helper reads every row being judged; the row
layout binds it to the table the rows come from."""


@dataclass(frozen=True)
class RowCheck:
    """The rule row by row: ``predicate`` is TRUE for a passing row and never NULL. Rows where
    ``filter`` is not TRUE were excluded by a where clause. ``helpers`` are expressions over
    other rows that the predicate reads by name (computed in an inner query, where the row is
    ``primary`` and all the rows are table :data:`ROW_SOURCE`)."""

    predicate: exp.Expr
    filter: exp.Expr | None = None
    helpers: tuple[tuple[str, exp.Expr], ...] = ()
    in_row_composites: bool = True  # Completeness, Uniqueness and ratio rules are not (DQDL.md §5)
    in_row_level: bool = True  # DataFreshness judges rows in ROW-mode composites only (as Deequ)


@dataclass
class LeafPlan:
    """A simple rule, compiled."""

    rule: ast.Rule
    metrics: list[MetricSpec] = field(default_factory=list)
    verdict: Verdict = Fixed(True)
    row: RowCheck | None = None
    error: str | None = None
    hidden: dict[str, MetricSpec] = field(default_factory=dict)  # values the verdict reads but no one reports
    detail: Detail | None = None  # an analyzer's structured result (Distribution's histogram)

    @property
    def text(self) -> str:
        return rule_text(self.rule)

    @property
    def slots(self) -> list[str]:
        specs = [*self.metrics, *self.hidden.values()]
        return [slot for metric in specs for slot in metric.slots]


Detail = Callable[[Measurements], dict[str, Any]]
"""A structured result read from the measured slots, beside the metrics (not a number)."""

Kind = Callable[[ast.Rule, "Context"], LeafPlan]
"""A rule type's compiler: parsed rule in, plan out; raises :class:`RuleError` when the rule
cannot be evaluated on this data."""


# --- the compile context -------------------------------------------------------------------


@dataclass
class Context:
    """What a rule kind may consult: the engine and the registered tables, the clock, the
    ruleset's constants, and the shared scan to add its requests to."""

    engine: Engine
    primary: Registered
    references: dict[str, Registered]
    now: datetime
    scan: ScanPlan
    constants: dict[str, ast.StringLit | tuple[ast.StringLit, ...]] = field(default_factory=dict)
    data_path: Path | None = None
    group: str = ""
    _names: int = 0

    def fresh(self, prefix: str) -> str:
        """A new internal column name (for window helpers)."""
        self._names += 1
        return f"{prefix}{self._names}"

    def request(self, request: Request) -> str:
        return self.scan.add(request, self.group)

    def column(self, name: str) -> Column:
        """Resolve a column name: an exact match, else a unique case-insensitive match (Spark
        resolves names case-insensitively, and Glue runs on Spark)."""
        held = self.primary.held(name)
        return held if held is not None else resolve_column(name, self.primary.columns, "primary dataset")

    def where(self, rule: ast.Rule) -> exp.Expr | None:
        """The rule's where clause as a predicate tree, validated against the primary table."""
        if rule.where is None:
            return None
        try:
            predicate = sqlsafe.parse_predicate(
                rule.where.raw, self.primary.column_names(), clock=self.now, sources=self.primary.sources()
            )
            self.engine.describe(
                exp.select(predicate.copy()).from_(exp.to_identifier(self.primary.name, quoted=True))
            )
        except sqlsafe.SQLRejected as error:
            raise RuleError(f"The where clause is invalid: {error.reason}") from None
        except EngineError as error:
            raise RuleError(f"The where clause is invalid: {error.message}") from None
        return predicate

    def reference(self, alias: str) -> Registered:
        registered = self.references.get(alias)
        if registered is None:
            given = ", ".join(sorted(self.references)) or "none"
            raise RuleError(
                f"Reference dataset '{alias}' not found in additional data sources (given: {given}); "
                f"pass it with --ref {alias}=PATH"
            )
        return registered

    def sources(self) -> dict[str, str]:
        """Every table's columns the engine renamed (``A_1``), with the input's names (``A``)."""
        return {
            held: given
            for t in (self.primary, *self.references.values())
            for held, given in t.sources().items()
        }

    def tables(self) -> dict[str, list[str]]:
        """Table names a user query may read, with their columns."""
        tables = {"primary": self.primary.column_names()}
        tables.update({alias: ref.column_names() for alias, ref in self.references.items()})
        return tables


def resolve_column(name: str, columns: Sequence[Column], where: str) -> Column:
    """The column ``name`` refers to: the one of that exact name; else the one whose name matches
    it but for case (as Spark, which Glue runs on, resolves names), or failing that, but for case
    and surrounding spaces (a CSV header's ``"Amount "``); a RuleError when there is none or more
    than one. Two input columns whose names are equal but for case are one name to the engines:
    the later is held as ``A_1`` (``Column.source``), and a reference that is not exactly one of
    the held names is ambiguous, never silently the other column.

    >>> from assay.engine import DataKind
    >>> table = [Column("a", "BIGINT", DataKind.INTEGER), Column("A_1", "BIGINT", DataKind.INTEGER, "A"),
    ...          Column("Total ", "BIGINT", DataKind.INTEGER)]
    >>> [resolve_column(n, table, "t").name for n in ("a", "A_1", "total", " TOTAL ")]
    ['a', 'A_1', 'Total ', 'Total ']
    >>> try:
    ...     resolve_column("A", table, "primary dataset")
    ... except RuleError as error:
    ...     print(error.args[0][:57])
    Column 'A' is ambiguous in the primary dataset: the input
    """
    found, matches = find_column(name, columns)
    if found is not None:
        return found
    if matches:
        raise RuleError(f"Column '{name}' is ambiguous in the {where}: {ambiguity(matches)}")
    # assay's own columns (the gate's __row, __gate_batch ...) are not the user's to name.
    shown = [c.name for c in columns if not c.name.startswith("__")]
    listing = ", ".join(shown[:20]) + (", ..." if len(shown) > 20 else "")
    raise RuleError(f"Column '{name}' does not exist in the {where} (columns: {listing or 'none'})")


def ambiguity(matches: Sequence[Column]) -> str:
    """Why a name matching ``matches`` is ambiguous, and what to write instead."""
    given = " and ".join(repr(c.source or c.name) for c in matches)
    held = " and ".join(repr(c.name) for c in matches)
    return (
        f"the input has columns named {given}, which the engine cannot tell apart (it matches names "
        f"regardless of case, as Spark does) and holds as {held}: name the one you mean as it is held"
    )


def col(column: Column) -> exp.Column:
    """A quoted reference to a column of the current table."""
    return exp.column(column.name, quoted=True)


# --- helpers shared by the rule kinds ------------------------------------------------------


def qualified(key: MetricKey, rule: ast.Rule, *, condition: bool = False) -> MetricKey:
    """The key a metric is stored under. Glue gives ``RowCount`` and ``RowCount where "x > 1"``
    the same display name; the store keeps them apart, so that ``last(k)`` of one rule never
    reads another rule's numbers. Compliance metrics also depend on the rule's condition."""
    suffix = ""
    if condition and rule.condition is not None:
        suffix += " " + condition_text(rule.condition)
    if rule.where is not None:
        suffix += f' where "{rule.where.raw}"'
    return MetricKey(key.entity, key.instance, key.name + suffix) if suffix else key


def number_of(slot: str) -> Callable[[Measurements], float | None]:
    return lambda m: m.number(slot)


def ratio_of(numerator: str, denominator: str) -> Callable[[Measurements], float | None]:
    """numerator / denominator; 0/0 is NaN (Deequ reports a failed metric there)."""

    def compute(m: Measurements) -> float | None:
        num, den = m.number(numerator) or 0.0, m.number(denominator) or 0.0
        if den == 0:
            return float("nan") if num == 0 else float("inf")
        return num / den

    return compute


def constant(value: float | None) -> Callable[[Measurements], float | None]:
    return lambda m: value


def judged(rule: ast.Rule, metric: MetricSpec) -> Verdict:
    """Compare the rule's condition with ``metric``; without a condition (an analyzer), nothing to judge."""
    if rule.condition is None:
        return Fixed(True)
    return Compare(metric.display, rule.condition, metric.stored)
