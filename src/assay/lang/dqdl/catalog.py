"""The DQDL rule-type registry: one row per rule type, declared as data.

Mirrors awslabs/dqdl ``rules-config.json`` and DQDL.md §6: how many parameters a type takes,
what kind of condition it needs, and whether ``with threshold`` and ``where`` are allowed.
The parser reads this table; it never branches on a rule-type name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from assay.lang.dqdl import ast
from assay.lang.dqdl.ast import CondKind


class Returns(Enum):
    """What a rule type yields, which fixes the condition it accepts (DQDL.md §2)."""

    NUMBER = "number"
    BOOLEAN = "boolean"
    STRING = "string"
    DURATION = "duration"
    DATE = "date"
    SIZE = "size"  # a size, or a plain integer meaning bytes
    VALUES = "values"  # ColumnValues: string, number or date, tried in that order
    NUMBER_OR_NONE = "number|none"  # CustomSql: scalar form or row form
    STRING_IN_OR_NONE = "string-in|none"  # FileMatch

    @property
    def kinds(self) -> tuple[CondKind, ...]:
        return _KINDS[self]


_KINDS: dict[Returns, tuple[CondKind, ...]] = {
    Returns.NUMBER: (CondKind.NUMBER,),
    Returns.BOOLEAN: (),
    Returns.STRING: (CondKind.STRING,),
    Returns.DURATION: (CondKind.DURATION,),
    Returns.DATE: (CondKind.DATE,),
    Returns.SIZE: (CondKind.SIZE,),  # a bare integer is a size in bytes
    Returns.VALUES: (CondKind.STRING, CondKind.NUMBER, CondKind.DATE),
    Returns.NUMBER_OR_NONE: (CondKind.NUMBER,),
    Returns.STRING_IN_OR_NONE: (CondKind.STRING,),
}


@dataclass(frozen=True)
class RuleType:
    name: str
    min_params: int
    max_params: int | None  # None: var-arg
    returns: Returns
    threshold: bool = False
    where: bool = False
    analyzer: bool = True  # may appear in Analyzers
    analyzer_only: bool = False
    condition_optional: bool = False
    condition_required_below: int | None = None  # FileMatch: fewer params than this need a condition
    analyzer_tags: tuple[str, ...] = ()  # the `with` tags an analyzer takes (Distribution)

    def accepts(self, count: int) -> bool:
        return count >= self.min_params and (self.max_params is None or count <= self.max_params)

    def needs_condition(self, count: int) -> bool:
        if self.returns is Returns.BOOLEAN:
            return False
        if self.condition_required_below is not None:
            return count < self.condition_required_below
        return not self.condition_optional

    def tag_problem(self, name: str, value: ast.TagValue) -> str | None:
        """Why an analyzer tag's value is not acceptable, or None (:data:`TAG_VALUES`)."""
        check = TAG_VALUES.get((self.name, name))
        return check(value) if check else None

    def forbids_condition(self, count: int) -> bool:
        if self.returns is Returns.BOOLEAN:
            return True
        return self.condition_required_below is not None and count >= self.condition_required_below


_N, _B = Returns.NUMBER, Returns.BOOLEAN

RULE_TYPES: tuple[RuleType, ...] = (
    RuleType("RowCount", 0, 0, _N, where=True),
    RuleType("RowCountMatch", 1, 1, _N),
    RuleType("ColumnCount", 0, 0, _N),
    RuleType("ColumnExists", 1, 1, _B, analyzer=False),
    RuleType("ColumnNamesMatchPattern", 1, 1, _B, analyzer=False),
    RuleType("ColumnDataType", 1, 1, Returns.STRING, threshold=True, where=True, analyzer=False),
    RuleType("IsComplete", 1, 1, _B, where=True, analyzer=False),
    RuleType("Completeness", 1, 1, _N, where=True),
    RuleType("IsUnique", 1, None, _B, where=True, analyzer=False),
    RuleType("Uniqueness", 1, None, _N, where=True),
    RuleType("IsPrimaryKey", 1, None, _B, where=True, analyzer=False),
    RuleType("UniqueValueRatio", 1, 1, _N, where=True),
    RuleType("DistinctValuesCount", 1, 1, _N, where=True),
    RuleType("Entropy", 1, 1, _N, where=True),
    RuleType("Mean", 1, 1, _N, where=True),
    RuleType("Sum", 1, 1, _N, where=True),
    RuleType("StandardDeviation", 1, 1, _N, where=True),
    RuleType("Variance", 1, 1, _N, where=True),
    RuleType("ColumnCorrelation", 2, 2, _N, where=True),
    RuleType("ColumnLength", 1, 1, _N, where=True),
    RuleType("ColumnValues", 1, 1, Returns.VALUES, threshold=True, where=True),
    RuleType("DataFreshness", 1, 1, Returns.DURATION, where=True, analyzer=False),
    RuleType("CustomSql", 1, 1, Returns.NUMBER_OR_NONE, threshold=True, condition_optional=True),
    RuleType("ReferentialIntegrity", 2, 2, _N),
    RuleType("DatasetMatch", 2, 3, _N),
    RuleType("SchemaMatch", 1, 1, _N),
    RuleType("AggregateMatch", 2, 2, _N),
    RuleType("DetectAnomalies", 1, None, _B, analyzer=False),
    RuleType("FileFreshness", 0, 1, Returns.DATE, threshold=True, analyzer=False),
    RuleType("FileSize", 0, 1, Returns.SIZE, threshold=True, analyzer=False),
    RuleType("FileUniqueness", 0, 1, _N, analyzer=False),
    RuleType("FileMatch", 0, 2, Returns.STRING_IN_OR_NONE, analyzer=False, condition_required_below=2),
    RuleType("AllStatistics", 1, 1, _N, analyzer_only=True),
    RuleType("Distribution", 1, 1, _N, analyzer_only=True, analyzer_tags=("bins", "rebin")),
    # Rule types of Deequ's open DQDL evaluator that Glue's documentation does not list yet.
    RuleType("ZerosCount", 1, 1, _N, where=True),
    RuleType("Range", 1, 1, _N, where=True),
    RuleType("InterquartileRange", 1, 1, _N, where=True),
    RuleType("Skewness", 1, 1, _N, where=True),
    RuleType("Kurtosis", 1, 1, _N, where=True),
    RuleType("DuplicateRowCount", 0, None, _N, where=True),
)

BY_NAME: dict[str, RuleType] = {t.name: t for t in RULE_TYPES}

MAX_BINS = 20  # Glue: "The default value is 20. The maximum value is 20."


def _bins(value: ast.TagValue) -> str | None:
    if isinstance(value, ast.Number) and value.text.isdigit() and 1 <= int(value.text) <= MAX_BINS:
        return None
    return f"bins is a whole number from 1 to {MAX_BINS}"


def _flag(value: ast.TagValue) -> str | None:
    text = ast.Tag("rebin", value).text or ""
    return None if text.lower() in ("true", "false") else "rebin is true or false"


# Checks of analyzer tag values, by (analyzer type, tag): one row per tag.
TAG_VALUES: dict[tuple[str, str], Callable[[ast.TagValue], str | None]] = {
    ("Distribution", "bins"): _bins,
    ("Distribution", "rebin"): _flag,
}


def lookup(name: str) -> RuleType | None:
    """The registry row for a rule-type name (case-sensitive, as in Glue).

    >>> lookup("RowCount").returns.name, lookup("rowcount")
    ('NUMBER', None)
    """
    return BY_NAME.get(name)
