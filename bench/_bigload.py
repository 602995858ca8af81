"""A big load on one machine: a 20-column Parquet file of 100 million rows, a check document's profile
plus 40 expectations through DuckDB with bounded memory, against one hand-written DuckDB query.

    python bench/_bigload.py [--rows 100000000] [--memory-limit 2GB] [--threads 2] [--out FOLDER]
                             [--json OUT]

The file is generated once (cached in the folder) by DuckDB itself from ``range()`` and hashes, so
that generating it streams too: 6 integer columns of 100 to a million values, 6 doubles, 5 text
columns of 5 to 50,000 values, a timestamp, the day and a flag, with 2 to 5 % NULLs in 6 of them.
The workspace's ``assay.yaml`` says ``engine: {memory_limit, threads}``; ``assay check run`` runs the
document (``DOCUMENT``) in a process of its own, and so does ``HAND``: ONE DuckDB statement with the
same memory limit computing the same numbers, the document's metrics (the total and each ``s5``
group) AND the per-column profile a recorded run keeps of its slice (values counted, distinct
counts, nulls, blanks, ranges, means, deviations, quantiles, zeros). Each process is timed whole
and its peak resident memory read by a small parent process of its own (``ru_maxrss`` of its
children). Printed: seconds, peak memory and seconds per million rows at ``rows``, ``rows/10`` and
``rows/100`` (cost must grow linearly), the ratio assay/hand (target <= 1.2) and the peak memory
(target <= 4 GB). Exits 1 when assay's stored numbers differ from the hand-written query's.

``measure(rows, workdir)`` is the one-size measurement bench/scale.py calls (``--big-rows N``).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:  # imported by bench/scale.py or a test, not only run as a script
    sys.path.insert(0, str(BENCH))

from _common import OUT, assay_env  # noqa: E402

TARGET_RATIO = 1.2
TARGET_PEAK_MB = 4096
MEMORY_LIMIT = "2GB"
THREADS = 2
DAY = date(2026, 11, 30)
VERSION = 1  # bump when DATA_SQL changes, so that cached files are generated again
_MARK = "@@bigload "

INTEGERS = {"i1": 100, "i2": 1_000, "i3": 10_000, "i4": 100_000, "i5": 1_000_000, "i6": 500}
DOUBLES = ("f1", "f2", "f3", "f4", "f5", "f6")
TEXTS = {"s5": 5, "s50": 50, "s500": 500, "s5000": 5_000, "code": 50_000}
NULLABLE = {"i1": 50, "i2": 20, "f1": 50, "f2": 25, "s500": 40, "code": 20}  # 1 row in N is NULL


def _nullable(name: str, value: str) -> str:
    every = NULLABLE.get(name)
    return f"CASE WHEN hash(i, 'z{name}') % {every} = 0 THEN NULL ELSE {value} END" if every else value


DATA_SQL = (
    "SELECT\n"
    + ",\n".join(
        [
            *(_nullable(c, f"(hash(i, '{c}') % {n})::BIGINT") + f" AS {c}" for c, n in INTEGERS.items()),
            *(_nullable(c, f"(hash(i, '{c}') % 100000000)::DOUBLE / 1000") + f" AS {c}" for c in DOUBLES),
            *(_nullable(c, f"'v' || hash(i, '{c}') % {n}") + f" AS {c}" for c, n in TEXTS.items()),
            "TIMESTAMP '2026-11-30 00:00:00' + to_seconds((hash(i, 'ts') % 86400)::BIGINT) AS ts",
            "DATE '2026-11-30' AS day",
            "hash(i, 'flag') % 2 = 0 AS flag",
        ]
    )
    + "\nFROM range($rows) AS r(i)"
)

# The document's metrics: name in the document -> (kind, argument), as the hand query computes them.
METRICS: list[Any] = [
    "row_count",
    {"null_rate": ["i1", "i2", "f1", "f2", "code"]},
    {"mean": ["i1", "i2", "i3", "i4", "f1", "f2", "f3", "f4"]},
    {"sum": ["f1", "f2", "i5"]},
    {"min": ["f1", "i2"]},
    {"max": ["f1", "i2"]},
    {"count_where": {"name": "f_order", "condition": "f3 < f4"}},
    {"count_where": {"name": "big_i", "condition": "i4 > 90000"}},
    {"count_where": {"name": "flagged", "condition": "flag = true"}},
]


def metric_keys() -> list[str]:
    """The document's metric keys, in order: ``row_count``, ``null_rate(i1)``, ... ``flagged``."""
    keys = ["row_count"]
    for entry in METRICS[1:]:
        kind, value = next(iter(entry.items()))
        keys += [value["name"]] if kind == "count_where" else [f"{kind}({c})" for c in value]
    return keys


