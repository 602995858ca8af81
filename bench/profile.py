"""Profiling ten million rows: assay's ``profile`` against one hand-written DuckDB query, Great
Expectations and Soda Core.

    python bench/profile.py --setup-peers            # once: the peers' virtual environments
    python bench/profile.py [--rows 10000000] [--runs 3] [--only hand,assay,gx,soda] [--json OUT]

Every column of the PEERS.md workload is profiled as a dataset's daily load is, after its first:
row count; null count and rate; distinct count (exact up to 1000 values and estimated beyond, as
the dataset's last load had: the text columns within the cap exactly, the ``code`` column and the
numbers and dates, all of which have more, by HyperLogLog); minimum and
maximum of numbers and dates; the value counts of text columns with at most 1000 values (hence
their top 10 with shares). The contenders, each in a fresh process of its own, interleaved round
by round:

- ``hand``: one hand-written DuckDB statement computing exactly those metrics (``HAND_SQL``);
- ``assay``: ``assay.platform.flows.profile``, a recorded run as ``assay profile`` is, with an
  in-memory metric store, so that persisting the profile and recording the run are timed too.
  The store first receives the same file as the day before, untimed (its time is printed apart:
  a dataset's first load counts integer and date columns exactly), so that the timed load is
  judged against it as every later load is. As a secondary figure, the whole ``assay profile``
  command on the second load of a fresh workspace, against the hand-written query's whole
  process and against its floor: that process importing first the libraries DESIGN.md makes
  assay's (typer, sqlglot with its DuckDB dialect, SQLAlchemy on SQLite); and the floor
  overlapped: the same imports while DuckDB runs the query on a thread;
- ``gx``: Great Expectations 1.24.1, SQL datasource on DuckDB (``peers/gx_child.py``);
- ``soda``: Soda Core 4.28 with soda-duckdb (``peers/soda_child.py``).

The peers run in their own virtual environments under ``--out``/venvs, made by ``--setup-peers``,
with the same DuckDB version as this script. Each child times its own work and reports it with
its peak RSS; every contender's metrics are compared with the hand-written query's of the same
round. The script prints medians, ``ratio assay/hand`` (the target is 1.3) and how much faster
assay is than each peer. It exits 0 whatever the figures (STYLE.md habit 10), 1 when a contender's
metrics differ from the hand-written query's, and 2 when a contender could not run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb

from _common import (
    OUT,
    BenchError,
    ChildRun,
    Span,
    assay_env,
    report,
    reset_peak_rss,
    run_program,
    spreads,
    table,
    warm,
    workload,
)

TARGET = 1.3
BENCH = Path(__file__).resolve().parent
CONTENDERS = ("hand", "assay", "gx", "soda")  # the names --only takes
CLI = "assay CLI"  # runs with "assay": the whole `assay profile` process, a secondary figure
# Runs with "hand": the whole process of the hand-written query, approximate distinct counts for the
# high-cardinality text column, the baseline of the whole `assay profile` process.
HAND_PROCESS = "hand process"
# Runs with "hand" and "assay": the hand-written query's whole process after importing the
# libraries DESIGN.md makes assay's (its CLI, its query builder, its metric store): the floor of
# the whole `assay profile` process before any of assay's own work.
FLOOR = "floor process"
# Runs with FLOOR: the same, with the query started first and the libraries imported while it runs.
OVERLAPPED = "floor overlapped"
ORDER = ("hand", "assay", HAND_PROCESS, FLOOR, OVERLAPPED, CLI, "gx", "soda")  # within each round
SERIES = ("seconds", "cpu_seconds", "peak_rss_mb", "rss_before_mb")
SPANS = ("seconds", "cpu_seconds")  # the timed span's wall and CPU time
LOAD_DATE = date(2026, 1, 1)

# The workload's columns (bench/_common.py) by what the profile measures on them. Text columns
# s<n> hold the values v0..v<n-1>; code has up to 400,000 values, too many for value counts.
NUMBERS = ("id", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "d1", "d2", "d3", "d4")
DATES = ("day",)
TEXTS = ("s5", "s20", "s50", "s200", "s1000", "code")
ACCEPTED = {name: [f"v{i}" for i in range(int(name[1:]))] for name in TEXTS if name != "code"}
# Text columns within the cap, counted exactly; ``code`` (one value a row) is estimated on both
# sides, as assay estimates a text column whose last load had more than the cap (issue 8).
CATEGORIES = tuple(name for name in TEXTS if name != "code")
CAP = 1000  # the most distinct values of a text column whose value counts are kept
TOP = 10

# The baseline, written as one would by hand for DuckDB: one pass for the per-column aggregates,
# HyperLogLog for the distinct counts of numbers, dates and the code column, and one GROUP BY per
# other text column for its exact distinct count and its value counts (no COUNT(DISTINCT), which makes DuckDB
# materialise the scan). NULL is not a value: value counts leave it out, as count(*) - count(x)
# counts it. The null rates and top 10 are arithmetic on this one row.
HAND_SQL = """
WITH s5_counts AS (SELECT s5 AS value, count(*) AS n FROM data WHERE s5 IS NOT NULL GROUP BY s5),
s20_counts AS (SELECT s20 AS value, count(*) AS n FROM data WHERE s20 IS NOT NULL GROUP BY s20),
s50_counts AS (SELECT s50 AS value, count(*) AS n FROM data WHERE s50 IS NOT NULL GROUP BY s50),
s200_counts AS (SELECT s200 AS value, count(*) AS n FROM data WHERE s200 IS NOT NULL GROUP BY s200),
s1000_counts AS (SELECT s1000 AS value, count(*) AS n FROM data WHERE s1000 IS NOT NULL GROUP BY s1000)
SELECT *
FROM (
    SELECT
        count(*) AS row_count,
        count(*) - count(id) AS id_nulls, approx_count_distinct(id) AS id_distinct,
        min(id) AS id_min, max(id) AS id_max,
        count(*) - count(n1) AS n1_nulls, approx_count_distinct(n1) AS n1_distinct,
        min(n1) AS n1_min, max(n1) AS n1_max,
        count(*) - count(n2) AS n2_nulls, approx_count_distinct(n2) AS n2_distinct,
        min(n2) AS n2_min, max(n2) AS n2_max,
        count(*) - count(n3) AS n3_nulls, approx_count_distinct(n3) AS n3_distinct,
        min(n3) AS n3_min, max(n3) AS n3_max,
        count(*) - count(n4) AS n4_nulls, approx_count_distinct(n4) AS n4_distinct,
        min(n4) AS n4_min, max(n4) AS n4_max,
        count(*) - count(n5) AS n5_nulls, approx_count_distinct(n5) AS n5_distinct,
        min(n5) AS n5_min, max(n5) AS n5_max,
        count(*) - count(n6) AS n6_nulls, approx_count_distinct(n6) AS n6_distinct,
        min(n6) AS n6_min, max(n6) AS n6_max,
        count(*) - count(n7) AS n7_nulls, approx_count_distinct(n7) AS n7_distinct,
        min(n7) AS n7_min, max(n7) AS n7_max,
        count(*) - count(n8) AS n8_nulls, approx_count_distinct(n8) AS n8_distinct,
        min(n8) AS n8_min, max(n8) AS n8_max,
        count(*) - count(d1) AS d1_nulls, approx_count_distinct(d1) AS d1_distinct,
        min(d1) AS d1_min, max(d1) AS d1_max,
        count(*) - count(d2) AS d2_nulls, approx_count_distinct(d2) AS d2_distinct,
        min(d2) AS d2_min, max(d2) AS d2_max,
        count(*) - count(d3) AS d3_nulls, approx_count_distinct(d3) AS d3_distinct,
        min(d3) AS d3_min, max(d3) AS d3_max,
        count(*) - count(d4) AS d4_nulls, approx_count_distinct(d4) AS d4_distinct,
        min(d4) AS d4_min, max(d4) AS d4_max,
        count(*) - count(day) AS day_nulls, approx_count_distinct(day) AS day_distinct,
        min(day) AS day_min, max(day) AS day_max,
        count(*) - count(s5) AS s5_nulls,
        count(*) - count(s20) AS s20_nulls,
        count(*) - count(s50) AS s50_nulls,
        count(*) - count(s200) AS s200_nulls,
        count(*) - count(s1000) AS s1000_nulls,
        count(*) - count(code) AS code_nulls,
        approx_count_distinct(code) AS code_distinct, NULL AS code_values
    FROM data
),
(SELECT count(*) AS s5_distinct, CASE WHEN count(*) <= 1000 THEN list((value, n)) END AS s5_values
    FROM s5_counts),
