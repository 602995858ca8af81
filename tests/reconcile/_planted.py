"""Two small tables with planted differences, and what a reconciliation must find in them."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa

SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("amount", pa.float64()),
        ("name", pa.string()),
        ("day", pa.date32()),
        ("ok", pa.bool_()),
    ]
)


def _row(i: int | None) -> dict[str, Any]:
    n = i or 0
    return {
        "id": i,
        "amount": n * 1.25,
        "name": f"n{n}",
        "day": dt.date(2026, 1, 1) + dt.timedelta(days=n),
        "ok": n % 2 == 0,
    }


def tables() -> tuple[pa.Table, pa.Table]:
    """(source, target): id 3 only in the source, 21 only in the target; 5's amount moved within
    a tolerance of 0.01, 6's beyond it; 7's name NULL on both sides; 8's name NULL on one; 9's
    day moved; a source row with a NULL id; id 10 twice in the target."""
    source = [_row(i) for i in range(1, 21)] + [_row(None)]
    source[6]["name"] = None  # id 7
    target = [dict(r) for r in source if r["id"] not in (3, None)] + [_row(21), _row(10)]
    by_id = {r["id"]: r for r in target}
    by_id[5]["amount"] += 0.01
    by_id[6]["amount"] += 0.5
    by_id[8]["name"] = None
    by_id[9]["day"] = dt.date(2020, 1, 1)
    return pa.Table.from_pylist(source, SCHEMA), pa.Table.from_pylist(target, SCHEMA)


EXPECTED = {
    "only_in_source": 1,
    "only_in_target": 1,
    "changed": 3,
    "changed_by_column": {"amount": 1, "name": 1, "day": 1, "ok": 0},
    "null_keys": {"source": 1, "target": 0},
    "duplicate_keys": {"source": 0, "target": 1},
}
"""What ``--key id --tolerance amount=0.01`` finds."""


def found(result: dict[str, Any]) -> dict[str, Any]:
    return {k: result[k] for k in EXPECTED}
