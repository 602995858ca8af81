"""The gate and the profile on DuckDB and on Spark ``local[2]``, on the same generated data.

    python bench/spark.py [--gate-rows 100000,1000000] [--profile-rows 1000000,5000000]
                          [--runs 1] [--master local[2]] [--json OUT]

- **gate**: a contributor's month of ``--gate-rows`` accounts (``bench/gate.py``'s prepared data:
  the demo's bureau generator, 1 % of the limits doubled, 50 negative balances) gated with the 18
  bank rules against the committed month before it, as ``assay gate --engine E`` does;
- **profile**: every column of the PEERS.md workload (``bench/_common.py``, Parquet, 20 columns)
  profiled as a dataset's second load is, as ``assay profile --engine E`` does.

Each run is a fresh process on a fresh copy of the prepared workspace. A Spark child starts its
session first (the JVM's start is printed apart, untimed: a cluster's session outlives one run)
and reports, besides its wall time:

- ``python_share``: the child's own CPU seconds (the Python driver: assay's code, Arrow,
  PyIceberg, py4j) over the run's wall seconds. The JVM is a process of its own, so nothing Spark
  computes is in it. The target is under 10 %;
- ``idle_share``: the share of the run's wall time during which no Spark job was running, sampled
  every 10 ms through the public status tracker: driver-side Python, but also Spark planning
  queries and PyIceberg's commit;
- peak memory of the Python process and of the JVM (``VmHWM`` of each), and their sum.

It prints medians per size, the ratio Spark/DuckDB per size, and where (by a straight line
through the sizes measured) Spark would catch DuckDB on this machine. It exits 0 whatever the
figures (STYLE.md habit 10), 1 when the engines' results differ, 2 when a contender fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from contextlib import nullcontext
from datetime import date
from pathlib import Path
from typing import Any

import duckdb

# This folder holds profile.py, which would shadow the standard library's `profile` that PySpark
# imports: it leaves sys.path, and the two helpers used here are loaded by their paths.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_common = _load("_common")
OUT, BenchError, ChildRun, Span = _common.OUT, _common.BenchError, _common.ChildRun, _common.Span
fresh_copy, report, run_child = _common.fresh_copy, _common.report, _common.run_child
spreads, table, warm, workload = _common.spreads, _common.table, _common.warm, _common.workload

ENGINES = ("duckdb", "spark")
TARGET_SHARE = 0.10


# --- the children -----------------------------------------------------------------------------


def _vmhwm_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return 0.0
    return 0.0


def _jvm_pids() -> list[int]:
    """The Java processes this process started (PySpark's gateway JVM), from /proc."""
    me = os.getpid()
    parents = {me, *_children(me)}  # PySpark starts the JVM directly or through spark-submit
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            parent = int(fields[1])
            name = (entry / "comm").read_text().strip()
        except (OSError, IndexError, ValueError):
            continue
        if name == "java" and parent in parents:
            found.append(int(entry.name))
    return found


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


class JobSampler:
    """Samples, every 10 ms, whether the session has a Spark job running (public status tracker)."""

    def __init__(self, session: Any) -> None:
        self.tracker = session.sparkContext.statusTracker()
        self.samples = 0
        self.idle = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            busy = self.tracker.getActiveJobsIds()
            self.samples += 1
            self.idle += not busy

    def __enter__(self) -> JobSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def share(self) -> float:
        if not self.samples:
            raise BenchError("the status tracker was never sampled")
        return self.idle / self.samples


# What a long-lived driver (a scheduler, a worker, a notebook) has imported before its runs: the
# child imports it before timing, on both engines, and reports the time apart.
MODULES = (
    "assay.platform.runs.gate",
    "assay.platform.flows",
    "assay.lake.iceberg",
    "assay.lake.quarantine",
    "assay.monitor",
    "assay.store",
    "assay.judge.evaluation",
    "assay.engine.duckdb",
    "pyiceberg.catalog.sql",
    "pyiceberg.io.pyarrow",
    "pyarrow.parquet",
    "pyarrow.compute",
)


def _open(engine: str, master: str) -> tuple[Any, dict[str, float]]:
    """The engine factory's argument, the time to import assay's modules and the session's start
    time (Spark), untimed by the run."""
    started = time.perf_counter()
    for module in MODULES:
        importlib.import_module(module)
    imports = {"import_seconds": time.perf_counter() - started}
    if engine == "duckdb":
        return "duckdb", imports
    from assay.engine.spark import build_session

    imports["import_seconds"] = time.perf_counter() - started
    started = time.perf_counter()
    session = build_session(master)
    session.sql("SELECT 1").collect()  # the first job starts the executors
    return session, {**imports, "session_start_seconds": time.perf_counter() - started}


def measure_gate(engine: str, workspace: Path, batch: Path, master: str) -> dict[str, Any]:
    gate = _load("gate")

    from assay.engine.registry import engine_factory
    from assay.platform.flows import gate as run_gate
    from assay.platform.runs.gate import GateOptions
    from assay.store import MetricStore

    chosen, extra = _open(engine, master)
    options = GateOptions(
        batch=batch,
        rules=gate.RULES,
        contributor=gate.CONTRIBUTOR,
        contributor_type=gate.CONTRIBUTOR_TYPE,
        workspace=workspace,
        schema=gate.SCHEMA,
    )
    sampler = JobSampler(chosen) if engine == "spark" else None
    with Span() as span, sampler or nullcontext(), MetricStore.open(workspace=workspace) as store:
        result = run_gate(options, store=store, engine_factory=engine_factory(chosen))
    s = result.summary
    if s.total == 0:
        raise BenchError(f"the gate read no row of {batch}: {s.to_dict()}")
    return {
        **span.measurements(),
        **extra,
        **_shares(span, sampler),
        "result": {"total": s.total, "passed": s.passed, "quarantined": s.quarantined, "warned": s.warned},
    }


def measure_profile(engine: str, data: Path, master: str) -> dict[str, Any]:
    from assay.platform.flows import profile
    from assay.store import MetricStore

    chosen, extra = _open(engine, master)
    sampler = JobSampler(chosen) if engine == "spark" else None
    with MetricStore.open("sqlite://") as store, tempfile.TemporaryDirectory() as workspace:
        # the first load, untimed: the timed one is judged against it as every later load is
        profile(
            data, dataset="bench", load_date=date(2026, 1, 1), store=store, engine=chosen, workspace=workspace
        )
        with Span() as span, sampler or nullcontext():
            result = profile(
                data,
                dataset="bench",
                load_date=date(2026, 1, 2),
                store=store,
                engine=chosen,
                workspace=workspace,
            )
    return {
        **span.measurements(),
        **extra,
        **_shares(span, sampler),
        "result": {
            "rows": result.profile.rows,
            "nulls": {c.name: c.nulls for c in result.profile.columns},
            "types": dict(result.profile.schema),
            "alerts": sorted(a.message for a in result.alerts),
        },
    }


def _shares(span: Span, sampler: JobSampler | None) -> dict[str, float]:
    if sampler is None:
        return {"jvm_peak_rss_mb": 0.0}
    return {
        "python_share": span.cpu_seconds / span.seconds if span.seconds else 0.0,
        "idle_share": sampler.share,
        "jvm_peak_rss_mb": sum(_vmhwm_mb(pid) for pid in _jvm_pids()),
    }


# --- the parent -------------------------------------------------------------------------------


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of row counts: {text!r}") from None
    if not sizes or min(sizes) < 1000:
        raise argparse.ArgumentTypeError("row counts must be at least 1000")
    return sizes


def _catch_up(points: list[tuple[int, float, float]]) -> str:
    """Where a straight line through (rows, spark seconds) meets one through (rows, duckdb
    seconds), from the largest two sizes measured; or why it does not."""
    if len(points) < 2:
        return "one size measured: no trend"
    (r1, d1, s1), (r2, d2, s2) = points[-2], points[-1]
    duck_slope, spark_slope = (d2 - d1) / (r2 - r1), (s2 - s1) / (r2 - r1)
    if s2 <= d2:
        return f"Spark is already as fast at {r2:,} rows"
    if spark_slope >= duck_slope:
        return (
            f"never on this machine: Spark's time grows {spark_slope / max(duck_slope, 1e-12):.1f}x as fast "
            f"as DuckDB's per row ({spark_slope * 1e6:.2f} vs {duck_slope * 1e6:.2f} s per million rows)"
        )
    rows = r2 + (s2 - d2) / (duck_slope - spark_slope)
    return f"at about {rows:,.0f} rows (extrapolated from {r1:,} and {r2:,})"


def bench(args: argparse.Namespace) -> int:
    script = str(Path(__file__).resolve())
    print(
        f"{platform.platform()}; {os.cpu_count()} CPUs; DuckDB {duckdb.__version__}; "
        f"PySpark {_pyspark_version()}; Spark master {args.master}",
        flush=True,
    )
    results: dict[str, Any] = {"gate": {}, "profile": {}}
    failures: list[str] = []
    for rows in args.gate_rows:
        # bench/gate.py's data and default history (one cache for both); its catalog holds
        # absolute paths, so each run restores the workspace in place from its pristine copy
        prepared = _load("gate").prepare(rows, 10, args.out)
        warm(Path(prepared.batch))
        runs: dict[str, list[ChildRun]] = {e: [] for e in ENGINES}
        for _ in range(args.runs):
            for engine in ENGINES:
                workspace = fresh_copy(Path(prepared.recent.pristine), Path(prepared.recent.path))
                child = ["--child", "gate", "--engine", engine, "--workspace", str(workspace)]
                child += ["--data", prepared.batch, "--master", args.master]
                runs[engine].append(run_child([script, *child]))
        results["gate"][rows] = _summarise(runs, failures, f"gate {rows:,} rows")
    for rows in args.profile_rows:
        data = workload(rows, args.out)
        warm(data)
        runs = {e: [] for e in ENGINES}
        for _ in range(args.runs):
            for engine in ENGINES:
                child = ["--child", "profile", "--engine", engine, "--data", str(data)]
                runs[engine].append(run_child([script, *child, "--master", args.master]))
        results["profile"][rows] = _summarise(runs, failures, f"profile {rows:,} rows")
    _print(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str) + "\n")
    for failure in failures:
        print(f"DIFFERENT RESULTS: {failure}", file=sys.stderr)
    return 1 if failures else 0


