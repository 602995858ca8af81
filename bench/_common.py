"""Helpers shared by the benchmarks in this folder: the PEERS.md workload as a cached Parquet
file, child processes that report their own timings and peak memory, and the printed table.

Every contender of a benchmark runs in a fresh process of its own (``run_child``), so that its
peak resident memory is its own and no contender inherits another's warm caches; the OS page
cache is warmed once for all (``warm``).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import duckdb

OUT = Path(__file__).resolve().parent / "out"
SRC = Path(__file__).resolve().parents[1] / "src"  # the checkout's sources, not another installed copy


def assay_env(**extra: str) -> dict[str, str]:
    """The environment of a child that runs ``assay`` from this checkout's sources, as an installed
    copy runs: bytecode files are written on the first run and read afterwards (an environment
    with PYTHONDONTWRITEBYTECODE would otherwise time compiling every module from source on every
    run, which no installed copy does)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)
    return {**env, **extra}


# Bump when WORKLOAD_SQL changes, so that cached files are generated again.
WORKLOAD_VERSION = 1

# The PEERS.md workload: 20 columns, 8 BIGINT with ~2% NULLs, 4 DOUBLE, 5 VARCHAR of 5/20/50/200/1000
# values, one id-like VARCHAR of up to 400k values, one DATE and one unique BIGINT id. Columns are
# hashes of the row number, so the file is the same on every run of one DuckDB version. The id is
# i * p mod rows for a prime p: a permutation of 0..rows-1 (unique, but not sorted).
WORKLOAD_SQL = """
SELECT
    (i * 2654435761) % $rows AS id,
    CASE WHEN hash(i, 'z1') % 50 = 0 THEN NULL ELSE (hash(i, 'n1') % 1000000)::BIGINT END AS n1,
    CASE WHEN hash(i, 'z2') % 50 = 0 THEN NULL ELSE (hash(i, 'n2') % 1000000)::BIGINT END AS n2,
    CASE WHEN hash(i, 'z3') % 50 = 0 THEN NULL ELSE (hash(i, 'n3') % 1000000)::BIGINT END AS n3,
    CASE WHEN hash(i, 'z4') % 50 = 0 THEN NULL ELSE (hash(i, 'n4') % 1000000)::BIGINT END AS n4,
    CASE WHEN hash(i, 'z5') % 50 = 0 THEN NULL ELSE (hash(i, 'n5') % 1000000)::BIGINT END AS n5,
    CASE WHEN hash(i, 'z6') % 50 = 0 THEN NULL ELSE (hash(i, 'n6') % 1000000)::BIGINT END AS n6,
    CASE WHEN hash(i, 'z7') % 50 = 0 THEN NULL ELSE (hash(i, 'n7') % 1000000)::BIGINT END AS n7,
    CASE WHEN hash(i, 'z8') % 50 = 0 THEN NULL ELSE (hash(i, 'n8') % 1000000)::BIGINT END AS n8,
    (hash(i, 'd1') % 100000000)::DOUBLE / 1000 AS d1,
    (hash(i, 'd2') % 100000000)::DOUBLE / 1000 AS d2,
    (hash(i, 'd3') % 100000000)::DOUBLE / 1000 AS d3,
    (hash(i, 'd4') % 100000000)::DOUBLE / 1000 AS d4,
    'v' || hash(i, 's5') % 5 AS s5,
    'v' || hash(i, 's20') % 20 AS s20,
    'v' || hash(i, 's50') % 50 AS s50,
    'v' || hash(i, 's200') % 200 AS s200,
    'v' || hash(i, 's1000') % 1000 AS s1000,
    'C' || lpad((hash(i, 'code') % 400000)::VARCHAR, 6, '0') AS code,
    DATE '2020-01-01' + (hash(i, 'day') % 1500)::INTEGER AS day
FROM range($rows) AS r(i)
"""

# A child writes its measurements as one line starting with this mark on its standard output.
_MARK = "@@bench "


class BenchError(Exception):
    """A benchmark could not run (a child failed); the message says why."""


def workload(rows: int, out: Path = OUT) -> Path:
    """The PEERS.md workload with ``rows`` rows as a Parquet file in ``out``, generated on first use
    and reused after: ``workload(10_000_000)`` is ``bench/out/workload-v1-10000000.parquet``."""
    path = out / f"workload-v{WORKLOAD_VERSION}-{rows}.parquet"
    if path.exists():
        return path
    out.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    con = duckdb.connect()
    try:
        con.sql(WORKLOAD_SQL, params={"rows": rows}).write_parquet(str(partial))
    finally:
        con.close()
    # Another run may have written the same file meanwhile; both are the same bytes.
    os.replace(partial, path)
    return path


