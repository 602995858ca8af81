"""Every contract on one event, for one window, as ONE query.

The source's records are read as raw JSON, one value per record (``read_json_objects`` for
JSON-lines and JSON files; a Parquet row becomes its JSON object), so that a field's presence,
its JSON type and its text are seen as the producer sent them: a key that is missing, a key
holding ``null``, ``"12.50"`` and ``12.5`` are four different things here, which a typed reader
would have merged. Then one statement computes, over the rows whose event time falls in the
window ``[start, start + grain)``:

- the event's own numbers: rows, duplicate keys, the latest event time, the delivery latency
  (ingest time − event time: p50, p95, max), every declared field's present and non-empty shares;
- one share per distinct (field, requirement) the contracts declare: two consumers asking the same
  thing read the same number (each with its own tolerance);
- over the whole source, how many records have an event time at all and a payload object, which
  tells a contract naming the wrong column from a window that is empty.

Field names, paths, values and bounds are sqlglot literals and JSON paths built as trees; nothing
of the user's text is pasted into SQL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlglot import exp

from assay.engine import Engine
from assay.errors import ConfigError
from assay.lake.readers import file_format
from assay.platform.events.contract import Requirement
from assay.platform.events.event import EventSpec

LINES = "__event_lines"
ROWS = "__event_rows"
_JSON_FORMATS = {"jsonl": "newline_delimited", "json": "auto"}


# --- reading the records -----------------------------------------------------------------------------


def register_source(engine: Engine, event: EventSpec, paths: Sequence[Path]) -> None:
    """Register the event's records as the view ``__event_rows``: its event time, ingest time and
    key, and its payload as a JSON object (``__t``, ``__i``, ``__k``, ``__p``). Raises ConfigError
    for files the event cannot be read from."""
    formats = {file_format(p) for p in paths}
    if len(formats) > 1:
        raise ConfigError(
            f"event {event.name}: the source's files mix formats ({', '.join(sorted(formats))})"
        )
    fmt = formats.pop()
    line = exp.column("__line", quoted=True)
    if fmt in _JSON_FORMATS:
        reader = exp.Anonymous(
            this="read_json_objects",
            expressions=[
                exp.Array(expressions=[exp.Literal.string(str(p)) for p in paths]),
                exp.EQ(this=exp.column("format"), expression=exp.Literal.string(_JSON_FORMATS[fmt])),
            ],
        )
        lines = exp.select(exp.alias_(exp.column("json"), "__line", quoted=True)).from_(
            exp.Table(this=reader)
        )
    elif fmt == "parquet":
        engine.register_file("__event_source", [str(p) for p in paths], "parquet")
        lines = exp.select(
            exp.alias_(exp.func("to_json", exp.column("__event_source", quoted=True)), "__line", quoted=True)
        ).from_(exp.to_identifier("__event_source", quoted=True))
    else:
        raise ConfigError(
            f"event {event.name}: {paths[0].name} is {fmt}; an event is read from JSON-lines, JSON or "
            "Parquet files (a CSV cannot carry a payload object)"
        )
    engine.register_query(LINES, lines)
    timestamp = exp.DataType.build("TIMESTAMPTZ")
    payload: exp.Expr = line.copy()
    if event.payload is not None:
        given = _get(line.copy(), event.payload)
        # a payload sent as JSON text ("{\"a\": 1}") is read as the object it holds
        payload = exp.Case(
            ifs=[
                exp.If(
                    this=exp.EQ(
                        this=exp.func("json_type", given.copy()), expression=exp.Literal.string("VARCHAR")
                    ),
                    true=exp.TryCast(this=_text(given.copy()), to=exp.DataType.build("JSON")),
                )
            ],
            default=given,
        )
    projections: list[exp.Expr] = [
        exp.alias_(
            exp.TryCast(this=_text(_get(line.copy(), event.event_time)), to=timestamp), "__t", quoted=True
        ),
        exp.alias_(
            exp.TryCast(this=_text(_get(line.copy(), event.ingest_time)), to=timestamp)
            if event.ingest_time
            else exp.cast(exp.null(), timestamp),
            "__i",
            quoted=True,
        ),
        exp.alias_(
            _text(_get(line.copy(), event.key)) if event.key else exp.cast(exp.null(), "TEXT"),
            "__k",
            quoted=True,
        ),
        exp.alias_(payload, "__p", quoted=True),
    ]
    engine.register_query(ROWS, exp.select(*projections).from_(exp.to_identifier(LINES, quoted=True)))


def _get(value: exp.Expr, key: str) -> exp.Expr:
    """``value -> '$."key"'``: the JSON value of one key (NULL when it is missing)."""
    path = exp.JSONPath(expressions=[exp.JSONPathRoot(), exp.JSONPathKey(this=key)])
    return exp.JSONExtract(this=value, expression=path)


def _text(value: exp.Expr) -> exp.Expr:
    """``value ->> '$'``: a JSON value's text (a string without its quotes)."""
    return exp.JSONExtractScalar(this=value, expression=exp.JSONPath(expressions=[exp.JSONPathRoot()]))