def document(source: Path) -> dict[str, Any]:
    """The check document: one profile (the day's slice, dimension ``s5``) and 40 expectations."""
    keys = metric_keys()
    expectations = []
    for i in range(40):
        key = keys[i % len(keys)]
        by = {"by": ["s5"]} if i >= len(keys) else {}
        expectations.append({"id": f"e{i}", "metric": f"load.{key}", "expect": ">= 0", **by})
    return {
        "apiVersion": "assay/v1",
        "kind": "DatasetChecks",
        "dataset": {"name": "bench.bigload", "source": {"path": str(source)}, "owners": {"team": "bench"}},
        "profiles": [
            {
                "id": "load",
                "slice": {"column": "day"},
                "dimensions": ["s5"],
                "top_k": 50,
                "metrics": METRICS,
            }
        ],
        "expectations": expectations,
    }


def _hand_metrics() -> list[str]:
    """The document's metrics as SQL, each aliased by its key (over the slice ``s``)."""
    out = ['count(*) AS "row_count"']
    for entry in METRICS[1:]:
        kind, value = next(iter(entry.items()))
        if kind == "count_where":
            out.append(f'count_if({value["condition"]}) AS "{value["name"]}"')
            continue
        for c in value:
            sql = {
                "null_rate": f"(count(*) - count({c}))::DOUBLE / nullif(count(*), 0)",
                "mean": f"avg({c}::DOUBLE)",
                "sum": f"sum({c}::DOUBLE)",
                "min": f"min({c}::DOUBLE)",
                "max": f"max({c}::DOUBLE)",
            }[kind]
            out.append(f'{sql} AS "{kind}({c})"')
    return out


def _hand_profile() -> tuple[list[str], list[str]]:
    """The per-column profile a recorded run keeps of its slice, for these 20 columns on a first load:
    integers, text, the day and the flag counted exactly (one GROUP BY each, the 1,001 most frequent
    listed), doubles and the timestamp estimated (HyperLogLog); nulls, blanks of text, ranges, and
    of numbers the mean, deviation, 5 approximate quantiles and counts of 0 and -1. (12 number
    columns: more than 10 of a kind, so no pair orders.) Returns the CTEs and the profile's columns."""
    exact = [*INTEGERS, *TEXTS, "day", "flag"]
    ctes = [
        f"vc_{c} AS (SELECT {c}::VARCHAR AS v, count(*) AS n FROM s WHERE {c} IS NOT NULL GROUP BY 1)"
        for c in exact
    ]
    cols: list[str] = []
    for c in [*INTEGERS, *DOUBLES]:
        cols += [
            f"count({c}) AS present_{c}",
            f"min({c}) AS min_{c}",
            f"max({c}) AS max_{c}",
            f"avg({c}::DOUBLE) AS mean_{c}",
            f"stddev_pop({c}::DOUBLE) AS sd_{c}",
            f"approx_quantile({c}::DOUBLE, [0.05, 0.25, 0.5, 0.75, 0.95]) AS q_{c}",
            f"count_if({c}::DOUBLE = 0) AS zeros_{c}",
            f"count_if({c}::DOUBLE = -1) AS minus_{c}",
        ]
    for c in DOUBLES:
        cols.append(f"approx_count_distinct({c}) AS distinct_{c}")
    cols += ["count(ts) AS present_ts", "min(ts) AS min_ts", "max(ts) AS max_ts"]
    cols += ["approx_count_distinct(ts) AS distinct_ts", "count(day) AS present_day", "count(flag)"]
    cols += [f"count({c}) AS present_{c}" for c in TEXTS]
    for c in exact:
        cols.append(f"(SELECT count(*) FROM vc_{c}) AS distinct_{c}")
        cols.append(
            f"(SELECT list({{'v': v, 'n': n}}) FROM (SELECT v, n FROM vc_{c} ORDER BY n DESC, v LIMIT 1001))"
            f" AS top_{c}"
        )
    for c in TEXTS:
        blank = "regexp_matches(v, '^\\s*$')"
        cols.append(f"(SELECT coalesce(sum(n) FILTER (WHERE {blank}), 0) FROM vc_{c}) AS blanks_{c}")
    return ctes, cols


