"""The ``quality`` entries of one ODCS v3 schema object, read entry by entry into a profile's
metrics and expectations (:class:`Builder`), by one reader per entry type and per library metric
(``_TYPES``, ``_METRICS``); an entry with no equivalent in assay raises :class:`Unsupported`,
which the builder lists. :func:`assay.platform.checks.odcs.import_odcs` makes the document.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlglot import exp

from assay.lang import sqlsafe
from assay.platform.checks.document import METRIC_KINDS

PROFILE = "contract"
"""The id of the one profile an imported document measures with."""

SEVERITIES: Mapping[str, str] = {
    **dict.fromkeys(("critical", "blocker", "fatal", "high"), "critical"),
    **dict.fromkeys(("error", "major", "medium"), "error"),
    **dict.fromkeys(("warning", "warn", "minor", "low", "info"), "warning"),
}
"""ODCS severities are free text (the schema's examples: info, warning, error); the common
words map to assay's three, an absent one is ``error`` (assay's default)."""

OPERATORS: Mapping[str, str] = {
    "mustBe": "=",
    "mustNotBe": "!=",
    "mustBeGreaterThan": ">",
    "mustBeGreaterOrEqualTo": ">=",
    "mustBeGreaterThanOrEqualTo": ">=",
    "mustBeLessThan": "<",
    "mustBeLessOrEqualTo": "<=",
    "mustBeLessThanOrEqualTo": "<=",
    "mustBeBetween": "between",
    "mustNotBeBetween": "not between",
}
"""ODCS operators as DQDL's. ``mustBeBetween`` is "mustBeGreaterThan and mustBeLessThan" in the
standard, exclusive at both ends like DQDL's ``between``; ``mustNotBeBetween`` is its complement,
as DQDL's ``not between`` is."""

ALIASES: Mapping[str, str] = {
    "nullCheck": "nullValues",
    "duplicateCount": "duplicateValues",
    "duplicateCheck": "duplicateValues",
    "validValues": "invalidValues",
}
"""Names of v3.0 (``rule:``) and of other tools for the v3.1 library metrics."""

_ID = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True)
class _Bound:
    """One comparison: a DQDL operator and its numbers."""

    op: str
    values: tuple[Decimal, ...]

    def text(self) -> str:
        numbers = [_number(v) for v in self.values]
        if self.op in ("between", "not between"):
            return f"{self.op} {numbers[0]} and {numbers[1]}"
        return f"{self.op} {numbers[0]}"

    def scaled(self, factor: Decimal) -> _Bound:
        return _Bound(self.op, tuple(v * factor for v in self.values))

    def complement(self) -> _Bound:
        """The bound on ``1 - m`` that holds exactly when this one holds on ``m``."""
        flip = {">": "<", ">=": "<=", "<": ">", "<=": ">="}
        values = tuple(Decimal(1) - v for v in self.values)
        if self.op in ("between", "not between"):
            values = values[::-1]
        return _Bound(flip.get(self.op, self.op), values)


class Unsupported(Exception):
    """A quality entry with no equivalent in assay; the message says why."""


@dataclass
class _Entry:
    """One quality entry being read: where it sits and what it says."""

    raw: Mapping[str, Any]
    column: str | None  # None at the schema object's level
    columns: Sequence[str]
    object_names: Sequence[str]

    @property
    def metric(self) -> str:
        name = str(self.raw.get("metric") or self.raw.get("rule") or "")
        return ALIASES.get(name, name)

    @property
    def unit(self) -> str:
        return str(self.raw.get("unit") or "rows").lower()

    @property
    def arguments(self) -> Mapping[str, Any]:
        arguments = self.raw.get("arguments")
        merged = dict(arguments) if isinstance(arguments, Mapping) else {}
        for key in ("validValues", "missingValues", "pattern", "properties"):  # v3.0 put them beside
            if key in self.raw and key not in merged:
                merged[key] = self.raw[key]
        return merged

    def bounds(self) -> list[_Bound]:
        """The entry's operators; ``mustBeGreaterThan`` with ``mustBeLessThan`` is one ``between``."""
        found: dict[str, Any] = {key: self.raw[key] for key in OPERATORS if key in self.raw}
        if not found:
            raise Unsupported("no operator (mustBe, mustBeLessThan, ...): nothing to compare with")
        if set(found) == {"mustBeGreaterThan", "mustBeLessThan"}:
            found = {"mustBeBetween": [found["mustBeGreaterThan"], found["mustBeLessThan"]]}
        bounds = []
        for key, value in found.items():
            op = OPERATORS[key]
            values = value if op in ("between", "not between") else [value]
            if not isinstance(values, list) or len(values) != (2 if op.endswith("between") else 1):
                raise Unsupported(
                    f"{key}: {value!r} is not {'two numbers' if op.endswith('between') else 'a number'}"
                )
            bounds.append(_Bound(op, tuple(_decimal(key, v) for v in values)))
        return bounds

    def where(self) -> str:
        label = f"property '{self.column}'" if self.column else "schema object"
        name = self.raw.get("id") or self.raw.get("name")
        return f"{label} entry {name!r}" if name else f"{label} entry"


