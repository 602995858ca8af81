"""The `assay` command, run in process through its real entry point (exit codes included)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from _invoke import assay
from pgserver import postgres_server, postgres_url  # noqa: F401

RULES = """Rules = [
    RowCount = 3,
    IsComplete "name",
    ColumnValues "amount" > 0 labels=["owner"="ops"],
    Mean "amount" > last()
]"""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = assay(*args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "rules.dqdl").write_text(RULES)
    (tmp_path / "data.csv").write_text("name,amount\na,1\n,2\nc,-1\n")
    return tmp_path


def test_validate(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    code, out, _ = run(capsys, "dqdl", "validate", str(files / "rules.dqdl"))
    assert code == 0 and "valid DQDL, 4 rule(s)" in out


def test_validate_reports_the_position_and_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.dqdl"
    bad.write_text('Rules = [\n    RowCount > 0,\n    IsComplete "a" > 0.5\n]')
    code, _, err = run(capsys, "dqdl", "validate", str(bad))
    assert code == 2
    assert f"{bad}:3:20: IsComplete does not take a condition" in err
    assert '    IsComplete "a" > 0.5' in err and "^" in err


def test_run_writes_the_json_contract(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    out_json = files / "out" / "result.json"
    code, out, _ = run(
        capsys,
        "dqdl",
        "run",
        str(files / "rules.dqdl"),
        "--data",
        str(files / "data.csv"),
        "--json",
        str(out_json),
    )
    assert code == 0
    doc = json.loads(out_json.read_text())
    assert set(doc) == {"dataset", "score", "rules", "analyzers"}
    assert [r["outcome"] for r in doc["rules"]] == ["Passed", "Passed", "Failed", "Passed"]
    assert set(doc["rules"][0]) == {"rule", "outcome", "message", "metrics", "labels", "expected"}
    assert doc["rules"][2]["labels"] == {"owner": "ops"}
    assert doc["rules"][0]["metrics"] == {"Dataset.*.RowCount": 3.0}
    assert doc["score"] == 0.75
    assert "IsComplete" in out  # the table is printed too


def test_json_to_stdout(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    code, out, _ = run(
        capsys, "dqdl", "run", str(files / "rules.dqdl"), "--data", str(files / "data.csv"), "--json", "-"
    )
    assert code == 0 and json.loads(out)["rules"][0]["rule"] == "RowCount = 3"


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_row_level_output(capsys: pytest.CaptureFixture[str], files: Path, suffix: str) -> None:
    target = files / f"rows.{suffix}"
    code, _, _ = run(
        capsys,
        "dqdl",
        "run",
        str(files / "rules.dqdl"),
        "--data",
        str(files / "data.csv"),
        "--row-level",
        str(target),
    )
    assert code == 0
    if suffix == "parquet":
        rows = pq.read_table(target).to_pylist()
        assert rows[2]["DataQualityRulesFail"] == ['ColumnValues "amount" > 0 labels=["owner"="ops"]']
        assert rows[2]["DataQualityEvaluationResult"] == "Failed"
        assert rows[0]["DataQualityRulesSkip"] == ["RowCount = 3", 'Mean "amount" > last()']
    else:
        lines = target.read_text().splitlines()
        assert lines[0].split(",")[:2] == ['"name"', '"amount"'] or lines[0].startswith("name")
        assert '"[""RowCount = 3""' in lines[1]


def test_fail_on(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    args = ["dqdl", "run", str(files / "rules.dqdl"), "--data", str(files / "data.csv")]
    assert run(capsys, *args, "--fail-on", "failed")[0] == 1
    assert run(capsys, *args, "--fail-on", "error")[0] == 0


def test_dataset_history_and_run_summary(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    workspace = files / "ws"
    args = [
        "dqdl",
        "run",
        str(files / "rules.dqdl"),
        "--data",
        str(files / "data.csv"),
        "--workspace",
        str(workspace),
    ]
    first = files / "first.json"
    assert (
        run(capsys, *args, "--dataset", "sales", "--now", "2026-01-01T00:00:00Z", "--json", str(first))[0]
        == 0
    )
    # no history yet: last() is 0.0, and the mean is 2/3
    assert json.loads(first.read_text())["rules"][3]["outcome"] == "Passed"
    second = files / "second.json"
    assert (
        run(capsys, *args, "--dataset", "sales", "--now", "2026-01-02T00:00:00Z", "--json", str(second))[0]
        == 0
    )
    # the same mean the next day: "Mean > last()" now compares with the stored 2/3
    assert json.loads(second.read_text())["rules"][3]["outcome"] == "Failed"
    assert (workspace / "assay.db").exists()
    summaries = list((workspace / "runs").glob("*.json"))
    assert len(summaries) == 2 and "run_id" in json.loads(summaries[0].read_text())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--data", "nope.csv"], "nope.csv: no such data file"),
        (["--data", "{data}", "--ref", "broken"], "write --ref ALIAS=PATH"),
        (["--data", "{data}", "--now", "yesterday"], "is not an ISO-8601 date-time"),
        (["--data", "{data}", "--composite-mode", "diagonal"], "composite mode must be 'column' or 'row'"),
        (
            ["--data", "{data}", "--row-level", "{dir}/rows.xlsx"],
            "write row-level results to a .parquet or .csv",
        ),
    ],
)
def test_bad_input_exits_2_with_a_message(
    capsys: pytest.CaptureFixture[str], files: Path, args: list[str], message: str
) -> None:
    args = [a.format(data=files / "data.csv", dir=files) for a in args]
    code, out, err = run(capsys, "dqdl", "run", str(files / "rules.dqdl"), *args)
    assert code == 2
    assert message in err
    assert "Traceback" not in out + err


def test_missing_ruleset_file(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    code, _, err = run(capsys, "dqdl", "run", str(files / "nope.dqdl"), "--data", str(files / "data.csv"))
    assert code == 2 and "no such ruleset file" in err


def test_unknown_column_and_missing_reference_are_error_outcomes(
    capsys: pytest.CaptureFixture[str], files: Path
) -> None:
    rules = files / "errors.dqdl"
    rules.write_text('Rules = [ IsComplete "nmae", RowCountMatch "ref" > 0.9, RowCount = 3 ]')
    code, out, _ = run(capsys, "dqdl", "run", str(rules), "--data", str(files / "data.csv"), "--json", "-")
    assert code == 0
    doc = json.loads(out)
    assert [r["outcome"] for r in doc["rules"]] == ["Error", "Error", "Passed"]
    assert "Column 'nmae' does not exist" in doc["rules"][0]["message"]
    assert "--ref ref=PATH" in doc["rules"][1]["message"]
    assert doc["score"] == 1.0


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "dqdl", "run")
    assert code == 2 and "Missing argument" in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("assay ")


def test_demo(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # The shared build (`assay demo --json`, tests/_demo_workspace.py): the story it would have
    # printed is kept in story.txt, written by the same console calls as the printed one.
    from _demo_workspace import built

    demo, _ = built()
    out = (demo / "story.txt").read_text()
    assert "IsPrimaryKey" in out and "rows failed at least one rule" in out
    assert "\x1b[" not in out  # plain text, no terminal codes
    assert (demo / "orders.row_level.parquet").exists()
    assert (demo / "assay.db").exists()
    # the credit bureau: each of the seed's faults caught where it belongs (the final month's runs)
    summaries = [json.loads(p.read_text()) for p in (demo / "runs").glob("*.json")]
    gated = [s for s in summaries if "contributor" in s]  # runs/ also holds the other flows' runs
    final = {s["contributor"]: s for s in gated if s["source"]["path"].endswith("_final.csv")}
    assert final["PAYLATER"]["passed"] == 0 and final["PAYLATER"]["rules"]["A02"]["failed"] > 0
    assert final["BANK_B"]["rules"]["T01"]["failed"] == final["BANK_B"]["quarantined"] > 0
    assert final["BANK_A"]["rules"]["F01"]["failed"] > 0 and final["EASYPAY"]["parse_errors"] == 3
    assert final["NEWPAY"]["quarantined"] == 0 and final["NEWPAY"]["rules"]["T04"]["skipped"] > 0
    assert final["BANK_C"]["quarantined"] == 0 and len(final["BANK_C"]["groups"]) == 3
    assert list((demo / "dq_error").glob("date=*/contributor=BANK_A/*.csv"))
    assert "swapped" in out and "backfill" in out
    # the vendor's daily file: the two silent faults, on exactly their days
    from assay.demo.vendor import DATASET, NULL_DAY, VENUE_DAY
    from assay.store import MetricStore

    with MetricStore.open(workspace=demo) as store:
        alerts = [
            (load.logical_date, j.kind, j.column, j.severity)
            for load, j in store.judgements(DATASET)
            if j.severity is not None and j.kind != "volume"
        ]
        (decision,) = store.decisions(DATASET)
    assert alerts == [
        (NULL_DAY, "null_rate", "settle_ccy", "hard"),
        (VENUE_DAY, "new_value", "venue", "soft"),
    ]
    assert (decision.value, decision.status, decision.first_date) == ("XWAR", "pending", VENUE_DAY)
    assert (demo / "settle_ccy.png").stat().st_size > 10_000
    # a folder the demo did not make is refused
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "data.csv").write_text("x")
    code, _, err = run(capsys, "demo", "--workspace", str(tmp_path / "mine"))
    assert code == 2 and "was not made by `assay demo`" in err


def test_the_demo_rebuilds_only_its_own_folder(tmp_path: Path) -> None:
    from assay.demo import MARKER, prepare

    mine = tmp_path / "old-demo"
    mine.mkdir()
    (mine / MARKER).write_text("")
    (mine / "stale.txt").write_text("from a previous run")
    prepare(mine)
    assert (mine / MARKER).exists() and not (mine / "stale.txt").exists()


# --- help: every default and environment variable is shown, no text lost as markup ----------

ENV_VARS = {"--workspace": "ASSAY_WORKSPACE", "--store": "ASSAY_STORE_URL", "--by": "ASSAY_USER"}


def _commands() -> list[tuple[list[str], Any]]:
    import typer

    from assay.cli import app

    found: list[tuple[list[str], Any]] = []

    def walk(command: Any, path: list[str]) -> None:
        found.append((path, command))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def _flat(text: str) -> str:
    """Rendered help as one line: box drawing gone, whitespace collapsed."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


