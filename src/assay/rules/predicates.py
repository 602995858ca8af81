"""DQDL conditions as per-row SQL predicates (ColumnValues, ColumnLength, DataFreshness).

The predicates never yield NULL. NULL handling follows DQDL.md §3.7: a NULL value fails every
operator except ``!=`` and ``not in``, which let it pass unless ``NULL`` itself is listed.
Operands are resolved to literals first: dates and ``now()`` against the evaluation clock.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlglot import exp

from assay.lang import patterns
from assay.lang.dqdl import arithmetic, ast
from assay.lang.dqdl.ast import Op
from assay.lang.dqdl.tokens import time_parts
from assay.rules.plan import RuleError

_UNIT = {"days": timedelta(days=1), "hours": timedelta(hours=1), "minutes": timedelta(minutes=1)}
_SIZE = {"": 1, "B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}

Literal = float | str | datetime | None


def false() -> exp.Expr:
    return exp.false()


def coalesce_false(expr: exp.Expr) -> exp.Expr:
    return exp.func("coalesce", expr, exp.false())


def literal(value: Literal) -> exp.Expr:
    """A Python value as a SQL literal node (never text pasted into SQL)."""
    if value is None:
        return exp.Null()
    if isinstance(value, datetime):
        naive = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
        return exp.cast(exp.Literal.string(naive.isoformat(sep=" ")), exp.DataType.build("TIMESTAMP"))
    if isinstance(value, str):
        return exp.Literal.string(value)
    if value == int(value) and abs(value) < 2**53:
        # An integer literal: `n >= 0.0` would make DuckDB convert every BIGINT to DECIMAL.
        return exp.Literal.number(str(int(value)))
    return exp.Literal.number(repr(value))


def static_number(node: ast.Operand) -> float | None:
    """A numeric operand that needs no history: numbers and arithmetic over them."""

    def refuse(call: ast.Call) -> float:
        raise RuleError(
            f"{call.name}() is a dynamic value; this rule compares each row and cannot use stored history"
        )

    try:
        value = arithmetic.evaluate(node, refuse)
    except (ZeroDivisionError, TypeError) as error:
        raise RuleError(str(error)) from None
    return None if value is None else float(value)


def static_date(node: ast.Operand, now: datetime, zone: str | None) -> datetime | None:
    """A date operand as an aware UTC datetime: ``"2024-01-31"`` is midnight UTC, ``now()`` is
    the evaluation clock, ``"9:30 AM"`` is today at that time in ``zone`` (default UTC)."""
    if isinstance(node, ast.Null):
        return None
    if isinstance(node, ast.DateLit):
        try:
            return datetime.fromisoformat(node.text).replace(tzinfo=UTC)
        except ValueError:
            raise RuleError(f'"{node.text}" is not a valid date') from None
    if isinstance(node, ast.Now):
        delta = node.amount * _UNIT[node.unit] if node.sign else timedelta()
        return now + delta if node.sign == "+" else now - delta
    if isinstance(node, ast.TimeLit):
        parts = time_parts(node.text)
        if parts is None:
            raise RuleError(f'"{node.text}" is not a valid time of day')
        tz = ZoneInfo(zone) if zone else UTC
        local_now = now.astimezone(tz)
        local = local_now.replace(hour=parts[0], minute=parts[1], second=0, microsecond=0)
        return local.astimezone(UTC)
    if isinstance(node, ast.StringLit):
        try:
            parsed = datetime.fromisoformat(node.value)
        except ValueError:
            raise RuleError(f'"{node.value}" is not a date') from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise RuleError(f"expected a date, found {type(node).__name__}")


def duration(node: ast.Operand) -> timedelta:
    if not isinstance(node, ast.Duration):
        raise RuleError(f"expected a duration, found {type(node).__name__}")
    return node.amount * _UNIT[node.unit]


def size_bytes(node: ast.Operand) -> float:
    if not isinstance(node, ast.Size):
        raise RuleError(f"expected a size, found {type(node).__name__}")
    return float(node.amount * _SIZE[node.unit])


def compare(x: exp.Expr, op: Op, values: list[Literal]) -> exp.Expr:
    """``x op values`` with DQDL's NULL rules; ``values`` are already-resolved literals.

    >>> compare(exp.column("a"), Op.BETWEEN, [1.0, 5.5]).sql()
    'COALESCE(a > 1 AND a < 5.5, FALSE)'
    """
    if op in (Op.EQ, Op.NE, Op.IN, Op.NOT_IN):
        member = membership(x, values)
        return exp.Not(this=coalesce_false(member)) if op in (Op.NE, Op.NOT_IN) else coalesce_false(member)
    if any(v is None for v in values):
        return false()
    literals = [literal(v) for v in values]
    comparisons: dict[Op, type[exp.Binary]] = {Op.GT: exp.GT, Op.GE: exp.GTE, Op.LT: exp.LT, Op.LE: exp.LTE}
    if op in comparisons:
        return coalesce_false(comparisons[op](this=x, expression=literals[0]))
    if op is Op.BETWEEN:  # exclusive at both ends (DQDL.md §3.1)
        low, high = literals
        return coalesce_false(
            exp.and_(exp.GT(this=x.copy(), expression=low), exp.LT(this=x.copy(), expression=high))
        )
    if op is Op.NOT_BETWEEN:  # inclusive at both ends
        low, high = literals
        return coalesce_false(
            exp.or_(exp.LTE(this=x.copy(), expression=low), exp.GTE(this=x.copy(), expression=high))
        )
    raise RuleError(f"operator '{op.value}' does not apply here")


def membership(x: exp.Expr, values: list[Literal]) -> exp.Expr:
    """``x`` equals one of ``values``; a None among them matches NULL."""
    present = [v for v in values if v is not None]
    parts: list[exp.Expr] = []
    if len(present) == 1:
        parts.append(exp.EQ(this=x.copy(), expression=literal(present[0])))
    elif present:
        parts.append(exp.In(this=x.copy(), expressions=[literal(v) for v in present]))
    if len(present) < len(values):
        parts.append(exp.Is(this=x.copy(), expression=exp.Null()))
    return exp.or_(*parts) if parts else exp.false()


def regex_full_match(x: exp.Expr, pattern: str) -> exp.Expr:
    """``x`` matches the whole ``pattern`` (DQDL's ``matches`` is Java's ``String.matches``).
    The Java pattern is translated for RE2, or refused when RE2 cannot run it."""
    try:
        translated = patterns.to_re2(pattern)
    except patterns.PatternRefused as error:
        raise RuleError(error.message) from None
    # An anchored partial match is a full match on every engine (RE2 and Java regex alike).
    literal = exp.Literal.string(f"^(?:{translated})$")
    literal.meta["java_regex"] = f"^(?:{pattern})$"  # Spark runs Java regex: the pattern as written
    return exp.RegexpLike(this=x, expression=literal)


def whitespace_only(x: exp.Expr) -> exp.Expr:
    """A non-empty value made only of spaces (Spark's trim strips spaces only; DQDL.md §3.3)."""
    return exp.and_(
        exp.EQ(this=exp.Length(this=exp.Trim(this=x.copy())), expression=exp.Literal.number(0)),
        exp.GT(this=exp.Length(this=x.copy()), expression=exp.Literal.number(0)),
    )


def string_items(
    cond: ast.Condition, constants: dict[str, ast.StringLit | tuple[ast.StringLit, ...]]
) -> list[ast.Operand]:
    """The operands of a string condition with ``$constants`` expanded."""
    items: list[ast.Operand] = []
    for operand in cond.operands:
        if isinstance(operand, ast.VarRef):
            value = constants[operand.name]
            items.extend(value if isinstance(value, tuple) else (value,))
        else:
            items.append(operand)
    return items


def string_predicate(
    x: exp.Expr,
    cond: ast.Condition,
    constants: dict[str, ast.StringLit | tuple[ast.StringLit, ...]],
    *,
    ignore_case: bool = False,
) -> exp.Expr:
    """A string condition of ColumnValues on the text value ``x``."""
    if ignore_case:
        x = exp.Lower(this=x)
    if cond.op in (Op.MATCHES, Op.NOT_MATCHES):
        pattern = cond.operands[0]
        assert isinstance(pattern, ast.StringLit)
        regex = f"(?i){pattern.value}" if ignore_case else pattern.value
        matched = regex_full_match(x, regex)
        return coalesce_false(matched if cond.op is Op.MATCHES else exp.Not(this=matched))
    texts: list[str] = []
    extra: list[exp.Expr] = []
    null_listed = False
    for item in string_items(cond, constants):
        if isinstance(item, ast.StringLit):
            texts.append(item.value.lower() if ignore_case else item.value)
        elif isinstance(item, ast.KeywordLit):
            if item.word is ast.Word.NULL:
                null_listed = True
            elif item.word is ast.Word.EMPTY:
                extra.append(exp.EQ(this=x.copy(), expression=exp.Literal.string("")))
            else:
                extra.append(whitespace_only(x))
        else:
            raise RuleError(f"unexpected {type(item).__name__} in a string condition")
    values: list[Literal] = list(texts) + ([None] if null_listed else [])
    member = exp.or_(membership(x, values), *extra) if extra else membership(x, values)
    if cond.op in (Op.NE, Op.NOT_IN):
        return exp.Not(this=coalesce_false(member))
    if cond.op in (Op.EQ, Op.IN):
        return coalesce_false(member)
    raise RuleError(f"'{cond.op.value}' does not apply to strings")


def number_predicate(x: exp.Expr, cond: ast.Condition) -> exp.Expr:
    return compare(x, cond.op, [static_number(o) for o in cond.operands])


def date_predicate(x: exp.Expr, cond: ast.Condition, now: datetime, zone: str | None) -> exp.Expr:
    return compare(x, cond.op, [static_date(o, now, zone) for o in cond.operands])


_FLIP = {Op.GT: Op.LT, Op.GE: Op.LE, Op.LT: Op.GT, Op.LE: Op.GE}


def freshness_predicate(x: exp.Expr, cond: ast.Condition, now: datetime) -> exp.Expr:
    """``now - x`` against durations, as comparisons of ``x`` with ``now - duration``:
    a value younger than D is later than now - D, so the operator flips."""
    cutoffs: list[Literal] = [now - duration(o) for o in cond.operands]
    op = cond.op
    if op in _FLIP:
        return compare(x, _FLIP[op], cutoffs)
    if op in (Op.BETWEEN, Op.NOT_BETWEEN):
        return compare(x, op, [cutoffs[1], cutoffs[0]])
    return compare(x, op, cutoffs)


def python_compare(value: float | None, op: Op, values: list[float | None]) -> bool:
    """The same comparison on Python numbers (file rules, metric values)."""
    if op in (Op.EQ, Op.IN):
        return value in values
    if op in (Op.NE, Op.NOT_IN):
        return value not in values
    if value is None or any(v is None for v in values):
        return False
    if op is Op.GT:
        return value > values[0]  # type: ignore[operator]
    if op is Op.GE:
        return value >= values[0]  # type: ignore[operator]
    if op is Op.LT:
        return value < values[0]  # type: ignore[operator]
    if op is Op.LE:
        return value <= values[0]  # type: ignore[operator]
    low, high = values
    assert low is not None and high is not None
    if op is Op.BETWEEN:
        return low < value < high
    if op is Op.NOT_BETWEEN:
        return value <= low or value >= high
    raise RuleError(f"operator '{op.value}' does not apply here")