(SELECT count(*) AS s20_distinct, CASE WHEN count(*) <= 1000 THEN list((value, n)) END AS s20_values
    FROM s20_counts),
(SELECT count(*) AS s50_distinct, CASE WHEN count(*) <= 1000 THEN list((value, n)) END AS s50_values
    FROM s50_counts),
(SELECT count(*) AS s200_distinct, CASE WHEN count(*) <= 1000 THEN list((value, n)) END AS s200_values
    FROM s200_counts),
(SELECT count(*) AS s1000_distinct, CASE WHEN count(*) <= 1000 THEN list((value, n)) END AS s1000_values
    FROM s1000_counts)
"""


# The same statement, as the whole-process baseline of the `assay profile` command: a text column
# with more values than the value-count cap (code, up to 400,000) gets HyperLogLog, as numbers do,
# and no value counts; the low-cardinality text columns keep their exact GROUP BY.
HIGH_CARDINALITY = ("code",)
HAND_APPROX_SQL = HAND_SQL.replace(
    "code_counts AS (SELECT code AS value, count(*) AS n FROM data WHERE code IS NOT NULL GROUP BY code)\n",
    "",
).replace(
    """(SELECT count(*) AS code_distinct, CASE WHEN count(*) <= 1000 THEN list((value, n)) END AS code_values
    FROM code_counts)""",
    "(SELECT approx_count_distinct(code) AS code_distinct, NULL AS code_values FROM data)",
)
assert "code_counts" not in HAND_APPROX_SQL and "approx_count_distinct(code)" in HAND_APPROX_SQL, (
    "HAND_APPROX_SQL no longer follows HAND_SQL"
)


@dataclass(frozen=True)
class Peer:
    """A peer tool: what its virtual environment installs, and what its child script runs."""

    name: str
    title: str
    requirements: tuple[str, ...]
    env: Mapping[str, str]
    ran: str


PEERS = {
    peer.name: peer
    for peer in (
        Peer(
            "gx",
            "Great Expectations 1.24.1, SQL datasource on DuckDB",
            ("great_expectations==1.24.1", "duckdb-engine==0.17.0", "pyarrow"),
            {"GX_ANALYTICS_ENABLED": "false"},
            "row count; per column expect_column_values_to_not_be_null (null count and rate) and "
            "expect_column_unique_value_count_to_be_between (exact COUNT(DISTINCT): GX has no "
            "approximate distinct count); min and max of numbers and dates; "
            "expect_column_most_common_value_to_be_in_set on the 5 low-cardinality columns (GX's "
            "only expectation that computes their value counts; it reports the mode, not a top 10)",
        ),
        Peer(
            "soda",
            "Soda Core 4.28.0 + soda-duckdb 4.28.0",
            ("soda-core==4.28.0", "soda-duckdb==4.28.0"),
            {"SODA_CORE_TELEMETRY_ENABLED": "false"},
            "a contract: row_count; per column missing (null count and rate); approx_count_distinct "
            "metric checks for numbers and dates, duplicate checks (exact COUNT(DISTINCT)) for text; "
            "min and max aggregate checks (metric checks for the date: aggregates must be numbers). "
            "Soda cannot express value counts or a top k: it measures less than the others",
        ),
    )
}

# How closely a contender's value must equal the hand-written query's: HyperLogLog estimates
# (against another implementation or an exact count) within 5%; Soda rounds percentages to two
# decimals; anything else exactly, up to the order of floating additions.
APPROXIMATE = 0.05
RATE_TOLERANCE = 1e-4


# --- the children: each measures one contender and reports ---------------------------------


def measure_hand(data: Path, sql: str = HAND_SQL) -> dict[str, Any]:
    # The same work as profile(): connect, register the file, run, fetch, close.
    with Span() as span:
        con = duckdb.connect()
        con.read_parquet(str(data)).create_view("data")
        cursor = con.execute(sql)
        row = cursor.fetchone()
        names = [column[0] for column in cursor.description]
        con.close()
    assert row is not None
    return {**span.measurements(), "values": hand_values(dict(zip(names, row, strict=True)))}


def hand_values(row: Mapping[str, Any]) -> dict[str, Any]:
    """The hand-written query's row under the metric names every contender reports."""
    rows = row["row_count"]
    values: dict[str, Any] = {"rows": rows}
    for column in (*NUMBERS, *DATES, *TEXTS):
        values[f"{column}.nulls"] = row[f"{column}_nulls"]
        values[f"{column}.null_rate"] = row[f"{column}_nulls"] / rows if rows else None
        values[f"{column}.distinct"] = row[f"{column}_distinct"]
    for column in (*NUMBERS, *DATES):
        values[f"{column}.min"] = plain(row[f"{column}_min"])
        values[f"{column}.max"] = plain(row[f"{column}_max"])
    for column in TEXTS:
        counts = row[f"{column}_values"]
        if counts is not None:
            ranked = sorted(counts, key=lambda pair: (-pair[1], pair[0]))
            values[f"{column}.top10"] = [[value, n, n / rows] for value, n in ranked[:TOP]]
            values[f"{column}.mode"] = sorted(value for value, n in ranked if n == ranked[0][1])
    return values


