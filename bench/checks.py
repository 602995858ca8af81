"""A check document on ten million rows: ``assay check run`` against one hand-written DuckDB query.

    python bench/checks.py [--rows 10000000] [--runs 3] [--json OUT]

One document (``DOCUMENT`` below) declares 40 expectations over one profile with 3 dimensions
(region: 5 values, venue: 20, product: 50) on a generated Parquet file: row counts, null rates,
means, sums, minimums, maximums and three ``count_where`` conditions, judged on the total and per
group. The hand-written contender is ONE DuckDB statement computing the same grouped metrics
(``GROUPING SETS``, the same top-k cap) — the least any tool must do. Each contender runs in a
fresh process, interleaved; each times its own work (assay: ``run_document``, its store
included; hand: connect, query, fetch). Printed: medians, peak RSS, ``ratio assay/hand`` (target
1.3).

Then the cost of judging: a store holding 365 earlier days of the document's metrics (written
through the store, as 365 runs would have left them), and one more run on a small file whose
judgement reads that history for 40 expectations: the run's own ``seconds.judge`` is printed
(target: under 1 second) with its ``queries.judge`` (must be 0). Exits 0 whatever the figures
(STYLE.md habit 10), 1 when assay's grouped values differ from the hand-written query's.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from _common import OUT, ChildRun, peak_rss_mb, report, run_child, spreads, table, warm

BENCH = Path(__file__).resolve().parent
TARGET = 1.3
DAY = date(2026, 11, 30)
DIMENSIONS = ("region", "venue", "product")

DATA_SQL = """
SELECT
    i AS id,
    DATE '2026-11-30' AS trade_date,
    'r' || (hash(i) % 5) AS region,
    'v' || (hash(i + 1) % 20) AS venue,
    'p' || (hash(i + 2) % 50) AS product,
    CASE WHEN hash(i + 3) % 100 = 0 THEN NULL ELSE (hash(i + 4) % 10000) / 100.0 END AS fee,
    CASE WHEN hash(i + 5) % 50 = 0 THEN NULL ELSE (hash(i + 6) % 1000000) / 100.0 END AS amount,
    CASE WHEN hash(i + 7) % 200 = 0 THEN NULL ELSE hash(i + 8) % 1000 END AS quantity,
    CASE WHEN hash(i + 9) % 20 = 0 THEN NULL ELSE 'c' || (hash(i + 10) % 5000) END AS customer,
    (hash(i + 11) % 100000) / 10.0 AS price,
    (hash(i + 12) % 100000) / 10.0 AS cost,
    hash(i + 13) % 2 = 0 AS is_test
