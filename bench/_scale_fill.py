"""Fill a store with many datasets' history through the platform's own write paths.

    python bench/_scale_fill.py --store URL --workspace DIR [--datasets 10000] [--days 90] [--jobs 2]

Each dataset-day is what a scheduled check run with a drift profile leaves: a load (the store's
``create_load``), its profiled schema (``save_profile``), a completed check run (``record_run``)
with three outcomes (``save_check_outcomes``) and the day's kept score (``record_score``); about
one dataset-day in 40 opens an incident (``save_incident``), resolved two days later. Every write
goes through the store methods the runs use, so each marks its dataset's catalog entry stale as a
run's would; a dataset's days are written in one transaction (the writes of a run are several
transactions: batching is the only liberty taken, for speed), and ``--jobs`` processes write
disjoint datasets at once, as several machines' runs would. One dataset in ten gets a check
document in ``checks/`` (owner team, tier, tags, description). Last, the catalog entries are
refreshed (:func:`assay.platform.entries.refresh`), as the runs' own refreshes would have left them.

:func:`fill` returns what it wrote and how long it took (the fill and the refresh apart).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import time
import uuid
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from assay.platform.entries import Subject, refresh
from assay.platform.scores import subjects
from assay.store import MetricStore, RunRecord
from assay.store.incidents import IncidentRecord

COLUMNS = [("id", "int64"), ("amount", "float64"), ("region", "string"), ("updated_at", "timestamp")]
EXPECTATIONS = ("rows", "amounts", "fresh")
DOCUMENT = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: {name}
  source: {{path: "../data/{name}.csv"}}
  owners: {{team: {team}}}
  description: Rows of {name}.
  tier: {tier}
  tags: [{tag}]
expectations:
  - {{id: rows, metric: daily.row_count, expect: "> 0"}}
profiles:
  - id: daily
    metrics: [row_count]
"""


def name_of(i: int) -> str:
    """The ``i``-th dataset's name: 100 schemas (domains) of tables."""
    return f"domain{i % 100:02d}.table{i:05d}"


def fill(
    url: str,
    workspace: Path,
    *,
    datasets: int,
    days: int,
    today: date | None = None,
    seed: int = 7,
    jobs: int = 1,
) -> dict[str, Any]:
    """Write ``datasets`` × ``days`` of history into the store at ``url`` (see the module), in
    ``jobs`` processes at once, each writing every ``jobs``-th dataset (as that many machines'
    runs would), then refresh every catalog entry."""
    end = today or datetime.now(UTC).date()
    (workspace / "checks").mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    slices = [(url, str(workspace), datasets, days, end, seed, job, jobs) for job in range(jobs)]
    if jobs == 1:
        parts = [_fill_slice(*slices[0])]
    else:
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            parts = pool.starmap(_fill_slice, slices)
    counts = {"datasets": datasets, "days": days, "jobs": jobs}
    for part in parts:
        for key, value in part.items():
            counts[key] = counts.get(key, 0) + value
    filled = time.perf_counter() - started
    started = time.perf_counter()
    with MetricStore.open(url, workspace=workspace) as store:
        now = datetime.combine(end, clock(7), UTC)
        chosen = subjects(workspace, store)
        kept = refresh(store, [s if s.document is not None else Subject(s.name) for s in chosen], now=now)
    refreshed = time.perf_counter() - started
    return {
        **counts,
        "fill_seconds": round(filled, 1),
        "refresh_seconds": round(refreshed, 1),
        "entries": kept,
    }


def _fill_slice(
    url: str, folder: str, datasets: int, days: int, end: date, seed: int, job: int, jobs: int
) -> dict[str, int]:
    """One process's share of :func:`fill`: the datasets ``job``, ``job + jobs``, …"""
    chance = random.Random(seed * 1_000 + job)
    workspace = Path(folder)
    counts = {"runs": 0, "outcomes": 0, "incidents": 0, "documents": 0}
    with MetricStore.open(url, workspace=workspace) as store:
        for i in range(job, datasets, jobs):
            name = name_of(i)
            if i % 10 == 0:
                text = DOCUMENT.format(name=name, team=f"team{i % 37}", tier=i % 4, tag=f"area{i % 13}")
                (workspace / "checks" / f"{name}.yaml").write_text(text)
                counts["documents"] += 1
            opened: list[tuple[IncidentRecord, datetime]] = []
            with store.transaction():
                for back in range(days, 0, -1):
                    day = end - timedelta(days=back)
                    at = datetime.combine(day, clock(6), UTC)
                    run_id = str(uuid.uuid4())
                    load = store.create_load(
                        name, logical_time=at, logical_date=day, run_id=run_id, row_count=100
                    )
                    store.save_profile(load, COLUMNS, {})
                    store.record_run(
                        RunRecord(
                            run_id,
                            "check",
                            name,
                            load,
                            "completed",
                            at,
                            finished_at=at + timedelta(seconds=2),
                        )
                    )
                    failed = chance.random() < 0.05
                    store.save_check_outcomes(
                        run_id,
                        name,
                        at,
                        [
                            {
                                "expectation": e,
                                "outcome": "failed" if failed and e == "rows" else "passed",
                                "severity": "error",
                                "mode": "enforce",
                            }
                            for e in EXPECTATIONS
                        ],
                    )
                    counts["runs"] += 1
                    counts["outcomes"] += len(EXPECTATIONS)
                    store.record_score("dataset", name, day, 100.0 - 20.0 * failed)
                    if not opened and chance.random() < 0.025:  # one open incident per check at most
                        found = IncidentRecord(
                            str(uuid.uuid4()), name, "volume", "rows", None, "open", "error", None, at, at
                        )
                        store.save_incident(found, new=True)
                        opened.append((found, at + timedelta(days=2)))
                        counts["incidents"] += 1
                    for incident, due in list(opened):
                        if due <= at:
                            incident.state, incident.resolved_at = "resolved", due
                            store.save_incident(incident, new=False)
                            opened.remove((incident, due))
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="the store's URL (PostgreSQL for the bench)")
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--datasets", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--jobs", type=int, default=2, help="processes writing at once (default 2)")
    args = parser.parse_args()
    found = fill(args.store, args.workspace, datasets=args.datasets, days=args.days, jobs=args.jobs)
    print(json.dumps(found, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