@dataclass
class Builder:
    """The profile and expectations of one schema object, entry by entry."""

    target: Mapping[str, Any]
    metrics: list[Any] = field(default_factory=list)
    expectations: list[dict[str, Any]] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    schedules: set[str] = field(default_factory=set)
    ids: set[str] = field(default_factory=set)

    def read_object(self) -> None:
        properties = [p for p in self.target.get("properties") or () if isinstance(p, Mapping)]
        # the data's column is the property's physicalName when it has one
        columns = [_column_name(p) for p in properties if p.get("name") or p.get("physicalName")]
        names = [str(n) for n in (self.target.get("name"), self.target.get("physicalName")) if n]
        for raw in self.target.get("quality") or ():
            if isinstance(raw, Mapping):
                self.read(_Entry(raw, None, columns, names))
        for prop in properties:
            for raw in prop.get("quality") or ():
                if isinstance(raw, Mapping):
                    self.read(_Entry(raw, _column_name(prop), columns, names))
            for nested in prop.get("properties") or ():
                if isinstance(nested, Mapping) and nested.get("quality"):
                    self.unsupported.append(
                        f"property '{prop.get('name')}.{nested.get('name')}': quality on a nested "
                        "property (assay checks top-level columns)"
                    )

    def read(self, entry: _Entry) -> None:
        kind = str(entry.raw.get("type") or ("library" if entry.metric else "")).lower()
        try:
            handler = _TYPES.get(kind)
            if handler is None:
                raise Unsupported(f"type '{kind or '?'}' is not one of library, sql, text, custom")
            for condition in handler(entry, self):
                self.expect(entry, condition)
        except Unsupported as why:
            description = entry.raw.get("description")
            said = f" ({' '.join(str(description).split())})" if description else ""
            self.unsupported.append(f"{entry.where()}{said}: {why}")
            return
        schedule = entry.raw.get("schedule")
        if schedule and str(entry.raw.get("scheduler") or "cron") == "cron":
            self.schedules.add(str(schedule))

    def expect(self, entry: _Entry, condition: dict[str, Any]) -> None:
        """Add an expectation (``metric``+``expect`` or ``rule``) with the entry's id, severity
        and description."""
        expectation: dict[str, Any] = {"id": condition.pop("id"), **condition}
        severity = entry.raw.get("severity")
        mapped = SEVERITIES.get(str(severity).lower(), "error") if severity else "error"
        if severity and str(severity).lower() not in SEVERITIES:
            self.unsupported.append(f"{entry.where()}: severity '{severity}' is not known; read as error")
        expectation["severity"] = mapped
        # ODCS's dimension has no field in the document (unknown fields are refused): it is said
        # in the description, after the entry's own.
        said = " ".join(str(entry.raw.get("description") or "").split())
        extra = "; ".join(
            f"{label}: {entry.raw[key]}"
            for key, label in (("dimension", "dimension"), ("businessImpact", "business impact"))
            if entry.raw.get(key)
        )
        if said or extra:
            expectation["description"] = f"{said} ({extra})" if said and extra else said or extra
        self.expectations.append(expectation)

    def declare(self, metric: Any) -> None:
        if metric not in self.metrics:
            self.metrics.append(metric)

    def new_id(self, entry: _Entry, suffix: str = "") -> str:
        given = entry.raw.get("id") or entry.raw.get("name")
        if given:
            base = _ID.sub("-", str(given)).strip("-")
        else:
            where = entry.column or str(self.target.get("name") or "object")
            base = _ID.sub("-", f"{where}-{_kebab(entry.metric or str(entry.raw.get('type')))}").strip("-")
        base = (base if re.match(r"^[A-Za-z_]", base) else f"q-{base}") + suffix
        unique, n = base, 2
        while unique in self.ids or unique in METRIC_KINDS:
            unique, n = f"{base}-{n}", n + 1
        self.ids.add(unique)
        return unique

    def profile(self) -> dict[str, Any]:
        profile: dict[str, Any] = {"id": PROFILE}
        if len(self.schedules) == 1:
            profile["schedule"] = next(iter(self.schedules))
        elif self.schedules:
            self.unsupported.append(
                f"schedules {', '.join(sorted(self.schedules))}: a profile has one schedule; none was kept"
            )
        profile["metrics"] = _grouped(self.metrics)
        return profile


