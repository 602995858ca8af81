"""The one query of an event's window, on real DuckDB over real files: what each requirement
counts (one record per window, so that each value's verdict is seen on its own), the window's
bounds, duplicates and latency, a payload sent as JSON text or as top-level fields, Parquet, and
field names that SQL would choke on."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.engine import DuckDBEngine
from assay.measure.kinds import KINDS
from assay.platform.events.compile import (
    EventQuery,
    Value,
    WindowMeasurement,
    measure_window,
    register_source,
)
from assay.platform.events.document import parse_located
from assay.platform.events.event import EventSpec, events
from assay.platform.runs.event import run_event
from assay.workspace import Workspace

START = datetime(2026, 11, 12, tzinfo=UTC)
CONTRACT = """apiVersion: assay/v1
kind: EventContract
event: {{name: e, source: {{path: "{source}"}}, key: id, event_time: ts, ingest_time: seen{payload}}}
consumer: {{team: t}}
fields:
  v: {{type: string, range: [0, 100], in: ["12", "true", "USD"]}}
  w: {{type: integer}}
  x: {{type: decimal}}
  y: {{type: boolean}}
  z: {{type: timestamp}}
"""

# (the JSON value, the types it is), one record each: what `type: T` counts
VALUES: list[tuple[str, set[str]]] = [
    ('"a"', {"string"}),
    ('""', {"string"}),
    ("12", {"integer", "decimal"}),
    ("-3", {"integer", "decimal"}),
    ("12.5", {"decimal"}),
    ("12.0", {"integer", "decimal"}),
    ('"12"', {"string", "integer", "decimal"}),
    ('"12.50"', {"string", "decimal"}),
    ("true", {"boolean"}),
    ('"FALSE"', {"string", "boolean"}),
    ('"yes"', {"string"}),
    ('"2026-11-12T10:00:00Z"', {"string", "timestamp"}),
    ('"2026-11-12"', {"string", "timestamp"}),
    ('{"x": 1}', set()),
    ("[1]", set()),
    ('"NaN"', {"string"}),
]
TYPES = {"string": "v", "integer": "w", "decimal": "x", "boolean": "y", "timestamp": "z"}


def _event(tmp_path: Path, lines: list[dict[str, Any]], *, payload: str | None = "payload") -> EventSpec:
    data = tmp_path / "events.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    text = CONTRACT.format(source=data, payload=f", payload: {payload}" if payload else "")
    return events(parse_located(text, file=tmp_path / "c.yaml"))["e"]


def _window(event: EventSpec, hour: int) -> WindowMeasurement:
    engine = DuckDBEngine()
    try:
        register_source(engine, event, event.paths())
        requirements = [r for item in event.contracts for r in item.contract.requirements()]
        start = START + timedelta(hours=hour)
        query = EventQuery(event, requirements, start=start, end=start + timedelta(hours=1))
        found = measure_window(engine, query, START + timedelta(days=1))
        assert engine.queries == 1
        return found
    finally:
        engine.close()


def _stamp(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def test_what_each_type_counts(tmp_path: Path) -> None:
    lines = []
    for hour, (value, _) in enumerate(VALUES):
        parsed = json.loads(value)
        at = _stamp(START + timedelta(hours=hour, minutes=1))
        lines.append({"id": str(hour), "ts": at, "seen": at, "payload": dict.fromkeys("vwxyz", parsed)})
    event = _event(tmp_path, lines)
    for hour, (value, kinds) in enumerate(VALUES):
        found = _window(event, hour)
        assert found.rows == 1
        for kind, name in TYPES.items():
            share = found.value(name, "type:decimal" if kind == "decimal" else f"type:{kind}")
            assert share == (1.0 if kind in kinds else 0.0), f"{value} as {kind}"


def test_presence_emptiness_range_and_sets(tmp_path: Path) -> None:
    # one window: a value, a JSON null, a missing key, blanks, numbers at the bounds, a boolean
    values: list[Any] = ["USD", None, "MISSING", "", "   ", 0, 100, 100.5, "12", True, {"a": 1}]
    lines = []
    for n, value in enumerate(values):
        at = _stamp(START + timedelta(minutes=n))
        payload = {} if value == "MISSING" else {"v": value}
        lines.append({"id": str(n), "ts": at, "seen": at, "payload": payload})
    found = _window(_event(tmp_path, lines), 0)
    rows = len(values)
    assert found.rows == rows
    # a JSON null is as absent as a missing key: a consumer that needs the field needs a value
    assert found.value("v", "present") == (rows - 2) / rows
    assert found.value("v", "null_rate") == 2 / rows
    # non_empty: a value that is not blank text ("" and "   " are blank; 0 and false are values)
    assert found.value("v", "non_empty") == (rows - 4) / rows
    present = rows - 2
    # range: a number (or a number's text) within the bounds, both included, among the values
    assert found.value("v", "range:0.0:100.0") == 3 / present  # 0, 100, "12"
    # in: compared as text, among the values: "USD", "12", true
    in_metric = next(m for (f, m) in found.values if f == "v" and m.startswith("in:"))
    assert found.value("v", in_metric) == 3 / present


def test_the_window_is_its_rows_only_with_duplicates_latency_and_freshness(tmp_path: Path) -> None:
    window = START + timedelta(hours=10)
    stamps = [
        (window - timedelta(milliseconds=1), 1.0),  # the hour before
        (window, 2.0),  # the first instant belongs to the window
        (window + timedelta(minutes=30), 4.0),
        (window + timedelta(minutes=30), 30.0),  # the same id again, later: a duplicate
        (window + timedelta(minutes=59, seconds=59), 6.0),
        (window + timedelta(hours=1), 1.0),  # the next window's first instant
    ]
    ids = ["a", "b", "c", "c", "d", "e"]
    lines = [
        {"id": i, "ts": _stamp(at), "seen": _stamp(at + timedelta(seconds=lag)), "payload": {"v": "x"}}
        for i, (at, lag) in zip(ids, stamps, strict=True)
    ]
    found = _window(_event(tmp_path, lines), 10)
    # the diagnosis counts are the window's (the whole source is read only for an empty window)
    assert found.rows == 4 and found.source_rows == 4 and found.timed_rows == 4
    assert found.value("*", "duplicates") == 1.0 and found.value("*", "duplicate_rate") == 0.25
    assert found.value("*", "latency_max") == 30.0
    assert found.value("*", "latency_p50") == pytest.approx(5.0)  # of 2, 4, 6, 30
    latest = window + timedelta(minutes=59, seconds=59)
    assert found.max_event_time == latest
    assert found.value("*", "freshness") == (START + timedelta(days=1) - latest).total_seconds()


def test_a_payload_sent_as_json_text_and_top_level_fields(tmp_path: Path) -> None:
    at = _stamp(START + timedelta(minutes=5))
    text = [{"id": "1", "ts": at, "seen": at, "payload": json.dumps({"v": "USD", "w": 3})}]
    found = _window(_event(tmp_path, text), 0)
    assert found.payload_objects == 1 and found.value("v", "present") == 1.0
    assert found.value("w", "type:integer") == 1.0
    top = [{"id": "1", "ts": at, "seen": at, "v": "USD", "w": "x"}]
    found = _window(_event(tmp_path, top, payload=None), 0)
    assert found.value("v", "present") == 1.0 and found.value("w", "type:integer") == 0.0


def test_a_parquet_source_is_read_as_its_rows_objects(tmp_path: Path) -> None:
    at = START + timedelta(minutes=5)
    table = pa.table(
        {
            "id": ["1", "2"],
            "ts": [at, at + timedelta(minutes=1)],
            "seen": [at + timedelta(seconds=3), at + timedelta(minutes=1, seconds=5)],
            "payload": [{"v": "USD", "w": 3}, {"v": None, "w": 4}],
        }
    )
    path = tmp_path / "events.parquet"
    pq.write_table(table, path)
    text = CONTRACT.format(source=path, payload=", payload: payload")
    event = events(parse_located(text, file=tmp_path / "c.yaml"))["e"]
    found = _window(event, 0)
    assert found.rows == 2 and found.value("v", "present") == 0.5 and found.value("w", "type:integer") == 1.0
    assert found.value("*", "latency_max") == 5.0


def test_field_names_and_values_are_literals_not_sql(tmp_path: Path) -> None:
    odd = "x' OR 1=1; --\""
    at = _stamp(START + timedelta(minutes=5))
    lines = [
        {"id": "1", "ts": at, "payload": {odd: "it's", "a b": 1}},
        {"id": "2", "ts": at, "payload": {"a b": 2}},
    ]
    data = tmp_path / "events.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    text = f"""apiVersion: assay/v1