def plain(value: Any) -> Any:
    """A minimum or maximum as JSON: dates in ISO form."""
    return value.isoformat() if isinstance(value, date) else value


def measure_assay(data: Path) -> dict[str, Any]:
    # Imported here, so that the hand-written contender's process does not carry assay's modules.
    try:
        from assay.platform.flows import profile
        from assay.store import MetricStore
    except ImportError as error:
        raise SystemExit(
            f"assay's profile API (assay.platform.flows.profile) is not there: {error}"
        ) from None

    # a recorded run, as `assay profile` is: its runs/ summary goes to a workspace of its own
    with MetricStore.open("sqlite://") as store, tempfile.TemporaryDirectory() as workspace:
        # The day before, untimed here: the first load of a dataset counts its integer and date
        # columns exactly, and the loads after it estimate those beyond the cap (the steady state).
        with Span() as first:
            profile(
                data,
                dataset="bench",
                load_date=LOAD_DATE - timedelta(days=1),
                store=store,
                workspace=workspace,
            )
        reset_peak_rss()
        with Span() as span:
            result = profile(data, dataset="bench", load_date=LOAD_DATE, store=store, workspace=workspace)
        found = result.to_dict()
    return {
        **span.measurements(),
        "first_load_seconds": first.seconds,
        "queries": result.queries,
        "values": assay_values(found),
    }


