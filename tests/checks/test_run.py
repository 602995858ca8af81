"""``assay check``: a document's runs through the CLI, on the trades example the demo ships.

The world: 30 daily Parquet files of trades (``assay.demo.trades``), the last one with the EU's
volume halved (one venue stopped sending) and three fills settled before they were executed,
and the document ``checks/trades.yaml``. Each test copies a workspace where the first 29 days
have been run, so that every run judges against stored history.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from assay.demo import trades

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _invoke import assay
from checks._history import trades29

LAST = trades.days()[-1]


def run(
    root: Path, day: Any, *extra: str, capsys: pytest.CaptureFixture[str] | None = None
) -> tuple[int, dict[str, Any]]:
    out = root / "out.json"
    code = assay(
        "check", "run", str(root / "checks" / "trades.yaml"), "--at", str(day),
        "--now", trades.clock(day).isoformat(), "--workspace", str(root), "--json", str(out), *extra,
    )  # fmt: skip
    payload = json.loads(out.read_text()) if out.exists() else {}
    out.unlink(missing_ok=True)
    return code, payload


@pytest.fixture(autouse=True, params=["duckdb", "spark"])
def run_engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test's runs go to one engine in turn (``ASSAY_ENGINE``, what ``--engine`` reads), on
    the 29 days of history measured on DuckDB: the store is the engines' common ground, so a
    Spark run judges against what DuckDB measured. On Spark the session is the test session's."""
    if request.param == "spark":
        request.getfixturevalue("spark_session")
    monkeypatch.setenv("ASSAY_ENGINE", request.param)
    return str(request.param)


@pytest.fixture(scope="module")
def history29() -> Path:
    """The first 29 days run on DuckDB, built once for both engines' tests (tests/checks/_history.py)."""
    return trades29()