# --- what each requirement counts --------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """One field of one row, as the statement sees it (columns of its inner query): its JSON type
    (``VARCHAR``, ``UBIGINT``, ``DOUBLE``, ``BOOLEAN``, ``OBJECT``, ``ARRAY``, ``NULL`` for a JSON
    null, SQL NULL when the key is missing), its text, whether it has a value (neither missing nor
    a JSON null) and the number its text reads as (NULL when none)."""

    i: int

    @property
    def type(self) -> exp.Expr:
        return exp.column(f"__y{self.i}", quoted=True)

    @property
    def text(self) -> exp.Expr:
        return exp.column(f"__s{self.i}", quoted=True)

    def has_value(self) -> exp.Expr:
        return exp.column(f"__h{self.i}", quoted=True)

    def number(self) -> exp.Expr:
        return exp.column(f"__n{self.i}", quoted=True)

    def is_type(self, *names: str) -> exp.Expr:
        return exp.In(this=self.type, expressions=[exp.Literal.string(n) for n in names])

    def scalar(self) -> exp.Expr:
        """Not an object, an array or a boolean: something a number may be read from."""
        return exp.Not(this=exp.Paren(this=self.is_type("OBJECT", "ARRAY", "BOOLEAN")))

    def blank(self) -> exp.Expr:
        return exp.and_(
            self.is_type("VARCHAR"),
            exp.EQ(this=exp.Trim(this=self.text), expression=exp.Literal.string("")),
            copy=False,
        )

    def columns(self, value: exp.Expr) -> list[exp.Expr]:
        """The inner query's columns of the field whose JSON value is ``value``."""
        kind = exp.func("json_type", value.copy())
        has = exp.and_(
            exp.Not(this=exp.Is(this=kind.copy(), expression=exp.null())),
            exp.NEQ(this=kind.copy(), expression=exp.Literal.string("NULL")),
            copy=False,
        )
        text = _text(value.copy())
        number = exp.TryCast(this=text.copy(), to=exp.DataType.build("DOUBLE"))
        return [
            exp.alias_(kind, f"__y{self.i}", quoted=True, copy=False),
            exp.alias_(text, f"__s{self.i}", quoted=True, copy=False),
            exp.alias_(has, f"__h{self.i}", quoted=True, copy=False),
            exp.alias_(number, f"__n{self.i}", quoted=True, copy=False),
        ]


def _finite(number: exp.Expr) -> exp.Expr:
    return exp.func("isfinite", number)


TYPE_TESTS: dict[str, Callable[[Value], exp.Expr]] = {
    # a JSON string; a number is not a string (a consumer that reads text needs text)
    "string": lambda v: v.is_type("VARCHAR"),
    # a number, or a string of one, with nothing after the point: 12, 12.0, "12"
    "integer": lambda v: exp.and_(
        v.scalar(),
        _finite(v.number()),
        exp.EQ(this=v.number(), expression=exp.Floor(this=v.number())),
    ),
    # a finite number, or a string of one: 12.5, "12.50" (money is often sent as text)
    "decimal": lambda v: exp.and_(v.scalar(), _finite(v.number())),
    # true or false, or the strings "true" and "false" (any case)
    "boolean": lambda v: exp.or_(
        v.is_type("BOOLEAN"),
        exp.and_(
            v.is_type("VARCHAR"),
            exp.In(
                this=exp.Lower(this=v.text.copy()),
                expressions=[exp.Literal.string("true"), exp.Literal.string("false")],
            ),
        ),
    ),
    # a string that is an ISO-8601 date or date-time
    "timestamp": lambda v: exp.and_(
        v.is_type("VARCHAR"),
        exp.Not(
            this=exp.Is(
                this=exp.TryCast(this=v.text.copy(), to=exp.DataType.build("TIMESTAMPTZ")),
                expression=exp.null(),
            )
        ),
    ),
}
"""What ``type: T`` counts: the rows whose value casts to T, among the rows that have a value."""


def _range(v: Value, bounds: tuple[float, float]) -> exp.Expr:
    low, high = bounds
    return exp.and_(
        v.scalar(),
        exp.Between(
            this=v.number(),
            low=exp.Literal.number(repr(float(low))),
            high=exp.Literal.number(repr(float(high))),
        ),
    )


def _member(v: Value, values: tuple[str, ...]) -> exp.Expr:
    return exp.and_(
        exp.Not(this=exp.Paren(this=v.is_type("OBJECT", "ARRAY"))),
        exp.In(this=v.text.copy(), expressions=[exp.Literal.string(t) for t in values]),
    )


