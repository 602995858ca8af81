"""The Event Quality Score: the seed's arithmetic, each dimension's formula on worked numbers
(docs/events.md), scores over generated feeds (15 days of hourly windows, healthy and with one
broken field), and the producer's alert after two days below the gate, once per streak, to a
real local HTTP receiver."""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from _invoke import assay
from _receivers import Receiver
from assay.demo.events import Breakage, feed
from assay.platform.events.document import parse_located
from assay.platform.events.event import EventSpec, events, load_contracts
from assay.platform.events.score import (
    MAX_POINTS,
    RULES,
    Dimension,
    Evidence,
    composite,
    event_score,
    gate,
    record_event_score,
)
from assay.platform.runs.event import run_event
from assay.store import MetricStore
from assay.workspace import Workspace

NAME = "trade_executed.v3"
START = date(2026, 11, 1)
DAYS = 15
LAST = datetime.combine(START + timedelta(days=DAYS - 1), datetime.min.time(), UTC)  # the 15th day
CONTRACTS = """apiVersion: assay/v1
kind: EventContract
event:
  name: trade_executed.v3
  source: {path: "../events/*.jsonl"}
  key: event_id
  event_time: event_ts
  ingest_time: ingested_at
  payload: payload
  description: One executed trade.
  producer: {team: trading-core, contact: "mailto:core@example.com"}
consumer: {team: risk-analytics, tier: 0}
fields:
  trade_id: {present: true, type: string}
  amount: {present: true, type: decimal, range: [0, 1.0e9]}
  currency: {present: true, type: string, in: [USD, EUR, GBP, JPY]}
  venue: {non_empty: true, type: string, null_rate_drift: {max_pp: 0.5, vs: "median(last(24))"}}
---
apiVersion: assay/v1
kind: EventContract
event:
  name: trade_executed.v3
  source: {path: "../events/*.jsonl"}
  key: event_id
  event_time: event_ts
  ingest_time: ingested_at
  payload: payload
consumer: {team: finance-reporting, tier: 2}
fields:
  amount: {present: true}
---
apiVersion: assay/v1
kind: EventContract
event:
  name: trade_executed.v3
  source: {path: "../events/*.jsonl"}
  key: event_id
  event_time: event_ts
  ingest_time: ingested_at
  payload: payload
consumer: {team: surveillance, tier: 1}
fields:
  venue: {non_empty: {min_rate: 0.5}}
"""


def _full() -> dict[str, Dimension]:
    return {name: Dimension(float(points), points, "") for name, points in MAX_POINTS.items()}


def test_the_seeds_arithmetic() -> None:
    full = _full()
    assert sum(MAX_POINTS.values()) == 100 and composite(full, 0) == (100.0, 80.0, False)
    assert [gate(t) for t in (0, 1, 2, 3)] == [80.0, 60.0, 40.0, 40.0]
    # one 10-point dimension at zero leaves 90: above the Tier 0 gate, the field is not caught
    one = dict(full, null_density=Dimension(0.0, 10, ""))
    assert composite(one, 0) == (90.0, 80.0, False)
    # three 10-point dimensions at zero: 70, below the Tier 0 gate (above Tier 1's)
    three = dict(one, delivery_latency=Dimension(0.0, 10, ""), duplicate_rate=Dimension(0.0, 10, ""))
    assert composite(three, 0) == (70.0, 80.0, True)
    assert composite(three, 1) == (70.0, 60.0, False)
    # a 20-point dimension weighs twice: freshness and one 10-point at zero fall below too
    assert composite(dict(full, freshness=Dimension(0.0, 20, ""), adoption=Dimension(0.0, 10, "")), 0)[2]


def _spec(text: str = CONTRACTS) -> EventSpec:
    return events(parse_located(text, file=Path("/ws/checks/events.yaml")))[NAME]


