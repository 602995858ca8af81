"""A check document on ten million rows: ``assay check run`` against one hand-written DuckDB query.

    python bench/checks.py [--rows 10000000] [--runs 3] [--days 365] [--json OUT] [--out FOLDER]

One document (``DOCUMENT`` below) declares 40 expectations over one profile with 3 dimensions
(region: 5 values, venue: 20, product: 50) on a generated Parquet file: row counts, null rates,
means, sums, minimums, maximums and three ``count_where`` conditions, judged on the total and per
group. A recorded run also measures the fixed per-column profile of its slice in the same
statement (issue 30: drift, proposals and scores read it), so the contender it is held to is
``hand+profile``: ONE DuckDB statement computing the same grouped metrics (``GROUPING SETS``, the
same top-k cap) AND the same per-column profile (value counts, distinct counts, nulls, blanks,
ranges, shapes, pair orders) — the least any tool must do to record what assay records. The
target, ``ratio assay/hand+profile <= 1.2``, is on that one. ``hand`` (the grouped metrics alone,
the contender before the profile joined the run) is kept and its ratio printed too, so that what
the profile costs stays in sight. Each contender runs in a fresh process, interleaved; each times
its own work (assay: ``run_document``, its store included; hand: connect, query, fetch). Printed:
medians, peak RSS, both ratios. Exits 1 when assay's rows, its sum of ``amount`` or two values of
its stored profile differ from the hand-written query's.

Then the cost of judging: a store holding 365 earlier days of the document's metrics (written
through the store, as 365 runs would have left them), and one more run on a small file whose
judgement reads that history for 40 expectations: the run's own ``seconds.judge`` is printed
(target: under 1 second) with its ``queries.judge`` (must be 0). Exits 0 whatever the figures
(STYLE.md habit 10), 1 when the values compared above differ.
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
TARGET = 1.2
CONTENDERS = ("hand+profile", "hand", "assay")
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


# The day's rows, as assay's slice and filter give them.
SLICE_SQL = """
SELECT * FROM read_parquet($path)
WHERE CAST(trade_date AS DATE) = DATE '2026-11-30' AND is_test = false
"""

# The document's metrics over the slice ``s``, for the total and each dimension, top 50 a dimension.
CHECKS_SQL = """
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
    FROM s
    GROUP BY GROUPING SETS ((), (region), (venue), (product))
  )
) WHERE rk <= 50
"""

HAND_SQL = "WITH s AS (" + SLICE_SQL + ")\n" + CHECKS_SQL

# The per-column profile assay records of the same slice (measure/profile.py), written by hand for
# these 12 columns as a recorded run measures a dataset's first load of 500,000 rows: the values of
# the text, boolean, integer and date columns counted exactly (one GROUP BY each, the 1,001 most
# frequent listed), the doubles' distinct values estimated (HyperLogLog); nulls, blanks of text;
# minimum and maximum of numbers and dates; mean, deviation, 5 approximate quantiles of numbers and
# their counts of 0 and -1 (the default-value flood judgement);
# the order of each of the 15 pairs of number columns (rows below, rows above).
PROFILE_CTES = r"""
vc_id AS (SELECT id AS v, count(*) AS n FROM s WHERE id IS NOT NULL GROUP BY 1),
vc_trade_date AS (SELECT trade_date AS v, count(*) AS n FROM s WHERE trade_date IS NOT NULL GROUP BY 1),
vc_region AS (SELECT region AS v, count(*) AS n FROM s WHERE region IS NOT NULL GROUP BY 1),
vc_venue AS (SELECT venue AS v, count(*) AS n FROM s WHERE venue IS NOT NULL GROUP BY 1),
vc_product AS (SELECT product AS v, count(*) AS n FROM s WHERE product IS NOT NULL GROUP BY 1),
vc_quantity AS (SELECT quantity AS v, count(*) AS n FROM s WHERE quantity IS NOT NULL GROUP BY 1),
vc_customer AS (SELECT customer AS v, count(*) AS n FROM s WHERE customer IS NOT NULL GROUP BY 1),
vc_is_test AS (SELECT is_test::VARCHAR AS v, count(*) AS n FROM s WHERE is_test IS NOT NULL GROUP BY 1),
profile AS (
  SELECT count(*) AS rows,
    count(id) AS present_id, min(id) AS min_id, max(id) AS max_id,
    avg(id::DOUBLE) AS mean_id, stddev_pop(id::DOUBLE) AS sd_id,
    approx_quantile(id::DOUBLE, [0.05, 0.25, 0.5, 0.75, 0.95]) AS q_id,
    count(trade_date) AS present_trade_date, min(trade_date) AS min_trade_date,
    max(trade_date) AS max_trade_date,
    count(region) AS present_region, count(venue) AS present_venue, count(product) AS present_product,
    count(customer) AS present_customer, count(is_test) AS present_is_test,
    count(quantity) AS present_quantity, min(quantity) AS min_quantity, max(quantity) AS max_quantity,
    avg(quantity::DOUBLE) AS mean_quantity, stddev_pop(quantity::DOUBLE) AS sd_quantity,
    approx_quantile(quantity::DOUBLE, [0.05, 0.25, 0.5, 0.75, 0.95]) AS q_quantity,
    count(fee) AS present_fee, approx_count_distinct(fee) AS distinct_fee, min(fee) AS min_fee,
    max(fee) AS max_fee, avg(fee) AS mean_fee, stddev_pop(fee) AS sd_fee,
    approx_quantile(fee, [0.05, 0.25, 0.5, 0.75, 0.95]) AS q_fee,
    count(amount) AS present_amount, approx_count_distinct(amount) AS distinct_amount,
    min(amount) AS min_amount, max(amount) AS max_amount, avg(amount) AS mean_amount,
    stddev_pop(amount) AS sd_amount, approx_quantile(amount, [0.05, 0.25, 0.5, 0.75, 0.95]) AS q_amount,
    count(price) AS present_price, approx_count_distinct(price) AS distinct_price, min(price) AS min_price,
    max(price) AS max_price, avg(price) AS mean_price, stddev_pop(price) AS sd_price,
    approx_quantile(price, [0.05, 0.25, 0.5, 0.75, 0.95]) AS q_price,
    count(cost) AS present_cost, approx_count_distinct(cost) AS distinct_cost, min(cost) AS min_cost,
    max(cost) AS max_cost, avg(cost) AS mean_cost, stddev_pop(cost) AS sd_cost,
    approx_quantile(cost, [0.05, 0.25, 0.5, 0.75, 0.95]) AS q_cost,
    count_if(id < fee), count_if(id > fee), count_if(id < amount), count_if(id > amount),
    count_if(id < quantity), count_if(id > quantity), count_if(id < price), count_if(id > price),
    count_if(id < cost), count_if(id > cost), count_if(fee < amount), count_if(fee > amount),
    count_if(fee < quantity), count_if(fee > quantity), count_if(fee < price), count_if(fee > price),
    count_if(fee < cost), count_if(fee > cost), count_if(amount < quantity), count_if(amount > quantity),
    count_if(amount < price), count_if(amount > price), count_if(amount < cost), count_if(amount > cost),
    count_if(quantity < price), count_if(quantity > price), count_if(quantity < cost),
    count_if(quantity > cost), count_if(price < cost), count_if(price > cost),
    count_if(id::DOUBLE = 0), count_if(id::DOUBLE = -1), count_if(quantity::DOUBLE = 0),
    count_if(quantity::DOUBLE = -1), count_if(fee = 0), count_if(fee = -1), count_if(amount = 0),
    count_if(amount = -1), count_if(price = 0), count_if(price = -1), count_if(cost = 0),
    count_if(cost = -1),
    (SELECT count(*) FROM vc_id) AS distinct_id,
    (SELECT list({'v': v::VARCHAR, 'n': n}) FROM (SELECT v, n FROM vc_id ORDER BY n DESC, v LIMIT 1001))
      AS top_id,
    (SELECT count(*) FROM vc_trade_date) AS distinct_trade_date,
    (SELECT list({'v': v::VARCHAR, 'n': n})
      FROM (SELECT v, n FROM vc_trade_date ORDER BY n DESC, v LIMIT 1001)) AS top_trade_date,
    (SELECT count(*) FROM vc_region) AS distinct_region,
    (SELECT list({'v': v, 'n': n}) FROM (SELECT v, n FROM vc_region ORDER BY n DESC, v LIMIT 1001))
      AS top_region,
    (SELECT coalesce(sum(n) FILTER (WHERE regexp_matches(v, '^\s*$')), 0) FROM vc_region) AS blanks_region,
    (SELECT count(*) FROM vc_venue) AS distinct_venue,
    (SELECT list({'v': v, 'n': n}) FROM (SELECT v, n FROM vc_venue ORDER BY n DESC, v LIMIT 1001))
      AS top_venue,
    (SELECT coalesce(sum(n) FILTER (WHERE regexp_matches(v, '^\s*$')), 0) FROM vc_venue) AS blanks_venue,
    (SELECT count(*) FROM vc_product) AS distinct_product,
    (SELECT list({'v': v, 'n': n}) FROM (SELECT v, n FROM vc_product ORDER BY n DESC, v LIMIT 1001))
      AS top_product,
    (SELECT coalesce(sum(n) FILTER (WHERE regexp_matches(v, '^\s*$')), 0) FROM vc_product)
      AS blanks_product,
    (SELECT count(*) FROM vc_quantity) AS distinct_quantity,
    (SELECT list({'v': v::VARCHAR, 'n': n})
      FROM (SELECT v, n FROM vc_quantity ORDER BY n DESC, v LIMIT 1001)) AS top_quantity,
    (SELECT count(*) FROM vc_customer) AS distinct_customer,
    (SELECT list({'v': v, 'n': n}) FROM (SELECT v, n FROM vc_customer ORDER BY n DESC, v LIMIT 1001))
      AS top_customer,
    (SELECT coalesce(sum(n) FILTER (WHERE regexp_matches(v, '^\s*$')), 0) FROM vc_customer)
      AS blanks_customer,
    (SELECT count(*) FROM vc_is_test) AS distinct_is_test,
    (SELECT list({'v': v, 'n': n}) FROM (SELECT v, n FROM vc_is_test ORDER BY n DESC, v LIMIT 1001))
      AS top_is_test
  FROM s
)
"""

# Both in one statement, the profile's row beside the total's, as assay's statement returns them.
HAND_PROFILE_SQL = (
    "WITH s AS ("
    + SLICE_SQL
    + "),\nchecks AS ("
    + CHECKS_SQL
    + "),"
    + PROFILE_CTES
    + "SELECT * FROM checks LEFT JOIN profile ON g0 = 1 AND g1 = 1 AND g2 = 1\n"
)

# What both contenders must agree on: the slice's rows and, from the profile, two values.
AGREED = ("rows", "amount", "distinct_customer", "mean_quantity")


def child_hand(path: Path, *, with_profile: bool) -> None:
    started, cpu = time.perf_counter(), time.process_time()
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    cursor = con.execute(HAND_PROFILE_SQL if with_profile else HAND_SQL, {"path": str(path)})
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    con.close()
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    total = next(r for r in rows if r["g0"] == 1 and r["g1"] == 1 and r["g2"] == 1)
    profiled = (
        {"distinct_customer": total["distinct_customer"], "mean_quantity": total["mean_quantity"]}
        if with_profile
        else {}
    )
    report(
        {
            "seconds": seconds,
            "cpu_seconds": cpu_seconds,
            "peak_rss_mb": peak_rss_mb(),
            "rows": total["n"],
            "amount": total["sum_amount"],
            **profiled,
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
        # what the run stored: the document's metrics and the slice's per-column profile
        (load,) = store.window("bench.trades", DAY + timedelta(days=1), partition="daily")
        stored = store.load_metrics([load.id])[load.id]
    counts = {o["outcome"] for o in result.outcomes}
    rows = result.profiles["daily"]["rows"]
    report(
        {
            "seconds": seconds,
            "cpu_seconds": cpu_seconds,
            "peak_rss_mb": peak_rss_mb(),
            "rows": rows,
            "amount": stored.get(("Dataset", "*", "sum(amount)")),
            "distinct_customer": stored.get(("Column", "customer", "DistinctValuesCount")),
            "mean_quantity": stored.get(("Column", "quantity", "Mean")),
            "outcomes": sorted(counts),
            "queries": result.queries,
            "groups": len(result.outcomes),
        }
    )


def judging(folder: Path, days: int) -> dict[str, Any]:
    """One run judged against ``days`` stored days of the document's metrics."""
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
        for back in range(days, 0, -1):
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
    parser.add_argument("--days", type=int, default=365, help="stored days the judged run reads")
    parser.add_argument("--out", type=Path, default=OUT, help="where the generated file is kept")
    parser.add_argument("--child", choices=CONTENDERS)
    parser.add_argument("--path", type=Path)
    args = parser.parse_args()
    if args.child in ("hand", "hand+profile"):
        child_hand(args.path, with_profile=args.child == "hand+profile")
        return 0
    if args.child == "assay":
        child_assay(args.path)
        return 0
    data = args.out / f"checks-v1-{args.rows}.parquet"
    if not data.exists():
        args.out.mkdir(parents=True, exist_ok=True)
        duckdb.connect().sql(DATA_SQL, params={"rows": args.rows}).write_parquet(str(data))
    doc = args.out / f"checks-v1-{args.rows}.yaml"
    doc.write_text(json.dumps(document(str(data)), indent=1))
    warm(data)
    runs: dict[str, list[ChildRun]] = {name: [] for name in CONTENDERS}
    for round_ in range(args.runs):
        for name in runs:
            target = doc if name == "assay" else data
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
    median = {name: m["seconds"]["median"] for name, m in measured.items()}
    ratio = median["assay"] / median["hand+profile"]
    print(f"ratio assay/hand+profile = {ratio:.2f} (target <= {TARGET})")
    bare = median["assay"] / median["hand"]
    print(f"ratio assay/hand = {bare:.2f} (the hand-written query without the profile assay records)")
    profiled, hand, mine = (runs[name][-1].measurements for name in CONTENDERS)
    agree = all(_same(profiled[key], mine[key]) for key in AGREED) and _same(hand["rows"], mine["rows"])
    print(
        f"rows measured: hand {hand['rows']:,}, hand+profile {profiled['rows']:,}, assay {mine['rows']:,}; "
        f"profile agrees: {agree}; assay queries {mine['queries']}; outcomes {mine['outcomes']}"
    )
    with tempfile.TemporaryDirectory() as folder:
        judged = judging(Path(folder), args.days)
    print(
        f"judging {judged['expectations']} expectations ({judged['outcomes']} outcomes) "
        f"against {args.days} stored days: {judged['judge_seconds']:.3f} s (target < 1 s), "
        f"data queries while judging: {judged['queries']['judge']}"
    )
    if args.json:
        figures = {"measured": measured, "ratio": ratio, "ratio_without_profile": bare, "judging": judged}
        args.json.write_text(json.dumps(figures, indent=1))
    return 0 if agree else 1


def _same(one: float | None, other: float | None) -> bool:
    """Equal, or within float summation's rounding (the engines add in different orders)."""
    if one is None or other is None:
        return one is other
    return abs(one - other) <= 1e-9 * max(1.0, abs(one), abs(other))


if __name__ == "__main__":
    sys.exit(main())