def warm(path: Path) -> None:
    """Read ``path`` once, so that every contender finds it in the OS page cache."""
    with path.open("rb") as handle:
        while handle.read(1 << 24):
            pass


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB.

    On Linux, ``ru_maxrss`` survives ``exec``: a child started by a parent that once held 2 GB
    reports at least 2 GB. ``VmHWM`` belongs to the running program alone, so it is preferred.
    """
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / (1 << 10)


def reset_peak_rss() -> bool:
    """Start this process's peak resident memory afresh from its present size (Linux 4.0+: writing
    5 to ``clear_refs`` resets ``VmHWM``), so that a later :func:`peak_rss_mb` covers only what
    follows. False where that is not possible: the peak then covers the earlier work too."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


class Span:
    """The wall and CPU seconds of a stretch of a child's work, and its peak memory before and after.

    CPU seconds count every thread of the process; on a shared machine they move less than wall time.

    >>> with Span() as span:
    ...     _ = sum(range(1000))
    >>> sorted(span.measurements())
    ['cpu_seconds', 'peak_rss_mb', 'rss_before_mb', 'seconds']
    """

    def __enter__(self) -> Span:
        self.rss_before = peak_rss_mb()
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._wall
        self.cpu_seconds = time.process_time() - self._cpu

    def measurements(self) -> dict[str, float]:
        return {
            "seconds": self.seconds,
            "cpu_seconds": self.cpu_seconds,
            "rss_before_mb": self.rss_before,
            "peak_rss_mb": peak_rss_mb(),
        }


def report(measurements: dict[str, Any]) -> None:
    """Hand a child's measurements to the parent (see :func:`run_child`)."""
    print(_MARK + json.dumps(measurements), flush=True)


@dataclass(frozen=True)
class ChildRun:
    """What one child process reported, and the wall time of the whole process seen from outside."""

    measurements: dict[str, Any]
    process_seconds: float


def run_child(args: Sequence[str]) -> ChildRun:
    """Run ``python ARGS`` in a fresh process and return what it reported with :func:`report`."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise BenchError(f"{' '.join(args)} exited with {done.returncode}:\n{done.stderr.strip()}")
    lines = [line for line in done.stdout.splitlines() if line.startswith(_MARK)]
    if not lines:
        raise BenchError(f"{' '.join(args)} reported nothing:\n{done.stdout}{done.stderr}")
    return ChildRun(json.loads(lines[-1][len(_MARK) :]), elapsed)


@dataclass(frozen=True)
class Spread:
    """The median, minimum and maximum of a few measurements.

    >>> Spread.of([3.0, 1.0, 2.0])
    Spread(median=2.0, low=1.0, high=3.0)
    """

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        return cls(statistics.median(values), min(values), max(values))


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain text table: the first column left-aligned, the others right-aligned.

    >>> print(table(["tool", "s"], [["a", "1.00"], ["bb", "10.00"]]))
    tool      s
    a      1.00
    bb    10.00
    """
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]
    lines = []
    for row in [headers, *rows]:
        cells = [row[0].ljust(widths[0])] + [
            cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def fresh_copy(source: Path, target: Path) -> Path:
    """Make ``target`` an exact copy of the folder ``source`` again, whatever a previous run left there.

    A benchmark that writes (a gate commits to its workspace) runs each time on a fresh copy of the
    prepared state; the copy also leaves every file of it in the OS page cache.
    """
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target)
    return target


def spreads(runs: Sequence[ChildRun], names: Sequence[str]) -> dict[str, Any]:
    """The measurements ``names`` of a contender's runs, and the wall time of each whole process,
    run by run and as median, min and max (a :class:`Spread` as a dict)."""
    series = {name: [run.measurements[name] for run in runs] for name in names}
    series["process_seconds"] = [run.process_seconds for run in runs]
    return {"runs": series, **{name: asdict(Spread.of(values)) for name, values in series.items()}}


def run_program(command: Sequence[str], env: Mapping[str, str] | None = None) -> ChildRun:
    """Run ``command`` in a fresh process and return what it reported with :func:`report`.

    Unlike :func:`run_child`, the program need not be this interpreter: a peer's script runs with
    the Python of its own virtual environment. ``env`` is added to this process's environment.
    """
    started = time.perf_counter()
    done = subprocess.run(
        list(command), capture_output=True, text=True, check=False, env={**os.environ, **(env or {})}
    )
    elapsed = time.perf_counter() - started
    shown = " ".join(command)
    if done.returncode != 0:
        raise BenchError(f"{shown} exited with {done.returncode}:\n{done.stderr.strip()}")
    lines = [line for line in done.stdout.splitlines() if line.startswith(_MARK)]
    if not lines:
        raise BenchError(f"{shown} reported nothing:\n{done.stdout}{done.stderr}")
    return ChildRun(json.loads(lines[-1][len(_MARK) :]), elapsed)
