"""``assay check run`` of event contracts on a generated feed, as a user runs it: one query per
window, the window stored as a load of the event before it is judged, each consumer judged with
its own tolerance on the same stored number, baselines read from the stored windows, the run's
states and JSON, a dry run, a platform failure."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from _invoke import assay
from assay.demo.events import Breakage, feed
from assay.engine import DuckDBEngine
from assay.platform.events.event import events, load_contracts
from assay.platform.runs.event import run_event
from assay.store import MetricKey, MetricStore
from assay.workspace import Workspace

DAY = date(2026, 11, 10)
BROKEN_FROM = datetime(2026, 11, 11, tzinfo=UTC)
CONTRACTS = """apiVersion: assay/v1
kind: EventContract
event:
  name: trade_executed.v3
  source: {{path: "{source}"}}
  key: event_id
  event_time: event_ts
  ingest_time: ingested_at
  payload: payload
  producer: {{team: trading-core}}
consumer: {{team: surveillance, tier: 1}}
fields:
  venue: {{non_empty: {{min_rate: 0.7}}}}
  amount: {{present: true}}
---
apiVersion: assay/v1
kind: EventContract
event:
  name: trade_executed.v3
  source: {{path: "{source}"}}
  key: event_id
  event_time: event_ts
  ingest_time: ingested_at
  payload: payload
consumer: {{team: risk-analytics, tier: 0}}
fields:
  trade_id: {{present: true, type: string}}
  amount:   {{present: true, type: decimal, range: [0, 1.0e9]}}
  currency: {{present: true, in: [USD, EUR, GBP, JPY]}}
  venue:    {{non_empty: true, null_rate_drift: {{max_pp: 0.5, vs: "median(last(24))"}}}}