def assay_values(found: Mapping[str, Any]) -> dict[str, Any]:
    """assay's profile (``ProfileResult.to_dict()``) under the metric names every contender reports."""
    values: dict[str, Any] = {"rows": found["rows"]}
    for column in found["columns"]:
        name = column["name"]
        values[f"{name}.nulls"] = column["nulls"]
        values[f"{name}.null_rate"] = column["null_rate"]
        values[f"{name}.distinct"] = column["distinct"]
        if column["min"] is not None or column["max"] is not None:
            values[f"{name}.min"] = column["min"]
            values[f"{name}.max"] = column["max"]
        if column["top"]:
            values[f"{name}.top10"] = [[top["value"], top["count"], top["share"]] for top in column["top"]]
    return values


def measure_hand_approx(data: Path) -> dict[str, Any]:
    return measure_hand(data, HAND_APPROX_SQL)


def import_libraries() -> None:
    """What assay cannot start without: typer (the CLI), sqlglot with its DuckDB dialect loaded by
    a first rendering (every query is a sqlglot tree), and SQLAlchemy connected to an SQLite file
    (the metric store)."""
    import sqlalchemy
    import sqlglot.expressions as exp
    import typer

    assert typer.Typer
    exp.select(exp.column("x")).from_("t").sql(dialect="duckdb")
    with tempfile.TemporaryDirectory(prefix="profile-floor-") as folder:
        store = sqlalchemy.create_engine(f"sqlite:///{folder}/metrics.db")
        with store.connect() as connection:
            connection.execute(sqlalchemy.text("SELECT 1"))
        store.dispose()