@pytest.fixture
def world(history29: Path, tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(history29, root)
    return root


def outcomes(payload: dict[str, Any], expectation: str) -> list[dict[str, Any]]:
    return [o for o in payload["outcomes"] if o["expectation"] == expectation]


def test_the_regression_day_fails_only_the_eu_group_and_the_total_names_the_eu(world: Path) -> None:
    code, payload = run(world, LAST)
    assert code == 0 and payload["state"] == "completed" and payload["dry_run"] is False
    regions = {o["group"]["region"]: o["outcome"] for o in outcomes(payload, "region-volume")}
    assert regions == {"EU": "failed", "US": "passed", "APAC": "passed"}
    [total] = outcomes(payload, "total-volume")
    assert total["outcome"] == "failed" and total["owner"] == "payments-data"
    assert total["expected"]["low"] > total["observed"]
    first = total["explained_by"][0]
    assert (first["dimension"], first["value"]) in {("region", "EU"), ("venue", "XPAR")}
    assert any(
        c["dimension"] == "region" and c["value"] == "EU" and c["share"] > 0.9 for c in total["explained_by"]
    )


def test_one_query_measures_the_profile_and_judging_sends_none(world: Path) -> None:
    _, payload = run(world, LAST)
    assert payload["queries"] == {"measure": 1, "judge": 0}


def test_each_outcome_state_with_its_owner(world: Path) -> None:
    _, payload = run(world, LAST)
    [broken] = outcomes(payload, "customer-ref-complete")
    assert broken["outcome"] == "config_error" and broken["owner"] == "ana@example.com"
    assert "customer_ref" in broken["message"] and "customer_id" in broken["message"]
    [settle] = outcomes(payload, "settle-after-exec")
    assert settle["outcome"] == "failed" and settle["severity"] == "critical" and settle["observed"] == 3
    assert len(settle["samples"]) == 3
    assert all(row["settled_at"] < row["executed_at"] for row in settle["samples"])
    [email] = outcomes(payload, "email-complete")
    assert email["outcome"] == "passed"
    [fee] = outcomes(payload, "fee-level")
    assert fee["mode"] == "advisory"
    summary = payload["summary"]
    enforced = [o for o in payload["outcomes"] if o["mode"] == "enforce"]
    assert summary["failed"] == sum(o["outcome"] == "failed" for o in enforced)
    assert summary["config_error"] == 1
    judged = summary["passed"] + summary["failed"]
    assert summary["pass_rate"] == round(summary["passed"] / judged, 4)
    assert summary["evaluation_rate"] == round(judged / len(enforced), 4)
    assert sum(summary["advisory"].values()) == 1


def test_fail_on_reads_severity_and_ignores_advisory(world: Path) -> None:
    assert run(world, LAST, "--fail-on", "critical")[0] == 1
    only = ("--only", "fee-level", "--only", "email-complete", "--fail-on", "warning")
    assert run(world, LAST, "--dry-run", *only)[0] == 0  # the advisory fee-level fails no run
    # a recorded run's slice is judged by the drift monitor too: XPAR gone is a hard alert, critical
    code, payload = run(world, LAST, *only)
    assert code == 1 and ("vanished_value", "venue", "hard") in {
        (a["kind"], a["column"], a["severity"]) for a in payload["drift"]
    }
    assert run(world, LAST, "--fail-on", "fatal")[0] == 2


def test_warming_up_before_min_history(tmp_path: Path) -> None:
    trades.generate(tmp_path, 4, regression=False)
    payloads = [run(tmp_path, day)[1] for day in trades.days(4)]
    early = outcomes(payloads[2], "region-volume")
    assert early and all(o["outcome"] == "skipped" and o["reason"] == "warming_up" for o in early)
    assert payloads[0]["summary"]["skipped"] >= 1


def test_a_day_without_rows_is_upstream_missing(world: Path) -> None:
    code, payload = run(world, date(2025, 1, 1))
    assert code == 0
    assert {(o["outcome"], o["reason"]) for o in payload["outcomes"]} == {("skipped", "upstream_missing")}
    assert payload["summary"]["evaluation_rate"] == 0


def test_history_survives_deleting_the_earlier_days_files(
    world: Path, history29: Path, tmp_path: Path
) -> None:
    _, with_files = run(world, LAST)
    other = tmp_path / "other"
    shutil.copytree(history29, other)
    for path in (other / "data" / "trades").glob("*.parquet"):
        if not path.name.endswith(f"{LAST}.parquet"):
            path.unlink()
    _, without = run(other, LAST)
    strip = [{k: v for k, v in o.items() if k != "samples"} for o in with_files["outcomes"]]
    assert strip == [{k: v for k, v in o.items() if k != "samples"} for o in without["outcomes"]]


def _dump(database: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(database) as connection:
        tables = [r[0] for r in connection.execute("select name from sqlite_master where type = 'table'")]
        return {t: sorted(connection.execute(f'select * from "{t}"').fetchall(), key=repr) for t in tables}


def test_a_dry_run_records_nothing(world: Path) -> None:
    before = _dump(world / "assay.db")
    runs_before = sorted(p.name for p in (world / "runs").glob("*"))
    code, payload = run(world, LAST, "--dry-run")
    assert code == 0 and payload["dry_run"] is True
    [settle] = outcomes(payload, "settle-after-exec")
    assert settle["samples"] and settle["observed"] == 3
    assert _dump(world / "assay.db") == before
    assert sorted(p.name for p in (world / "runs").glob("*")) == runs_before
    # and a later run judges exactly as if the dry run had not happened
    _, real = run(world, LAST)
    assert [o["outcome"] for o in real["outcomes"]] == [o["outcome"] for o in payload["outcomes"]]


def test_history_is_stable_and_oldest_first(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(world, LAST, "--dry-run")
    doc = str(world / "checks" / "trades.yaml")
    capsys.readouterr()
    assert assay("check", "history", doc, "--workspace", str(world), "--json") == 0
    first = capsys.readouterr().out
    assert assay("check", "history", doc, "--workspace", str(world), "--json") == 0
    assert capsys.readouterr().out == first
    payload = json.loads(first)
    assert [r["at"] for r in payload["runs"]] == [str(d) for d in trades.days()[:-1]]
    history = ("check", "history", doc, "--workspace", str(world), "--json")
    assert assay(*history, "--expectation", "region-volume", "--group", "region=EU") == 0
    only = json.loads(capsys.readouterr().out)
    assert all(
        o["expectation"] == "region-volume" and o["group"] == {"region": "EU"}
        for r in only["runs"]
        for o in r["outcomes"]
    )
    assert sum(len(r["outcomes"]) for r in only["runs"]) == 29


def test_by_groups_each_read_their_own_history(world: Path) -> None:
    _, payload = run(world, LAST)
    bands = {o["group"]["region"]: o["expected"] for o in outcomes(payload, "region-volume")}
    assert bands["US"]["low"] > bands["APAC"]["high"]  # each band is its own region's


def test_validate_reports_every_mistake_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "bad.yaml"
    doc.write_text(
        "apiVersion: assay/v1\nkind: DatasetChecks\n"
        "dataset: {name: t, source: {path: t.parquet}, colour: red}\n"
        "profiles:\n  - id: daily\n    metrics: [row_count]\n"
        "expectations:\n"
        "  - {id: a, metric: daily.row_cnt, expect: '> 0'}\n"
        "  - {id: a, metric: daily.row_count, expect: '> > 0'}\n"
    )
    assert assay("check", "validate", str(doc)) == 2
    lines = capsys.readouterr().err.splitlines()
    assert f"{doc}:3:" in lines[0] and "unknown field 'colour'" in lines[0]
    assert any(line.startswith(f"{doc}:8:") and "unknown metric 'row_cnt'" in line for line in lines)
    assert any(line.startswith(f"{doc}:9:") and "duplicate expectation id 'a'" in line for line in lines)
    assert any(line.startswith(f"{doc}:9:") and "expect of 'a':" in line for line in lines)
    assert assay("check", "run", str(doc), "--workspace", str(tmp_path)) == 2
    assert assay("check", "validate", str(Path(trades.__file__).parent / "data" / "trades.yaml")) == 0


def test_a_bad_filter_is_a_config_error_of_its_profile_only(world: Path) -> None:
    doc = world / "checks" / "trades.yaml"
    text = doc.read_text().replace('filter: "is_test = false"', 'filter: "is_tst = false"')
    doc.write_text(text)
    _, payload = run(world, LAST)
    assert payload["state"] == "completed"
    assert {o["outcome"] for o in payload["outcomes"]} == {"config_error"}
    assert all("is_tst" in o["message"] for o in payload["outcomes"])


def test_plan_shows_one_statement_and_who_reads_what(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert (
        assay("check", "plan", str(world / "checks" / "trades.yaml"), "--workspace", str(world), "--json")
        == 0
    )
    payload = json.loads(capsys.readouterr().out)
    [profile] = payload["profiles"]
    assert "GROUPING SETS" in profile["sql"].upper()
    readers = {m["metric"]: m["expectations"] for m in profile["metrics"]}
    assert readers["row_count"] == ["total-volume", "region-volume"]
    assert profile["rules"] == ["email-complete"]
    errors = {m["metric"]: m["error"] for m in profile["metrics"] if m["error"]}
    assert list(errors) == ["null_rate(customer_ref)"]


def test_an_empty_source_prints_its_nan_metric_as_null(tmp_path: Path) -> None:
    """A header-only file: Completeness is 0/0 (NaN), a failure as in Glue; the JSON, which has
    no NaN, says null, and the message says NaN (it was a crash before, found on Spark)."""
    (tmp_path / "e.csv").write_text("id,email\n")
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "trades.yaml").write_text(
        "apiVersion: assay/v1\nkind: DatasetChecks\ndataset: {name: empty, source: {path: ../e.csv}}\n"
        "profiles: [{id: p, metrics: [row_count]}]\n"
        "expectations:\n  - {id: complete, profile: p, rule: 'Completeness \"email\" >= 0.99'}\n"
        "  - {id: rows, metric: p.row_count, expect: '> 0'}\n"
    )
    code, payload = run(tmp_path, date(2025, 1, 1))
    assert code == 0 and payload["state"] == "completed"
    complete, rows = outcomes(payload, "complete")[0], outcomes(payload, "rows")[0]
    assert complete["outcome"] == "failed" and complete["observed"] is None and "NaN" in complete["message"]
    assert rows["outcome"] == "failed" and rows["observed"] == 0
