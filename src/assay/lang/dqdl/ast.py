"""The DQDL syntax tree: immutable values, compared by content (positions are not compared).

A parsed ruleset prints back to DQDL (:mod:`assay.lang.dqdl.printer`) and parsing that text
yields an equal tree. Nodes keep what the author wrote where it changes the printed text
(number spellings, quoting, ``of`` connectors, ``and``/``AND``), so rule texts read as written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeAlias


@dataclass(frozen=True)
class Span:
    """1-based position of a node's first token."""

    line: int
    column: int


NO_SPAN = Span(0, 0)


# --- numeric expressions -------------------------------------------------------------------


@dataclass(frozen=True)
class Number:
    """A numeric literal; ``text`` is the spelling (``100.0``, ``-0.5``)."""

    text: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)

    @property
    def value(self) -> float:
        return float(self.text)


@dataclass(frozen=True)
class Null:
    """``NULL`` (or ``null``)."""

    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True)
class Call:
    """A function call in a dynamic rule: ``avg(last(10))``."""

    name: str
    args: tuple[NumExpr, ...]
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True)
class BinOp:
    """``left op right``; DQDL gives + - * / one precedence level, left-associative (DQDL.md §3.1)."""

    op: str
    left: NumExpr
    right: NumExpr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True)
class Paren:
    """A parenthesised numeric expression, kept so that rules print as written."""

    inner: NumExpr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


NumExpr: TypeAlias = Number | Null | Call | BinOp | Paren


# --- other operands ------------------------------------------------------------------------


@dataclass(frozen=True)
class StringLit:
    """A quoted string. ``raw`` is the text between the quotes; ``value`` has escapes removed
    where DQDL removes them (``in`` lists, constant arrays), else equals ``raw``."""

    raw: str
    value: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


class Word(StrEnum):
    """The string keywords of DQDL.md §3.3."""

    NULL = "NULL"
    EMPTY = "EMPTY"
    WHITESPACES_ONLY = "WHITESPACES_ONLY"


@dataclass(frozen=True)
class KeywordLit:
    word: Word
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True)
class VarRef:
    """``$name``: a reference to a constant declared before ``Rules``."""

    name: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True)
class DateLit:
    """``"YYYY-MM-DD"``: midnight of that day."""

    text: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True)
class TimeLit:
    """``"9:30 AM"`` or ``"21:45"``: today at that time, in the rule's time zone (UTC by default)."""

    text: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True)
class Now:
    """``now()``, or ``(now() - 3 days)`` when ``amount`` is set."""

    sign: str = ""
    amount: int = 0
    unit: str = ""
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True)
class Duration:
    """``24 hours`` in a DataFreshness condition."""

    amount: int
    unit: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True)
class Size:
    """``5 MB`` in a FileSize condition; ``unit`` is empty for a bare byte count."""

    amount: int
    unit: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


Operand: TypeAlias = (
    Number
    | Null
    | Call
    | BinOp
    | Paren
    | StringLit
    | KeywordLit
    | VarRef
    | DateLit
    | TimeLit
    | Now
    | Duration
    | Size
)


class CondKind(StrEnum):
    """What a condition compares; fixed by the rule type's return type (DQDL.md §2)."""

    NUMBER = "number"
    STRING = "string"
    DATE = "date"
    DURATION = "duration"
    SIZE = "size"


class Op(StrEnum):
    EQ = "="
    NE = "!="
    GT = ">"
    GE = ">="
    LT = "<"
    LE = "<="
    BETWEEN = "between"
    NOT_BETWEEN = "not between"
    IN = "in"
    NOT_IN = "not in"
    MATCHES = "matches"
    NOT_MATCHES = "not matches"


@dataclass(frozen=True)
class Condition:
    """``op operands``: ``> 5``, ``between 1 and 2``, ``in [..]``.

    ``listed`` is False for ``in $constant``."""

    kind: CondKind
    op: Op
    operands: tuple[Operand, ...]
    listed: bool = True
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