def test_each_dimensions_formula_on_worked_numbers() -> None:
    """docs/events.md's worked example, dimension by dimension."""
    now = datetime(2026, 11, 15, 0, 0, tzinfo=UTC)
    hours = [now - timedelta(hours=h) for h in range(1, 24 * 8 + 1)]  # 8 days of windows, newest first
    last_day = set(hours[:24])
    rows = {at: (130.0 if at in last_day else 100.0) for at in hours}  # the last day: +30 % everywhere
    rows[hours[0]] = 100.0 * (1 + 0.7)  # and its last hour +70 %
    series: dict[str, list[tuple[datetime, float]]] = {
        "row_count": [(at, rows[at]) for at in hours],
        "duplicates": [(at, rows[at] * 0.0275) for at in hours],
        "latency_p95": [(at, 1950.0) for at in hours],
        # the latest event 4 hours before the clock: the last 3 windows had none
        "max_event_time": [(at, (at + timedelta(minutes=59)).timestamp()) for at in hours[4:]],
        "null_density": [(at, 0.13) for at in hours],
    }
    text = CONTRACTS.split("---")[0].replace(
        '  producer: {team: trading-core, contact: "mailto:core@example.com"}\n', ""
    )
    text = text.replace("type: string, in:", "in:").replace(
        "type: string, null_rate_drift", "null_rate_drift"
    )
    e = Evidence(_spec(text), series, frozenset(), now)
    found = {name: rule(e) for name, rule in RULES.items()}
    # metadata: description 4 + key 4 (no producer: 0 + 0) + 4 x 2 of 4 fields typed = 10
    assert found["metadata"].points == 10.0
    assert found["metadata"].why == "missing producer team, producer contact; 2 of 4 field(s) typed"
    # freshness: the latest event 4 h 1 min old; full within 2 h, none from 6 h
    assert found["freshness"].points == pytest.approx(20 * (6 * 3600 - (4 * 3600 + 60)) / (4 * 3600))
    # volume: 23 windows +30 % and one +70 % against their hours' medians: RMS 33.1 %
    spread = ((23 * 0.3**2 + 0.7**2) / 24) ** 0.5
    assert found["volume_stability"].points == pytest.approx(20 * (0.6 - spread) / 0.5)
    # latency: p95 1950 s, halfway between 5 min and 1 h
    assert found["delivery_latency"].points == pytest.approx(5.0)
    # duplicates: 2.75 %, halfway between 0.5 % and 5 %
    assert found["duplicate_rate"].points == pytest.approx(5.0)
    # null density: 13 %, halfway between 1 % and 25 %
    assert found["null_density"].points == pytest.approx(5.0)
    # adoption: one consumer
    assert found["adoption"].points == 5.0 and found["adoption"].why == "1 consumer(s): risk-analytics"
    assert composite(found, 0) == (50.85, 80.0, True)
    nothing = Evidence(_spec(text), {}, frozenset(), now)
    assert all(RULES[n](nothing).points == 0.0 for n in MAX_POINTS if n not in ("metadata", "adoption"))
    many = Evidence(_spec(), {}, frozenset({"dashboards", "fraud-model"}), now)
    assert RULES["adoption"](many).points == 10.0  # three contracts and two recorded readers


# --- 15 days of an hourly feed ---------------------------------------------------------------------


def _hours(root: Path, first: datetime, count: int) -> list[Any]:
    [event] = events(load_contracts([root / "checks" / "events.yaml"])).values()
    results = []
    with MetricStore.open(workspace=root) as store:
        for h in range(count):
            at = first + timedelta(hours=h)
            results.append(
                run_event(
                    event,
                    at=at,
                    now=at + timedelta(hours=1, minutes=5),
                    store=store,
                    workspace=Workspace(root),
                )
            )
    return results