def hand_sql() -> str:
    """ONE statement: the day's slice, read once (materialized: 16 aggregations read it; at 2 million
    rows the statement took 15 s so, 21 s without); the document's metrics for the total and each
    ``s5`` group (top 50); the per-column profile beside the total."""
    ctes, profile = _hand_profile()
    metrics = ",\n      ".join(_hand_metrics())
    return (
        "WITH s AS MATERIALIZED (\n"
        "  SELECT * FROM read_parquet($path) WHERE CAST(day AS DATE) = DATE '2026-11-30'),\n"
        "checks AS (SELECT * FROM (\n"
        "  SELECT *, row_number() OVER (PARTITION BY g ORDER BY row_count DESC, s5) AS rk FROM (\n"
        f"    SELECT s5, GROUPING(s5) AS g,\n      {metrics}\n"
        "    FROM s GROUP BY GROUPING SETS ((), (s5))\n"
        "  )) WHERE rk <= 50),\n"
        + ",\n".join(ctes)
        + ",\nprofile AS (SELECT "
        + ",\n  ".join(profile)
        + " FROM s)\n"
        "SELECT * FROM checks LEFT JOIN profile ON g = 1"
    )


# What the two must agree on: every metric of the document on the total, and two of the profile's.
PROFILED = {"distinct_s5000": ("Column", "s5000", "DistinctValuesCount"), "mean_i3": ("Column", "i3", "Mean")}


def data_file(rows: int, workdir: Path) -> Path:
    """The ``rows``-row file in ``workdir``, generated on first use (by DuckDB, streaming) and reused."""
    path = workdir / f"bigload-v{VERSION}-{rows}.parquet"
    if path.exists():
        return path
    workdir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    con = duckdb.connect(config={"memory_limit": MEMORY_LIMIT, "temp_directory": str(workdir / "gen.tmp")})
    try:
        con.sql(DATA_SQL, params={"rows": rows}).write_parquet(str(partial), row_group_size=1 << 20)
    finally:
        con.close()
    partial.replace(path)
    return path


