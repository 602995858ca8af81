"""A check document as Dagster asset checks, run by Dagster itself (``materialize`` and a job's
``execute_in_process``) against a real workspace: the results, their severities and metadata are
the outcomes the run recorded in assay's store, a blocking failure stops the downstream asset, a
partition is the run's logical date, and the run is recorded as ``assay check run`` records it.

This folder has no ``__init__.py`` on purpose: ``tests/`` is on ``sys.path`` (pyproject's
``pythonpath``), and a package ``tests/dagster`` would be imported in place of Dagster.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from _invoke import completed
from assay.integrations.dagster import AssayResource, build_assay_asset_checks
from assay.platform.checks.history import history

ORDERS = """order_id,region,amount,email
1,EU,10,a@example.com
2,EU,20,
3,EU,-5,c@example.com
4,US,30,d@example.com
"""
ORDERS_DOC = """apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: shop.orders, source: {path: "../data/orders.csv"}}
profiles:
  - id: all
    dimensions: [region]
    metrics: [row_count, {missing_rate: [email]}, {min: [amount]}]
expectations:
  - {id: volume, metric: all.row_count, expect: "> 0", description: "orders came"}
  - {id: email-complete, metric: all.missing_rate(email), expect: "<= 0.1", severity: warning}
  - {id: no-negative, metric: all.min(amount), expect: ">= 0", severity: critical}
  - {id: region-rows, metric: all.row_count, by: [region], expect: "> 1"}
  - {id: unique-ids, rule: 'IsUnique "order_id"'}
  - {id: growing, metric: all.row_count, expect: "> avg(last(3))", min_history: 3}
"""
EVENTS = """event_id,day,amount
1,2026-03-01,5
2,2026-03-02,7
3,2026-03-02,9
"""
EVENTS_DOC = """apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: shop.events, source: {path: "../data/events.csv"}}
profiles:
  - id: daily
    slice: {column: day}
    metrics: [row_count, {min: [amount]}]
expectations:
  - {id: volume, metric: daily.row_count, expect: "> 0"}
  - {id: positive, metric: daily.min(amount), expect: "> 0", severity: warning}