@dataclass(frozen=True)
class Share:
    """How one requirement kind is measured: the rows it counts, and over which rows the share
    is taken (``rows``: every row of the window; ``values``: the rows where the field has a value)."""

    over: str
    counts: Callable[[Value, Any], exp.Expr]


SHARES: dict[str, Share] = {
    "present": Share("rows", lambda v, _: v.has_value()),
    "non_empty": Share("rows", lambda v, _: exp.and_(v.has_value(), exp.Not(this=exp.Paren(this=v.blank())))),
    "type": Share("values", lambda v, name: exp.and_(v.has_value(), TYPE_TESTS[name](v))),
    "range": Share("values", lambda v, bounds: exp.and_(v.has_value(), _range(v, bounds))),
    "in": Share("values", lambda v, values: exp.and_(v.has_value(), _member(v, values))),
}
"""The requirement kinds measured as a share of rows (``null_rate_drift`` reads ``null_rate``)."""


# --- the statement ----------------------------------------------------------------------------------


def _count(condition: exp.Expr) -> exp.Expr:
    return exp.Sum(
        this=exp.Case(ifs=[exp.If(this=condition, true=exp.Literal.number(1))], default=exp.Literal.number(0))
    )


def _quantile(value: exp.Expr, q: float) -> exp.Expr:
    return exp.Anonymous(this="quantile_cont", expressions=[value, exp.Literal.number(q)])


@dataclass
class WindowMeasurement:
    """What the statement measured of one window."""

    rows: int
    values: dict[tuple[str, str], float | None]  # (field or "*", metric) -> value
    max_event_time: datetime | None
    # the records these three count: the window's, or, for a window with no rows, the whole
    # source's (what tells a quiet window from a source none of whose records is the event)
    source_rows: int
    timed_rows: int
    payload_objects: int

    def value(self, field: str, metric: str) -> float | None:
        return self.values.get((field, metric))