def measure_floor(data: Path) -> dict[str, Any]:
    """The hand-written query's process, importing assay's libraries first (import_libraries)."""
    import_libraries()
    return measure_hand(data, HAND_APPROX_SQL)


def measure_floor_overlapped(data: Path) -> dict[str, Any]:
    """The same process with the query started first, on a thread, and the libraries imported
    while DuckDB runs it (DuckDB releases the GIL): the least any process that must import them
    can take, whatever it does around the query, on this machine's cores."""
    done: dict[str, Any] = {}
    query = threading.Thread(target=lambda: done.update(measure_hand(data, HAND_APPROX_SQL)))
    query.start()
    import_libraries()
    query.join()
    return done


MEASURE = {
    "assay": measure_assay,
    "hand": measure_hand,
    "hand-approx": measure_hand_approx,
    "floor": measure_floor,
    "floor-overlapped": measure_floor_overlapped,
}


# --- the parent: sets up the peers, runs the children, checks that they agree, prints -------


def venv_python(out: Path, peer: str) -> Path:
    return out / "venvs" / peer / "bin" / "python"


def setup_peers(out: Path, names: Sequence[str]) -> int:
    """Create each peer's virtual environment afresh and install its pinned packages."""
    failed = 0
    for name in names:
        peer = PEERS[name]
        venv = out / "venvs" / name
        requirements = [*peer.requirements, f"duckdb=={duckdb.__version__}"]
        steps = [
            [sys.executable, "-m", "venv", "--clear", str(venv)],
            [str(venv_python(out, name)), "-m", "pip", "install", "--quiet", *requirements],
        ]
        print(f"{name}: installing {' '.join(requirements)} into {venv}", flush=True)
        started = time.perf_counter()
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-20:])
                print(f"{name}: FAILED: {' '.join(step)} exited with {done.returncode}:\n{tail}")
                failed += 1
                break
        else:
            print(f"{name}: ready in {time.perf_counter() - started:.0f} s")
    return 2 if failed else 0


@dataclass(frozen=True)
class Setting:
    """What every contender's process is given."""

    data: Path
    out: Path
    spec: Path  # the columns and accepted values (JSON) that the peers' checks are written for


def write_spec(folder: Path) -> Path:
    path = folder / "profile-spec.json"
    path.write_text(json.dumps({"numbers": NUMBERS, "dates": DATES, "texts": TEXTS, "accepted": ACCEPTED}))
    return path


def run_contender(name: str, setting: Setting) -> ChildRun:
    """One run of a contender in a fresh process; BenchError if it could not run."""
    if name == CLI:
        return run_cli(setting)
    if name == HAND_PROCESS:
        return run_program([sys.executable, __file__, "--child", "hand-approx", "--data", str(setting.data)])
    if name == FLOOR:
        return run_program([sys.executable, __file__, "--child", "floor", "--data", str(setting.data)])
    if name == OVERLAPPED:
        command = [sys.executable, __file__, "--child", "floor-overlapped", "--data", str(setting.data)]
        return run_program(command)
    if name in MEASURE:
        run = run_program([sys.executable, __file__, "--child", name, "--data", str(setting.data)])
        # assay's process also profiles the day before, untimed: its whole-process time leaves it out
        first = run.measurements.get("first_load_seconds", 0.0)
        return ChildRun(run.measurements, run.process_seconds - first)
    python = venv_python(setting.out, name)
    if not python.exists():
        raise BenchError(
            f"no virtual environment at {python.parent.parent}: run bench/profile.py --setup-peers"
        )
    script = BENCH / "peers" / f"{name}_child.py"
    command = [str(python), str(script), "--data", str(setting.data), "--spec", str(setting.spec)]
    return run_program(command, env=PEERS[name].env)


