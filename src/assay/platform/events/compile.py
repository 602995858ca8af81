"""Every contract on one event, for one window, as ONE query.

The source's records are read as raw JSON, one value per record (``read_json_objects`` for
JSON-lines and JSON files; a Parquet row becomes its JSON object), so that a field's presence,
its JSON type and its text are seen as the producer sent them: a key that is missing, a key
holding ``null``, ``"12.50"`` and ``12.5`` are four different things here, which a typed reader
would have merged. Then one statement computes, over the rows whose event time falls in the
window ``[start, start + grain)``:

- the event's own numbers: rows, duplicate keys, the latest event time, the delivery latency
  (ingest time − event time: p50, p95, max), every declared field's present and non-empty shares
  (from its null and blank counts, the aggregates of :data:`assay.measure.kinds.KINDS` over the
  window's typed projection, asked of the same planner as DQDL rules);
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

from assay.engine import Column, DataKind, Engine
from assay.errors import ConfigError
from assay.lake.readers import file_format
from assay.measure import Aggregate, Measurements, ScanPlan
from assay.measure.kinds import KINDS
from assay.measure.requests import count_if, count_star
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

    def present(self) -> Column:
        """The field's JSON value where it has one, else NULL: what a null count counts."""
        return Column(f"__f{self.i}", "JSON", DataKind.OTHER)

    def string(self) -> Column:
        """The field's text where it is a JSON string, else NULL: what a blank count reads (a
        number or a boolean is never blank)."""
        return Column(f"__b{self.i}", "VARCHAR", DataKind.STRING)

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
        string = exp.EQ(this=kind.copy(), expression=exp.Literal.string("VARCHAR"))
        return [
            exp.alias_(kind, f"__y{self.i}", quoted=True, copy=False),
            exp.alias_(text.copy(), f"__s{self.i}", quoted=True, copy=False),
            exp.alias_(has.copy(), f"__h{self.i}", quoted=True, copy=False),
            exp.alias_(number, f"__n{self.i}", quoted=True, copy=False),
            exp.alias_(exp.Case(ifs=[exp.If(this=has, true=value.copy())]), self.present().name, quoted=True),
            exp.alias_(exp.Case(ifs=[exp.If(this=string, true=text)]), self.string().name, quoted=True),
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


SHARES: dict[str, Callable[[Value, Any], exp.Expr]] = {
    "type": lambda v, name: exp.and_(v.has_value(), TYPE_TESTS[name](v)),
    "range": lambda v, bounds: exp.and_(v.has_value(), _range(v, bounds)),
    "in": lambda v, values: exp.and_(v.has_value(), _member(v, values)),
}
"""The requirement kinds measured as the share of the field's values (the rows where it has
one) that pass a test of its JSON value. ``present`` and ``non_empty`` are shares of the rows,
read from the field's null and blank counts; ``null_rate_drift`` reads ``null_rate``."""


# --- the statement ----------------------------------------------------------------------------------


def _quantile(value: exp.Expr, q: float) -> exp.Expr:
    return exp.Anonymous(this="quantile_cont", expressions=[value, exp.Literal.number(q)])


WINDOW = "__event_window"
"""The window's rows with each contract field projected as columns (:meth:`Value.columns`), a
CTE of the one statement, which the planner measures like any table."""

_TIME = Column("__t", "TIMESTAMPTZ", DataKind.TIMESTAMP)
_KEY = Column("__k", "VARCHAR", DataKind.STRING)
_LATENCY = Column("__lat", "DOUBLE", DataKind.FLOAT)


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


class _Census:
    """What tells a readable window from an unreadable source, asked of one table's rows: how
    many there are, how many have an event time, how many payloads are objects."""

    def __init__(self, scan: ScanPlan, objects: exp.Expr) -> None:
        self.scan = scan
        self.rows = scan.add(Aggregate(count_star()))
        self.untimed = scan.add(KINDS["null_count"].request(_TIME))
        self.objects = scan.add(Aggregate(count_if(objects)))

    def read(self, m: Measurements) -> tuple[int, int, int]:
        rows = int(m.number(self.rows) or 0)
        return rows, rows - int(m.number(self.untimed) or 0), int(m.number(self.objects) or 0)


class EventQuery:
    """The one statement of an event's window, for the requirements of its chosen contracts:
    requests on one :class:`~assay.measure.planner.ScanPlan` over the window's typed projection
    (:data:`WINDOW`). A field's null and blank counts are the kind table's
    (:data:`assay.measure.kinds.KINDS`), as a check document's ``null_rate`` and ``blank_rate``
    of a column; ``type``, ``range`` and ``in`` count the rows their JSON test holds for
    (:data:`SHARES`); two consumers asking the same thing read the same slot."""

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
        scan = self.scan = ScanPlan(WINDOW)
        self._rows = scan.add(Aggregate(count_star()))
        self._nulls = [
            scan.add(KINDS["null_count"].request(Value(i).present())) for i in range(len(self.fields))
        ]
        self._blanks = [
            scan.add(KINDS["blank_count"].request(Value(i).string())) for i in range(len(self.fields))
        ]
        # duplicates: keys given, less distinct keys
        self._keyless = scan.add(KINDS["null_count"].request(_KEY))
        # the kind's scan form, COUNT(DISTINCT): its form over value counts is a CTE that would
        # read the window (the JSON file) a second time
        self._keys = scan.add(Aggregate(KINDS["distinct_count"].aggregate(_KEY)))
        self._latest = scan.add(KINDS["freshness"].request(_TIME))
        latency = exp.column(_LATENCY.name, quoted=True)
        self._latency = (
            scan.add(Aggregate(_quantile(latency.copy(), 0.5))),
            scan.add(Aggregate(_quantile(latency.copy(), 0.95))),
            scan.add(KINDS["max"].request(_LATENCY)),
        )
        self._counted = {
            (name, metric): scan.add(
                Aggregate(count_if(SHARES[r.kind](Value(self.fields.index(name)), r.parameter)))
            )
            for (name, metric), r in self.shares.items()
        }
        # over the window's rows (they are the source's rows whose event time is in it: all
        # timed); a window with no rows asks the whole source in a second statement
        # (:meth:`diagnosis`), so that the file is read once a window
        self._census = _Census(scan, exp.column("__obj", quoted=True))
        self._source = _Census(ScanPlan(ROWS), _is_object(exp.column("__p", quoted=True)))

    def _window(self) -> exp.Select:
        """The window's rows, each field projected: its JSON value, type, text and number."""
        timestamp = exp.DataType.build("TIMESTAMPTZ")
        t = exp.column("__t", quoted=True)
        window = exp.and_(
            exp.GTE(
                this=t.copy(), expression=exp.cast(exp.Literal.string(self.start.isoformat()), timestamp)
            ),
            exp.LT(this=t.copy(), expression=exp.cast(exp.Literal.string(self.end.isoformat()), timestamp)),
        )
        payload = exp.column("__p", quoted=True)
        latency = exp.Sub(
            this=exp.func("epoch", exp.column("__i", quoted=True)),
            expression=exp.func("epoch", exp.column("__t", quoted=True)),
        )
        extracted = [
            exp.column("__t", quoted=True),
            exp.column("__k", quoted=True),
            exp.alias_(latency, _LATENCY.name, quoted=True),
            exp.alias_(_is_object(payload.copy()), "__obj", quoted=True),
            *(
                exp.alias_(_get(payload.copy(), name), f"__v{i}", quoted=True)
                for i, name in enumerate(self.fields)
            ),
        ]
        inner = exp.select(*extracted).from_(exp.to_identifier(ROWS, quoted=True)).where(window)
        return exp.select(
            "*",
            *(
                c
                for i in range(len(self.fields))
                for c in Value(i).columns(exp.column(f"__v{i}", quoted=True))
            ),
        ).from_(exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier("__w"))), copy=False)

    def statement(self) -> exp.Select:
        query, _ = self.scan.statement()
        found = query.args.get("with_")
        ctes = [
            exp.CTE(this=self._window(), alias=exp.TableAlias(this=exp.to_identifier(WINDOW, quoted=True))),
            *(found.expressions if found is not None else []),
        ]
        query.set("with_", exp.With(expressions=ctes))
        return query

    def diagnosis(self) -> exp.Select:
        """The statement for a window with no rows: the whole source's records, those with an
        event time and those whose payload is an object."""
        return self._source.scan.select()

    def decode(
        self, row: dict[str, Any], now: datetime, whole: dict[str, Any] | None = None
    ) -> WindowMeasurement:
        """The window's numbers from its statement's row (and, for a window with no rows, the
        diagnosis's row ``whole``)."""
        _, decode = self.scan.statement()
        m = Measurements(decode(row))
        rows = int(m.number(self._rows) or 0)
        values: dict[tuple[str, str], float | None] = {}

        def share(count: float | None, over: int) -> float | None:
            return None if not over else float(count or 0) / over

        latest = m.values.get(self._latest)
        if isinstance(latest, datetime) and latest.tzinfo is None:
            latest = latest.replace(tzinfo=UTC)
        duplicates = rows - (m.number(self._keyless) or 0.0) - (m.number(self._keys) or 0.0)
        p50, p95, slowest = (m.values.get(slot) for slot in self._latency)
        values[("*", "row_count")] = float(rows)
        values[("*", "duplicates")] = duplicates
        values[("*", "duplicate_rate")] = share(duplicates, rows)
        values[("*", "latency_p50")] = _number(p50)
        values[("*", "latency_p95")] = _number(p95)
        values[("*", "latency_max")] = _number(slowest)
        values[("*", "max_event_time")] = None if latest is None else latest.timestamp()
        values[("*", "freshness")] = None if latest is None else (now - latest).total_seconds()
        present: dict[str, int] = {}
        empties: list[float] = []
        for i, name in enumerate(self.fields):
            missing = int(m.number(self._nulls[i]) or 0)
            present[name] = rows - missing
            full = present[name] - int(m.number(self._blanks[i]) or 0)
            values[(name, "present")] = share(present[name], rows)
            values[(name, "null_rate")] = share(missing, rows)
            values[(name, "non_empty")] = share(full, rows)
            if rows:
                empties.append((rows - full) / rows)
        values[("*", "null_density")] = sum(empties) / len(empties) if empties else None
        for (name, metric), slot in self._counted.items():
            values[(name, metric)] = share(m.number(slot), present[name])
        if whole is None:
            source_rows, timed_rows, objects = self._census.read(m)
        else:
            source_rows, timed_rows, objects = self._source.read(Measurements(dict(whole)))
        return WindowMeasurement(
            rows=rows,
            values=values,
            max_event_time=latest,
            source_rows=source_rows,
            timed_rows=timed_rows,
            payload_objects=objects,
        )


def _number(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if number == number else None


def measure_window(engine: Engine, query: EventQuery, now: datetime) -> WindowMeasurement:
    """Send the window's one statement and decode its row; for a window with no rows, a second
    statement tells a quiet window from an unreadable source. Raises EngineError."""
    [row] = engine.query(query.statement()).to_pylist()
    measured = query.decode(row, now)
    if measured.rows:
        return measured
    [whole] = engine.query(query.diagnosis()).to_pylist()
    return query.decode(row, now, whole)


def _is_object(payload: exp.Expr) -> exp.Expr:
    return exp.EQ(this=exp.func("json_type", payload), expression=exp.Literal.string("OBJECT"))


__all__ = ["SHARES", "TYPE_TESTS", "EventQuery", "WindowMeasurement", "measure_window", "register_source"]
