"""``assay propose`` and ``assay proposals`` through Typer's runner, on their own app (the lead
registers them in assay.cli)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from assay._cli_proposals import proposals_app, propose_command
from assay.errors import ConfigError

app = typer.Typer()
app.command("propose")(propose_command)
app.add_typer(proposals_app, name="proposals")


@pytest.fixture
def world(trades_history: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "ws"
    shutil.copytree(trades_history, copy)
    return copy


def test_propose_then_show_accept_and_reject(world: Path) -> None:
    runner = CliRunner()
    ws = ["--workspace", str(world)]
    done = runner.invoke(
        app, ["propose", "payments.trades", "--json", "--intent", "no missing customer ids", *ws]
    )
    assert done.exit_code == 0, done.output
    [proposal] = json.loads(done.stdout)
    assert proposal["expectation"]["metric"] == "daily.missing_rate(customer_id)"
    text = runner.invoke(app, ["propose", "payments.trades", *ws])
    assert text.exit_code == 0 and "dry-run on 2026-11-24 in 1 query" in text.stdout
    shown = runner.invoke(app, ["proposals", "show", proposal["id"][:8], "--json", *ws])
    assert json.loads(shown.stdout)["proposal"]["events"][0]["kind"] == "proposed"
    accepted = runner.invoke(app, ["proposals", "accept", proposal["id"][:8], "--by", "ana", *ws])
    assert accepted.exit_code == 0 and "+    metric: daily.missing_rate(customer_id)" in accepted.stdout
    assert "+      - missing_rate: [customer_id]" in accepted.stdout  # the metric it needs, declared
    listed = json.loads(
        runner.invoke(app, ["proposals", "list", "--state", "accepted", "--json", *ws]).stdout
    )
    assert [p["id"] for p in listed["proposals"]] == [proposal["id"]]
    other = next(
        p for p in json.loads(runner.invoke(app, ["propose", "payments.trades", "--json", *ws]).stdout)
    )
    rejected = runner.invoke(
        app, ["proposals", "reject", other["id"], "--by", "bob", "--why", "too strict", *ws]
    )
    assert rejected.exit_code == 0 and "rejected by bob: too strict" in rejected.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["propose", "nope.nothing"], "no check document of dataset 'nope.nothing'"),
        (["proposals", "show", "ffff"], "no proposal 'ffff'"),
        (["proposals", "list", "--state", "maybe"], "unknown proposal state 'maybe'"),
        (["propose", "payments.trades", "--min-loads", "1"], "--min-loads must be 2 or more"),
    ],
)
def test_mistakes_are_config_errors(world: Path, args: list[str], message: str) -> None:
    done = CliRunner().invoke(app, [*args, "--workspace", str(world)])
    assert isinstance(done.exception, ConfigError) and done.exception.exit_code == 2
    assert message in str(done.exception)