def run_cli(setting: Setting) -> ChildRun:
    """The whole ``assay profile`` command on the second load of a fresh workspace (the first, the
    day before, is run untimed); only its wall time is measured. It is ``python -m assay`` with this
    checkout's sources first on the path, which is what the installed ``assay`` script runs."""
    env = assay_env()  # bytecode written by the untimed first load, read by the timed one
    with tempfile.TemporaryDirectory(prefix="profile-bench-") as workspace:
        elapsed = 0.0
        for load_date in (LOAD_DATE - timedelta(days=1), LOAD_DATE):
            command = [sys.executable, "-m", "assay", "profile", str(setting.data), "--dataset", "bench"]
            command += ["--load-date", load_date.isoformat(), "--workspace", workspace]
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
            elapsed = time.perf_counter() - started
            if done.returncode != 0:
                raise BenchError(f"{' '.join(command)} exited with {done.returncode}:\n{done.stderr.strip()}")
    return ChildRun({}, elapsed)


def rounds(
    names: Sequence[str], setting: Setting, runs: int
) -> tuple[dict[str, list[ChildRun]], dict[str, str]]:
    """``runs`` rounds of the contenders in turn; a contender that fails once is not run again."""
    done: dict[str, list[ChildRun]] = {name: [] for name in names}
    failed: dict[str, str] = {}
    for round_ in range(runs):
        for name in names:
            if name in failed:
                continue
            print(f"  round {round_ + 1}: {name}", end="", flush=True)
            try:
                run = run_contender(name, setting)
            except BenchError as error:
                failed[name] = str(error)
                print(": FAILED")
                continue
            done[name].append(run)
            print(f": {run.measurements.get('seconds', run.process_seconds):.2f} s")
    return {name: series for name, series in done.items() if name not in failed}, failed


def same(key: str, theirs: Any, hand: Any) -> bool:
    """Whether a contender's value of the metric ``key`` equals the hand-written query's."""
    column, _, metric = key.rpartition(".")
    if metric == "top10":
        return len(theirs) == len(hand) and all(
            mine[:2] == base[:2] and math.isclose(mine[2], base[2], rel_tol=1e-9)
            for mine, base in zip(theirs, hand, strict=True)
        )
    if isinstance(theirs, list) or isinstance(hand, list):
        return sorted(theirs) == sorted(hand)
    if theirs is None or hand is None:
        return theirs is None and hand is None
    if isinstance(hand, str):
        return str(theirs) == hand
    rel, absolute = 1e-9, 1e-12
    if metric == "distinct" and column not in CATEGORIES:
        rel = APPROXIMATE
    elif metric == "null_rate":
        absolute = RATE_TOLERANCE
    return math.isclose(float(theirs), float(hand), rel_tol=rel, abs_tol=absolute)


def disagreements(theirs: Mapping[str, Any], hand: Mapping[str, Any]) -> Iterator[str]:
    """Why a contender's metrics differ from the hand-written query's (nothing if they agree)."""
    for key, value in theirs.items():
        if key not in hand:
            continue
        if not same(key, value, hand[key]):
            yield f"{key} = {value!r}, hand-written {hand[key]!r}"
    if not set(theirs) & set(hand):
        yield "reports none of the hand-written query's metrics"


