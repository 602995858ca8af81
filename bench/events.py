"""Event contracts: every contract on an event in ONE query, against a hand-written query and
against one query per contract.

    python bench/events.py [--per-hour 20000] [--consumers 4] [--runs 3] [--json OUT]

The feed is a day of ``trade_executed.v3`` as JSON lines (``assay.demo.events``, about
``per-hour`` records an hour); ``--consumers`` contracts declare requirements on its four fields,
each consumer at its own tolerance. Three contenders measure the 12:00 window, each in the same
process, interleaved, medians printed:

- **assay**: one :class:`~assay.platform.runs.event.EventRun` of all the contracts (measure,
  store the window's metrics, judge from stored numbers), as ``assay check run`` does;
- **hand**: one hand-written DuckDB statement over the same file computing the same shares per
  (field, requirement), the row count, the duplicate keys and the latency quantiles, nothing
  stored: the least any tool must do;
- **apart**: the same contracts run one by one, each alone in its own EventRun (one query each):
  what compiling them together saves.

Prints ``ratio assay/hand`` (target 1.3) and ``ratio apart/assay`` (the saving; about the number
of consumers when the scan dominates). Exits 0 whatever the figures; 1 when assay and the hand
query disagree on a share.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from _common import table

TARGET = 1.3
DAY = date(2026, 11, 12)
WINDOW = datetime(2026, 11, 12, 12, tzinfo=UTC)


def contracts(consumers: int) -> str:
    """``consumers`` contracts on the feed, the n-th tolerating n % of bad values."""
    docs = []
    for n in range(consumers):
        rate = 1.0 - n / 100
        docs.append(
            f"""apiVersion: assay/v1
kind: EventContract
event:
  name: trade_executed.v3
  source: {{path: "../events/*.jsonl"}}
  key: event_id
  event_time: event_ts
  ingest_time: ingested_at
  payload: payload
consumer: {{team: team-{n}, tier: {min(n, 3)}}}
window: {{grain: hour}}
fields:
  trade_id:
    present: {{min_rate: {rate}}}
    type: {{is: string, min_rate: {rate}}}
    non_empty: {{min_rate: {rate}}}
  amount:
    present: {{min_rate: {rate}}}
    type: {{is: decimal, min_rate: {rate}}}
    range: {{between: [0, 1.0e9], min_rate: {rate}}}
  currency:
    present: {{min_rate: {rate}}}
    in: {{values: [USD, EUR, GBP, JPY], min_rate: {rate}}}
  venue:
    non_empty: {{min_rate: {rate}}}
severity: error
"""
        )
    return "---\n".join(docs)


HAND = """
WITH rows AS (
    SELECT json AS j FROM read_json_objects($path, format = 'newline_delimited')
), w AS (
    SELECT j, j->'payload' AS p, TRY_CAST(j->>'event_ts' AS TIMESTAMPTZ) AS t,
           TRY_CAST(j->>'ingested_at' AS TIMESTAMPTZ) AS i
    FROM rows
), x AS (SELECT * FROM w WHERE t >= $start AND t < $end)
SELECT
    count(*) AS row_count,
    count(*) - count(DISTINCT j->>'event_id') AS duplicates,
    quantile_cont(epoch(i) - epoch(t), 0.95) AS latency_p95,
    avg(CASE WHEN p->>'trade_id' IS NOT NULL THEN 1 ELSE 0 END) AS trade_id_present,
    avg(CASE WHEN p->>'trade_id' IS NULL THEN NULL
             WHEN json_type(p->'trade_id') = 'VARCHAR' THEN 1 ELSE 0 END) AS trade_id_type,
    avg(CASE WHEN trim(p->>'trade_id') <> '' THEN 1 ELSE 0 END) AS trade_id_non_empty,
    avg(CASE WHEN p->>'amount' IS NOT NULL THEN 1 ELSE 0 END) AS amount_present,
    avg(CASE WHEN p->>'amount' IS NULL THEN NULL
             WHEN TRY_CAST(p->>'amount' AS DOUBLE) IS NOT NULL THEN 1 ELSE 0 END) AS amount_type,
    avg(CASE WHEN p->>'amount' IS NULL THEN NULL
             WHEN TRY_CAST(p->>'amount' AS DOUBLE) BETWEEN 0 AND 1e9 THEN 1 ELSE 0 END) AS amount_range,
    avg(CASE WHEN p->>'currency' IS NOT NULL THEN 1 ELSE 0 END) AS currency_present,
    avg(CASE WHEN p->>'currency' IS NULL THEN NULL
             WHEN p->>'currency' IN ('USD', 'EUR', 'GBP', 'JPY') THEN 1 ELSE 0 END) AS currency_in,
    avg(CASE WHEN trim(p->>'venue') <> '' THEN 1 ELSE 0 END) AS venue_non_empty