@pytest.fixture(scope="module")
def feeds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Two workspaces with the same 14 days of hourly windows run; then the 15th day, healthy in
    one, and in the other with venue arriving empty on 0.01 % of records climbing to 32 %. (In
    memory-backed folders where the machine has them: 400 runs are 2,400 store commits, and a
    commit's fsync on a busy disk is most of a run's time.)"""
    shm = Path("/dev/shm")
    base = Path(tempfile.mkdtemp(dir=shm)) if shm.is_dir() else tmp_path_factory.mktemp("feeds")
    try:
        healthy, broken = base / "healthy", base / "broken"
        feed(healthy / "events", start=START, days=DAYS, per_hour=12)
        (healthy / "checks").mkdir()
        (healthy / "checks" / "events.yaml").write_text(CONTRACTS)
        _hours(healthy, datetime.combine(START, datetime.min.time(), UTC), 24 * (DAYS - 1))
        shutil.copytree(healthy, broken)
        ramp = Breakage(LAST, first=0.0001, last=0.32, hours=16)
        feed(broken / "events", start=LAST.date(), days=1, per_hour=12, breakages=[ramp])
        yield {
            "healthy": healthy,
            "broken": broken,
            "results": _hours(broken, LAST, 24),
            "healthy_results": _hours(healthy, LAST, 24),
        }
    finally:
        shutil.rmtree(base, ignore_errors=True)


END = LAST + timedelta(days=1, minutes=5)


def test_a_healthy_feed_scores_high_and_is_not_provisional(feeds: dict[str, Any]) -> None:
    root = feeds["healthy"]
    assert all(c["outcome"] == "passed" for r in feeds["healthy_results"] for c in r.to_dict()["contracts"])
    with MetricStore.open(workspace=root) as store:
        found = event_score(store, root, NAME, now=END)
        early = event_score(store, root, NAME, now=datetime(2026, 11, 4, 0, 5, tzinfo=UTC))
    assert set(found) == {"event", "score", "dimensions", "tier", "gate", "below_gate", "provisional"}
    assert list(found["dimensions"]) == list(MAX_POINTS)
    assert all(set(d) == {"points", "max", "why"} for d in found["dimensions"].values())
    assert (found["tier"], found["gate"], found["below_gate"], found["provisional"]) == (
        0,
        80.0,
        False,
        False,
    )
    points = {name: d["points"] for name, d in found["dimensions"].items()}
    assert points["metadata"] == 20.0 and points["adoption"] == 10.0
    assert (
        points["freshness"] == 20.0 and points["delivery_latency"] == 10.0 and points["null_density"] == 10.0
    )
    assert points["volume_stability"] >= 15.0 and points["duplicate_rate"] >= 9.0
    assert found["score"] >= 94.0 and found["score"] == round(sum(points.values()), 2)
    # three days in: provisional (under 14 days of stored windows), whatever it scores
    assert early["provisional"] is True
    # the clock half a day after the last event: freshness is gone, nothing else moved
    with MetricStore.open(workspace=root) as store:
        stale = event_score(store, root, NAME, now=END + timedelta(hours=12))
    assert (
        stale["dimensions"]["freshness"]["points"] == 0.0 and "old" in stale["dimensions"]["freshness"]["why"]
    )


def _share(result: Any) -> float:
    [found] = [o for o in result.outcomes if o["expectation"] == "risk-analytics/venue.non_empty"]
    return float(found["observed"])


def test_one_broken_field_fails_its_requirement_while_the_score_stays_above_the_gate(
    feeds: dict[str, Any],
) -> None:
    root, results = feeds["broken"], feeds["results"]
    last = results[-1].to_dict()
    risk = next(c for c in last["contracts"] if c["consumer"] == "risk-analytics")
    assert risk["outcome"] == "failed"
    assert [(b["field"], b["requirement"]) for b in risk["broken"]] == [("venue", "non_empty")]
    # observed: the last window's share; baseline: the median of the 24 windows before it
    earlier = [_share(r) for r in results[:-1]] + [1.0]  # the 14th day's last window: healthy
    assert risk["broken"][0]["observed"] == _share(results[-1]) < 0.8
    assert risk["broken"][0]["baseline"] == statistics.median(earlier) and min(earlier) < 1.0
    # a blank is a value: the null rate did not drift, the tolerant consumer still passes
    outcomes = {o["expectation"]: o["outcome"] for o in last["outcomes"]}
    assert outcomes["risk-analytics/venue.null_rate_drift"] == "passed"
    assert outcomes["surveillance/venue.non_empty"] == "passed"
    with MetricStore.open(workspace=root) as store:
        found = event_score(store, root, NAME, now=END)
    with MetricStore.open(workspace=feeds["healthy"]) as store:
        healthy = event_score(store, feeds["healthy"], NAME, now=END)
    assert found["below_gate"] is False and found["score"] >= 90.0 and found["provisional"] is False
    lost = {n: healthy["dimensions"][n]["points"] - d["points"] for n, d in found["dimensions"].items()}
    assert 0.0 < lost["null_density"] < 10.0  # the only dimension that sees it, and only in part
    assert all(abs(v) < 1e-9 for n, v in lost.items() if n not in ("null_density", "volume_stability"))
    assert "empty" in found["dimensions"]["null_density"]["why"]


def test_assay_score_event_prints_the_score(
    feeds: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    root = feeds["healthy"]
    code = assay("score", "event", NAME, "--now", END.isoformat(), "--workspace", str(root), "--json")
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed.pop("day") == END.date().isoformat()
    assert set(printed.pop("incidents")) == {"opened", "escalated", "resolved", "notifications"}
    with MetricStore.open(workspace=root) as store:
        assert printed == event_score(store, root, NAME, now=END)
        [kept] = store.score_history("event", NAME, limit=1)  # the day's score is kept
    assert (kept.day, kept.score) == (END.date(), printed["score"])
    assert assay("score", "event", "nope", "--workspace", str(root)) == 2
    assert "no event contract" in capsys.readouterr().err


# --- the producer's alert ----------------------------------------------------------------------------


def _score(value: float, *, provisional: bool = False) -> dict[str, Any]:
    below = value < 80.0
    dimensions = {n: {"points": float(p), "max": p, "why": "full"} for n, p in MAX_POINTS.items()}
    lost = 100.0 - value  # from freshness first, then from volume stability
    dimensions["freshness"] = {
        "points": 20.0 - min(20.0, lost),
        "max": 20,
        "why": "the latest event is 7 h old",
    }
    dimensions["volume_stability"]["points"] = 20.0 - max(0.0, lost - 20.0)
    return {
        "event": NAME, "score": value, "dimensions": dimensions, "tier": 0, "gate": 80.0,
        "below_gate": below, "provisional": provisional,
    }  # fmt: skip


def test_the_producer_hears_after_two_days_below_the_gate_once_per_streak(
    tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ws"
    (root / "checks").mkdir(parents=True)
    (root / "checks" / "events.yaml").write_text(CONTRACTS)
    (root / "assay.yaml").write_text(
        f"""channels:
  producer: {{type: webhook, url: "{receiver.url}/producer"}}