# --- rules ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """A rule parameter. ``text`` is what was written (quoted text keeps its escapes);
    ``connector`` is a decorative ``of``/``and`` written before it."""

    text: str
    quoted: bool
    connector: str = ""
    variable: str = ""  # set when the parameter was written as $name; text then holds the value
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True)
class Label:
    key: str
    value: str


@dataclass(frozen=True)
class Bare:
    """A tag value written without quotes: ``with rebin = false``."""

    text: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True)
class StringList:
    """A list-valued tag: ``with filterOrder = ["uriRegex","recentFiles"]``."""

    items: tuple[StringLit, ...]
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


TagValue: TypeAlias = StringLit | Number | Bare | StringList


@dataclass(frozen=True)
class Tag:
    """``with name = value``; ``threshold`` tags carry a condition instead."""

    name: str
    value: TagValue | Condition
    span: Span = field(default=NO_SPAN, compare=False, repr=False)

    @property
    def text(self) -> str | None:
        """A scalar value as text (a list has none)."""
        if isinstance(self.value, StringLit):
            return self.value.value
        if isinstance(self.value, Number | Bare):
            return self.value.text
        return None

    @property
    def is_threshold(self) -> bool:
        return self.name.lower() == "threshold"


@dataclass(frozen=True)
class Rule:
    type: str
    params: tuple[Param, ...] = ()
    condition: Condition | None = None
    where: StringLit | None = None
    tags: tuple[Tag, ...] = ()
    labels: tuple[Label, ...] | None = None
    labels_first: bool = False  # labels written before the with-tags
    span: Span = field(default=NO_SPAN, compare=False, repr=False)

    @property
    def threshold(self) -> Condition | None:
        for tag in self.tags:
            if tag.is_threshold and isinstance(tag.value, Condition):
                return tag.value
        return None

    def tag(self, name: str) -> str | None:
        """The value of a ``with name = ...`` tag as text (names compare case-insensitively)."""
        return find_tag(self.tags, name)

    def tag_list(self, name: str) -> tuple[str, ...] | None:
        """The values of a list-valued tag (``with filterOrder = ["a","b"]``), or None."""
        for tag in self.tags:
            if tag.name.lower() == name.lower() and isinstance(tag.value, StringList):
                return tuple(item.value for item in tag.value.items)
        return None


def find_tag(tags: tuple[Tag, ...], name: str) -> str | None:
    """The text of the scalar tag ``name`` among ``tags`` (names compare case-insensitively)."""
    for tag in tags:
        if tag.name.lower() == name.lower() and not isinstance(tag.value, Condition):
            return tag.text
    return None


@dataclass(frozen=True)
class Composite:
    """``(A) and (B)``, ``(A) or (B) or (C)``. ``op`` is ``and``/``or``; ``op_text`` as written."""

    op: str
    op_text: str
    children: tuple[RuleNode, ...]
    labels: tuple[Label, ...] | None = None
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


RuleNode: TypeAlias = Rule | Composite


@dataclass(frozen=True)
class Analyzer:
    type: str
    params: tuple[Param, ...] = ()
    span: Span = field(default=NO_SPAN, compare=False, repr=False)
    tags: tuple[Tag, ...] = ()  # Distribution's `with bins = 10, rebin = false`

    def tag(self, name: str) -> str | None:
        return find_tag(self.tags, name)


@dataclass(frozen=True)
class Constant:
    """``name = "text"`` or ``name = ["a", "b"]``."""

    name: str
    value: StringLit | tuple[StringLit, ...]
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True)
class Ruleset:
    metadata: tuple[tuple[str, str], ...] | None = None
    data_sources: tuple[tuple[str, str | tuple[str, ...]], ...] | None = None
    constants: tuple[Constant, ...] = ()
    default_labels: tuple[Label, ...] | None = None
    rules: tuple[RuleNode, ...] | None = None
    analyzers: tuple[Analyzer, ...] | None = None

    @property
    def constant_values(self) -> dict[str, StringLit | tuple[StringLit, ...]]:
        return {c.name: c.value for c in self.constants}

    def effective_labels(self, node: RuleNode) -> dict[str, str]:
        """The rule's labels over the ruleset's defaults, key by key (DQDL.md §4 Labels)."""
        merged = {label.key: label.value for label in self.default_labels or ()}
        merged.update({label.key: label.value for label in node.labels or ()})
        return merged


def leaves(node: RuleNode) -> list[Rule]:
    """The simple rules inside a rule, left to right."""
    if isinstance(node, Rule):
        return [node]
    out: list[Rule] = []
    for child in node.children:
        out.extend(leaves(child))
    return out
