"""Wide CSV files: ``assay profile``'s profile and ``AllStatistics AllColumns`` on a 500-column CSV,
against DuckDB reading the same file once, in the same run.

    python bench/wide.py [--columns 500] [--rows 20000] [--out DIR]

The file has a third each of integer columns (some blank cells), float columns and text columns
of 7 values. The baseline is one hand-written DuckDB statement over the file: ``count(c)`` of
every column (the least a profile reads). The script prints each time and its ratio to the
baseline (issue 8: "in seconds, not minutes"; a 500-column profile used to fail after two
minutes on DuckDB's expression depth). It exits 0 whatever the figures (STYLE.md habit 10), and
1 when assay's null counts differ from the file's or a measurement did not come in one query.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date
from pathlib import Path

import duckdb

from assay.dqdl import evaluate
from assay.monitor import profile

OUT = Path(__file__).resolve().parent / "out"


def write(path: Path, columns: int, rows: int) -> dict[str, int]:
    """The wide file, and the number of blank (NULL) cells of each integer column."""
    nulls: dict[str, int] = {}
    with path.open("w") as handle:
        handle.write(",".join(f"c{j}" for j in range(columns)) + "\n")
        for i in range(rows):
            cells = []
            for j in range(columns):
                if j % 3 == 0:
                    blank = i % (j % 5 + 2) == 0
                    nulls[f"c{j}"] = nulls.get(f"c{j}", 0) + blank
                    cells.append("" if blank else str(i * j % 997))
                elif j % 3 == 1:
                    cells.append(f"{i / (j + 1):.4f}")
                else:
                    cells.append(f"v{(i + j) % 7}")
            handle.write(",".join(cells) + "\n")
    return nulls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, default=500)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"wide-{args.columns}x{args.rows}.csv"
    nulls = write(path, args.columns, args.rows)

    started = time.perf_counter()
    con = duckdb.connect()
    counts = ", ".join(f'count("c{j}")' for j in range(args.columns))
    con.sql(f"SELECT {counts} FROM read_csv('{path}')").fetchall()
    con.close()
    baseline = time.perf_counter() - started

    started = time.perf_counter()
    profiled = profile(path, dataset="wide", load_date=date(2024, 1, 1))
    profiling = time.perf_counter() - started

    started = time.perf_counter()
    evaluated = evaluate("Rules = [ RowCount > 0 ]\nAnalyzers = [ AllStatistics AllColumns ]", path)
    evaluating = time.perf_counter() - started

    print(f"wide CSV: {args.columns} columns x {args.rows:,} rows ({path.stat().st_size / 1e6:.0f} MB)")
    print(f"hand (DuckDB, one count per column): {baseline:.2f} s")
    print(
        f"assay profile: {profiling:.2f} s, {profiled.queries} engine query; ratio {profiling / baseline:.2f}"
    )
    print(
        f"assay AllStatistics AllColumns: {evaluating:.2f} s, {evaluated.queries} engine query, "
        f"{len(evaluated.analyzers[0].metrics)} metrics; ratio {evaluating / baseline:.2f}"
    )
    wrong = [name for name, n in nulls.items() if profiled.profile.column(name).nulls != n]
    if wrong or profiled.queries != 1 or evaluated.queries != 1 or evaluated.analyzers[0].errors:
        print(f"DISAGREES: null counts of {wrong}, queries {profiled.queries} and {evaluated.queries}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
