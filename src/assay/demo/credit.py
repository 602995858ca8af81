"""The demo's second part: a small credit bureau, its history, and the seed's faults caught.

Three banks and two instalment lenders send a file a month. Twelve months are committed through
the gate (BANK_C misses its last two, which it will send as a backfill); then the thirteenth
month arrives carrying the faults of seed 000: a swapped column mapping (BANK_A), doubled limits
from a bad join (BANK_B), a three-month backfill (BANK_C), a truncated extract (PAYLATER),
malformed lines (EASYPAY), and a brand-new contributor (NEWPAY, no history at all).
"""

from __future__ import annotations

import csv
import shutil
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from assay._render import progress
from assay.demo import bureau as bu
from assay.demo import faults as fa
from assay.gate.gate import GateOptions, GateResult
from assay.platform.flows import gate as run_gate
from assay.store import MetricStore
from assay.workspace import Workspace

HISTORY = 12
BACKFILL_FROM = 10  # BANK_C's last committed month is 9: it sends 10, 11 and 12 together
CONTRIBUTORS = (*bu.DEFAULT_CONTRIBUTORS, bu.Contributor("NEWPAY", "instalment", 150, since=HISTORY))


@dataclass(frozen=True)
class Arrival:
    contributor: str
    fault: str
    batch: pa.Table | str
    expected: fa.Expected


def _type(contributor: str) -> str:
    return next(c.type for c in CONTRIBUTORS if c.id == contributor)


def _arrivals(bureau: bu.Bureau) -> list[Arrival]:
    month = HISTORY
    swapped, swap_expected = fa.swap_limit_mapping(bureau.month("BANK_A", month))
    doubled, double_expected = fa.double_limits(bureau.month("BANK_B", month), share=0.05)
    backfill, backfill_expected = fa.backfill(bureau, "BANK_C", BACKFILL_FROM, months=3)
    truncated, truncate_expected = fa.truncate(
        bureau.month("PAYLATER", month), previous=bureau.month("PAYLATER", month - 1)
    )
    malformed, malformed_expected = fa.malformed_rows(bu.csv_text(bureau.month("EASYPAY", month)))
    first, first_expected = fa.first_file(bureau, "NEWPAY")
    return [
        Arrival("BANK_A", "swapped column mapping", swapped, swap_expected),
        Arrival("BANK_B", "limits doubled by a bad join", doubled, double_expected),
        Arrival("BANK_C", "three-month backfill", backfill, backfill_expected),
        Arrival("PAYLATER", "truncated extract", truncated, truncate_expected),
        Arrival("EASYPAY", "malformed lines", malformed, malformed_expected),
        Arrival("NEWPAY", "brand-new contributor", first, first_expected),
    ]