Conditions = list[dict[str, Any]]


def _library(entry: _Entry, builder: Builder) -> Conditions:
    handler = _METRICS.get(entry.metric)
    if handler is None:
        raise Unsupported(f"library metric '{entry.metric}' has no assay equivalent")
    return handler(entry, builder)


def _metric_conditions(entry: _Entry, builder: Builder, key: str, bounds: list[_Bound]) -> Conditions:
    """One expectation per bound on ``contract.<key>`` (ids suffixed when there are several)."""
    out = []
    for i, bound in enumerate(bounds):
        suffix = "" if len(bounds) == 1 else f"-{i + 1}"
        out.append(
            {"id": builder.new_id(entry, suffix), "metric": f"{PROFILE}.{key}", "expect": bound.text()}
        )
    return out


def _rule_conditions(entry: _Entry, builder: Builder, rules: list[str]) -> Conditions:
    out = []
    for i, rule in enumerate(rules):
        suffix = "" if len(rules) == 1 else f"-{i + 1}"
        out.append({"id": builder.new_id(entry, suffix), "rule": rule})
    return out


def _row_count(entry: _Entry, builder: Builder) -> Conditions:
    """rowCount (schema level) → row_count."""
    if entry.unit != "rows":
        raise Unsupported(f"rowCount in unit '{entry.unit}'")
    bounds = entry.bounds()
    builder.declare("row_count")
    return _metric_conditions(entry, builder, "row_count", bounds)


def _null_values(entry: _Entry, builder: Builder) -> Conditions:
    """nullValues → null_count (rows) or null_rate (percent, bounds / 100)."""
    column = _column(entry, "nullValues")
    bounds = entry.bounds()
    if entry.unit == "percent":
        builder.declare({"null_rate": [column]})
        return _metric_conditions(
            entry, builder, f"null_rate({column})", [b.scaled(Decimal("0.01")) for b in bounds]
        )
    _rows(entry)
    builder.declare({"null_count": [column]})
    return _metric_conditions(entry, builder, f"null_count({column})", bounds)


def _missing_values(entry: _Entry, builder: Builder) -> Conditions:
    """missingValues [v, ...] (rows) → count_where ``c IS NULL OR c IN (v, ...)``."""
    column = _column(entry, "missingValues")
    listed = entry.arguments.get("missingValues")
    if not isinstance(listed, list) or not listed:
        raise Unsupported("missingValues needs arguments.missingValues, the values that count as missing")
    bounds = entry.bounds()
    if entry.unit == "percent":
        raise Unsupported("missingValues in percent: assay has no rate of a counted condition")
    _rows(entry)
    c = exp.column(column, quoted=True)
    values = [v for v in listed if v is not None]
    parts: list[exp.Expr] = [exp.Is(this=c.copy(), expression=exp.Null())] if None in listed else []
    if values:
        parts.append(exp.In(this=c.copy(), expressions=[_literal(v) for v in values]))
    return _counted(entry, builder, exp.or_(*parts), bounds)


