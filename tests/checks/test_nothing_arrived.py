"""Nothing arrived is a failure (issue 30): a day whose file never came, on the trades example.

The world is the demo's 30 daily Parquet files of November 2026 and ``checks/trades.yaml``
(profile ``daily``, sliced on ``trade_date``, scheduled each morning for the day before), with the
file of 2026-11-28 taken away: the morning tick of 11-29 finds no row for its day. Before issue 30
every expectation was skipped (``upstream_missing``), freshness included, the run a green
``completed`` with exit 0 and no incident.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from _demo_workspace import cli_env
from _invoke import assay
from assay.demo import trades
from assay.store import MetricStore

GONE = date(2026, 11, 28)
TICK = "2026-11-29T07:00:00Z"  # the morning tick that checks GONE (lag: 1)


@pytest.fixture
def world(tmp_path: Path) -> Path:
    trades.generate(tmp_path)
    (tmp_path / "data" / "trades" / f"trades-{GONE}.parquet").unlink()
    return tmp_path


def check_run(world: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = world / "out.json"
    code = assay(
        "check", "run", str(world / "checks" / "trades.yaml"), "--at", str(GONE), "--now", TICK,
        "--workspace", str(world), "--json", str(out), *extra,
    )  # fmt: skip
    payload = json.loads(out.read_text()) if out.exists() else {}
    out.unlink(missing_ok=True)
    return code, payload


def test_a_scheduled_day_without_rows_opens_an_incident_for_the_owners(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert assay("run", "--due", "--now", TICK, "--workspace", str(world), "--json") == 0
    [run] = json.loads(capsys.readouterr().out)["runs"]
    assert (run["at"], run["state"]) == (GONE.isoformat(), "completed")
    with MetricStore.open(workspace=world) as store:
        [incident] = store.incidents(dataset="payments.trades")
    assert (incident.expectation, incident.state, incident.severity) == ("arrival:daily", "open", "critical")
    assert incident.owner == "payments-data" and incident.dimension == "volume"
    assert incident.message is not None and incident.message.startswith(f"no data for {GONE}")
    assert run["summary"]["passed"] == run["summary"]["failed"] == 0  # the arrival is no expectation
    # the next morning's file is there: the day passes (an incident resolves after its passes)
    assert assay("run", "--due", "--now", "2026-11-30T07:00:00Z", "--workspace", str(world), "--json") == 0
    capsys.readouterr()
    with MetricStore.open(workspace=world) as store:
        [later] = store.incidents(dataset="payments.trades")
    assert later.id == incident.id and later.passes == 1 and later.failures == 1


def test_a_run_by_hand_of_an_empty_day_opens_no_arrival_incident(world: Path) -> None:
    code, payload = check_run(world)
    assert code == 0 and payload["state"] == "completed"
    assert {o["reason"] for o in payload["outcomes"]} == {"upstream_missing"}
    with MetricStore.open(workspace=world) as store:
        assert store.incidents(dataset="payments.trades") == []


def test_fail_on_nothing_fails_a_run_that_evaluated_nothing(world: Path) -> None:
    assert check_run(world, "--fail-on", "nothing")[0] == 1
    assert check_run(world, "--fail-on", "critical,nothing")[0] == 1
    assert check_run(world, "--fail-on", "critical")[0] == 0  # the old words keep their meaning
    # a day whose rows came evaluated something: nothing is not reached
    code = assay(
        "check", "run", str(world / "checks" / "trades.yaml"), "--at", "2026-11-27", "--now",
        "2026-11-28T07:00:00Z", "--workspace", str(world), "--fail-on", "nothing",
    )  # fmt: skip
    assert code == 0


def test_freshness_over_the_source_fails_on_a_day_whose_rows_never_came(world: Path) -> None:
    for later in trades.days():  # as on the morning of the 29th: no later file yet
        if later > GONE:
            (world / "data" / "trades" / f"trades-{later}.parquet").unlink()
    document = world / "checks" / "trades.yaml"
    text = document.read_text()
    assert "- freshness: updated_at\n" in text
    document.write_text(
        text.replace("- freshness: updated_at\n", "- freshness: {column: updated_at, over: source}\n")
    )
    code, payload = check_run(world, "--fail-on", "critical")
    [fresh] = [o for o in payload["outcomes"] if o["expectation"] == "fresh"]
    assert (fresh["outcome"], fresh["severity"]) == ("failed", "critical") and code == 1
    assert fresh["observed"] > 12 * 3600  # the newest row of the whole source is the 27th's
    others = [o for o in payload["outcomes"] if o["expectation"] != "fresh"]
    assert {o["reason"] for o in others} == {"upstream_missing"}


def test_a_freshness_over_something_else_is_a_config_error_naming_the_value(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = world / "checks" / "trades.yaml"
    text = document.read_text().replace(
        "- freshness: updated_at\n", "- freshness: {column: updated_at, over: day}\n"
    )
    document.write_text(text)
    code, _ = check_run(world)
    assert code == 2
    assert "trades.yaml:39:9: freshness over 'day': use slice or source" in capsys.readouterr().err


def test_the_catalog_never_shows_a_run_that_evaluated_nothing_as_green(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fastapi.testclient import TestClient

    from assay.web.app import create_app
    from web.conftest import Api, open_plane, users_of

    assert assay("run", "--due", "--now", TICK, "--workspace", str(world), "--json") == 0
    capsys.readouterr()
    plane = open_plane(world)
    token = users_of(plane)["viewer"]
    with TestClient(create_app(plane=plane)) as client:
        [entry] = Api(client, token).get("/catalog").json()["items"]
        assert entry["last_run"]["state"] == "completed" and entry["last_run"]["evaluated_nothing"] is True
        form = client.get("/login")
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', form.text)
        assert csrf is not None
        client.post("/login", data={"token": token, "csrf_token": csrf.group(1), "next": "/"})
        page = client.get("/").text
    plane.close()
    assert '<span class="state state-evaluated_nothing">evaluated nothing</span>' in page
    assert "state-completed" not in page and "state-passed" not in page


@pytest.mark.parametrize(
    ("point", "then"),
    [
        ("after-start", "next-pass"),
        ("after-measure", "next-pass"),
        ("after-measure", "recover"),
        ("before-commit", "recover"),
        ("after-settle", "next-pass"),
    ],
)
def test_a_killed_scheduled_run_of_an_empty_day_still_opens_one_incident(
    world: Path, point: str, then: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The morning's run killed (SIGKILL) at a write boundary, then its tick finished by the next
    pass or by ``assay recover``: a run killed before its commit is run again as the schedule's
    (resumed from what it measured), so the empty day opens its arrival incident; one killed
    after its commit opened it already. Either way, once."""
    killed = subprocess.run(
        [sys.executable, "-m", "assay", "run", "--due", "--now", TICK, "--workspace", str(world)],
        capture_output=True, text=True, env=cli_env(ASSAY_CRASH_AT=point), timeout=120, check=False,
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    if then == "recover":
        assert assay("recover", "--workspace", str(world), "--json") == 0
    else:
        assert (
            assay("run", "--due", "--now", "2026-11-29T07:30:00Z", "--workspace", str(world), "--json") == 0
        )
    capsys.readouterr()
    with MetricStore.open(workspace=world) as store:
        incidents = store.incidents(dataset="payments.trades")
        runs = store.runs("payments.trades", kind="check")
    assert [(i.expectation, i.state) for i in incidents] == [("arrival:daily", "open")]
    assert incidents[0].message is not None and incidents[0].message.startswith(f"no data for {GONE}")
    if point == "after-settle":  # committed with its incident: the tick is finished with it
        assert [r.state for r in runs] == ["completed"]
        return
    [dead] = [r for r in runs if r.state == "system_error"]
    [done] = [r for r in runs if r.state == "completed"]
    # killed measured and not judged: the run that follows judges what the killed one measured
    resumed = (done.summary or {}).get("resumed_from")
    assert resumed == (dead.id if point in ("after-measure", "before-commit") else None)
