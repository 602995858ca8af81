"""``assay reconcile`` against a hand-written full outer join in DuckDB, on one engine (two
Parquet files) and across engines (a PostgreSQL table against a Parquet file): the time of each,
and across engines the bytes that crossed from the engines to assay against the tables' size.

    .venv/bin/python bench/reconcile.py                  # 10,000,000 rows
    .venv/bin/python bench/reconcile.py --rows 1000000 --json reconcile.json

Two tables of N rows (id, amount, qty, name, day); the target differs from the source in 0.1 %
of the rows: a third missing, a third with another amount, a third extra ids. Without
``--postgres URL`` a PostgreSQL server is started from the machine's binaries (tests/pgserver.py).
Exit 0 whatever the ratios; 1 when assay and the hand-written join disagree.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

import duckdb  # noqa: E402
import psycopg  # noqa: E402

from assay.platform.reconcile import Spec, reconcile  # noqa: E402

COLUMNS = "id BIGINT, amount DOUBLE PRECISION, qty BIGINT, name VARCHAR, day DATE"

# Every 1000th row differs: i % 3000 = 0 missing from the target, = 1000 another amount,
# = 2000 replaced by an id beyond the source's (one missing and one extra row).
SOURCE_SQL = """
SELECT i AS id, (hash(i, 'a') % 1000000) / 100.0 AS amount, (hash(i, 'q') % 1000)::BIGINT AS qty,
       'name-' || (hash(i, 'n') % 50000)::VARCHAR AS name, DATE '2020-01-01' + (i % 2000)::INT AS day
FROM range($rows) t(i)
"""
TARGET_SQL = """
SELECT CASE WHEN id % 3000 = 2000 THEN id + $rows ELSE id END AS id,
       CASE WHEN id % 3000 = 1000 THEN amount + 1 ELSE amount END AS amount, qty, name, day
FROM read_parquet($source) WHERE id % 3000 <> 0
"""
HAND_SQL = """
SELECT count(*) FILTER (WHERE t.id IS NULL) AS only_in_source,
       count(*) FILTER (WHERE s.id IS NULL) AS only_in_target,
       count(*) FILTER (WHERE s.id IS NOT NULL AND t.id IS NOT NULL AND (
           s.amount IS DISTINCT FROM t.amount OR s.qty IS DISTINCT FROM t.qty
           OR s.name IS DISTINCT FROM t.name OR s.day IS DISTINCT FROM t.day)) AS changed
FROM read_parquet($source) s FULL OUTER JOIN read_parquet($target) t ON s.id = t.id
"""


def generate(folder: Path, rows: int) -> tuple[Path, Path]:
    source, target = folder / f"source-{rows}.parquet", folder / f"target-{rows}.parquet"
    with duckdb.connect() as con:
        con.execute(f"COPY ({SOURCE_SQL}) TO '{source}' (FORMAT parquet)", {"rows": rows})
        con.execute(
            f"COPY ({TARGET_SQL}) TO '{target}' (FORMAT parquet)", {"rows": rows, "source": str(source)}
        )
    return source, target


def hand(source: Path, target: Path) -> tuple[float, dict[str, int]]:
    start = time.perf_counter()
    with duckdb.connect() as con:
        row = con.execute(HAND_SQL, {"source": str(source), "target": str(target)}).fetchone()
    assert row is not None
    return time.perf_counter() - start, dict(
        zip(("only_in_source", "only_in_target", "changed"), row, strict=True)
    )


def load_postgres(url: str, source: Path) -> None:
    """The source file as table public.source (COPY of the CSV DuckDB writes)."""
    csv = source.with_suffix(".csv")
    with duckdb.connect() as con:
        con.execute(f"COPY (SELECT * FROM read_parquet('{source}')) TO '{csv}' (FORMAT csv, HEADER false)")
    with psycopg.connect(url) as pg:
        pg.execute("DROP TABLE IF EXISTS source")
        pg.execute(f"CREATE TABLE source ({COLUMNS})")
        with pg.cursor().copy("COPY source FROM STDIN (FORMAT csv)") as copy, csv.open("rb") as file:
            while chunk := file.read(1 << 20):
                copy.write(chunk)
        pg.execute("ANALYZE source")
    csv.unlink()


def timed(source: str, target: str, folder: Path) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    result = reconcile(source, target, Spec.of(["id"]), base=folder, workspace=folder)
    return time.perf_counter() - start, result.to_dict()


def table_bytes(path: Path) -> int:
    """The compared columns' size as Arrow holds them: what fetching a whole table moves."""
    with duckdb.connect() as con:
        return int(con.sql(f"SELECT * FROM read_parquet('{path}')").to_arrow_table().nbytes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--postgres", help="a PostgreSQL URL to load the source into (default: start one)")
    parser.add_argument("--json", dest="json_out", type=Path, help="also write the measurements here")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="reconcile-bench-"))
    print(f"generating two tables of {args.rows:,} rows (0.1 % differences) in {folder}")
    source, target = generate(folder, args.rows)
    hand_seconds, expected = hand(source, target)
    same_seconds, same = timed(source.name, target.name, folder)
    found = {k: same[k] for k in expected}
    agree = found == expected
    print(
        f"one engine: hand-written full outer join {hand_seconds:.2f} s, assay reconcile {same_seconds:.2f} s"
    )
    print(f"ratio assay/hand = {same_seconds / hand_seconds:.2f}")

    server = None
    url = args.postgres
    if url is None:
        from pgserver import PostgresServer

        server = PostgresServer.start()
        url = server.create_database().replace("postgresql+psycopg://", "postgresql://")
    try:
        start = time.perf_counter()
        load_postgres(url, source)
        print(f"loaded the source into PostgreSQL in {time.perf_counter() - start:.1f} s")
        parts = urlsplit(url)
        (folder / "assay.yaml").write_text(
            f"sources:\n  servers: ['{parts.hostname}:{parts.port or 5432}']\n"
        )
        cross_seconds, cross = timed(f"postgres:{url}#public.source", target.name, folder)
    finally:
        if server is not None:
            server.stop()
    agree = agree and {k: cross[k] for k in expected} == expected
    moved = sum(m["bytes"] for m in cross["moved"].values())
    size = table_bytes(source) + table_bytes(target)
    print(f"across engines (PostgreSQL against Parquet): assay reconcile {cross_seconds:.2f} s")
    print(f"ratio across/hand = {cross_seconds / hand_seconds:.2f}")
    rows_moved = sum(m["rows"] for m in cross["moved"].values())
    print(
        f"moved {moved:,} bytes ({rows_moved:,} rows) of {size:,} bytes in the two tables: {moved / size:.4f}"
    )
    print(f"differences: {expected} ({'agree' if agree else 'DISAGREE'})")
    if args.json_out is not None:
        payload = {
            "rows": args.rows,
            "hand_seconds": hand_seconds,
            "same_engine_seconds": same_seconds,
            "cross_engine_seconds": cross_seconds,
            "moved": cross["moved"],
            "moved_bytes": moved,
            "table_bytes": size,
            "expected": expected,
            "agree": agree,
        }
        args.json_out.write_text(json.dumps(payload, indent=2) + "\n")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