def _invalid_values(entry: _Entry, builder: Builder) -> Conditions:
    """invalidValues: a non-NULL value not in validValues (or not matching pattern). Rows: a
    count_where; percent with validValues: ``ColumnValues "c" in [..., NULL]`` with a threshold."""
    column = _column(entry, "invalidValues")
    valid, pattern = entry.arguments.get("validValues"), entry.arguments.get("pattern")
    if valid is None and pattern is None:
        raise Unsupported("invalidValues needs arguments.validValues or arguments.pattern")
    bounds = entry.bounds()
    c = exp.column(column, quoted=True)
    present = exp.Not(this=exp.Is(this=c.copy(), expression=exp.Null()))
    if valid is not None:
        if not isinstance(valid, list) or not [v for v in valid if v is not None]:
            raise Unsupported("arguments.validValues is not a list of values")
        values = [v for v in valid if v is not None]
        if entry.unit == "percent":
            return _rule_conditions(entry, builder, [_values_rule(column, values, b) for b in bounds])
        bad: exp.Expr = exp.Not(this=exp.In(this=c.copy(), expressions=[_literal(v) for v in values]))
    else:
        if entry.unit == "percent":
            raise Unsupported(
                "invalidValues with a pattern in percent: DQDL's matches is a full match, a pattern a search"
            )
        bad = exp.Not(this=exp.RegexpLike(this=c.copy(), expression=exp.Literal.string(str(pattern))))
    _rows(entry)
    return _counted(entry, builder, exp.and_(present, bad), bounds)


_NONE = [[("=", (Decimal(0),))], [("<", (Decimal(1),))], [("<=", (Decimal(0),))]]


def _duplicate_values(entry: _Entry, builder: Builder) -> Conditions:
    """duplicateValues = 0 → DQDL IsUnique (on the property, or on arguments.properties)."""
    if entry.column is not None:
        columns = [entry.column]
    else:
        listed = entry.arguments.get("properties")
        if not isinstance(listed, list) or not listed:
            raise Unsupported("duplicateValues on a schema object needs arguments.properties")
        columns = [str(c) for c in listed]
    bounds = entry.bounds()
    # a count is 0 when it is = 0, < 1 or <= 0
    if [(b.op, b.values) for b in bounds] not in _NONE:
        raise Unsupported(
            "duplicateValues with a bound other than 0: how duplicates are counted is not defined alike by "
            "ODCS tools, and assay has no such metric"
        )
    for column in columns:
        _quotable(column)
    return _rule_conditions(entry, builder, ["IsUnique " + " ".join(f'"{c}"' for c in columns)])


def _sql(entry: _Entry, builder: Builder) -> Conditions:
    """A query of one number: ``SELECT COUNT(*) FROM {object} WHERE p`` is a count_where on p;
    any other query is a DQDL CustomSql rule. Read as Spark SQL (the safe subset)."""
    query = entry.raw.get("query")
    if not isinstance(query, str) or not query.strip():
        raise Unsupported("type sql without a query")
    bounds = entry.bounds()
    text = query.replace("{object}", "primary").replace("{table}", "primary")
    if entry.column is not None:
        quoted = "`" + entry.column.replace("`", "``") + "`"
        text = text.replace("{property}", quoted).replace("{column}", quoted)
    tables = {name: entry.columns for name in ("primary", *entry.object_names)}
    try:
        tree = sqlsafe.parse_query(text.strip().rstrip(";"), tables)
    except sqlsafe.SQLRejected as error:
        raise Unsupported(f"the query is not in assay's safe SQL subset: {error.reason}") from None
    for table in tree.find_all(exp.Table):
        if table.name in entry.object_names:  # the contract's own name for the table
            table.set("this", exp.to_identifier("primary", quoted=True))
    counted = _count_of(tree)
    if counted is not None:
        return _counted(entry, builder, counted, bounds)
    rendered = sqlsafe.render(tree, "spark")
    if any(ch in rendered for ch in '"\\\n'):
        raise Unsupported("the query holds a double quote or backslash, which DQDL's CustomSql cannot quote")
    return _rule_conditions(entry, builder, [f'CustomSql "{rendered}" {b.text()}' for b in bounds])


def _text(entry: _Entry, builder: Builder) -> Conditions:
    raise Unsupported("type text is prose for people, not a check")


def _custom(entry: _Entry, builder: Builder) -> Conditions:
    raise Unsupported(f"type custom (engine {entry.raw.get('engine', '?')}) is another tool's check")


_TYPES: dict[str, Callable[[_Entry, Builder], Conditions]] = {
    "library": _library,
    "sql": _sql,
    "text": _text,
    "custom": _custom,
}