kind: EventContract
event: {{name: e, source: {{path: "{data}"}}, key: id, event_time: ts, payload: payload}}
consumer: {{team: t}}
fields:
  {json.dumps(odd)}: {{present: true, in: ["it's"]}}
  "a b": {{present: true}}
"""
    event = events(parse_located(text, file=tmp_path / "c.yaml"))["e"]
    found = _window(event, 0)
    assert found.value(odd, "present") == 0.5 and found.value("a b", "present") == 1.0
    in_metric = next(m for (f, m) in found.values if f == odd and m.startswith("in:"))
    assert found.value(odd, in_metric) == 1.0


def test_every_contract_on_an_event_is_one_query(tmp_path: Path) -> None:
    at = START + timedelta(hours=3)
    lines = [
        {"id": str(n), "ts": _stamp(at + timedelta(minutes=n)), "payload": {"v": "USD", "w": n}}
        for n in range(5)
    ]
    lines += [  # the hours before and after: not the window's rows
        {"id": "early", "ts": _stamp(at - timedelta(milliseconds=1)), "payload": {"w": 99}},
        {"id": "late", "ts": _stamp(at + timedelta(hours=1)), "payload": {"w": 99}},
    ]
    data = tmp_path / "events.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    contracts = "---\n".join(
        f"""apiVersion: assay/v1
