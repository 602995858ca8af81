"""What a gate run writes to the store when it commits, as data that any process can apply.

A gate run's commit point is its Iceberg snapshot, which carries the run id. Everything the
store must learn from the run (which measured months become history, the values its committed
rows teach the domain columns, the rows it holds and the decisions they wait on, the rows held
by earlier runs for the months it replaced) is written into the run's manifest *before* the
snapshot is committed, and :func:`settle` applies it in one store transaction afterwards. If the
process is killed between the snapshot and that transaction, the next run on the table (or
``assay recover``) finds the snapshot with the run's id and calls :func:`settle` with the same
manifest: every step is safe to repeat.

A run that commits no snapshot (the whole file was refused, or every row is held) has the store
transaction itself as its commit point; before it, the transaction checks that no other run
committed the same file meanwhile, so a refused file sent twice at once is quarantined once.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import TYPE_CHECKING, Any

from assay.engine.types import canonical
from assay.gate import holds
from assay.workspace import Workspace

if TYPE_CHECKING:
    from assay.platform.runs.run import Manifest
    from assay.store import MetricStore


def settle(store: MetricStore, workspace: Workspace, manifest: Manifest) -> dict[str, Any]:
    """Apply a gate run's store writes (called inside the run's store transaction, holding the
    table's dataset); returns the changes to the run's summary (its decisions, or that it is a
    duplicate)."""
    plan = manifest.settle
    table, contributor = plan["table"], plan["contributor"]
    snapshot = plan.get("snapshot_id")
    loads: list[dict[str, Any]] = plan.get("loads", [])
    if plan.get("duplicate_of"):  # found at commit time: another run committed the same file
        store.settle_loads({item["id"]: "rejected" for item in loads})
        manifest.moves = []
        return {
            "duplicate_of": plan["duplicate_of"],
            "decisions": [],
            "quarantine_file": None,
            "held_file": None,
        }
    if snapshot is None:
        earlier = same_file(store, table, contributor, plan["sha256"], manifest.run_id)
        if earlier is not None:  # a twin run refused this very file first: this one is a duplicate
            store.settle_loads({item["id"]: "rejected" for item in loads})
            manifest.moves = []
            return {"duplicate_of": earlier, "decisions": [], "quarantine_file": None, "held_file": None}
    won: set[date] = set()
    if snapshot is not None:
        with workspace.warehouse() as warehouse:
            writers = warehouse.writers(table, **{"assay.contributor": contributor})
        won = {date.fromisoformat(day) for day, run in writers.items() if run == manifest.run_id}
    statuses: dict[int, str] = {}
    current: dict[date, int] = {}
    for item in loads:
        day = date.fromisoformat(item["date"])
        if item.get("baseline"):
            # the committed month before the batch, measured because the store lacked it
            taken = store.load_for_date(table, day, partition=contributor)
            statuses[item["id"]] = "current" if not taken else "superseded"
        elif day in won:
            statuses[item["id"]] = "current"
            current[day] = item["id"]
        elif snapshot is not None and day.isoformat() in plan.get("committed_dates", []):
            statuses[item["id"]] = "superseded"  # a later run replaced the month again meanwhile
        else:
            statuses[item["id"]] = "rejected"
    if statuses:
        store.settle_loads(statuses)
    for day in sorted(won):
        if day not in current:  # no dataset-level rule measured it: a load for its values
            current[day] = store.create_load(
                table,
                partition=contributor,
                logical_time=datetime.combine(day, time(0), UTC),
                logical_date=day,
                row_count=plan.get("rows_by_date", {}).get(day.isoformat()),
                run_id=manifest.run_id,
            )
        store.supersede(table, day, partition=contributor, keep=current[day])
    for item in plan.get("values", []):
        day = date.fromisoformat(item["date"])
        if day in current:
            # the plan holds Iceberg's own spelling ("decimal(18, 3)"); the store keeps canonical names
            columns = [(name, canonical("duckdb", kind)) for name, kind in plan["schema"]]
            store.save_profile(current[day], columns, item["counts"])
    holds.withdraw(workspace, store, table, contributor, won, keep=manifest.run_id)
    source = f"gate:{manifest.run_id}"
    opened = set()
    for column, value, rows, *seen in plan.get("decisions", []):
        # first seen: the load of the earliest month the value came with, if that month landed
        seen_on = date.fromisoformat(str(seen[0])[:10]) if seen and seen[0] else None
        load = current.get(seen_on) if seen_on is not None else None
        opened.add(store.open_decision(table, column, value, rows, load, source=source))
    decisions = sorted(opened)
    return {"decisions": decisions}


def same_file(store: MetricStore, table: str, contributor: str, sha256: str, run_id: str) -> str | None:
    """Another completed gate run of the same file for the same contributor, if any."""
    for run in store.runs(table, limit=500, state="completed", kind="gate"):
        summary = run.summary or {}
        if (
            run.id != run_id
            and summary.get("contributor") == contributor
            and (summary.get("source") or {}).get("sha256") == sha256
            and not summary.get("duplicate_of")
        ):
            return run.id
    return None