routes:
  - {{when: {{expectation: event-quality-score}}, to: [producer]}}
"""
    )
    days = [
        (70.0, True),  # provisional: never an alert
        (70.0, True),
        (95.0, False),
        (70.0, False),  # the first day below: nothing yet
        (72.0, False),  # the second: the producer hears of it
        (65.0, False),  # the third: the same streak, nothing new
        (90.0, False),
        (91.0, False),  # two days at or above the gate: resolved
    ]
    told: list[list[str]] = []
    with MetricStore.open(workspace=root) as store:
        for n, (value, provisional) in enumerate(days):
            now = datetime(2026, 11, 20 + n, 6, 0, tzinfo=UTC)
            kept = record_event_score(
                store, root, NAME, now=now, score=_score(value, provisional=provisional)
            )
            assert kept["day"] == now.date().isoformat()
            assert (
                assay("notify", "deliver", "--now", now.isoformat(), "--workspace", str(root), "--json") == 0
            )
            capsys.readouterr()
            told.append([r["body"]["kind"] for r in receiver.requests])
            receiver.requests.clear()
        history = store.score_history("event", NAME, limit=30)
    assert told == [[], [], [], [], ["incident_opened"], [], [], ["incident_resolved"]]
    assert [(row.score, row.below_gate) for row in reversed(history)] == [(v, v < 80.0) for v, _ in days]
    # the day it was told, what it was told
    with MetricStore.open(workspace=root) as store:
        [incident] = store.incidents()
    assert (incident.expectation, incident.owner, incident.failures) == (
        "event-quality-score",
        "trading-core",
        2,
    )


def test_the_alert_names_the_score_the_gate_and_the_weakest_dimensions(
    tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ws"
    (root / "checks").mkdir(parents=True)
    (root / "checks" / "events.yaml").write_text(CONTRACTS)
    (root / "assay.yaml").write_text(
        f"""channels:
  producer: {{type: webhook, url: "{receiver.url}/producer"}}
routes:
  - {{when: {{dataset: "trade_executed.*", tier: 0}}, to: [producer]}}
"""
    )
    with MetricStore.open(workspace=root) as store:
        for day in (1, 2):
            record_event_score(
                store, root, NAME, now=datetime(2026, 12, day, 6, tzinfo=UTC), score=_score(75.0)
            )
    assert (
        assay("notify", "deliver", "--now", "2026-12-02T07:00:00Z", "--workspace", str(root), "--json") == 0
    )
    capsys.readouterr()
    [sent] = [r["body"] for r in receiver.requests]
    assert (sent["dataset"], sent["expectation"], sent["observed"], sent["expected"]) == (
        NAME, "event-quality-score", 75.0, {"low": 80.0},
    )  # fmt: skip
    for words in (
        "Event Quality Score 75 below the Tier 0 gate 80",
        "trading-core",
        "mailto:core@example.com",
        "freshness 0/20 (the latest event is 7 h old); volume_stability 15/20",
    ):
        assert words in sent["message"]


def test_the_last_window_of_each_day_keeps_that_days_score(feeds: dict[str, Any]) -> None:
    with MetricStore.open(workspace=feeds["healthy"]) as store:
        kept = store.score_history("event", NAME, limit=100)
    # one score a day: kept by the first run of the clock's day (the first window's, 01:05 on the
    # first day; then the run of the day before's last window, 23:00-24:00, at 00:05)
    assert [row.day for row in reversed(kept)] == [START + timedelta(days=d) for d in range(DAYS + 1)]
    assert kept[0].detail is not None and kept[0].detail["provisional"] is False


def test_a_day_whose_first_run_was_lost_is_scored_by_its_next_run(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    feed(root / "events", start=START, days=2, per_hour=12)
    (root / "checks").mkdir(parents=True)
    (root / "checks" / "events.yaml").write_text(CONTRACTS)
    # the runs of the 2nd from 03:00 only: the 00:05 run that keeps a day's score never ran
    _hours(
        root, datetime.combine(START + timedelta(days=1), datetime.min.time(), UTC) + timedelta(hours=3), 2
    )
    with MetricStore.open(workspace=root) as store:
        kept = store.score_history("event", NAME, limit=10)
    assert [row.day for row in kept] == [START + timedelta(days=1)]  # kept by the 04:05 run, once
