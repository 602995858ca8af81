"""Two stored histories (real DuckDB, a real SQLite store); tests copy them before changing them:

- ``trades``: the demo's executed trades, 24 days, each day profiled as the drift monitor does and
  its check document run; the last day carries the demo's regression (a venue stopped, three
  fills settled before they were executed). The document is the demo's without its volume,
  freshness and settlement expectations, so that those are proposed.
- ``weekly``: 29 days of a table whose weekend loads are a third of a weekday's.

``trades`` is read by three modules (tests/proposals/test_cli.py, test_crash.py, test_propose.py)
and built once per test run for all three (tests/_shared.py); ``weekly`` once per module.
"""

from __future__ import annotations

import random
import re
import sqlite3
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _shared import once
from assay.demo.trades import clock, days, generate, profile_day
from assay.platform.checks.document import load_document
from assay.platform.flows import profile
from assay.platform.runs.check import run_document
from assay.store import MetricStore
from assay.workspace import Workspace

TRADE_DAYS = 24
DROPPED = ("fresh", "total-volume", "region-volume", "settle-after-exec")


def trimmed(text: str) -> str:
    """The demo's document without the expectations named in DROPPED (comments kept)."""
    blocks = re.split(r"(?m)^(?=  - id: )", text)
    return "".join(b for b in blocks if not any(b.startswith(f"  - id: {eid}\n") for eid in DROPPED))


def build_trades(root: Path) -> Path:
    path = generate(root, TRADE_DAYS)
    path.write_text(trimmed(path.read_text()))
    document = load_document(path)
    space = Workspace(root)
    with MetricStore.open(workspace=root) as store:
        for day in days(TRADE_DAYS):
            profile_day(space, store, path, document.dataset.name, day)
            run_document(document, path, at=day, now=clock(day), store=store, workspace=space)
    return root


WEEKLY = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: shop.visits
  source: {path: "../data/*.parquet"}
profiles:
  - id: daily
    slice: {column: day}
    metrics:
      - row_count
"""
WEEKLY_START = date(2026, 10, 5)  # a Monday
WEEKLY_DAYS = 29


def weekly_rows(day: date) -> int:
    rng = random.Random(day.toordinal())
    base = 40 if day.weekday() >= 5 else 120
    return int(base * rng.uniform(0.97, 1.03))


def build_weekly(root: Path) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "checks").mkdir()
    path = root / "checks" / "visits.yaml"
    # the daily runs store the profile's row counts (the history a volume band reads); the
    # document is left without an expectation on them, so that the volume is proposed
    path.write_text(f'{WEEKLY}expectations:\n  - {{id: some, metric: daily.row_count, expect: "> 0"}}\n')
    document = load_document(path)
    space = Workspace(root)
    with MetricStore.open(workspace=root) as store:
        for i in range(WEEKLY_DAYS):
            day = WEEKLY_START + timedelta(days=i)
            n = weekly_rows(day)
            file = root / "data" / f"visits-{day}.parquet"
            pq.write_table(pa.table({"day": [day] * n, "visit": [f"{day}-{k}" for k in range(n)]}), file)
            profile(file, dataset="shop.visits", load_date=day, store=store, workspace=root)
            run_document(document, path, at=day, now=clock(day), store=store, workspace=space)
    path.write_text(WEEKLY)
    return root


@pytest.fixture(scope="module")
def trades_history() -> Path:
    return once("proposals-trades", build_trades)


@pytest.fixture(scope="module")
def weekly_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_weekly(tmp_path_factory.mktemp("weekly"))


def dump(database: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of a SQLite store."""
    with sqlite3.connect(database) as connection:
        tables = [r[0] for r in connection.execute("select name from sqlite_master where type = 'table'")]
        return {t: sorted(connection.execute(f'select * from "{t}"').fetchall(), key=repr) for t in tables}