def _summarise(runs: dict[str, list[ChildRun]], failures: list[str], what: str) -> dict[str, Any]:
    duck, spark = runs["duckdb"], runs["spark"]
    for a, b in zip(duck, spark, strict=True):
        if a.measurements["result"] != b.measurements["result"]:
            failures.append(f"{what}: duckdb {a.measurements['result']} vs spark {b.measurements['result']}")
    names = ("seconds", "cpu_seconds", "peak_rss_mb", "jvm_peak_rss_mb")
    out = {"duckdb": spreads(duck, names), "spark": spreads(spark, (*names, "python_share", "idle_share"))}
    out["spark"]["session_start_seconds"] = [r.measurements["session_start_seconds"] for r in spark]
    out["result"] = duck[0].measurements["result"] if what.startswith("gate") else None
    return out


def _print(results: dict[str, Any]) -> None:
    for flow in ("gate", "profile"):
        rows_out = []
        points = []
        for rows, found in results[flow].items():
            d, s = found["duckdb"], found["spark"]
            ds, ss = d["seconds"]["median"], s["seconds"]["median"]
            points.append((rows, ds, ss))
            rows_out.append(
                [
                    f"{rows:,}",
                    f"{ds:.2f}",
                    f"{ss:.2f}",
                    f"{ss / ds:.1f}",
                    f"{d['peak_rss_mb']['median']:.0f}",
                    f"{s['peak_rss_mb']['median']:.0f} + {s['jvm_peak_rss_mb']['median']:.0f}",
                    f"{s['python_share']['median']:.1%}",
                    f"{s['idle_share']['median']:.1%}",
                    f"{min(found['spark']['session_start_seconds']):.1f}",
                ]
            )
        if not rows_out:
            continue
        print(f"\n{flow}")
        print(
            table(
                ["rows", "duckdb s", "spark s", "spark/duckdb", "duckdb MB", "spark MB (py + jvm)",
                 "python share", "no-job share", "session start s"],
                rows_out,
            )
        )  # fmt: skip
        worst = max(found["spark"]["python_share"]["median"] for found in results[flow].values())
        verdict = "met" if worst < TARGET_SHARE else "MISSED"
        print(f"driver-side Python share: at most {worst:.1%} (target < {TARGET_SHARE:.0%}: {verdict})")
        print(f"Spark catches DuckDB: {_catch_up(points)}")


def _pyspark_version() -> str:
    try:
        import pyspark
    except ModuleNotFoundError:
        return "not installed"
    return str(pyspark.__version__)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gate-rows", type=_sizes, default=[100_000, 1_000_000], help="gate batch sizes")
    parser.add_argument(
        "--profile-rows", type=_sizes, default=[1_000_000, 5_000_000], help="profiled file sizes"
    )
    parser.add_argument("--runs", type=int, default=1, help="runs per engine and size (medians printed)")
    parser.add_argument("--master", default="local[2]", help="the Spark master URL")
    parser.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the measurements")
    parser.add_argument("--out", type=Path, default=OUT, metavar="DIR", help="folder of the generated data")
    parser.add_argument("--child", choices=("gate", "profile"), help=argparse.SUPPRESS)
    parser.add_argument("--engine", choices=ENGINES, help=argparse.SUPPRESS)
    parser.add_argument("--workspace", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child == "gate":
        report(measure_gate(args.engine, args.workspace, args.data, args.master))
        return 0
    if args.child == "profile":
        report(measure_profile(args.engine, args.data, args.master))
        return 0
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    try:
        return bench(args)
    except BenchError as error:
        print(error, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