def agreement(runs: Mapping[str, list[ChildRun]]) -> dict[str, list[str]]:
    """Each contender's disagreements with the hand-written query, run by run of the same round."""
    found: dict[str, list[str]] = {}
    for name, series in runs.items():
        if name in ("hand", CLI, HAND_PROCESS, FLOOR, OVERLAPPED) or "hand" not in runs:
            continue
        problems: list[str] = []
        for theirs, hand in zip(series, runs["hand"], strict=False):
            problems += [
                problem
                for problem in disagreements(theirs.measurements["values"], hand.measurements["values"])
                if problem not in problems
            ]
        found[name] = problems
    return found


def versus(measured: Mapping[str, Mapping[str, Any]], peer: str) -> str:
    """How much faster assay is than ``peer``, by median wall time, with the CPU seconds beside."""
    missing = [name for name in ("assay", peer) if name not in measured]
    if missing:
        return f"assay vs {peer}: {missing[0]} did not run"
    wall, cpu = ({name: measured[name][key]["median"] for name in ("assay", peer)} for key in SPANS)
    speed = wall[peer] / wall["assay"]
    verdict = f"{speed:.1f}x faster" if speed >= 1 else f"{1 / speed:.1f}x SLOWER"
    return (
        f"assay vs {peer}: assay is {verdict} ({wall['assay']:.2f} s against {wall[peer]:.2f} s; "
        f"cpu {cpu['assay']:.2f} s against {cpu[peer]:.2f} s)"
    )