kind: EventContract
event: {{name: e, source: {{path: "{data}"}}, key: id, event_time: ts, payload: payload}}
consumer: {{team: {team}}}
fields:
  v: {{present: true, in: [USD]}}
  w: {{type: integer, range: [0, {high}]}}
"""
        for team, high in (("a", 10), ("b", 2), ("c", 3))
    )
    event = events(parse_located(contracts, file=tmp_path / "c.yaml"))["e"]
    result = run_event(event, at=at, now=at + timedelta(hours=1), workspace=Workspace(tmp_path), dry_run=True)
    assert result.queries == {"measure": 1, "judge": 0}
    assert result.metrics["row_count"] == 5.0 and result.profiles["hour"]["rows"] == 5
    verdicts = {o["expectation"]: o["outcome"] for o in result.outcomes}
    assert (verdicts["a/w.range"], verdicts["b/w.range"], verdicts["c/w.range"]) == (
        "passed",
        "failed",
        "failed",
    )


def test_a_fields_null_and_blank_counts_are_the_kind_tables(tmp_path: Path) -> None:
    """``present`` and ``non_empty`` read the field's null and blank counts from
    measure/kinds.KINDS, as a check document's ``null_rate`` and ``missing_rate`` do: a tab or a
    no-break space alone is as blank as spaces are (TRIM took only spaces off), and the
    statement asks the planner for the kind's aggregates over the field's projected column."""
    values: list[Any] = ["USD", "\t", "\u00a0", " \n ", "", None, 0]
    lines = []
    for n, value in enumerate(values):
        at = _stamp(START + timedelta(minutes=n))
        lines.append({"id": str(n), "ts": at, "seen": at, "payload": {"v": value}})
    event = _event(tmp_path, lines)
    found = _window(event, 0)
    rows = len(values)
    assert found.value("v", "null_rate") == 1 / rows
    assert found.value("v", "non_empty") == 2 / rows  # "USD" and 0
    query = EventQuery(event, [], start=START, end=START + timedelta(hours=1))
    asked = len(query.scan.requests)
    query.scan.add(KINDS["blank_count"].request(Value(event.fields.index("v")).string()))
    query.scan.add(KINDS["null_count"].request(Value(event.fields.index("v")).present()))
    assert len(query.scan.requests) == asked