severity: error
"""


class World:
    """A workspace with a feed of two days under ``events/`` and the contracts in ``checks/``."""

    def __init__(self, root: Path, *, contracts: str = CONTRACTS, **options: Any) -> None:
        self.root = root
        feed(root / "events", start=DAY, days=2, per_hour=40, **options)
        (root / "checks").mkdir(parents=True)
        self.contracts = root / "checks" / "events.yaml"
        self.contracts.write_text(contracts.format(source="../events/*.jsonl"))

    def run(
        self, capsys: pytest.CaptureFixture[str], at: datetime, *extra: str, code: int = 0
    ) -> dict[str, Any]:
        now = at + timedelta(hours=1, minutes=5)
        done = assay(
            "check", "run", str(self.contracts), "--at", at.isoformat(), "--now", now.isoformat(),
            "--workspace", str(self.root), "--json", "-", *extra,
        )  # fmt: skip
        printed = capsys.readouterr().out
        assert done == code, printed
        result: dict[str, Any] = json.loads(printed)
        return result

    def hours(self, capsys: pytest.CaptureFixture[str], start: datetime, count: int) -> list[dict[str, Any]]:
        return [self.run(capsys, start + timedelta(hours=h)) for h in range(count)]

    def store(self) -> MetricStore:
        return MetricStore.open(workspace=self.root)


def _by(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {o["expectation"]: o for o in result["outcomes"]}


def _contract(result: dict[str, Any], team: str) -> dict[str, Any]:
    [found] = [c for c in result["contracts"] if c["consumer"] == team]
    return found


def test_a_tolerant_and_a_strict_consumer_judge_one_stored_number_each_their_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = World(tmp_path / "ws", breakages=[Breakage(BROKEN_FROM, first=0.1, last=0.1, hours=1)])
    healthy = world.hours(capsys, BROKEN_FROM - timedelta(hours=6), 6)
    assert all(c["outcome"] == "passed" for r in healthy for c in r["contracts"])
    result = world.run(capsys, BROKEN_FROM)
    assert result["queries"] == {"measure": 1, "judge": 0}
    assert result["event"] == "trade_executed.v3" and result["dataset"] == "trade_executed.v3"
    assert result["window"] == {
        "grain": "hour",
        "start": "2026-11-11T00:00:00+00:00",
        "end": "2026-11-11T01:00:00+00:00",
    }
    outcomes = _by(result)
    tolerant, strict = outcomes["surveillance/venue.non_empty"], outcomes["risk-analytics/venue.non_empty"]
    assert tolerant["observed"] == strict["observed"] and 0.7 < strict["observed"] < 1.0
    assert (tolerant["outcome"], strict["outcome"]) == ("passed", "failed")
    assert strict["expected"] == {"low": 1.0} and strict["baseline"] == 1.0
    assert strict["owner"] == "trading-core"  # the producer answers for the data
    assert _contract(result, "surveillance")["outcome"] == "passed"
    risk = _contract(result, "risk-analytics")
    assert risk["outcome"] == "failed" and risk["expectation"] == "contract:risk-analytics"
    assert risk["broken"] == [
        {
            "field": "venue",
            "requirement": "non_empty",
            "observed": strict["observed"],
            "baseline": 1.0,
            "expected": {"low": 1.0},
        }
    ]
    assert "venue.non_empty" in risk["message"] and "baseline 100%" in risk["message"]
    assert result["summary"]["failed"] == 1 and result["summary"]["passed"] == len(result["outcomes"]) - 1
    # one stored number for both: one metric per (field, question) in the window's load
    with world.store() as store:
        [load] = store.run_loads(result["run_id"])
        stored = store.metrics_of(load)
    assert [k for k in stored if k.instance == "venue" and k.name == "non_empty"] == [
        MetricKey("Column", "venue", "non_empty")
    ]
    assert stored[MetricKey("Column", "venue", "non_empty")] == strict["observed"]
    assert stored[MetricKey("Dataset", "*", "row_count")] == result["metrics"]["row_count"]


def test_the_window_is_a_load_of_the_event_and_a_rerun_replaces_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = World(tmp_path / "ws")
    at = BROKEN_FROM + timedelta(hours=3)
    first = world.run(capsys, at)
    again = world.run(capsys, at)
    later = world.run(capsys, at + timedelta(hours=1))
    with world.store() as store:
        loads = {run: store.run_loads(r["run_id"]) for run, r in (("first", first), ("again", again))}
        assert list(loads["first"].values()) == ["superseded"] and list(loads["again"].values()) == [
            "current"
        ]
        history = store.history(
            "trade_executed.v3",
            MetricKey.dataset("row_count"),
            partition="hour",
            before=at + timedelta(hours=2),
        )
        assert [p.logical_time for p in history] == [at + timedelta(hours=1), at]  # the re-run counts once
        assert [p.logical_date for p in history] == [at.date(), at.date()]
        run = store.run(later["run_id"])
        assert run is not None and run.state == "completed" and run.kind == "check"
        assert [s for s, _ in store.stages(later["run_id"])] == ["running", "measured", "judged", "notified"]
        outcomes = store.check_runs("trade_executed.v3")
    assert {len(r["outcomes"]) for r in outcomes} == {len(later["outcomes"])}
    saved = json.loads((world.root / "runs" / f"{later['run_id']}.json").read_text())
    assert saved["kind"] == "event" and saved["contracts"] == later["contracts"]


def test_a_null_rate_drift_reads_the_fields_stored_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # venue arrives as JSON null on 5 % of the records from the 11th: the null rate drifts
    broken = Breakage(BROKEN_FROM, first=0.05, last=0.05, hours=1, value=None)
    world = World(tmp_path / "ws", breakages=[broken])
    first = world.run(capsys, BROKEN_FROM - timedelta(hours=3))
    drift = _by(first)["risk-analytics/venue.null_rate_drift"]
    assert (drift["outcome"], drift["reason"]) == ("skipped", "warming_up")  # no stored window yet
    world.hours(capsys, BROKEN_FROM - timedelta(hours=2), 2)
    result = world.run(capsys, BROKEN_FROM)
    drift = _by(result)["risk-analytics/venue.null_rate_drift"]
    assert drift["outcome"] == "failed" and drift["baseline"] == 0.0 and drift["observed"] > 0.005
    assert drift["expected"] == {"high": 0.005}
    assert "median(last(24))" in drift["message"] and "at most +0.5 pp" in drift["message"]
    # the empty-string check is not fooled: a null is no blank, but no value either
    assert _by(result)["risk-analytics/venue.non_empty"]["outcome"] == "failed"
    assert result["queries"]["judge"] == 0


def test_a_dry_run_measures_and_judges_and_records_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = World(tmp_path / "ws")
    world.run(capsys, BROKEN_FROM)

    def tables() -> dict[str, int]:
        with world.store() as store:
            engine = sa.create_engine(store.database_url)
            with engine.connect() as connection:
                names = sa.inspect(connection).get_table_names()
                found = {
                    t: connection.execute(sa.text(f'SELECT COUNT(*) FROM "{t}"')).scalar_one() for t in names
                }
            engine.dispose()
        return found

    before, runs = tables(), sorted((world.root / "runs").iterdir())
    result = world.run(capsys, BROKEN_FROM + timedelta(hours=1), "--dry-run")
    assert result["dry_run"] is True and result["contracts"][0]["outcome"] == "passed"
    assert tables() == before and sorted((world.root / "runs").iterdir()) == runs


def test_the_states_of_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = World(tmp_path / "ws", stop_at=BROKEN_FROM + timedelta(hours=12))
    # a window with no event: skipped, and the window's zero stored (the volume a score reads)
    quiet = world.run(capsys, BROKEN_FROM + timedelta(hours=14))
    assert {(o["outcome"], o["reason"]) for o in quiet["outcomes"]} == {("skipped", "upstream_missing")}
    assert {c["outcome"] for c in quiet["contracts"]} == {"skipped"} and quiet["state"] == "completed"
    assert quiet["metrics"]["row_count"] == 0.0
    assert quiet["queries"]["measure"] == 2  # an empty window asks the whole source what it is
    # --fail-on: exit 1 when an enforced outcome of that severity failed
    text = world.contracts.read_text().replace("non_empty: true", "non_empty: true, in: [XNYS]")
    world.contracts.write_text(text)
    world.run(capsys, BROKEN_FROM, "--fail-on", "error", code=1)
    world.run(capsys, BROKEN_FROM, "--fail-on", "critical", code=0)
    # the wrong time column: a config error of every requirement, for its author; nothing stored
    world.contracts.write_text(text.replace("event_time: event_ts", "event_time: event_tz"))
    wrong = world.run(capsys, BROKEN_FROM)
    assert {o["outcome"] for o in wrong["outcomes"]} == {"config_error"}
    assert "event_time 'event_tz' is missing or not a timestamp" in wrong["outcomes"][0]["message"]
    assert _contract(wrong, "risk-analytics")["outcome"] == "config_error"
    with world.store() as store:
        assert store.run_loads(wrong["run_id"]) == {}
    # no file at all: skipped, upstream missing
    world.contracts.write_text(text.replace("../events/*.jsonl", "../nowhere/*.jsonl"))
    missing = world.run(capsys, BROKEN_FROM)
    assert {o["reason"] for o in missing["outcomes"]} == {"upstream_missing"}
    assert missing["profiles"]["hour"]["missing"].startswith("no file matches")
    # mistakes of the command: exit 2, nothing runs
    for extra, words in (
        (("--engine", "spark"), "event contracts run on the DuckDB engine"),
        (("--only", "nobody"), "--only: no contract of 'nobody'"),
    ):
        code = assay("check", "run", str(world.contracts), "--workspace", str(world.root), *extra)
        assert code == 2 and words in capsys.readouterr().err


def test_only_runs_the_named_consumers_and_json_out_writes_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = World(tmp_path / "ws")
    out = tmp_path / "run.json"
    code = assay(
        "check", "run", str(world.contracts), "--at", "2026-11-11T03:30", "--now", "2026-11-11T05:00:00Z",
        "--workspace", str(world.root), "--only", "surveillance", "--json", str(out),
    )  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "contract surveillance: passed" in printed and "queries: 1 to measure, 0 to judge" in printed
    result = json.loads(out.read_text())
    assert result["at"] == "2026-11-11T03:00:00+00:00"  # the window that holds --at
    assert [c["consumer"] for c in result["contracts"]] == ["surveillance"]
    assert {o["contract"] for o in result["outcomes"]} == {"surveillance"}


def test_a_platform_failure_is_retried_then_a_system_error(tmp_path: Path) -> None:
    world = World(tmp_path / "ws")
    [event] = events(load_contracts([world.contracts])).values()
    waits: list[float] = []
    with MetricStore.open(workspace=world.root) as store:
        result = run_event(
            event,
            at=BROKEN_FROM,
            now=BROKEN_FROM + timedelta(hours=2),
            store=store,
            workspace=Workspace(world.root),
            retries=2,
            backoff=0.5,
            sleep=waits.append,
            engine_factory=lambda: DuckDBEngine(memory_limit="1MB"),
        )
        run = store.run(result.run_id)
        assert run is not None and run.state == "system_error" and "Out of Memory" in (run.error or "")
        assert store.run_loads(result.run_id) == {}
    assert result.state == "system_error" and waits == [0.5, 1.0]
    assert [a.attempt for a in result.attempts] == [1, 2, 3]
    assert {(o["outcome"], o["owner"]) for o in result.outcomes} == {("system_error", "platform")}