class Bureau:
    """Runs the story in a workspace and prints it."""

    def __init__(self, console: Console, workspace: Workspace, *, status: Console | None = None) -> None:
        self.console = console
        self.status = status or console
        self.workspace = workspace
        self.folder = workspace.root / "bureau"
        self.folder.mkdir(parents=True, exist_ok=True)
        package = resources.files("assay.demo") / "data"
        for name in ("bureau_rules.csv", "accounts_schema.yaml"):
            with resources.as_file(package / name) as source:
                shutil.copyfile(source, self.folder / name)
        self.rules = self.folder / "bureau_rules.csv"
        self.schema = self.folder / "accounts_schema.yaml"
        self.bureau = bu.Bureau(CONTRIBUTORS)
        # The table's gate settings, so that `assay gate` in this workspace needs no column flags.
        checks = workspace.root / "checks"
        checks.mkdir(parents=True, exist_ok=True)
        (checks / "silver.accounts.yaml").write_text(
            "gate:\n"
            "  key: account_id\n"
            "  order: statement_date\n"
            "  contributor_column: contributor_id\n"
            f"  schema: {Path('..') / 'bureau' / 'accounts_schema.yaml'}\n"
        )

    def gate(self, store: MetricStore, contributor: str, batch: pa.Table | str, name: str) -> GateResult:
        path = self.folder / "files" / f"{contributor}_{name}.csv"
        path.parent.mkdir(exist_ok=True)
        path.write_text(batch if isinstance(batch, str) else bu.csv_text(batch))
        options = GateOptions(
            batch=path,
            rules=self.rules,
            contributor=contributor,
            contributor_type=_type(contributor),
            workspace=self.workspace.root,
            schema=self.schema,
        )
        return run_gate(options, store=store)

    def run(self) -> dict[str, Any]:
        """Gate the history and the final month, print the story, return its counts (for --json)."""
        console = self.console
        console.rule("[bold]2. A credit bureau: each row against its own past")
        console.print(
            f"Control CSV {self.rules} ({len(self.rules.read_text().splitlines()) - 1} rules: completeness, "
            "identity, domain, financial, trend, aggregate), selected by contributor type.",
            highlight=False,
        )
        history = [
            (c.id, i)
            for i in range(HISTORY)
            for c in CONTRIBUTORS
            if i >= c.since and not (c.id == "BANK_C" and i >= BACKFILL_FROM)
        ]
        with MetricStore.open(workspace=self.workspace.root) as store:
            with progress(
                self.status, "Committing 12 months of history through the gate", len(history)
            ) as step:
                refused = 0
                for contributor, index in history:
                    date = self.bureau.statement_date(index).isoformat()
                    result = self.gate(store, contributor, self.bureau.month(contributor, index), date)
                    refused += result.summary.quarantined
                    step()
            console.print(
                f"History: {len(history)} monthly files committed through the gate "
                f"({refused} rows quarantined along the way).\n"
            )
            arrivals = _arrivals(self.bureau)
            with progress(self.status, "Gating the final month", len(arrivals)) as step:
                results = []
                for a in arrivals:
                    results.append((a, self.gate(store, a.contributor, a.batch, "final")))
                    step()
        self._report(results)
        return {
            "rules": str(self.rules),
            "history_files": len(history),
            "history_quarantined": refused,
            "final": [{"contributor": a.contributor, "fault": a.fault, **_counts(r)} for a, r in results],
        }

    def _report(self, results: list[tuple[Arrival, GateResult]]) -> None:
        console = self.console
        table = Table(title="The final month: what the gate caught", header_style="bold")
        for name in ("contributor", "fault", "rows", "committed", "warned", "quarantined", "caught by"):
            table.add_column(name, overflow="fold")
        for arrival, result in results:
            s = result.summary
            caught = _caught(result)
            table.add_row(
                arrival.contributor,
                arrival.fault,
                str(s.total),
                f"[green]{s.passed}[/green]",
                f"[yellow]{s.warned}[/yellow]",
                f"[red]{s.quarantined}[/red]",
                escape(", ".join(f"{rule} ×{n}" for rule, n in caught.most_common())) or "—",
            )
        console.print(table)
        notes = {
            "BANK_A": "the limits no longer match last month (T01, T02) or no longer add up (F01)",
            "BANK_B": "every doubled limit contradicts the account's own past (T01, T02)",
            "BANK_C": "each month baselined on the one before it: the legitimate changes pass",
            "PAYLATER": "the month is refused whole: half of last month's rows arrived (A02)",
            "EASYPAY": "unreadable lines quarantined with their raw text; the rest committed",
            "NEWPAY": "no history: every trend rule skipped, nothing failed",
        }
        for arrival, result in results:
            where = f" → {result.quarantine_file}" if result.quarantine_file else ""
            console.print(
                f"  [bold]{arrival.contributor}[/bold]: {notes[arrival.contributor]}{escape(where)}"
            )
        bank_a = next(r for a, r in results if a.contributor == "BANK_A")
        if bank_a.quarantine_file:
            console.print("\nA few quarantined BANK_A rows:")
            with Path(bank_a.quarantine_file).open() as handle:
                for row in list(csv.DictReader(handle))[:3]:
                    console.print(
                        f"  {row['account_id']} credit_limit={row['credit_limit']} "
                        f"product_limit={row['product_limit']}: {escape(row['dq_reasons'])}",
                        highlight=False,
                    )
        with self.workspace.warehouse() as warehouse:
            info = next(t for t in warehouse.tables() if t.name == "silver.accounts")
        console.print(
            f"\nsilver.accounts: {info.rows} rows in {info.partitions} contributor-months, "
            f"{info.snapshots} snapshots; no prev_ or validation column in its {len(info.schema)} columns.",
            highlight=False,
        )
        root = self.workspace.root
        console.print(
            "Explore:\n"
            f"  assay table list --workspace {root}\n"
            f"  assay table export silver.accounts accounts.parquet --workspace {root}\n"
            f"  assay rules compile {self.rules} --contributor-type bank\n"
            f"  ls {root / 'dq_error'}   # quarantined rows by date and contributor\n"
            f"  ls {root / 'runs'}       # one JSON summary per run",
            highlight=False,
        )


def _counts(result: GateResult) -> dict[str, Any]:
    s = result.summary
    return {
        "total": s.total,
        "passed": s.passed,
        "warned": s.warned,
        "quarantined": s.quarantined,
        "held": s.held,
        "caught_by": dict(_caught(result).most_common()),
        "summary": str(result.summary_file),
    }


def _caught(result: GateResult) -> Counter[str]:
    counts: Counter[str] = Counter()
    if result.quarantine_file:
        with Path(result.quarantine_file).open() as handle:
            for row in csv.DictReader(handle):
                counts.update(row["dq_failed_rules"].split(";"))
    for rule_id, stats in result.summary.rules.items():
        if stats.severity == "warning" and stats.failed:
            counts[rule_id] += stats.failed
    return counts
