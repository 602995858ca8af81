"""Two machines on one catalog, one store and one bucket: each a workspace folder of its own with
its own assay.yaml naming the shared catalog, and ``assay gate`` run there as a real process.
:func:`start_together` releases several such processes at one instant through a FIFO they all
wait on; :func:`account` counts where every input row ended, by key, across both machines."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from _demo_workspace import cli_env
from assay.workspace import Workspace
from lifecycle.world import RULES, TABLE

Key = tuple[str, str]  # (contributor, account)


@dataclass(frozen=True)
class Site:
    """One machine's workspace; ``catalog`` is the ``catalog:`` block of its assay.yaml."""

    root: Path
    store_url: str

    @classmethod
    def make(cls, root: Path, store_url: str, catalog: str) -> Site:
        (root / "checks").mkdir(parents=True)
        (root / "checks" / f"{TABLE}.yaml").write_text("domain_columns: [account_status]\n")
        (root / "assay.yaml").write_text(catalog)
        (root / "rules.csv").write_text(RULES)
        return cls(root, store_url)

    def arguments(self, batch: Path, contributor: str) -> list[str]:
        return [
            "gate", str(batch), "--rules", str(self.root / "rules.csv"),
            "--contributor", contributor, "--contributor-type", "bank", "--table", TABLE,
            "--key", "account_id", "--order", "statement_date", "--contributor-column", "contributor_id",
            "--workspace", str(self.root), "--store", self.store_url, "--json",
        ]  # fmt: skip

    def command(self, batch: Path, contributor: str) -> list[str]:
        return [sys.executable, "-m", "assay", *self.arguments(batch, contributor)]


def sql_catalog(uri: str, warehouse: str) -> str:
    return f"catalog:\n  type: sql\n  uri: {uri}\n  warehouse: {warehouse}\n"


def rest_catalog(uri: str, warehouse: str, token_env: str) -> str:
    return f"catalog:\n  type: rest\n  uri: {uri}\n  warehouse: {warehouse}\n  token_env: {token_env}\n"


def batch(folder: Path, name: str, text: str, contributor: str) -> Path:
    """``text`` (a lifecycle world's month of contributor B1) as ``contributor``'s file."""
    path = folder / name
    lines = text.splitlines()
    path.write_text("\n".join([lines[0], *(f"{contributor}{line[2:]}" for line in lines[1:])]) + "\n")
    return path


def keys(path: Path) -> Counter[Key]:
    """Every row of a batch file by key: what must end committed, quarantined or held once."""
    with path.open() as handle:
        return Counter((row["contributor_id"], row["account_id"]) for row in csv.DictReader(handle))


def start_together(
    commands: Sequence[list[str]], fifo: Path, envs: Sequence[dict[str, str]] = ()
) -> list[subprocess.CompletedProcess[str]]:
    """Run ``commands`` (each in its environment of ``envs``, by default :func:`cli_env`) as
    processes released at one instant: each first reads one line of the FIFO ``fifo`` (the
    shell's ``read`` takes one line of a pipe, byte by byte), and the lines are written only
    when every process has been started; returns each one's outcome."""
    os.mkfifo(fifo)
    gate = 'read go < "$0" && exec "$@"'
    processes = [
        subprocess.Popen(
            ["sh", "-c", gate, str(fifo), *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for command, env in zip(commands, envs or [cli_env()] * len(commands), strict=True)
    ]
    with fifo.open("w") as release:  # opens once a process waits on the other end
        release.write("go\n" * len(processes))
        release.flush()
        outs = [process.communicate(timeout=300) for process in processes]
    return [
        subprocess.CompletedProcess(command, process.returncode, out, err)
        for command, process, (out, err) in zip(commands, processes, outs, strict=True)
    ]


def account(sites: Sequence[Site], where: Mapping[str, Any]) -> Counter[tuple[str, Key]]:
    """Where each row ended, by key: ``("committed", key)`` in the shared table's rows matching
    ``where`` (read through the first site's catalog), ``("quarantined", key)`` and ``("held",
    key)`` in any site's files."""
    found = Counter[tuple[str, Key]]()
    with Workspace(sites[0].root).warehouse() as warehouse:
        rows = warehouse.read(TABLE, where, columns=["contributor_id", "account_id"])
    for contributor, account_id in zip(*(rows.column(c).to_pylist() for c in rows.column_names), strict=True):
        found["committed", (contributor, account_id)] += 1
    for site in sites:
        for path in sorted((site.root / "dq_error").rglob("*.csv")):
            with path.open() as handle:
                for row in csv.DictReader(handle):
                    found["quarantined", (row["contributor_id"], row["account_id"])] += 1
        for path in sorted((site.root / "held").rglob("*.parquet")):
            held = pq.read_table(path, columns=["contributor_id", "account_id"])
            for contributor, account_id in zip(*(c.to_pylist() for c in held.columns), strict=True):
                found["held", (contributor, account_id)] += 1
    return found


def once(found: Counter[tuple[str, Key]]) -> Counter[Key]:
    """How many places each key ended in (exactly once: 1 for every input key)."""
    return Counter(key for (_, key), n in found.items() for _ in range(n))