def _timed(command: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``command`` under a small parent process of its own that reports the wall time and the
    peak resident memory of its children (``ru_maxrss`` of RUSAGE_CHILDREN: the largest process of
    the tree it waited for, which no other measurement in this process can raise)."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__)), "--time", "--", *command],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith(_MARK)]
    if not lines:
        raise RuntimeError(f"{' '.join(command)} reported nothing:\n{done.stdout}{done.stderr}")
    timed: dict[str, Any] = json.loads(lines[-1][len(_MARK) :])
    if timed["returncode"] != 0:
        raise RuntimeError(f"{' '.join(command)} exited with {timed['returncode']}:\n{timed['stderr']}")
    return timed


def _time_child(command: list[str]) -> int:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    reported = [line for line in done.stdout.splitlines() if line.startswith(_MARK)]
    payload = {
        "seconds": seconds,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        # CPU seconds of every thread: on a machine shared with other work they move less than wall time
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "returncode": done.returncode,
        "stderr": done.stderr[-4000:],
        "reported": json.loads(reported[-1][len(_MARK) :]) if reported else None,
    }
    print(_MARK + json.dumps(payload, default=str), flush=True)
    return 0


def _hand_child(path: Path, memory_limit: str, threads: int, temp: Path) -> int:
    con = duckdb.connect(
        config={"memory_limit": memory_limit, "threads": threads, "temp_directory": str(temp)}
    )
    con.execute("SET TimeZone = 'UTC'")
    cursor = con.execute(hand_sql(), {"path": str(path)})
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    (limit,) = con.execute("SELECT current_setting('memory_limit')").fetchone() or ("",)
    con.close()
    total = next(r for r in rows if r["g"] == 1)
    found = {key: total[key] for key in metric_keys()}
    found |= {name: total[name] for name in PROFILED}
    print(_MARK + json.dumps({"metrics": found, "memory_limit": limit, "groups": len(rows)}), flush=True)
    return 0


def _stored(workspace: Path) -> dict[str, Any]:
    """What the run stored: the document's metrics on the total and the two profile values."""
    from assay.store import MetricStore

    with MetricStore.open(workspace=workspace) as store:
        (load,) = store.window("bench.bigload", DAY + timedelta(days=1), partition="load")
        stored = store.load_metrics([load.id])[load.id]
    found = {key: stored.get(("Dataset", "*", key)) for key in metric_keys()}
    return found | {name: stored.get(key) for name, key in PROFILED.items()}


def _same(one: Any, other: Any) -> bool:
    """Equal, or within float summation's rounding (the two add in different orders)."""
    if one is None or other is None:
        return one is other
    return abs(float(one) - float(other)) <= 1e-9 * max(1.0, abs(float(one)), abs(float(other)))


def measure(
    rows: int, workdir: Path, *, memory_limit: str = MEMORY_LIMIT, threads: int = THREADS
) -> dict[str, Any]:
    """One size: ``assay check run`` and the hand-written query on a ``rows``-row file in ``workdir``,
    each in a fresh process with ``memory_limit``. Returns ``rows``, ``assay_seconds``,
    ``hand_seconds``, ``ratio``, ``peak_rss_mb`` (assay's), ``hand_peak_rss_mb``, the CPU seconds of
    each (``assay_cpu_seconds``, ``hand_cpu_seconds``) and their ``cpu_ratio``, ``agree`` (every
    compared number equal), ``differ`` (those that are not), ``memory_limit`` (as the run's engine
    reported it), ``seconds_per_million`` and ``generate_seconds`` (0 when the file was cached)."""
    started = time.perf_counter()
    data = data_file(rows, workdir)
    generated = time.perf_counter() - started
    doc = workdir / f"bigload-{rows}.yaml"
    doc.write_text(json.dumps(document(data), indent=1))
    workspace = workdir / f"ws-{rows}"
    shutil.rmtree(workspace, ignore_errors=True)
    workspace.mkdir(parents=True)
    (workspace / "assay.yaml").write_text(
        f"sources:\n  paths: [{data.parent}]\nengine:\n  memory_limit: {memory_limit}\n  threads: {threads}\n"
    )
    _warm(data)
    run = [sys.executable, "-m", "assay", "check", "run", str(doc), "--workspace", str(workspace)]
    run += ["--at", DAY.isoformat(), "--now", "2026-12-01T00:00:00+00:00", "--json", "-"]
    assay = _timed(run, env=assay_env())
    summary = json.loads(recorded_summary(workspace))
    temp = workdir / "hand.tmp"
    hand = _timed(
        [sys.executable, str(Path(__file__)), "--hand", str(data), memory_limit, str(threads), str(temp)]
    )
    shutil.rmtree(temp, ignore_errors=True)
    mine, theirs = _stored(workspace), hand["reported"]["metrics"]
    differ = {k: (mine.get(k), v) for k, v in theirs.items() if not _same(mine.get(k), v)}
    return {
        "rows": rows,
        "assay_seconds": assay["seconds"],
        "hand_seconds": hand["seconds"],
        "ratio": assay["seconds"] / hand["seconds"],
        "assay_cpu_seconds": assay["cpu_seconds"],
        "hand_cpu_seconds": hand["cpu_seconds"],
        "cpu_ratio": assay["cpu_seconds"] / hand["cpu_seconds"],
        "peak_rss_mb": assay["peak_rss_mb"],
        "hand_peak_rss_mb": hand["peak_rss_mb"],
        "seconds_per_million": assay["seconds"] / (rows / 1e6),
        "hand_seconds_per_million": hand["seconds"] / (rows / 1e6),
        "memory_limit": summary.get("engine", {}).get("memory_limit"),
        "hand_memory_limit": hand["reported"]["memory_limit"],
        "spilled_left": (workspace / "tmp").exists(),
        "agree": not differ,
        "differ": differ,
        "metrics": mine,
        "generate_seconds": generated if generated > 1 else 0.0,
    }


def recorded_summary(workspace: Path) -> str:
    """The run's summary as it recorded it (``runs/<id>.json`` of the one run in ``workspace``)."""
    (summary,) = sorted((workspace / "runs").glob("*.json"))
    return summary.read_text()


def _warm(path: Path) -> None:
    """Read ``path`` once, so that both processes find it in the OS page cache."""
    with path.open("rb") as handle:
        while handle.read(1 << 24):
            pass


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:2] == ["--time", "--"]:
        return _time_child(args[2:])
    if args[:1] == ["--hand"]:
        return _hand_child(Path(args[1]), args[2], int(args[3]), Path(args[4]))
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--memory-limit", default=MEMORY_LIMIT)
    parser.add_argument("--threads", type=int, default=THREADS)
    parser.add_argument("--out", type=Path, default=OUT, help="where the generated files are kept")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    parser.add_argument("--json", type=Path)
    parsed = parser.parse_args(args)
    sizes = [parsed.rows // 100, parsed.rows // 10, parsed.rows]
    results = []
    print(f"memory limit {parsed.memory_limit}, {parsed.threads} threads", flush=True)
    for rows in sizes:
        found = measure(rows, parsed.out, memory_limit=parsed.memory_limit, threads=parsed.threads)
        results.append(found)
        print(
            f"{rows:>12,} rows: assay {found['assay_seconds']:8.2f} s "
            f"({found['seconds_per_million']:.3f} s per million rows, peak {found['peak_rss_mb']:,.0f} MB), "
            f"hand {found['hand_seconds']:8.2f} s ({found['hand_seconds_per_million']:.3f} s/M, "
            f"peak {found['hand_peak_rss_mb']:,.0f} MB), ratio {found['ratio']:.2f} "
            f"(CPU {found['assay_cpu_seconds']:.1f} s / {found['hand_cpu_seconds']:.1f} s), "
            f"same numbers: {found['agree']}"
            + (f", generated in {found['generate_seconds']:.0f} s" if found["generate_seconds"] else ""),
            flush=True,
        )
        if not parsed.keep:
            (parsed.out / f"bigload-v{VERSION}-{rows}.parquet").unlink(missing_ok=True)
            shutil.rmtree(parsed.out / f"ws-{rows}", ignore_errors=True)
    big = results[-1]
    print(f"ratio assay/hand = {big['ratio']:.2f} (target <= {TARGET_RATIO})")
    print(f"peak memory {big['peak_rss_mb']:,.0f} MB (target <= {TARGET_PEAK_MB:,} MB)")
    print(f"memory limit in the run: {big['memory_limit']}; spill folder left: {big['spilled_left']}")
    if parsed.json:
        parsed.json.write_text(json.dumps(results, indent=1, default=str))
    return 0 if all(r["agree"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
