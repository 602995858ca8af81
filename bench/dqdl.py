"""DQDL on ten million rows: assay's ``evaluate`` against one hand-written DuckDB query.

    python bench/dqdl.py [--rows 10000000] [--runs 3] [--threads N] [--json OUT]

A ruleset of 25 aggregate rules of 15 types (two with a where clause, one with a threshold) is
evaluated by assay on the PEERS.md workload, and one hand-written DuckDB statement computes the
same metrics with the same semantics. Both run in fresh processes of their own, interleaved
(hand, assay, hand, assay, ...). Each child times its own work: from just before ``evaluate`` to
its return, and from connecting to DuckDB to closing it after fetching the hand-written query's
row. The script prints medians, peak RSS and ``ratio assay/hand`` (the target is 1.3). It exits
0 whatever the ratio (STYLE.md habit 10), 1 when a rule ends in Error or a metric of assay
differs from the hand-written query's, and 2 when a contender fails to run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import duckdb

from _common import OUT, BenchError, ChildRun, Span, Spread, report, run_child, table, warm, workload

TARGET = 1.3
CONTENDERS = ("hand", "assay")  # in this order within each round


@dataclass(frozen=True)
class Check:
    """A rule of the ruleset, and the hand-written query's column for each metric assay reports."""

    rule: str
    metrics: Mapping[str, str]


CHECKS = (
    Check("RowCount > 0", {"Dataset.*.RowCount": "row_count"}),
    Check('Completeness "n1" > 0.95', {"Column.n1.Completeness": "n1_completeness"}),
    Check('Completeness "n2" > 0.99', {"Column.n2.Completeness": "n2_completeness"}),
    Check('IsComplete "id"', {"Column.id.Completeness": "id_completeness"}),
    Check('IsComplete "s5"', {"Column.s5.Completeness": "s5_completeness"}),
    Check('IsUnique "id"', {"Column.id.Uniqueness": "id_uniqueness"}),
    Check(
        'IsPrimaryKey "id"',
        {"Column.id.Uniqueness": "id_uniqueness", "Column.id.Completeness": "id_completeness"},
    ),
    Check('Uniqueness "code" < 0.5', {"Column.code.Uniqueness": "code_uniqueness"}),
    Check('UniqueValueRatio "code" < 0.5', {"Column.code.UniqueValueRatio": "code_unique_value_ratio"}),
    Check('DistinctValuesCount "s1000" = 1000', {"Column.s1000.DistinctValuesCount": "s1000_distinct"}),
    Check('DistinctValuesCount "code" > 10000', {"Column.code.DistinctValuesCount": "code_distinct"}),
    Check('Mean "n3" between 400000 and 600000', {"Column.n3.Mean": "n3_mean"}),
    Check('Sum "n4" > 0', {"Column.n4.Sum": "n4_sum"}),
    Check('StandardDeviation "d1" between 28000 and 30000', {"Column.d1.StandardDeviation": "d1_stddev"}),
    Check(
        'ColumnValues "n5" >= 0 with threshold > 0.97',
        {
            "Column.n5.ColumnValues.Compliance": "n5_compliance",
            "Column.n5.Minimum": "n5_min",
            "Column.n5.Maximum": "n5_max",
        },
    ),
    Check(
        'ColumnValues "s5" in ["v0", "v1", "v2", "v3"]',
        {"Column.s5.ColumnValues.Compliance": "s5_compliance"},
    ),
    Check(
        'ColumnValues "day" between "2019-12-31" and "2024-03-01"',
        {"Column.day.ColumnValues.Compliance": "day_compliance"},
    ),
    Check(
        'ColumnLength "code" = 7',
        {
            "Column.code.LengthCompliance": "code_length_compliance",
            "Column.code.MinimumLength": "code_min_length",
            "Column.code.MaximumLength": "code_max_length",
        },
    ),
    Check('Entropy "s20" > 2.9', {"Column.s20.Entropy": "s20_entropy"}),
    Check(
        'ColumnCorrelation "d1" "d2" between -0.1 and 0.1',
        {"Multicolumn.d1,d2.ColumnCorrelation": "d1_d2_corr"},
    ),
    Check('Mean "d2" > 40000 where "s5 = \'v1\'"', {"Column.d2.Mean": "d2_mean_v1"}),
    Check('Completeness "n7" > 0.95 where "n8 > 500000"', {"Column.n7.Completeness": "n7_completeness_n8"}),
    Check('Sum "d3" > 0', {"Column.d3.Sum": "d3_sum"}),
    Check('StandardDeviation "n6" > 0', {"Column.n6.StandardDeviation": "n6_stddev"}),
    Check('Mean "d4" between 45000 and 55000', {"Column.d4.Mean": "d4_mean"}),
)