@pytest.mark.parametrize(
    ("path", "command"), _commands(), ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_help_shows_every_text_default_and_env_var(
    monkeypatch: pytest.MonkeyPatch, path: list[str], command: Any
) -> None:
    from typer.testing import CliRunner

    from assay.cli import app

    monkeypatch.setenv("COLUMNS", "250")
    shown = CliRunner().invoke(app, [*path, "--help"])
    assert shown.exit_code == 0, shown.output
    flat = _flat(shown.output)
    assert _flat(command.help or "").split("\b")[0].strip() in flat
    for param in command.params if not getattr(command, "commands", None) else []:
        name = next((o for o in param.opts if o.startswith("--")), param.name)
        if name in ("--help", "--version"):
            continue
        text = _flat(param.help or "")
        assert text and text in flat, f"assay {' '.join(path)} {name}: help text lost: {text!r}"
        # the demo's folder is its own, never the workspace; score's --by is the rollup's key
        # (tag, schema or owner: issue 12's contract), not a person
        if name in ENV_VARS and path not in (["demo"], ["score"]):
            assert f"{text} [env var: {ENV_VARS[name]}]" in flat, f"{name}: env var not shown"
        needs_default = param.param_type_name == "option" and not param.required and not param.is_flag
        if needs_default:
            after = flat[flat.index(text) + len(text) :]
            assert re.match(r"( \[env var: \w+\])? \[default: [^\]]+\]", after), (
                f"assay {' '.join(path)} {name}: its default is not shown; give the option a value "
                "or show_default='what happens without it'"
            )


def test_the_gate_report_shows_held_rows_and_their_decisions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gate.conftest import HEADER, RULES

    monkeypatch.setenv("COLUMNS", "200")
    workspace = tmp_path / "ws"
    (workspace / "checks").mkdir(parents=True)
    (workspace / "checks" / "silver.accounts.yaml").write_text("domain_columns: [account_status]\n")
    (tmp_path / "rules.csv").write_text(RULES)

    def month(day: str, frozen: set[str]) -> str:
        path = tmp_path / f"{day}.csv"
        rows = [
            f"B1,{a},{day},{'FROZEN' if a in frozen else 'ACTIVE'},{limit},{limit},0"
            for a, limit in {"A1": 1000, "A2": 2000, "A3": 3000, "A4": 4000, "A5": 5000}.items()
        ]
        path.write_text("\n".join([HEADER, *rows]) + "\n")
        return str(path)

    common = ["--rules", str(tmp_path / "rules.csv"), "--contributor", "B1", "--contributor-type", "bank"]
    common += ["--table", "silver.accounts", "--key", "account_id", "--order", "statement_date"]
    common += ["--contributor-column", "contributor_id"]
    common += ["--workspace", str(workspace)]
    assert run(capsys, "gate", month("2025-01-31", set()), *common)[0] == 0
    code, out, _ = run(capsys, "gate", month("2025-02-28", {"A3", "A4"}), *common)
    assert code == 0
    assert "5 rows = 3 committed + 0 quarantined + 2 held" in out
    code, listed, _ = run(capsys, "decisions", "list", "--workspace", str(workspace), "--json")
    (decision,) = json.loads(listed)["decisions"]
    assert f"2 rows held for decision {decision['id']}" in out
    assert "assay decisions accept" in out


def test_history_shows_a_dataset_recorded_by_dqdl_run(
    capsys: pytest.CaptureFixture[str], files: Path
) -> None:
    workspace = str(files / "ws")
    args = ["dqdl", "run", str(files / "rules.dqdl"), "--data", str(files / "data.csv")]
    args += ["--dataset", "sales", "--workspace", workspace]
    completeness = []
    for now in ("2026-01-01T08:00:00Z", "2026-01-02T08:00:01Z"):
        code, out, _ = run(capsys, *args, "--now", now, "--json", "-")
        assert code == 0
        completeness += [r["metrics"]["Column.name.Completeness"] for r in json.loads(out)["rules"][1:2]]
    code, out, err = run(capsys, "history", "sales", "--workspace", workspace, "--json")
    assert code == 0, err
    points = json.loads(out)["points"]
    assert [p["value"] for p in points] == [3.0, 3.0]  # RowCount of each run, oldest first
    assert [p["load_time"][:19] for p in points] == ["2026-01-01T08:00:00", "2026-01-02T08:00:01"]
    code, out, _ = run(capsys, "history", "sales", "--workspace", workspace)
    assert code == 0 and "2026-01-02 08:00:01" in out
    # a column metric the rules measured; one they did not is named with those that exist
    code, out, _ = run(capsys, "history", "sales", "--column", "name", "--metric", "Completeness",
                       "--workspace", workspace, "--json")  # fmt: skip
    assert code == 0 and [p["value"] for p in json.loads(out)["points"]] == completeness
    code, _, err = run(capsys, "history", "sales", "--column", "name", "--workspace", workspace)
    assert code == 2 and "MissingRate" in err and "Completeness" in err  # the default series'


def test_importing_the_cli_loads_no_engine_or_lake_library() -> None:
    # `assay --help` must start fast: the heavy libraries are imported by the commands that use them.
    import subprocess

    heavy = (
        "duckdb",
        "pyarrow",
        "sqlalchemy",
        "pyiceberg",
        "matplotlib",
        "sqlglot",
        "numpy",
        "pydantic",
        "pyspark",
    )
    code = "import sys, assay.cli; print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    import assay

    env = {
        **os.environ,
        "PYTHONPATH": str(Path(assay.__file__).parents[1]),
    }  # these sources, not another copy
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    loaded = set(done.stdout.split())
    assert "assay" in loaded and "typer" in loaded
    assert loaded.isdisjoint(heavy), sorted(loaded & set(heavy))


# --- --json: every command that reports something prints one JSON object on stdout (a list ---
# --- for the few whose contract is one) ---------------------------------------------------

# Each leaf command with arguments that run it on the demo's workspace ({ws}; {tmp}: a scratch folder).
JSON_RUNS: dict[str, str] = {
    "dqdl validate": "{ws}/data/orders.dqdl --json",
    "dqdl run": "{ws}/data/orders.dqdl --data {ws}/data/orders.csv --ref customers={ws}/data/customers.csv "
    "--json -",
    "rules compile": "{ws}/bureau/bureau_rules.csv --contributor-type bank --json",
    "gate": "{ws}/bureau/files/BANK_A_final.csv --rules {ws}/bureau/bureau_rules.csv --contributor BANK_A "
    "--contributor-type bank --workspace {ws} --json",
    "table list": "--workspace {ws} --json",
    "table export": "silver.accounts {tmp}/accounts.parquet --workspace {ws} --json",
    "profile": "{ws}/vendor/trades_2026-11-17.parquet --dataset vendor_trades --load-date 2026-11-17 "
    "--workspace {ws} --json",
    "reconcile": "{ws}/data/customers.csv {ws}/data/customers.csv --key customer_id --workspace {ws} "
    "--json -",
    "decisions list": "--workspace {ws} --json",
    "decisions accept": "{decision} --by ana --workspace {ws} --json",
    "decisions reject": "{decision} --by ana --workspace {ws} --json",
    "history": "vendor_trades --column settle_ccy --workspace {ws} --json",
    "accept": "vendor_trades --load-date 2026-11-12 --by ana --workspace {ws} --json",
    "recover": "--workspace {ws} --json",
    "demo": "--workspace {tmp}/demo --json",
    "check validate": "{ws}/checks/trades.yaml --json",
    "check run": "{ws}/checks/trades.yaml --at 2026-11-30 --now 2026-12-01T03:00:00Z "
    "--workspace {ws} --json -",
    "check history": "{ws}/checks/trades.yaml --workspace {ws} --json",
    "check plan": "{ws}/checks/trades.yaml --workspace {ws} --json",
    "check export-dqdl": "{ws}/checks/trades.yaml --json",
    "check import-odcs": "{tmp}/contract.yaml --json",
    "check import-dbt": "{tmp}/manifest.json --source-template duckdb:wh.duckdb#{{schema}}.{{alias}} --json",
    "run": "--due --now 2026-12-01T07:00:00Z --workspace {ws} --json",
    "scheduler": "--workspace {ws} --json --passes 1",
    "worker": "--burst --workspace {ws} --store {pg} --json",
    "notify test": "owners --workspace {ws} --json",
    "notify outbox": "--workspace {ws} --json",
    "notify deliver": "--now 2026-12-01T08:00:00Z --workspace {ws} --json",
    "incidents list": "--workspace {ws} --json",
    "incidents show": "{incident} --workspace {ws} --json",
    "incidents ack": "{incident} --by ana --workspace {ws} --json",
    "incidents resolve": "{incident} --by ana --cause real_issue --workspace {ws} --json",
    "incidents mute": "{incident} --until 2099-01-01 --by ana --workspace {ws} --json",
    "score": "--workspace {ws} --now 2026-12-01T03:00:00Z --json",
    "certify": "payments.trades --workspace {ws} --now 2026-12-01T03:00:00Z --json",
    "propose": "payments.trades --workspace {ws} --json",
    "proposals list": "--workspace {ws} --json",
    "proposals show": "{proposal} --workspace {ws} --json",
    "proposals accept": "{proposal} --by ana --workspace {ws} --json",
    "proposals reject": "{proposal} --by ana --why noise --workspace {ws} --json",
    "users add": "carol --role author --by ana --workspace {ws} --json",
    "users list": "--workspace {ws} --json",
    "users token": "{user} --by ana --workspace {ws} --json",
    "users link": "{user} --by ana --workspace {ws} --json",
    "users set": "{user} --role admin --by ana --workspace {ws} --json",
}
SERVERS = {"serve"}
"""Commands that run until stopped: ``serve --json`` prints one line and serves (tested in
tests/web/test_cli_web.py)."""
LISTS = {"score", "propose"}
"""Commands whose JSON is a list by contract (issue 12); every other prints one object."""


def test_every_command_that_reports_takes_json() -> None:
    leaves = {" ".join(path) for path, command in _commands() if not getattr(command, "commands", None)}
    assert leaves == set(JSON_RUNS) | SERVERS, "a new command needs --json and an entry in JSON_RUNS"
    for path, command in _commands():
        if " ".join(path) in leaves:
            assert "--json" in {o for p in command.params for o in p.opts}, f"assay {' '.join(path)}"


@pytest.mark.parametrize("name", sorted(JSON_RUNS))
def test_json_output_is_one_object_and_nothing_else(
    name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    import subprocess

    from _demo_workspace import built, cli_env, copy

    if name == "demo":
        _, printed = built()  # the shared demo was built with --json: check what it printed
        assert set(printed) == {"workspace", "orders", "bureau", "vendor", "checks", "control", "serve"}
        assert printed["serve"]["command"].startswith(f"assay serve --workspace {printed['workspace']} --now")
        assert printed["checks"]["queries"] == {"measure": 1, "judge": 0}
        assert printed["vendor"]["decisions"][0]["status"] == "pending"
        assert {f["contributor"] for f in printed["bureau"]["final"]} >= {"BANK_A", "PAYLATER"}
        assert printed["orders"]["failed_rows"] > 0
        return
    workspace = copy(tmp_path / "ws")
    receiver = None
    if name == "notify test":  # a channel to send to: a real local HTTP server
        from _receivers import Receiver

        receiver = Receiver()
        channel = f'{{type: webhook, url: "{receiver.url}/o"}}'
        (workspace / "assay.yaml").write_text(f"channels: {{owners: {channel}}}\n")
    (tmp_path / "contract.yaml").write_text(
        "apiVersion: v3.1.0\nkind: DataContract\nid: c\n"
        "schema: [{name: t, quality: [{metric: rowCount, mustBeGreaterThan: 0}]}]\n"
    )
    (tmp_path / "manifest.json").write_bytes((Path(__file__).parent / "dbt" / "manifest.json").read_bytes())
    decision = built()[1]["vendor"]["decisions"][0]["id"]
    incident = next(n["incident_id"] for n in built()[1]["checks"]["notifications"] if n["incident_id"])
    proposal = built()[1]["control"]["proposals"][0]["id"]
    pg = request.getfixturevalue("postgres_url") if "{pg}" in JSON_RUNS[name] else ""  # the queue's store
    user = ""
    if "{user}" in JSON_RUNS[name]:  # a user to give a token, a link or a role to
        from assay.store import MetricStore

        with MetricStore.open(workspace=workspace) as store:
            user = "dan"
            store.add_user(user, "viewer", by="tests")
    args = [
        a.format(
            ws=workspace,
            tmp=tmp_path,
            decision=decision,
            incident=incident,
            proposal=proposal,
            pg=pg,
            user=user,
        )
        for a in JSON_RUNS[name].split()
    ]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "assay", *name.split(), *args],
            capture_output=True,
            text=True,
            env=cli_env(),
            timeout=300,
            check=False,
        )
    finally:
        if receiver is not None:
            receiver.stop()
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)  # the whole of stdout: no table or message beside it
    assert isinstance(payload, list if name in LISTS else dict) and payload
    if name.startswith("decisions ") and name != "decisions list":
        assert payload["decision"]["id"] == decision
        assert payload["decision"]["status"] == name.split()[1] + "ed"
    if name in ("incidents ack", "incidents resolve", "incidents mute", "incidents show"):
        assert payload["incident"]["id"] == incident
        state = {"ack": "acknowledged", "resolve": "resolved", "mute": "muted"}.get(name.split()[1])
        assert state is None or payload["incident"]["state"] == state
    if name == "users add":
        assert payload["user"]["name"] == "carol" and payload["token"].startswith("assay_")
    if name == "users token":
        assert payload["user"] == "dan" and payload["token"].startswith("assay_")
    if name == "users link":
        assert payload["login"].startswith("http://127.0.0.1:8000/login?token=")
    if name == "users set":
        assert payload["user"]["role"] == "admin"


def test_progress_is_drawn_only_on_a_terminal() -> None:
    import io

    from rich.console import Console

    from assay._render import progress

    for terminal in (True, False):
        screen = io.StringIO()
        with progress(
            Console(file=screen, force_terminal=terminal, width=80), "Profiling 3 files", 3
        ) as step:
            for _ in range(3):
                step()
        assert ("Profiling 3 files" in screen.getvalue()) is terminal
    # the demo's bars went to its stderr, which was a pipe: nothing of them there, nor on stdout
    import subprocess

    from _demo_workspace import built, cli_env

    root, _ = built()
    done = subprocess.run(
        [sys.executable, "-m", "assay", "profile", str(root / "vendor" / "trades_2026-11-17.parquet"),
         "--dataset", "other", "--load-date", "2026-11-17", "--workspace", str(root.parent / "p")],
        capture_output=True, text=True, env=cli_env(), check=False,
    )  # fmt: skip
    assert done.returncode == 0 and "Profiling" not in done.stderr