FROM range($rows) t(i)
"""

METRICS = [
    "row_count",
    {"null_rate": ["fee", "amount", "quantity", "customer"]},
    {"mean": ["fee", "amount", "price", "cost"]},
    {"sum": ["amount", "quantity"]},
    {"min": ["fee", "price"]},
    {"max": ["fee", "price"]},
    {"count_where": {"name": "negative_margin", "condition": "price < cost"}},
    {"count_where": {"name": "big_fee", "condition": "fee > 99"}},
    {"count_where": {"name": "zero_quantity", "condition": "quantity = 0"}},
]


def document(source: str) -> dict[str, Any]:
    keys = ["row_count"]
    for entry in METRICS[1:]:
        kind, value = next(iter(entry.items()))  # type: ignore[union-attr]
        keys += [value["name"]] if kind == "count_where" else [f"{kind}({c})" for c in value]
    expectations = []
    for i in range(40):
        key = keys[i % len(keys)]
        by = [] if i < len(keys) else [DIMENSIONS[i % 3]]
        expectations.append(
            {
                "id": f"e{i}",
                "metric": f"daily.{key}",
                "expect": "between avg(last(7)) * 0.5 and avg(last(7)) * 1.5" if i % 2 else ">= 0",
                **({"by": by} if by else {}),
            }
        )
    return {
        "apiVersion": "assay/v1",
        "kind": "DatasetChecks",
        "dataset": {"name": "bench.trades", "source": {"path": source}, "owners": {"team": "bench"}},
        "profiles": [
            {
                "id": "daily",
                "slice": {"column": "trade_date"},
                "filter": "is_test = false",
                "dimensions": list(DIMENSIONS),
                "top_k": 50,
                "metrics": METRICS,
            }
        ],
        "expectations": expectations,
    }


HAND_SQL = """
SELECT * FROM (
  SELECT *, row_number() OVER (PARTITION BY g0, g1, g2 ORDER BY n DESC, region, venue, product) AS rk
  FROM (
    SELECT region, venue, product, GROUPING(region) AS g0, GROUPING(venue) AS g1, GROUPING(product) AS g2,
      count(*) AS n,
      (count(*) - count(fee))::DOUBLE / nullif(count(*), 0) AS nr_fee,
      (count(*) - count(amount))::DOUBLE / nullif(count(*), 0) AS nr_amount,
      (count(*) - count(quantity))::DOUBLE / nullif(count(*), 0) AS nr_quantity,
      (count(*) - count(customer))::DOUBLE / nullif(count(*), 0) AS nr_customer,
      avg(fee::DOUBLE) AS mean_fee, avg(amount::DOUBLE) AS mean_amount,
      avg(price::DOUBLE) AS mean_price, avg(cost::DOUBLE) AS mean_cost,
      sum(amount::DOUBLE) AS sum_amount, sum(quantity::DOUBLE) AS sum_quantity,
      min(fee::DOUBLE) AS min_fee, min(price::DOUBLE) AS min_price,
      max(fee::DOUBLE) AS max_fee, max(price::DOUBLE) AS max_price,
      sum(CASE WHEN price < cost THEN 1 ELSE 0 END) AS negative_margin,
      sum(CASE WHEN fee > 99 THEN 1 ELSE 0 END) AS big_fee,
      sum(CASE WHEN quantity = 0 THEN 1 ELSE 0 END) AS zero_quantity
    FROM read_parquet($path)
    WHERE CAST(trade_date AS DATE) = DATE '2026-11-30' AND is_test = false
    GROUP BY GROUPING SETS ((), (region), (venue), (product))
  )
) WHERE rk <= 50
"""


def child_hand(path: Path) -> None:
    started, cpu = time.perf_counter(), time.process_time()
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    rows = con.execute(HAND_SQL, {"path": str(path)}).fetchall()
    con.close()
    total = next(r for r in rows if r[3] == 1 and r[4] == 1 and r[5] == 1)
    report(
        {
            "seconds": time.perf_counter() - started,
            "cpu_seconds": time.process_time() - cpu,
            "peak_rss_mb": peak_rss_mb(),
            "rows": total[6],
            "amount": total[17],
            "groups": len(rows),
        }
    )


def child_assay(doc: Path) -> None:
    from assay.platform.checks.document import load_document
    from assay.platform.runs.check import run_document
    from assay.store import MetricStore
    from assay.workspace import Workspace

    document = load_document(doc)
    with tempfile.TemporaryDirectory() as folder, MetricStore.open("sqlite://") as store:
        # the data lies outside this throwaway workspace: its admin allows the data's folder
        data = Path(str(document.dataset.source.path))
        (Path(folder) / "assay.yaml").write_text(f"sources:\n  paths: [{data.parent}]\n")
        started, cpu = time.perf_counter(), time.process_time()
        result = run_document(
            document,
            doc,
            at=DAY,
            now=datetime(2026, 12, 1, tzinfo=UTC),
            store=store,
            workspace=Workspace(Path(folder)),
        )
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    counts = {o["outcome"] for o in result.outcomes}
    rows = result.profiles["daily"]["rows"]
    report(
        {
            "seconds": seconds,
            "cpu_seconds": cpu_seconds,
            "peak_rss_mb": peak_rss_mb(),
            "rows": rows,
            "outcomes": sorted(counts),
            "queries": result.queries,
            "groups": len(result.outcomes),
        }
    )


def judging(folder: Path) -> dict[str, Any]:
    """One run judged against 365 stored days of the document's metrics."""
    from assay.platform.checks.document import load_document
    from assay.platform.runs.check import run_document
    from assay.store import MetricKey, MetricStore
    from assay.store.checks import group_key
    from assay.workspace import Workspace

    small = folder / "small.parquet"
    con = duckdb.connect()
    con.sql(DATA_SQL, params={"rows": 20_000}).write_parquet(str(small))
    doc = folder / "small.yaml"
    doc.write_text(json.dumps(document(str(small))))
    document_ = load_document(doc)
    with MetricStore.open(workspace=folder) as store:
        dry = run_document(
            document_,
            doc,
            at=DAY,
            now=datetime(2026, 12, 1, tzinfo=UTC),
            store=store,
            workspace=Workspace(folder),
            dry_run=True,
        )
        keys = {k for spec in document_.profiles[0].specs() for k in [spec.key]}
        groups = [
            (),
            *[((d, f"{d[0]}{i}"),) for d in DIMENSIONS for i in range(50 if d == "product" else 20)],
        ]
        for back in range(365, 0, -1):
            day = DAY - timedelta(days=back)
            load = store.create_load(
                "bench.trades",
                partition="daily",
                logical_time=datetime(day.year, day.month, day.day, tzinfo=UTC),
            )
            values = {}
            for key in keys:
                for group in groups:
                    metric = (
                        MetricKey("Group", group_key(dict(group)), key)
                        if group
                        else MetricKey("Dataset", "*", key)
                    )
                    values[metric] = 1000.0 + back
            store.save_metrics(load, values)
        del dry
        result = run_document(
            document_,
            doc,
            at=DAY,
            now=datetime(2026, 12, 1, tzinfo=UTC),
            store=store,
            workspace=Workspace(folder),
        )
    return {
        "judge_seconds": result.seconds["judge"],
        "queries": result.queries,
        "outcomes": len(result.outcomes),
        "expectations": len(document_.expectations),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", choices=("hand", "assay"))
    parser.add_argument("--path", type=Path)
    args = parser.parse_args()
    if args.child == "hand":
        child_hand(args.path)
        return 0
    if args.child == "assay":
        child_assay(args.path)
        return 0
    data = OUT / f"checks-v1-{args.rows}.parquet"
    if not data.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        duckdb.connect().sql(DATA_SQL, params={"rows": args.rows}).write_parquet(str(data))
    doc = OUT / f"checks-v1-{args.rows}.yaml"
    doc.write_text(json.dumps(document(str(data)), indent=1))
    warm(data)
    runs: dict[str, list[ChildRun]] = {"hand": [], "assay": []}
    for round_ in range(args.runs):
        for name in runs:
            target = data if name == "hand" else doc
            run = run_child([str(Path(__file__)), "--child", name, "--path", str(target)])
            runs[name].append(run)
            print(f"  round {round_ + 1}: {name}: {run.measurements['seconds']:.2f} s", flush=True)
    measured = {
        name: spreads(series, ("seconds", "cpu_seconds", "peak_rss_mb")) for name, series in runs.items()
    }
    rows = [
        [
            name,
            f"{m['seconds']['median']:.2f}",
            f"{m['cpu_seconds']['median']:.2f}",
            f"{m['peak_rss_mb']['median']:.0f}",
        ]
        for name, m in measured.items()
    ]
    print()
    print(table(["contender", "median s", "cpu s", "peak RSS MB"], rows))
    ratio = measured["assay"]["seconds"]["median"] / measured["hand"]["seconds"]["median"]
    print(f"ratio assay/hand = {ratio:.2f} (target <= {TARGET})")
    hand, mine = runs["hand"][-1].measurements, runs["assay"][-1].measurements
    agree = hand["rows"] == mine["rows"]
    print(
        f"rows measured: hand {hand['rows']:,}, assay {mine['rows']:,}; assay queries {mine['queries']}; "
        f"outcomes {mine['outcomes']}"
    )
    with tempfile.TemporaryDirectory() as folder:
        judged = judging(Path(folder))
    print(
        f"judging {judged['expectations']} expectations ({judged['outcomes']} outcomes) "
        f"against 365 stored days: {judged['judge_seconds']:.3f} s (target < 1 s), "
        f"data queries while judging: {judged['queries']['judge']}"
    )
    if args.json:
        args.json.write_text(json.dumps({"measured": measured, "ratio": ratio, "judging": judged}, indent=1))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