RULESET = "Rules = [\n" + ",\n".join(f"    {check.rule}" for check in CHECKS) + "\n]"

# The baseline, written as one would by hand for DuckDB: one pass for the plain aggregates, and one
# GROUP BY per column whose value counts or distinct count are needed (no COUNT(DISTINCT), which
# makes DuckDB materialise the scan). Same semantics as the rules: NULL keys left out of value
# counts, NULL failing a ColumnValues condition, NULL as length 0, population standard deviation,
# natural log.
HAND_SQL = """
WITH id_counts AS (SELECT count(*) AS n FROM data WHERE id IS NOT NULL GROUP BY id),
code_counts AS (SELECT count(*) AS n FROM data WHERE code IS NOT NULL GROUP BY code),
s20_counts AS (SELECT count(*) AS n FROM data WHERE s20 IS NOT NULL GROUP BY s20),
s1000_values AS (SELECT s1000 FROM data WHERE s1000 IS NOT NULL GROUP BY s1000)
SELECT *
FROM (
    SELECT
        count(*) AS row_count,
        count(n1) / count(*) AS n1_completeness,
        count(n2) / count(*) AS n2_completeness,
        count(id) / count(*) AS id_completeness,
        count(s5) / count(*) AS s5_completeness,
        avg(n3) AS n3_mean,
        sum(n4) AS n4_sum,
        stddev_pop(d1) AS d1_stddev,
        count(*) FILTER (WHERE n5 >= 0) / count(*) AS n5_compliance,
        min(n5) AS n5_min,
        max(n5) AS n5_max,
        count(*) FILTER (WHERE s5 IN ('v0', 'v1', 'v2', 'v3')) / count(*) AS s5_compliance,
        count(*) FILTER (WHERE day > DATE '2019-12-31' AND day < DATE '2024-03-01') / count(*)
            AS day_compliance,
        count(*) FILTER (WHERE length(code) = 7) / count(*) AS code_length_compliance,
        min(coalesce(length(code), 0)) AS code_min_length,
        max(coalesce(length(code), 0)) AS code_max_length,
        corr(d1, d2) AS d1_d2_corr,
        avg(d2) FILTER (WHERE s5 = 'v1') AS d2_mean_v1,
        count(n7) FILTER (WHERE n8 > 500000) / count(*) FILTER (WHERE n8 > 500000) AS n7_completeness_n8,
        sum(d3) AS d3_sum,
        stddev_pop(n6) AS n6_stddev,
        avg(d4) AS d4_mean
    FROM data
),
(SELECT coalesce(sum(n) FILTER (WHERE n = 1), 0) / sum(n) AS id_uniqueness FROM id_counts),
(SELECT count(*) AS s1000_distinct FROM s1000_values),
(
    SELECT
        coalesce(sum(n) FILTER (WHERE n = 1), 0) / sum(n) AS code_uniqueness,
        count(*) FILTER (WHERE n = 1) / count(*) AS code_unique_value_ratio,
        count(*) AS code_distinct
    FROM code_counts
),
(
    SELECT -sum(n / total * ln(n / total)) AS s20_entropy
    FROM (SELECT n, sum(n) OVER () AS total FROM s20_counts)
)
"""