def bench(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    data = workload(args.rows, args.out)
    prepared = time.perf_counter() - started
    warm(data)
    names = [
        name
        for name in ORDER
        if name in args.only
        or (name == CLI and "assay" in args.only)
        or (name in (HAND_PROCESS, FLOOR, OVERLAPPED) and {"hand", "assay"} <= set(args.only))
    ]
    print(
        f"profile: {args.rows:,} rows x 20 columns "
        f"({data}, {data.stat().st_size / 1e6:.0f} MB, ready in {prepared:.1f} s)"
    )
    print(
        f"{args.runs} run(s) per contender, interleaved, each in a fresh process; "
        f"{os.cpu_count()} CPUs; DuckDB {duckdb.__version__} (default threads) for every contender"
    )
    with tempfile.TemporaryDirectory(prefix="profile-bench-") as folder:
        runs, failed = rounds(names, Setting(data, args.out, write_spec(Path(folder))), args.runs)

    measured = {
        name: spreads(series, () if name == CLI else SERIES) for name, series in runs.items() if series
    }
    rows = []
    for name, m in measured.items():
        if name == CLI:
            span = ["-"] * 4
        else:
            span = [f"{m['seconds'][key]:.2f}" for key in ("median", "low", "high")]
            span.append(f"{m['cpu_seconds']['median']:.2f}")
        peak = "-" if name == CLI else f"{m['peak_rss_mb']['high']:.0f}"
        rows.append([name, *span, f"{m['process_seconds']['median']:.2f}", peak])
    rows += [[name, *["-"] * 5, "did not run"] for name in failed]

    print()
    print(table(["contender", "median s", "min s", "max s", "cpu s", "process s", "peak RSS MB"], rows))
    ratios: dict[str, float] = {}
    if "assay" in measured and "hand" in measured:
        ratios = {
            key: measured["assay"][key]["median"] / measured["hand"][key]["median"]
            for key in (*SPANS, "process_seconds")
        }
        print(f"ratio assay/hand = {ratios['seconds']:.2f} (target <= {TARGET})")
        print(
            f"cpu time: ratio {ratios['cpu_seconds']:.2f}; "
            f"whole process: ratio {ratios['process_seconds']:.2f}"
        )
    else:
        print("ratio assay/hand: not measured (assay and hand must both run)")
    whole = ((CLI, "cli_process"), (FLOOR, "floor_process"), (OVERLAPPED, "overlapped_floor_process"))
    for name, key in whole:
        if name not in measured or HAND_PROCESS not in measured:
            continue
        seconds, hand_process = (measured[n]["process_seconds"]["median"] for n in (name, HAND_PROCESS))
        ratios[key] = seconds / hand_process
        if name == CLI:
            print(
                f"whole process: `assay profile` {seconds:.2f} s against the hand-written query's process "
                f"{hand_process:.2f} s (approximate distinct for {', '.join(HIGH_CARDINALITY)}): "
                f"ratio {ratios[key]:.2f} (target <= {TARGET})"
            )
        elif name == FLOOR:
            print(
                f"the floor: the same process importing typer, sqlglot (DuckDB dialect) and SQLAlchemy "
                f"(an SQLite store) first, as assay must: {seconds:.2f} s, ratio {ratios[key]:.2f}"
            )
        else:
            print(
                f"the floor overlapped: the same imports while DuckDB runs the query on a thread: "
                f"{seconds:.2f} s, ratio {ratios[key]:.2f}"
            )
    for peer in PEERS:
        if peer in args.only and "assay" in args.only:
            print(versus(measured, peer))

    problems = agreement(runs)
    print()
    if "hand" not in runs:
        print("metrics not compared: the hand-written query did not run")
    for name, found in problems.items():
        checked = len(set(runs[name][0].measurements["values"]) & set(runs["hand"][0].measurements["values"]))
        verdict = f"DISAGREES on {len(found)} metric(s)" if found else "agrees"
        print(f"{name}: {checked} metric values compared with the hand-written query's: {verdict}")
    if "assay" in runs:
        print(f"assay: engine queries per profile: {runs['assay'][0].measurements['queries']}")
        firsts = sorted(run.measurements["first_load_seconds"] for run in runs["assay"])
        print(
            f"assay: a dataset's first load (integer and date columns counted exactly): "
            f"median {firsts[len(firsts) // 2]:.2f} s"
        )
    for peer in PEERS:
        if peer in runs:
            print(f"{peer} ({PEERS[peer].title}) ran: {PEERS[peer].ran}")

    if args.json:
        payload = {
            "benchmark": "profile",
            "rows": args.rows,
            "runs": args.runs,
            "data": str(data),
            "data_bytes": data.stat().st_size,
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "duckdb": duckdb.__version__,
            "contenders": measured,
            "failed": failed,
            "disagreements": problems,
            "agree": not any(problems.values()),
            "ratio": ratios.get("seconds"),
            "cpu_ratio": ratios.get("cpu_seconds"),
            "process_ratio": ratios.get("process_seconds"),
            "cli_process_ratio": ratios.get("cli_process"),
            "floor_process_ratio": ratios.get("floor_process"),
            "overlapped_floor_process_ratio": ratios.get("overlapped_floor_process"),
            "target": TARGET,
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")

    for name, reason in failed.items():
        print(f"\n{name} did not run: {reason}", file=sys.stderr)
    for name, found in problems.items():
        if found:
            print(f"\n{name} and the hand-written query disagree:", *found, sep="\n  ", file=sys.stderr)
    if failed:
        return 2
    return 1 if any(problems.values()) else 0


def contenders(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in CONTENDERS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"choose among {','.join(CONTENDERS)}; not {','.join(unknown)}")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows of the generated file")
    parser.add_argument("--runs", type=int, default=3, help="runs per contender (the median is reported)")
    parser.add_argument(
        "--only",
        type=contenders,
        default=CONTENDERS,
        metavar="LIST",
        help=f"comma-separated contenders among {','.join(CONTENDERS)} (default: all)",
    )
    parser.add_argument(
        "--json", type=Path, default=None, metavar="OUT", help="also write the measurements here"
    )
    parser.add_argument(
        "--out", type=Path, default=OUT, metavar="DIR", help="folder of the generated data and peer venvs"
    )
    parser.add_argument(
        "--setup-peers",
        action="store_true",
        help="create the peers' virtual environments (of those in --only) and exit",
    )
    parser.add_argument("--child", choices=sorted(MEASURE), help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rows < 1 or args.runs < 1:
        parser.error("--rows and --runs must be positive")
    if args.child:
        report(MEASURE[args.child](args.data))
        return 0
    if args.setup_peers:
        return setup_peers(args.out, [name for name in PEERS if name in args.only])
    try:
        return bench(args)
    except BenchError as error:
        print(error, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