class EventQuery:
    """The one statement of an event's window, for the requirements of its chosen contracts."""

    def __init__(
        self, event: EventSpec, requirements: Sequence[Requirement], *, start: datetime, end: datetime
    ) -> None:
        self.event = event
        self.fields = event.fields
        self.start, self.end = start, end
        self.shares: dict[tuple[str, str], Requirement] = {}
        for requirement in requirements:
            if requirement.kind in SHARES:
                self.shares.setdefault((requirement.field, requirement.metric), requirement)

    def statement(self) -> exp.Select:
        timestamp = exp.DataType.build("TIMESTAMPTZ")
        t = exp.column("__t", quoted=True)
        window = exp.and_(
            exp.GTE(
                this=t.copy(), expression=exp.cast(exp.Literal.string(self.start.isoformat()), timestamp)
            ),
            exp.LT(this=t.copy(), expression=exp.cast(exp.Literal.string(self.end.isoformat()), timestamp)),
        )
        payload = exp.column("__p", quoted=True)
        extracted = [
            exp.column("__t", quoted=True),
            exp.column("__i", quoted=True),
            exp.column("__k", quoted=True),
            exp.alias_(_is_object(payload.copy()), "__obj", quoted=True),
            *(
                exp.alias_(_get(payload.copy(), name), f"__v{i}", quoted=True)
                for i, name in enumerate(self.fields)
            ),
        ]
        inner = exp.select(*extracted).from_(exp.to_identifier(ROWS, quoted=True)).where(window)
        typed = exp.select(
            "*",
            *(
                c
                for i in range(len(self.fields))
                for c in Value(i).columns(exp.column(f"__v{i}", quoted=True))
            ),
        ).from_(exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier("__w"))), copy=False)
        latency = exp.Sub(
            this=exp.func("epoch", exp.column("__i", quoted=True)),
            expression=exp.func("epoch", exp.column("__t", quoted=True)),
        )
        key = exp.column("__k", quoted=True)
        aggregates: list[exp.Expr] = [
            exp.alias_(exp.Count(this=exp.Star()), "__rows", quoted=True),
            exp.alias_(
                exp.Sub(
                    this=exp.Count(this=key.copy()),
                    expression=exp.Count(this=exp.Distinct(expressions=[key.copy()])),
                ),
                "__dups",
                quoted=True,
            ),
            exp.alias_(exp.Max(this=exp.column("__t", quoted=True)), "__max_t", quoted=True),
            exp.alias_(_quantile(latency.copy(), 0.5), "__lat50", quoted=True),
            exp.alias_(_quantile(latency.copy(), 0.95), "__lat95", quoted=True),
            exp.alias_(exp.Max(this=latency.copy()), "__latmax", quoted=True),
        ]
        for i in range(len(self.fields)):
            value = self._value(i)
            aggregates.append(
                exp.alias_(_count(SHARES["present"].counts(value, None)), f"__present{i}", quoted=True)
            )
            aggregates.append(
                exp.alias_(_count(SHARES["non_empty"].counts(value, None)), f"__full{i}", quoted=True)
            )
        for j, ((name, _metric), requirement) in enumerate(self.shares.items()):
            if requirement.kind in ("present", "non_empty"):
                continue
            value = self._value(self.fields.index(name))
            counted = SHARES[requirement.kind].counts(value, requirement.parameter)
            aggregates.append(exp.alias_(_count(counted), f"__r{j}", quoted=True))
        # what tells a readable window from an unreadable source, over the window's rows (they are
        # the source's rows whose event time is in it: all timed); a window with no rows asks the
        # whole source in a second statement (diagnosis), so that the file is read once a window
        aggregates.extend(
            [
                exp.alias_(exp.Count(this=exp.Star()), "__all", quoted=True),
                exp.alias_(exp.Count(this=exp.column("__t", quoted=True)), "__timed", quoted=True),
                exp.alias_(_count(exp.column("__obj", quoted=True)), "__objects", quoted=True),
            ]
        )
        return exp.select(*aggregates).from_(
            exp.Subquery(this=typed, alias=exp.TableAlias(this=exp.to_identifier("__typed")))
        )

    def diagnosis(self) -> exp.Select:
        """The statement for a window with no rows: the whole source's records, those with an
        event time and those whose payload is an object (``__all``, ``__timed``, ``__objects``)."""
        return exp.select(
            exp.alias_(exp.Count(this=exp.Star()), "__all", quoted=True),
            exp.alias_(exp.Count(this=exp.column("__t", quoted=True)), "__timed", quoted=True),
            exp.alias_(
                _count(_is_object(exp.column("__p", quoted=True))),
                "__objects",
                quoted=True,
            ),
        ).from_(exp.to_identifier(ROWS, quoted=True))

    def _value(self, i: int) -> Value:
        return Value(i)

    def decode(self, row: dict[str, Any], now: datetime) -> WindowMeasurement:
        rows = int(row["__rows"] or 0)
        values: dict[tuple[str, str], float | None] = {}

        def share(count: Any, over: int) -> float | None:
            return None if not over else float(count or 0) / over

        latest = row["__max_t"]
        if isinstance(latest, datetime) and latest.tzinfo is None:
            latest = latest.replace(tzinfo=UTC)
        values[("*", "row_count")] = float(rows)
        values[("*", "duplicates")] = float(row["__dups"] or 0)
        values[("*", "duplicate_rate")] = share(row["__dups"], rows)
        values[("*", "latency_p50")] = _number(row["__lat50"])
        values[("*", "latency_p95")] = _number(row["__lat95"])
        values[("*", "latency_max")] = _number(row["__latmax"])
        values[("*", "max_event_time")] = None if latest is None else latest.timestamp()
        values[("*", "freshness")] = None if latest is None else (now - latest).total_seconds()
        present: dict[str, int] = {}
        empties: list[float] = []
        for i, name in enumerate(self.fields):
            present[name] = int(row[f"__present{i}"] or 0)
            values[(name, "present")] = share(present[name], rows)
            values[(name, "null_rate")] = share(rows - present[name], rows)
            values[(name, "non_empty")] = share(row[f"__full{i}"], rows)
            if rows:
                empties.append((rows - int(row[f"__full{i}"] or 0)) / rows)
        values[("*", "null_density")] = sum(empties) / len(empties) if empties else None
        for j, ((name, metric), requirement) in enumerate(self.shares.items()):
            if requirement.kind in ("present", "non_empty"):
                continue
            values[(name, metric)] = share(row[f"__r{j}"], present[name])
        return WindowMeasurement(
            rows=rows,
            values=values,
            max_event_time=latest,
            source_rows=int(row["__all"] or 0),
            timed_rows=int(row["__timed"] or 0),
            payload_objects=int(row["__objects"] or 0),
        )


def _number(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if number == number else None


def measure_window(engine: Engine, query: EventQuery, now: datetime) -> WindowMeasurement:
    """Send the window's one statement and decode its row; for a window with no rows, a second
    statement tells a quiet window from an unreadable source. Raises EngineError."""
    table = engine.query(query.statement())
    [row] = table.to_pylist()
    if not row["__rows"]:
        [whole] = engine.query(query.diagnosis()).to_pylist()
        row.update(whole)
    return query.decode(row, now)


def _is_object(payload: exp.Expr) -> exp.Expr:
    return exp.EQ(this=exp.func("json_type", payload), expression=exp.Literal.string("OBJECT"))


__all__ = ["SHARES", "TYPE_TESTS", "EventQuery", "WindowMeasurement", "measure_window", "register_source"]
