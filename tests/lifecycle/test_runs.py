"""One run lifecycle for every flow (issue 8, section 1): each run is recorded with its state,
timing, inputs and counts; a failed run leaves nothing visible but its error record."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest

from _invoke import assay
from assay.engine import DuckDBEngine
from assay.errors import ConfigError, PlatformError
from assay.lake.checksum import digest
from assay.lang.dqdl import parse_text
from assay.platform.flows import evaluate
from assay.store import MetricKey, MetricStore


def _store(workspace: Path) -> MetricStore:
    return MetricStore.open(workspace=workspace)


def test_dqdl_run_with_a_dataset_is_a_recorded_run(tmp_path: Path) -> None:
    data = tmp_path / "orders.csv"
    data.write_text("id,amount\n1,10\n2,\n3,30\n")
    rules = tmp_path / "r.dqdl"
    rules.write_text('Rules = [ RowCount > 0, IsComplete "amount" ]')
    ws = tmp_path / "ws"
    assert (
        assay(
            "dqdl",
            "run",
            str(rules),
            "--data",
            str(data),
            "--dataset",
            "orders",
            "--workspace",
            str(ws),
            "--json",
            "-",
        )
        == 0
    )
    with _store(ws) as store:
        (run,) = store.runs("orders")
        assert (run.kind, run.state, run.error) == ("dqdl", "completed", None)
        assert run.inputs == ({"path": str(data), "sha256": digest(data)},)
        assert run.counts == {"rules": 2, "passed": 1, "failed": 1, "error": 0}
        assert run.finished_at is not None and run.finished_at >= run.started_at
        assert [o.outcome for o in run.outcomes] == ["passed", "failed"]  # assay's vocabulary inside
        assert list(store.run_loads(run.id).values()) == ["current"]
    summary = json.loads((ws / "runs" / f"{run.id}.json").read_text())
    assert [r["outcome"] for r in summary["rules"]] == ["Passed", "Failed"]  # Glue's in the DQDL JSON
    assert summary["ruleset"] == str(rules)


def test_a_profile_is_a_recorded_run(tmp_path: Path) -> None:
    data = tmp_path / "day.csv"
    data.write_text("venue,px\nXLON,1.5\nXPAR,2.5\n")
    ws = tmp_path / "ws"
    assert (
        assay(
            "profile",
            str(data),
            "--dataset",
            "trades",
            "--load-date",
            "2026-01-05",
            "--workspace",
            str(ws),
            "--json",
        )
        == 0
    )
    with _store(ws) as store:
        (run,) = store.runs("trades")
        assert (run.kind, run.state) == ("profile", "completed")
        assert run.inputs == ({"path": str(data), "sha256": digest(data)},)
        assert run.counts == {"rows": 2, "columns": 2, "alerts": 0}
        assert run.load_id is not None and list(store.run_loads(run.id)) == [run.load_id]
    assert json.loads((ws / "runs" / f"{run.id}.json").read_text())["rows"] == 2


def test_a_config_error_is_recorded_and_leaves_nothing_else(tmp_path: Path) -> None:
    batch = tmp_path / "b.csv"
    batch.write_text("contributor_id,account_id,statement_date,limit\nB1,A1,2025-01-31,10\n")
    rules = tmp_path / "rules.csv"
    rules.write_text(
        "rule_id,contributor_type,category,severity,rule,description\n"
        "F01,all,financial,critical,nope > 1,unknown column\n"
    )
    ws = tmp_path / "ws"
    assert (
        assay(
            "gate",
            str(batch),
            "--rules",
            str(rules),
            "--contributor",
            "B1",
            "--table",
            "silver.accounts",
            "--key",
            "account_id",
            "--order",
            "statement_date",
            "--contributor-column",
            "contributor_id",
            "--workspace",
            str(ws),
        )
        == 2
    )
    with _store(ws) as store:
        (run,) = store.runs("silver.accounts")
        assert run.state == "config_error" and run.error and "nope" in run.error
        assert store.run_loads(run.id) == {} and store.decisions() == []
    assert not (ws / "dq_error").exists() and not list((ws / "staging").glob("*"))
    assert json.loads((ws / "runs" / f"{run.id}.json").read_text())["state"] == "config_error"


def test_an_engine_failure_is_a_system_error_with_nothing_visible(tmp_path: Path) -> None:
    ruleset = parse_text('Rules = [ Uniqueness "id" > 0.5 ]').ruleset
    table = pa.table({"id": [f"x{i}" for i in range(2_000_000)]})
    with MetricStore.open(workspace=tmp_path) as store:
        with pytest.raises(PlatformError, match="DuckDB engine failed: Out of Memory") as caught:
            evaluate(
                ruleset,
                table,
                dataset="big",
                store=store,
                workspace=tmp_path,
                engine_factory=lambda: DuckDBEngine(memory_limit="2MB"),
            )
        assert "SET " not in str(caught.value)  # no engine-internal remedies
        (run,) = store.runs("big")
        assert run.state == "system_error" and "Out of Memory" in (run.error or "")
        assert all(status != "current" for status in store.run_loads(run.id).values())
        assert store.history("big", MetricKey.dataset("RowCount"), before=datetime.now(UTC)) == []


def test_a_config_error_in_python_is_recorded_too(tmp_path: Path) -> None:
    with MetricStore.open(workspace=tmp_path) as store:
        with pytest.raises(ConfigError):
            evaluate(
                parse_text("Rules = [ RowCount > 0 ]").ruleset,
                "missing.csv",
                dataset="d",
                store=store,
                workspace=tmp_path,
            )
        (run,) = store.runs("d")
        assert run.state == "config_error" and "missing.csv" in (run.error or "")


def test_two_evaluations_a_second_apart_see_each_other(tmp_path: Path) -> None:
    ruleset = parse_text("Rules = [ RowCount > 0, RowCount = last() ]").ruleset
    with MetricStore.open(workspace=tmp_path) as store:
        first = evaluate(ruleset, pa.table({"a": [1, 2]}), dataset="d", store=store, workspace=tmp_path)
        time.sleep(0.01)  # not for timing: two clocks must differ, and the clock is microsecond-precise
        second = evaluate(ruleset, pa.table({"a": [1, 2]}), dataset="d", store=store, workspace=tmp_path)
    assert first.rules[1].outcome != "Passed"  # no history yet
    assert second.rules[1].outcome == "Passed"  # the first one, a second earlier, is its history


def test_a_ruleset_that_does_not_parse_is_a_recorded_config_error(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("id\n1\n")
    rules = tmp_path / "r.dqdl"
    rules.write_text("Rules = [ RowCount > ]")
    ws = tmp_path / "ws"
    assert (
        assay("dqdl", "run", str(rules), "--data", str(data), "--dataset", "d", "--workspace", str(ws)) == 2
    )
    with _store(ws) as store:
        (run,) = store.runs("d")
        assert run.state == "config_error" and str(rules) in (run.error or "")


def test_a_broken_dataset_configuration_is_a_recorded_config_error(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("venue\nXLON\n")
    ws = tmp_path / "ws"
    (ws / "checks").mkdir(parents=True)
    (ws / "checks" / "trades.yaml").write_text("window: sometimes\n")
    code = assay(
        "profile", str(data), "--dataset", "trades", "--load-date", "2026-01-05", "--workspace", str(ws)
    )
    assert code == 2
    with _store(ws) as store:
        (run,) = store.runs("trades")
        assert run.state == "config_error" and "window" in (run.error or "")


def test_the_same_load_evaluated_again_at_the_same_time_replaces_it(tmp_path: Path) -> None:
    """A DQDL run again at the same ``--now`` (a re-run after a kill, a corrected file) is the
    same load: the earlier one is superseded, so history counts the moment once, as a check run's
    day and an event's window are counted once."""
    ruleset = parse_text("Rules = [ RowCount > 0, RowCount = last() ]").ruleset
    now = datetime(2026, 3, 4, 6, tzinfo=UTC)
    with MetricStore.open(workspace=tmp_path) as store:
        for rows in ([1, 2], [1, 2, 3]):
            evaluate(ruleset, pa.table({"a": rows}), dataset="d", store=store, workspace=tmp_path, now=now)
        later = evaluate(
            ruleset, pa.table({"a": [1, 2, 3]}), dataset="d", store=store, workspace=tmp_path,
            now=now.replace(hour=7),
        )  # fmt: skip
        points = store.history("d", MetricKey.dataset("RowCount"), before=now.replace(hour=7))
    assert [p.value for p in points] == [3.0]  # the second evaluation of 06:00 only
    assert later.rules[1].outcome == "Passed"  # last() is the replacing load's 3
