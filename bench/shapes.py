"""What value shapes cost a profile: ``assay.measure.profile.profile`` of one load with the first
rows' shapes (e-mail, phone, identity and card numbers: assay.measure.shapes) and without them,
in the same run, alternated round by round.

    python bench/shapes.py [--rows 500000] [--rounds 5] [--json OUT]

The load has 12 columns: five of card-number-shaped text (every value passes the Luhn check, the
case that made a check of every row ten times slower), an e-mail, a phone and an identity-number
column, two ordinary text columns, an integer and a double, as a DuckDB table in memory. Printed:
the median seconds with and without shapes and their ratio, and the shares the profile found.
Exit 0 whatever the figures; 1 when a shaped column's share is not the one planted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import duckdb

SRC = Path(__file__).resolve().parents[1] / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

from assay.engine import DuckDBEngine  # noqa: E402
from assay.measure import profile as profiling  # noqa: E402
from assay.measure import shapes  # noqa: E402

# 15 digits from the row number, then the check digit that makes the Luhn sum a multiple of 10
_CARD = """
WITH d AS (SELECT lpad(CAST(i * 7919 + {k} AS VARCHAR), 15, '4') AS body, i FROM range({rows}) t(i)),
w AS (SELECT body, i, list_sum(list_transform(range(1, 16), lambda p:
        CASE WHEN p % 2 = 1
             THEN (CAST(substr(body, 16 - p, 1) AS INTEGER) * 2) % 10
                  + (CAST(substr(body, 16 - p, 1) AS INTEGER) * 2) // 10
             ELSE CAST(substr(body, 16 - p, 1) AS INTEGER) END)) AS s FROM d)
SELECT i, body || CAST((10 - s % 10) % 10 AS VARCHAR) AS card FROM w
"""


def load(con: duckdb.DuckDBPyConnection, rows: int) -> None:
    cards = ", ".join(f"c{k}.card AS card{k}" for k in range(5))
    joins = " ".join(f"JOIN ({_CARD.format(k=k, rows=rows)}) c{k} USING (i)" for k in range(5))
    con.execute(
        f"""CREATE TABLE t AS SELECT i AS id, {cards},
            'user' || i || '@mail' || (i % 7) || '.example.com' AS email,
            '+60 1' || (i % 10) || '-' || lpad(CAST(i % 10000000 AS VARCHAR), 7, '0') AS phone,
            lpad(CAST(70 + i % 30 AS VARCHAR), 2, '0') || lpad(CAST(1 + i % 12 AS VARCHAR), 2, '0')
              || lpad(CAST(1 + i % 28 AS VARCHAR), 2, '0') || '-14-'
              || lpad(CAST(i % 10000 AS VARCHAR), 4, '0') AS new_ic,
            'note ' || (i % 97) AS note, 'city' || (i % 3000) AS city, i * 0.5 AS amount
        FROM range({rows}) r(i) {joins} ORDER BY i"""
    )
    return con


def timed(engine: DuckDBEngine, shaped: bool) -> tuple[float, Any]:
    kept = shapes.sample
    if not shaped:
        shapes.sample = lambda table, columns: None  # type: ignore[assignment]
    try:
        started = time.perf_counter()
        found = profiling.profile(engine, "t", engine.columns("t"))
        return time.perf_counter() - started, found
    finally:
        shapes.sample = kept  # type: ignore[assignment]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    engine = DuckDBEngine()
    load(engine.con, args.rows)
    seconds: dict[str, list[float]] = {"with": [], "without": []}
    found = None
    for _ in range(args.rounds):
        for name in ("without", "with"):
            took, result = timed(engine, name == "with")
            seconds[name].append(took)
            if name == "with":
                found = result
    assert found is not None
    shares = {c.name: c.shapes for c in found.columns if c.shapes}
    with_, without = statistics.median(seconds["with"]), statistics.median(seconds["without"])
    print(f"profile of {args.rows:,} rows x 12 columns, median of {args.rounds} rounds each:")
    print(f"  with shapes {with_:.3f} s, without {without:.3f} s, ratio {with_ / without:.3f}")
    print(f"  shares found: {json.dumps(shares)}")
    wanted = {**{f"card{k}": {"card_number": 1.0} for k in range(5)}, "email": {"email": 1.0}}
    wanted |= {"phone": {"phone": 1.0}, "new_ic": {"phone": 1.0, "identity_number": 1.0}}
    if args.json:
        args.json.write_text(json.dumps({"rows": args.rows, "seconds": seconds, "shares": shares}, indent=2))
    if shares != wanted:
        print(f"  planted shares not found: wanted {json.dumps(wanted)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
