"""``assay gate audit``: a gate run accounts for every row of its batch from what it left (the
batch file read again, the rows its snapshot holds, its quarantine and held files), not from its
own counters; a planted loss or copy is found and named (issue 33)."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _invoke import completed
from lifecycle.world import TABLE, World, february


def audit(world: World, *args: str) -> tuple[int, dict[str, Any]]:
    done = completed(
        "gate", "audit", *args, "--workspace", str(world.workspace), "--store", world.store_url, "--json"
    )
    assert "Traceback" not in done.stderr
    return done.returncode, json.loads(done.stdout) if done.stdout else {}


def gated(world: World, text: str, name: str = "feb.csv") -> str:
    done = world.gate_here(world.file(name, text))
    assert done.returncode == 0, done.stderr
    run_id: str = json.loads(done.stdout)["run_id"]
    return run_id


@pytest.fixture
def world(tmp_path: Path) -> World:
    """January committed, on the workspace's SQLite store."""
    return World.make(tmp_path, f"sqlite:///{tmp_path / 'ws' / 'assay.db'}")


def test_a_run_balances_every_row_once(world: World) -> None:
    run_id = gated(world, february())
    code, found = audit(world, run_id)
    assert code == 0, found
    assert (found["input_rows"], found["committed"], found["quarantined"], found["held"]) == (20, 15, 3, 2)
    assert found["balanced"] is True and found["run_id"] == run_id and found["state"] == "balanced"
    assert (found["missing"], found["duplicated"], found["unknown"]) == ([], [], [])


def test_a_deleted_quarantine_file_is_found_missing(world: World, tmp_path: Path) -> None:
    run_id = gated(world, february())
    copy = tmp_path / "copy"
    shutil.copytree(world.workspace, copy)
    (quarantine,) = (copy / "dq_error").rglob(f"{run_id}.csv")
    quarantine.unlink()
    # the copy is read through its own --workspace; the store is the same file
    done = completed("gate", "audit", run_id, "--workspace", str(copy), "--store", world.store_url, "--json")
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    assert found["balanced"] is False and found["quarantined"] == 0 and found["state"] == "unbalanced"
    # the three quarantined records, named by their lines in the file (A03, A04, A05: lines 4-6)
    assert found["missing"] == [4, 5, 6]


def test_a_row_copied_into_a_second_output_is_found_duplicated(world: World, tmp_path: Path) -> None:
    run_id = gated(world, february())
    copy = tmp_path / "copy"
    shutil.copytree(world.workspace, copy)
    (held_file,) = (copy / "held").rglob(f"{run_id}.parquet")
    held = pq.read_table(held_file)
    pq.write_table(held.slice(0, 1), held_file.with_name("extra.parquet"))  # not the run's: ignored
    pq.write_table(pa.concat_tables([held, held.slice(0, 1)]), held_file)  # A06 held twice
    (quarantine,) = (copy / "dq_error").rglob(f"{run_id}.csv")
    lines = quarantine.read_text().splitlines()
    quarantine.write_text("\n".join([*lines, lines[1]]) + "\n")  # A03 quarantined twice
    done = completed("gate", "audit", run_id, "--workspace", str(copy), "--store", world.store_url, "--json")
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    assert found["balanced"] is False and found["missing"] == []
    assert (found["quarantined"], found["held"]) == (4, 3)
    assert sorted((d["output"], d["line"]) for d in found["duplicated"]) == [("held", 7), ("quarantined", 4)]


def test_a_later_run_replacing_the_month_leaves_the_earlier_audit_right(world: World) -> None:
    (world.workspace / "checks" / f"{TABLE}.yaml").write_text("domain_columns: []\n")  # nothing held
    first = gated(world, february())
    second = gated(world, february("clean"), "feb-fixed.csv")
    code, found = audit(world, first)
    assert code == 0, found
    assert (found["input_rows"], found["committed"], found["quarantined"], found["held"]) == (20, 17, 3, 0)
    code, table = audit(world, "--table", TABLE)
    assert code == 0, table
    runs = {run["run_id"]: run for run in table["runs"]}
    assert len(runs) == 3 and all(run["balanced"] for run in runs.values())  # January's too
    assert runs[second]["committed"] == 20 and table["balanced"] is True