"""
DAYS = dg.DailyPartitionsDefinition(start_date="2026-03-01")


@dataclass
class Runs:
    workspace: Path
    orders_doc: Path
    events_doc: Path
    blocked: dg.ExecuteInProcessResult  # every orders check, blocking
    warned: dg.ExecuteInProcessResult  # two orders checks: a WARN failure only
    unblocked: dg.ExecuteInProcessResult  # every orders check, blocking=False
    day: dg.ExecuteInProcessResult  # the events job, partition 2026-03-02
    empty_day: dg.ExecuteInProcessResult  # the events job, partition 2026-03-05 (no rows)
    cli: dict[str, Any]  # `assay check run` of the events document, --at 2026-03-02


def _evaluations(result: dg.ExecuteInProcessResult) -> dict[str, dg.AssetCheckEvaluation]:
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def _metadata(evaluation: dg.AssetCheckEvaluation) -> dict[str, Any]:
    return {k: v.value for k, v in evaluation.metadata.items()}


def _stored(runs: Runs, dataset: str, run_id: str) -> dict[str, Any]:
    with AssayResource(workspace=str(runs.workspace)).open_store() as store:
        (run,) = [r for r in history(store, dataset)["runs"] if r["run_id"] == run_id]
    return run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    root = tmp_path_factory.mktemp("dagster")
    workspace = root / "ws"
    (workspace / "data").mkdir(parents=True)
    (workspace / "checks").mkdir()
    (workspace / "data" / "orders.csv").write_text(ORDERS)
    (workspace / "data" / "events.csv").write_text(EVENTS)
    orders_doc, events_doc = workspace / "checks" / "orders.yaml", workspace / "checks" / "events.yaml"
    orders_doc.write_text(ORDERS_DOC)
    events_doc.write_text(EVENTS_DOC)

    @dg.asset(key=["shop", "orders"])
    def orders() -> None: ...

    @dg.asset(deps=[orders])
    def orders_daily() -> None: ...

    @dg.asset(key=["shop", "events"], partitions_def=DAYS)
    def events() -> None: ...

    with pytest.MonkeyPatch.context() as env:
        env.delenv("ASSAY_STORE_URL", raising=False)
        env.delenv("ASSAY_WORKSPACE", raising=False)
        resources = {"assay": AssayResource(workspace=str(workspace))}
        blocked = dg.materialize(
            [orders, orders_daily, *build_assay_asset_checks(orders_doc)],
            resources=resources,
            raise_on_error=False,
        )
        warned = dg.materialize(
            [
                orders,
                orders_daily,
                *build_assay_asset_checks(orders_doc, expectations=["volume", "email-complete"]),
            ],
            resources=resources,
        )
        unblocked = dg.materialize(
            [orders, orders_daily, *build_assay_asset_checks(orders_doc, blocking=False)], resources=resources
        )
        defs = dg.Definitions(
            assets=[events],
            asset_checks=build_assay_asset_checks(events_doc, asset=events, resource_key="quality"),
            resources={"quality": AssayResource(workspace=str(workspace))},
            jobs=[dg.define_asset_job("events_job", selection=dg.AssetSelection.all())],
        )
        job = defs.resolve_job_def("events_job")
        day = job.execute_in_process(partition_key="2026-03-02")
        empty_day = job.execute_in_process(partition_key="2026-03-05")
        done = completed(
            "check",
            "run",
            str(events_doc),
            "--at",
            "2026-03-02",
            "--workspace",
            str(workspace),
            "--json",
            "-",
        )
        assert done.returncode == 0, done.stderr
        yield Runs(
            workspace,
            orders_doc,
            events_doc,
            blocked,
            warned,
            unblocked,
            day,
            empty_day,
            json.loads(done.stdout),
        )


def test_one_check_per_expectation_from_one_assay_run(runs: Runs) -> None:
    found = _evaluations(runs.blocked)
    assert sorted(found) == [
        "email_complete",
        "growing",
        "no_negative",
        "region_rows",
        "unique_ids",
        "volume",
    ]
    run_ids = {_metadata(e)["assay_run_id"] for e in found.values()}
    assert len(run_ids) == 1  # one measurement per load: one assay run judged every check
    assert {e.asset_key for e in found.values()} == {dg.AssetKey(["shop", "orders"])}  # the dataset's name


def test_results_and_severities_follow_the_outcomes(runs: Runs) -> None:
    shown = {
        name: (e.passed, e.severity.value, _metadata(e)["outcome"])
        for name, e in _evaluations(runs.blocked).items()
    }
    assert shown == {
        "volume": (True, "ERROR", "passed"),
        "unique_ids": (True, "ERROR", "passed"),
        "email_complete": (False, "WARN", "failed"),  # warning
        "no_negative": (False, "ERROR", "failed"),  # critical
        "region_rows": (False, "ERROR", "failed"),  # US has one row
        "growing": (False, "WARN", "skipped"),  # warming up: said nothing about the data
    }


def test_metadata_is_the_runs_stored_outcomes(runs: Runs) -> None:
    found = _evaluations(runs.blocked)
    run_id = _metadata(found["volume"])["assay_run_id"]
    stored = {
        o["expectation"]: o for o in _stored(runs, "shop.orders", run_id)["outcomes"] if o["group"] is None
    }
    for name, evaluation in found.items():
        meta = _metadata(evaluation)
        if name == "region_rows":
            continue
        outcome = stored[meta["expectation"]]
        assert (meta["outcome"], meta["reason"], meta["observed"], meta["bounds"], meta["message"]) == (
            outcome["outcome"],
            outcome["reason"],
            outcome["observed"],
            outcome["expected"],
            outcome["message"],
        ), name
        assert evaluation.description == outcome["message"]
    assert _metadata(found["no_negative"])["expected"] == ">= 0"  # the document's expect
    assert _metadata(found["unique_ids"])["expected"] == 'IsUnique "order_id"'  # a rule's text
    assert _metadata(found["growing"])["reason"] == "warming_up"
    summary = Path(_metadata(found["volume"])["run_summary"])
    assert summary == runs.workspace / "runs" / f"{run_id}.json"
    assert json.loads(summary.read_text())["run_id"] == run_id


def test_an_expectation_by_group_shows_each_group(runs: Runs) -> None:
    meta = _metadata(_evaluations(runs.blocked)["region_rows"])
    run = _stored(runs, "shop.orders", meta["assay_run_id"])
    stored = [o for o in run["outcomes"] if o["expectation"] == "region-rows"]
    assert meta["groups"] == [
        {k: o[k] for k in ("group", "outcome", "observed", "expected", "reason")} for o in stored
    ]
    assert sorted((g["group"]["region"], g["outcome"]) for g in meta["groups"]) == [
        ("EU", "passed"),
        ("US", "failed"),
    ]
    assert (meta["outcome"], meta["observed"]) == ("failed", None)  # the worst group speaks


def test_a_blocking_error_stops_the_downstream_asset(runs: Runs) -> None:
    assert not runs.blocked.success
    materialized = [e.asset_key for e in runs.blocked.get_asset_materialization_events()]
    assert materialized == [dg.AssetKey(["shop", "orders"])]  # orders_daily did not run
    assert [e.step_key for e in runs.blocked.get_step_failure_events()] == ["assay_shop_orders"]


def test_a_warning_does_not_block(runs: Runs) -> None:
    assert runs.warned.success
    materialized = {e.asset_key for e in runs.warned.get_asset_materialization_events()}
    assert materialized == {dg.AssetKey(["shop", "orders"]), dg.AssetKey("orders_daily")}
    found = _evaluations(runs.warned)
    assert sorted(found) == ["email_complete", "volume"]  # expectations=: only these run
    assert (found["email_complete"].passed, found["email_complete"].severity.value) == (False, "WARN")
    run = _stored(runs, "shop.orders", _metadata(found["volume"])["assay_run_id"])
    assert [o["expectation"] for o in run["outcomes"]] == ["volume", "email-complete"]


def test_checks_that_do_not_block_only_report(runs: Runs) -> None:
    assert runs.unblocked.success
    assert len(runs.unblocked.get_asset_materialization_events()) == 2  # orders_daily too
    found = _evaluations(runs.unblocked)
    assert (found["no_negative"].passed, found["no_negative"].severity.value) == (False, "ERROR")
    assert not any(e.blocking for e in found.values())
    assert all(e.blocking for e in _evaluations(runs.blocked).values())


def test_the_partition_is_the_runs_logical_date(runs: Runs) -> None:
    assert runs.day.success
    found = _evaluations(runs.day)
    assert {n: e.passed for n, e in found.items()} == {"volume": True, "positive": True}
    run = _stored(runs, "shop.events", _metadata(found["volume"])["assay_run_id"])
    assert run["at"].startswith("2026-03-02")
    assert _metadata(found["volume"])["observed"] == 2  # the day's two rows, not the file's three


def test_a_partition_without_rows_is_skipped_as_a_warning(runs: Runs) -> None:
    assert runs.empty_day.success  # a WARN never stops anything
    found = _evaluations(runs.empty_day)
    assert {n: (e.passed, e.severity.value, _metadata(e)["reason"]) for n, e in found.items()} == {
        "volume": (False, "WARN", "upstream_missing"),
        "positive": (False, "WARN", "upstream_missing"),
    }


def test_the_run_is_recorded_as_the_command_records_it(runs: Runs) -> None:
    run_id = _metadata(_evaluations(runs.day)["volume"])["assay_run_id"]
    by_dagster, by_cli = (
        _stored(runs, "shop.events", run_id),
        _stored(runs, "shop.events", runs.cli["run_id"]),
    )
    assert {**by_dagster, "run_id": None} == {**by_cli, "run_id": None}
    # the run summaries (runs/<id>.json) differ by their ids, clocks and timings only
    by_dagster, by_cli = (_summary(runs, r) for r in (run_id, runs.cli["run_id"]))
    assert by_dagster == by_cli
    assert by_cli["outcomes"] == runs.cli["outcomes"]  # what `check run --json` printed


def _summary(runs: Runs, run_id: str) -> dict[str, Any]:
    summary = json.loads((runs.workspace / "runs" / f"{run_id}.json").read_text())
    summary["engine"].pop("temp_directory")  # a folder of the run's own
    return {k: v for k, v in summary.items() if k not in ("run_id", "now", "seconds")}
