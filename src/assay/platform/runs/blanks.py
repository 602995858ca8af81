"""The blanks behind a DQDL completeness rule: what Glue's reading calls complete and assay calls missing.

DQDL keeps Glue's reading: ``IsComplete``, ``Completeness`` and ``IsPrimaryKey`` count only
NULLs, and a blank text cell of a CSV is the empty string, a value (docs/dqdl.md). The profile,
check documents (``missing_rate``) and proposals count blank text as missing (issue 30: one
definition of missing). So a rule that passes on a text column holding blank or NA-like values
(``NA``, ``N/A``, ``null``, ``None``, ``NaN``, any case) says so in a note on its outcome, counted
in the rules' one scan (two aggregates a text column such a rule names).

>>> import pyarrow as pa
>>> from assay.engine import DuckDBEngine
>>> from assay.lake.readers import register
>>> from assay.lang.dqdl import parse_text
>>> from assay.measure import ScanPlan
>>> engine = DuckDBEngine()
>>> found = register(engine, "primary", pa.table({"c": ["a", " ", "NA", None]}))
>>> scan = ScanPlan("primary")
>>> asked = Blanks.ask(parse_text('Rules = [ IsComplete "c" ]').ruleset.rules, found, scan)
>>> print(asked.note(parse_text('Rules = [ IsComplete "c" ]').ruleset.rules[0], scan.run(engine)))
... # doctest: +NORMALIZE_WHITESPACE
"c" holds 1 blank and 1 NA-like (NA, N/A, NULL, None, NaN) values, which this rule counts as
present (only NULLs are missing in DQDL, as in Glue); missing_rate(c) in a check document counts
them as missing
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from assay.engine import DataKind
from assay.engine.base import as_text
from assay.engine.cells import NULL_TOKENS
from assay.lake.readers import Registered
from assay.lang.dqdl import ast
from assay.measure import Aggregate, Measurements, ScanPlan
from assay.measure.kinds import KINDS
from assay.measure.requests import count_if

COMPLETENESS_RULES = ("IsComplete", "Completeness", "IsPrimaryKey")
_SPELLINGS = (*NULL_TOKENS, "None", "NaN")
NA_LIKE = tuple(t for i, t in enumerate(_SPELLINGS) if t.upper() not in {s.upper() for s in _SPELLINGS[:i]})
"""Text that stands for a missing value: the tokens a CSV reader takes as NULL in a number or
date column (:data:`assay.engine.cells.NULL_TOKENS`), and Python's and pandas' ``None`` and
``NaN``; compared trimmed and in upper case.

>>> NA_LIKE
('NA', 'N/A', 'NULL', 'None', 'NaN')
"""


def _na_like(value: exp.Expr) -> exp.Expr:
    """``value``, trimmed, is one of NA_LIKE in any case. OR of equalities, not IN: DuckDB plans
    an IN list as a join (engine/cells.py)."""
    upper = exp.Upper(this=exp.Trim(this=value))
    return exp.or_(*(exp.EQ(this=upper.copy(), expression=exp.Literal.string(t.upper())) for t in NA_LIKE))


def _columns(rule: ast.Rule) -> list[str]:
    if rule.type not in COMPLETENESS_RULES:
        return []
    return [p.text for p in rule.params]


@dataclass
class Blanks:
    """The scan slots counting blank and NA-like values of each text column a completeness rule
    names: column name -> (blank slot, NA-like slot)."""

    slots: dict[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def ask(cls, rules: Sequence[ast.RuleNode], primary: Registered, scan: ScanPlan) -> Blanks:
        """Add the counts the rules' notes need to ``scan`` (group ``blanks``: a failure of
        theirs costs no rule its result)."""
        asked = cls()
        for rule in rules:
            if not isinstance(rule, ast.Rule):
                continue
            for name in _columns(rule):
                column = primary.held(name)
                if column is None or column.kind is not DataKind.STRING or name in asked.slots:
                    continue
                asked.slots[name] = (
                    scan.add(KINDS["blank_count"].request(column), "blanks"),
                    scan.add(Aggregate(count_if(_na_like(as_text(column)))), "blanks"),
                )
        return asked

    def note(self, rule: ast.RuleNode, scanned: Measurements) -> str | None:
        """What the passed ``rule`` calls present but assay calls missing, or None."""
        if not isinstance(rule, ast.Rule):
            return None
        notes = []
        for name in _columns(rule):
            if name not in self.slots:
                continue
            blank_slot, token_slot = self.slots[name]
            blanks, tokens = int(scanned.number(blank_slot) or 0), int(scanned.number(token_slot) or 0)
            counted = []
            if blanks:
                counted.append(f"{blanks} blank")
            if tokens:
                counted.append(f"{tokens} NA-like ({', '.join(NA_LIKE)})")
            if counted:
                notes.append(
                    f'"{name}" holds {" and ".join(counted)} values, which this rule counts as present '
                    f"(only NULLs are missing in DQDL, as in Glue); missing_rate({name}) in a check "
                    "document counts them as missing"
                )
        return "; ".join(notes) or None