FROM x
"""


def hand(path: Path) -> dict[str, float]:
    con = duckdb.connect()
    try:
        names, row = None, None
        cursor = con.execute(
            HAND,
            {"path": str(path), "start": WINDOW, "end": WINDOW + timedelta(hours=1)},
        )
        row = cursor.fetchone()
        names = [d[0] for d in cursor.description]
    finally:
        con.close()
    assert row is not None and names is not None
    return {n: float(v) for n, v in zip(names, row, strict=True)}


def assay(root: Path, files: list[Path]) -> tuple[list[Any], float]:
    from assay.platform.events.event import events, load_contracts
    from assay.platform.runs.event import run_events
    from assay.store import MetricStore
    from assay.workspace import Workspace

    found = events(load_contracts(files))
    # the feed and the contracts lie beside the workspace: its admin allows their folder
    root.mkdir(parents=True, exist_ok=True)
    (root / "assay.yaml").write_text(f"sources:\n  paths: [{root.parent}]\n")
    with MetricStore.open(workspace=root) as store:
        started = time.perf_counter()
        results = run_events(
            found,
            at=WINDOW,
            now=WINDOW + timedelta(hours=1, minutes=5),
            store=store,
            workspace=Workspace(root),
        )
        return results, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-hour", type=int, default=20_000)
    parser.add_argument("--consumers", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", metavar="OUT", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from assay.demo.events import feed

    base = Path(tempfile.mkdtemp(prefix="assay-bench-events-"))
    (data,) = feed(base / "events", start=DAY, days=1, per_hour=args.per_hour)
    checks = base / "checks"
    checks.mkdir()
    together = checks / "events.yaml"
    together.write_text(contracts(args.consumers))
    apart = []
    for n, text in enumerate(contracts(args.consumers).split("---\n")):
        folder = base / f"apart-{n}" / "checks"
        folder.mkdir(parents=True)
        (folder / "events.yaml").write_text(text)
        apart.append(folder / "events.yaml")
    (base / "events").rename(base / "feed")
    for root in [base, *(p.parents[1] for p in apart)]:
        (root / "events").symlink_to(base / "feed")
    data = base / "feed" / data.name

    times: dict[str, list[float]] = {"assay": [], "hand": [], "apart": []}
    queries = 0
    agree = True
    reference: dict[str, float] = {}
    for run in range(args.runs):
        started = time.perf_counter()
        reference = hand(data)
        times["hand"].append(time.perf_counter() - started)
        results, seconds = assay(base / f"ws-{run}", [together])
        times["assay"].append(seconds)
        queries = sum(r.queries["measure"] for r in results)
        total = 0.0
        for n, path in enumerate(apart):
            _, seconds = assay(base / f"apart-ws-{run}-{n}", [path])
            total += seconds
        times["apart"].append(total)
        # the shares agree with the hand query's
        [result] = results
        observed = {o["expectation"]: o["observed"] for o in result.to_dict()["outcomes"]}
        for name, value in reference.items():
            if name in ("row_count", "duplicates", "latency_p95"):
                continue
            field, requirement = (
                name.rsplit("_", 1)
                if not name.endswith("non_empty")
                else (name.removesuffix("_non_empty"), "non_empty")
            )
            key = f"team-0/{field}.{requirement}"
            if key in observed and observed[key] is not None and abs(observed[key] - value) > 1e-9:
                print(f"disagree: {key} assay {observed[key]} hand {value}")
                agree = False
    medians = {k: statistics.median(v) for k, v in times.items()}
    rows = int(reference.get("row_count", 0))
    print(
        table(
            ["contender", "median s", "runs"],
            [[k, f"{medians[k]:.3f}", str(len(v))] for k, v in times.items()],
        )
    )
    records = sum(1 for _ in data.open())
    print(f"window rows = {rows:,}; file records = {records:,}; contracts = {args.consumers}")
    print(f"queries to measure all contracts = {queries}")
    print(f"ratio assay/hand = {medians['assay'] / medians['hand']:.2f} (target <= {TARGET})")
    saving = medians["apart"] / medians["assay"]
    print(f"ratio apart/assay = {saving:.2f} (one query instead of {args.consumers})")
    if args.json:
        args.json.write_text(
            json.dumps({"medians": medians, "queries": queries, "agree": agree, "rows": rows}, indent=2)
        )
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
