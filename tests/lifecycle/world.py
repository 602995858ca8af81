"""A small gate world for the crash tests: a contributor whose January is committed, and a
February batch that exercises every publication of a gate run (committed rows, a trend failure,
a broken sum and an unreadable cell quarantined, two rows held on a never-seen status), run as the
real ``assay gate`` command in a subprocess (the run that is killed, starved or raced), or in this
process (the runs after it), on SQLite or PostgreSQL; and what the workspace and the store hold
afterwards, to compare with a clean run."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from _invoke import completed
from assay.gate.gate import GateOptions
from assay.lake.iceberg import Warehouse
from assay.platform.flows import gate as run_gate
from assay.store import MetricKey, MetricStore

TABLE = "silver.accounts"
RULES = '''rule_id,contributor_type,category,severity,rule,description
C01,all,completeness,critical,"IsComplete ""account_id""",Every record names its account
F01,all,financial,critical,credit_limit = product_limit + temporary_limit,The limit adds up
T01,bank,trend,critical,credit_limit = prev_credit_limit OR account_status = 'ADMIN_CHANGE',Limit stability
A02,all,aggregate,critical,"RowCount >= 0.8 * last()",The extract is not truncated
'''
HEADER = "contributor_id,account_id,statement_date,account_status,credit_limit,product_limit,temporary_limit"
ACCOUNTS = [f"A{i:02d}" for i in range(1, 21)]
FEBRUARY = date(2025, 2, 28)


def january() -> str:
    rows = [f"B1,{a},2025-01-31,ACTIVE,{1000 + i},{1000 + i},0" for i, a in enumerate(ACCOUNTS)]
    return "\n".join([HEADER, *rows]) + "\n"


def february(variant: str = "faulty") -> str:
    """February: with ``faulty``, A03 moves its limit (T01), A04's limit does not add up (F01),
    A05's limit is unreadable (a parse error), A06 and A07 have a never-seen status (held)."""
    rows = []
    for i, a in enumerate(ACCOUNTS):
        limit, product, status = 1000 + i, 1000 + i, "ACTIVE"
        if variant == "faulty":
            if a == "A03":
                limit = product = 9999
            elif a == "A04":
                product = 1
            elif a in ("A06", "A07"):
                status = "FROZEN"
        cell = "1O04" if variant == "faulty" and a == "A05" else str(limit)
        rows.append(f"B1,{a},2025-02-28,{status},{cell},{product},0")
    return "\n".join([HEADER, *rows]) + "\n"


@dataclass
class World:
    """A workspace and a store with January committed."""

    root: Path
    store_url: str

    @property
    def workspace(self) -> Path:
        return self.root / "ws"

    @property
    def rules(self) -> Path:
        return self.root / "rules.csv"

    def file(self, name: str, text: str) -> Path:
        path = self.root / name
        path.write_text(text)
        return path

    @classmethod
    def make(cls, root: Path, store_url: str) -> World:
        world = cls(root, store_url)
        world.rules.write_text(RULES)
        checks = world.workspace / "checks"
        checks.mkdir(parents=True)
        (checks / f"{TABLE}.yaml").write_text("domain_columns: [account_status]\n")
        options = GateOptions(
            batch=world.file("jan.csv", january()),
            rules=world.rules,
            contributor="B1",
            contributor_type="bank",
            workspace=world.workspace,
        )
        with MetricStore.open(store_url) as store:
            result = run_gate(options, store=store)
        assert result.summary.passed == len(ACCOUNTS)
        return world

    def command(self, batch: Path) -> list[str]:
        return [sys.executable, "-m", "assay", *self.arguments(batch)]

    def arguments(self, batch: Path) -> list[str]:
        return [
            "gate",
            str(batch),
            "--rules",
            str(self.rules),
            "--contributor",
            "B1",
            "--contributor-type",
            "bank",
            "--table",
            TABLE,
            "--key",
            "account_id",
            "--order",
            "statement_date",
            "--contributor-column",
            "contributor_id",
            "--workspace",
            str(self.workspace),
            "--store",
            self.store_url,
            "--json",
        ]

    def gate(
        self, batch: Path, *, crash_at: str | None = None, **popen: Any
    ) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "ASSAY_CRASH_AT"}
        if crash_at:
            env["ASSAY_CRASH_AT"] = crash_at
        return subprocess.run(
            self.command(batch), env=env, capture_output=True, text=True, timeout=300, check=False, **popen
        )

    def gate_here(self, batch: Path) -> subprocess.CompletedProcess[str]:
        """The same command in this process: for a run that is not killed, starved or raced."""
        return completed(*self.arguments(batch))

    def start(self, batch: Path) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.command(batch), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def unbalanced(self) -> list[dict[str, Any]]:
        """The gate runs of the table whose audit (``assay gate audit --table``: every row of the
        batch read again, found in exactly one output) does not balance: none, after any crash."""
        done = completed(
            "gate", "audit", "--table", TABLE, "--workspace", str(self.workspace), "--store", self.store_url,
            "--json",
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
        runs: list[dict[str, Any]] = json.loads(done.stdout)["runs"]
        assert (done.returncode == 0) == all(run["balanced"] for run in runs)
        return [run for run in runs if not run["balanced"]]

    def observe(self) -> Observation:
        warehouse = Warehouse.open(self.workspace)
        rows = warehouse.read(TABLE, {"contributor_id": "B1", "statement_date": FEBRUARY})
        keys = list(
            zip(rows.column("account_id").to_pylist(), rows.column("credit_limit").to_pylist(), strict=True)
        )
        quarantined = Counter[str]()
        for path in sorted((self.workspace / "dq_error").rglob("*.csv")):
            with path.open() as handle:
                for row in csv.DictReader(handle):
                    quarantined[row["account_id"]] += 1
        held = Counter[str]()
        for path in sorted((self.workspace / "held").rglob("*.parquet")):
            for account in pq.read_table(path).column("account_id").to_pylist():
                held[account] += 1
        with MetricStore.open(self.store_url) as store:
            decisions = [(d.value, d.rows) for d in store.decisions(TABLE, "pending")]
            loads = store.load_for_date(TABLE, FEBRUARY, partition="B1")
            counts = [store.metrics_of(load).get(MetricKey.dataset("RowCount")) for load in loads]
            states = Counter(run.state for run in store.runs(TABLE, limit=1000))
            pending = [
                load
                for run in store.runs(TABLE, limit=1000)
                for load, s in store.run_loads(run.id).items()
                if s == "pending"
            ]
        staging = self.workspace / "staging"
        return Observation(
            committed=sorted(keys),
            quarantined=dict(quarantined),
            held=dict(held),
            decisions=sorted(decisions),
            current_loads=len(loads),
            row_counts=counts,
            running=states.get("running", 0),
            pending_loads=len(pending),
            staged=sorted(p.name for p in staging.iterdir()) if staging.exists() else [],
        )


@dataclass(frozen=True)
class Observation:
    """What a gate world holds for February after its runs."""

    committed: list[tuple[str, int]]
    quarantined: dict[str, int]
    held: dict[str, int]
    decisions: list[tuple[str, int]]
    current_loads: int
    row_counts: list[float | None]
    running: int
    pending_loads: int
    staged: list[str]

    def accounted(self) -> int:
        """Rows of February that ended committed, quarantined or held."""
        return len(self.committed) + sum(self.quarantined.values()) + sum(self.held.values())