_METRICS: dict[str, Callable[[_Entry, Builder], Conditions]] = {
    "rowCount": _row_count,
    "nullValues": _null_values,
    "missingValues": _missing_values,
    "invalidValues": _invalid_values,
    "duplicateValues": _duplicate_values,
}
"""One reader per ODCS v3.1 library metric (its JSON schema's enum)."""


# --- helpers ------------------------------------------------------------------------------------------


def _column_name(prop: Mapping[str, Any]) -> str:
    return str(prop.get("physicalName") or prop.get("name"))


def _column(entry: _Entry, metric: str) -> str:
    if entry.column is None:
        raise Unsupported(f"{metric} belongs on a property, not on the schema object")
    return entry.column


def _rows(entry: _Entry) -> None:
    if entry.unit != "rows":
        raise Unsupported(f"unit '{entry.unit}' (assay reads rows or percent)")


def _counted(entry: _Entry, builder: Builder, predicate: exp.Expr, bounds: list[_Bound]) -> Conditions:
    """A count_where metric on ``predicate`` (printed from its tree) and its expectations."""
    name = builder.new_id(entry, "-count").replace("-", "_")
    condition = sqlsafe.render(predicate, "spark")
    builder.declare({"count_where": {"name": name, "condition": condition}})
    return _metric_conditions(entry, builder, name, bounds)


def _count_of(tree: exp.Query) -> exp.Expr | None:
    """p when the query is exactly ``SELECT COUNT(*) FROM <the table> WHERE p``."""
    if not isinstance(tree, exp.Select) or len(tree.expressions) != 1:
        return None
    (projection,) = tree.expressions
    projection = projection.this if isinstance(projection, exp.Alias) else projection
    if not (isinstance(projection, exp.Count) and isinstance(projection.this, exp.Star)):
        return None
    others = (
        "joins",
        "group",
        "having",
        "order",
        "limit",
        "offset",
        "distinct",
        "with",
        "qualify",
        "laterals",
    )
    if any(tree.args.get(key) for key in others):
        return None
    where = tree.args.get("where")
    source = tree.args.get("from_") or tree.args.get("from")
    if where is None or source is None or not isinstance(source.this, exp.Table):
        return None
    condition: exp.Expr = where.this
    return condition


def _values_rule(column: str, values: list[Any], bound: _Bound) -> str:
    """``ColumnValues "c" in [v, ..., NULL] with threshold <1 - bound>``: the share of rows that
    are valid or NULL is 1 - the share of invalid ones."""
    _quotable(column)
    if all(isinstance(v, str) for v in values):
        for v in values:
            if any(ch in v for ch in '"\\'):
                raise Unsupported(f"valid value {v!r} holds a double quote or backslash")
        items = [f'"{v}"' for v in values]
    elif all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        items = [_number(_decimal("validValues", v)) for v in values]
    else:
        raise Unsupported("validValues mixes text and numbers, which one DQDL list cannot")
    threshold = bound.scaled(Decimal("0.01")).complement()
    return f'ColumnValues "{column}" in [{",".join([*items, "NULL"])}] with threshold {threshold.text()}'


def _quotable(column: str) -> None:
    if any(ch in column for ch in '"\\'):
        raise Unsupported(f"column '{column}' holds a double quote or backslash, which DQDL cannot quote")


def _literal(value: Any) -> exp.Expr:
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | float):
        return exp.Literal.number(_number(_decimal("value", value)))
    return exp.Literal.string(str(value))


def _decimal(key: str, value: Any) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise Unsupported(f"{key}: {value!r} is not a number")
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        raise Unsupported(f"{key}: {value!r} is not a number") from None
    if not number.is_finite():
        raise Unsupported(f"{key}: {value!r} is not a finite number")
    return number


def _number(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "0") else text


def _kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def _grouped(metrics: list[Any]) -> list[Any]:
    """``{null_count: [a]}, {null_count: [b]}`` as ``{null_count: [a, b]}``, in first-seen order."""
    out: list[Any] = []
    columns: dict[str, list[str]] = {}
    for metric in metrics:
        if isinstance(metric, dict) and len(metric) == 1:
            kind, value = next(iter(metric.items()))
            if isinstance(value, list):
                if kind not in columns:
                    columns[kind] = []
                    out.append({kind: columns[kind]})
                columns[kind].extend(c for c in value if c not in columns[kind])
                continue
        out.append(metric)
    return out