# --- the children: each measures one contender and reports ---------------------------------


def measure_assay(data: Path, threads: int | None) -> dict[str, Any]:
    # Imported here, so that the hand-written contender's process does not carry assay's modules.
    from assay.dqdl import evaluate, parse

    ruleset = parse(RULESET)
    with Span() as span:
        result = evaluate(ruleset, str(data), threads=threads)
    rules = [
        {"rule": r.rule, "outcome": r.outcome, "message": r.message, "metrics": r.metrics}
        for r in result.rules
    ]
    return {**span.measurements(), "queries": result.queries, "rules": rules}


def measure_hand(data: Path, threads: int | None) -> dict[str, Any]:
    # The same work as evaluate(): connect, register the file, run, fetch, close (freeing the
    # hash tables is part of both).
    with Span() as span:
        con = duckdb.connect(config={"threads": threads} if threads else {})
        con.read_parquet(str(data)).create_view("data")
        cursor = con.execute(HAND_SQL)
        row = cursor.fetchone()
        names = [column[0] for column in cursor.description]
        con.close()
    assert row is not None
    return {**span.measurements(), "values": dict(zip(names, row, strict=True))}


MEASURE = {"assay": measure_assay, "hand": measure_hand}


# --- the parent: runs the children, checks that they agree, prints -------------------------


def same(mine: Any, theirs: Any) -> bool:
    """Equal numbers, allowing for the order in which floating sums were added; NULL equals NaN."""
    missing = [v is None or (isinstance(v, float) and math.isnan(v)) for v in (mine, theirs)]
    if any(missing):
        return all(missing)
    return math.isclose(float(mine), float(theirs), rel_tol=1e-9, abs_tol=1e-12)


def disagreements(assay: Mapping[str, Any], hand: Mapping[str, Any]) -> list[str]:
    """Why assay's run and the hand-written query's do not show the same numbers (empty if they do)."""
    problems = []
    values = hand["values"]
    used = {column for check in CHECKS for column in check.metrics.values()}
    if set(values) != used:
        problems.append(f"hand-written columns {sorted(set(values) ^ used)} do not match the checks")
    for check, outcome in zip(CHECKS, assay["rules"], strict=True):
        if outcome["outcome"] not in ("Passed", "Failed"):
            problems.append(f"{check.rule}: {outcome['outcome']}: {outcome['message']}")
        if set(outcome["metrics"]) != set(check.metrics):
            problems.append(f"{check.rule}: assay reports {sorted(outcome['metrics'])}")
            continue
        for metric, column in check.metrics.items():
            if not same(outcome["metrics"][metric], values.get(column)):
                problems.append(
                    f"{check.rule}: {metric} = {outcome['metrics'][metric]!r}, "
                    f"hand-written {column} = {values.get(column)!r}"
                )
    return problems


def child_args(contender: str, data: Path, threads: int | None) -> list[str]:
    args = [str(Path(__file__).resolve()), "--child", contender, "--data", str(data)]
    return [*args, "--threads", str(threads)] if threads else args


def summary(runs: list[ChildRun]) -> dict[str, Any]:
    """One contender's measurements, run by run and as median, min and max."""
    series = {
        name: [run.measurements[name] for run in runs]
        for name in ("seconds", "cpu_seconds", "peak_rss_mb", "rss_before_mb")
    }
    series["process_seconds"] = [run.process_seconds for run in runs]
    return {"runs": series, **{name: asdict(Spread.of(values)) for name, values in series.items()}}


def rounds(data: Path, runs: int, threads: int | None) -> dict[str, list[ChildRun]]:
    """``runs`` rounds of every contender in turn (hand, assay, hand, assay, ...)."""
    done: dict[str, list[ChildRun]] = {name: [] for name in CONTENDERS}
    for _ in range(runs):
        for name in CONTENDERS:
            done[name].append(run_child(child_args(name, data, threads)))
    return done