def test_rows_held_then_withdrawn_by_a_resend_of_their_month_are_accounted_for(world: World) -> None:
    first = gated(world, february())
    second = gated(world, february("clean"), "feb-fixed.csv")  # withdraws the first run's held rows
    assert not list((world.workspace / "held").rglob(f"{first}.parquet"))
    code, found = audit(world, first)
    assert code == 0, found
    assert (found["committed"], found["quarantined"], found["held"]) == (15, 3, 0)
    assert found["withdrawn"] == [7, 8] and found["missing"] == [] and "withdrawn" in found["note"]
    assert audit(world, second)[1]["held"] == 0  # the resend held nothing: FROZEN waits no more


@pytest.mark.parametrize("decided", ["accept", "reject"])
def test_rows_held_then_released_by_a_decision_are_accounted_for(world: World, decided: str) -> None:
    run_id = gated(world, february())
    done = completed(
        "decisions",
        decided,
        "--dataset",
        TABLE,
        "--all",
        "--workspace",
        str(world.workspace),
        "--store",
        world.store_url,
    )
    assert done.returncode == 0, done.stderr
    assert not list((world.workspace / "held").rglob(f"{run_id}.parquet"))
    code, found = audit(world, run_id)
    assert code == 0, found
    assert (found["committed"], found["quarantined"], found["held"]) == (15, 3, 0)
    assert found["released"] == [7, 8] and found["missing"] == [] and "decision" in found["note"]


@pytest.mark.parametrize(("point", "missing"), [("after-stage", None), ("after-settle", [4, 5, 6, 7, 8])])
def test_a_run_killed_and_not_run_again_is_unfinished(
    world: World, point: str, missing: list[int] | None
) -> None:
    """Killed before its commit, the run is still ``running``; killed after it, its quarantined
    and held rows are still staged (missing): neither is balanced until it is recovered."""
    killed = world.gate(world.file("feb.csv", february()), crash_at=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    code, table = audit(world, "--table", TABLE)
    assert code == 1 and table["balanced"] is False
    last = table["runs"][-1]
    assert (last["state"], last["balanced"]) == ("unfinished", False)
    assert (last["missing"] or None) == missing and "recover" in last["note"]
    assert (
        completed("recover", "--workspace", str(world.workspace), "--store", world.store_url).returncode == 0
    )
    assert audit(world, "--table", TABLE)[0] == 0


def test_the_text_report_and_the_mistakes(world: World) -> None:
    run_id = gated(world, february())
    done = completed("gate", "audit", run_id, "--workspace", str(world.workspace), "--store", world.store_url)
    assert done.returncode == 0, done.stderr
    assert "20 rows = 15 committed + 3 quarantined + 2 held: balanced" in done.stdout
    unknown = "0b7c5a52-4d0e-4a59-9d43-2f1f1d1f7d6e"
    for args, words in (
        ((unknown,), "no run"),
        (("not-a-run",), "not-a-run"),
        (("--table", "silver.nothing"), "silver.nothing"),
        ((), "RUN_ID or --table"),
        ((run_id, "--table", TABLE), "not both"),
    ):
        wrong = completed(
            "gate", "audit", *args, "--workspace", str(world.workspace), "--store", world.store_url
        )
        assert wrong.returncode == 2, (args, wrong.stdout, wrong.stderr)
        assert (
            wrong.stderr.startswith("error: ") and words in wrong.stderr and "Traceback" not in wrong.stderr
        )


def test_the_word_audit_after_gate_is_the_audit_and_no_batch_is_named_so(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.file("audit", february("clean"))
    monkeypatch.chdir(world.root)
    arguments = world.arguments(world.root / "audit")
    arguments[1] = "./audit"  # the path reaches the gate, whose reader refuses the name
    done = completed(*arguments)
    assert done.returncode == 2 and "audit: a batch is a .csv" in done.stderr
    mistaken = completed("gate", "audit", "--rules", str(world.rules), "--workspace", str(world.workspace))
    assert mistaken.returncode == 2 and "--rules" in mistaken.stderr  # the audit has no such option
    helped = completed("gate", "audit", "--help")
    assert helped.returncode == 0 and "gate audit" in helped.stdout and "--table" in helped.stdout