def bench(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    data = workload(args.rows, args.out)
    prepared = time.perf_counter() - started
    warm(data)
    print(
        f"DQDL: {len(CHECKS)} aggregate rules on {args.rows:,} rows x 20 columns "
        f"({data}, {data.stat().st_size / 1e6:.0f} MB, ready in {prepared:.1f} s)"
    )
    print(
        f"{args.runs} run(s) per contender, interleaved, each in a fresh process; "
        f"threads: {args.threads or 'DuckDB default'}; {os.cpu_count()} CPUs; DuckDB {duckdb.__version__}"
    )
    runs = rounds(data, args.runs, args.threads)

    problems: list[str] = []
    for assay_run, hand_run in zip(runs["assay"], runs["hand"], strict=True):
        found = disagreements(assay_run.measurements, hand_run.measurements)
        problems += [problem for problem in found if problem not in problems]
    first = runs["assay"][0].measurements
    counts = {
        state: sum(r["outcome"] == state for r in first["rules"]) for state in ("Passed", "Failed", "Error")
    }
    checked = sum(len(check.metrics) for check in CHECKS)
    states = ", ".join(f"{n} {state}" for state, n in counts.items())
    verdict = (
        "metrics DISAGREE (below)" if problems else f"{checked} metric values equal the hand-written query's"
    )
    print(f"assay: {states}; engine queries: {first['queries']}; {verdict}")

    measured = {name: summary(runs[name]) for name in CONTENDERS}
    rows = [
        [
            name,
            *(f"{m['seconds'][key]:.2f}" for key in ("median", "low", "high")),
            f"{m['cpu_seconds']['median']:.2f}",
            f"{m['process_seconds']['median']:.2f}",
            f"{m['peak_rss_mb']['high']:.0f}",
        ]
        for name, m in measured.items()
    ]
    print()
    print(table(["contender", "median s", "min s", "max s", "cpu s", "process s", "peak RSS MB"], rows))
    ratios = {
        name: measured["assay"][name]["median"] / measured["hand"][name]["median"]
        for name in ("seconds", "cpu_seconds", "process_seconds")
    }
    print(f"ratio assay/hand = {ratios['seconds']:.2f} (target <= {TARGET})")
    print(
        f"cpu time: ratio {ratios['cpu_seconds']:.2f}; whole process: ratio {ratios['process_seconds']:.2f}"
    )

    if args.json:
        payload = {
            "benchmark": "dqdl",
            "rows": args.rows,
            "runs": args.runs,
            "threads": args.threads,
            "rules": len(CHECKS),
            "data": str(data),
            "data_bytes": data.stat().st_size,
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "duckdb": duckdb.__version__,
            "queries": first["queries"],
            "outcomes": counts,
            "agree": not problems,
            "contenders": measured,
            "ratio": ratios["seconds"],
            "cpu_ratio": ratios["cpu_seconds"],
            "process_ratio": ratios["process_seconds"],
            "target": TARGET,
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")

    if problems:
        print("\nassay and the hand-written query disagree:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows of the generated file")
    parser.add_argument("--runs", type=int, default=3, help="runs per contender (the median is reported)")
    parser.add_argument("--threads", type=int, default=None, help="DuckDB threads (default: DuckDB's)")
    parser.add_argument(
        "--json", type=Path, default=None, metavar="OUT", help="also write the measurements here"
    )
    parser.add_argument("--out", type=Path, default=OUT, metavar="DIR", help="folder of the generated data")
    parser.add_argument("--child", choices=sorted(MEASURE), help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rows < 1 or args.runs < 1 or (args.threads is not None and args.threads < 1):
        parser.error("--rows, --runs and --threads must be positive")
    if args.child:
        report(MEASURE[args.child](args.data, args.threads))
        return 0
    try:
        return bench(args)
    except BenchError as error:
        print(error, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
