"""Rows held for a decision: a never-seen value in a domain column is decided, not defaulted.

A dataset may declare *domain columns* (``domain_columns`` in ``<workspace>/checks/<table>.yaml``).
When a batch row carries a value such a column never held in a committed load and that no
decision accepted, the gate opens a decision (seed 002: a new value goes to a human, never to a
default) and holds the row: it is neither committed nor quarantined but kept in
``<workspace>/held/<table>/contributor=<ID>/<run_id>.parquet`` with the decisions it waits on.
``assay decisions accept ID`` commits the held rows that no longer wait on anything;
``assay decisions reject ID`` quarantines the rows that carry the rejected value. A value
already rejected quarantines its rows at once. A column with no committed history yet is
learning its domain: nothing is held.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from assay.errors import ConfigError
from assay.lake.iceberg import Warehouse
from assay.lake.quarantine import QuarantineFile, quarantine_path
from assay.workspace import Workspace

if TYPE_CHECKING:
    from assay.store import MetricStore
    from assay.store.profiles import Decision

WAITS = "__waits"
ROW = "__row"


@dataclass
class Holds:
    waits: dict[int, list[int]] = field(default_factory=dict)  # row -> decision ids it waits on
    rejected: dict[int, list[str]] = field(default_factory=dict)  # row -> why it is quarantined
    decisions: set[int] = field(default_factory=set)


def domain_columns(workspace: Workspace, table: str) -> list[str]:
    """The domain columns a table's configuration declares (none without a configuration)."""
    from assay.monitor import load_config

    path = workspace.root / "checks" / f"{table}.yaml"
    return load_config(path).domain_columns if path.exists() else []


def find(store: MetricStore, table: str, columns: list[str], rows: pa.Table, *, source: str) -> Holds:
    """The rows (typed, with ``__row``) that carry an undecided or rejected never-seen value.
    ``source`` (the gate run) is where the decisions it opens say their rows came from."""
    holds = Holds()
    for column in columns:
        if column not in rows.column_names:
            raise ConfigError(f"checks/{table}.yaml: domain column '{column}' is not a column of the table")
        if not store.value_set(table, column):
            continue  # no committed history: this batch teaches the column its domain
        known = store.known_values(table, column)
        status = store.decision_status(table, column)
        values = pc.cast(rows.column(column), pa.string()).to_pylist()
        positions: dict[str, list[int]] = defaultdict(list)
        for row, value in zip(rows.column(ROW).to_pylist(), values, strict=True):
            if value is not None and value not in known and status.get(value) != "accepted":
                positions[value].append(row)
        for value, found in positions.items():
            if status.get(value) == "rejected":
                for row in found:
                    holds.rejected.setdefault(row, []).append(
                        f"{column} '{value}' was rejected as a value of {column}"
                    )
                continue
            decision = store.open_decision(table, column, value, len(found), None, source=source)
            holds.decisions.add(decision)
            for row in found:
                holds.waits.setdefault(row, []).append(decision)
    return holds


def held_path(workspace: Workspace, table: str, contributor: str, run_id: str) -> Path:
    return workspace.root / "held" / table / f"contributor={contributor}" / f"{run_id}.parquet"


def stage(path: Path, rows: pa.Table, waits: list[list[int]]) -> Path:
    """Write held rows with the decisions each waits on next to ``path``; rename to publish."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(path.name + ".partial")
    pq.write_table(rows.append_column(WAITS, pa.array(waits, pa.list_(pa.int64()))), staged)
    return staged


def write(path: Path, rows: pa.Table, waits: list[list[int]]) -> None:
    """Write held rows with the decisions each waits on, atomically."""
    stage(path, rows, waits).replace(path)


def release(workspace: Workspace, store: MetricStore, decision: Decision) -> list[str]:
    """Apply a decision to the rows held for it; returns what was done, one line per file."""
    folder = workspace.root / "held" / decision.dataset
    if decision.status == "pending" or not folder.exists():
        return []
    lines = []
    for path in sorted(folder.glob("contributor=*/*.parquet")):
        held = pq.read_table(path)
        waits = held.column(WAITS).to_pylist()
        if not any(decision.id in w for w in waits):
            continue
        contributor = path.parent.name.removeprefix("contributor=")
        if decision.status == "accepted":
            remaining = [[d for d in w if d != decision.id] for w in waits]
            ready = pa.array([not w for w in remaining])
            rows = held.drop_columns([WAITS]).filter(ready)
            if rows.num_rows:
                Warehouse.open(workspace.root).commit(
                    decision.dataset,
                    rows,
                    properties={"assay.run-id": f"decision-{decision.id}", "assay.contributor": contributor},
                )
                lines.append(f"committed {rows.num_rows} held row(s) of {decision.dataset} for {contributor}")
            keep = pc.invert(ready)
            left = [w for w, done in zip(remaining, ready.to_pylist(), strict=True) if not done]
        else:
            hit = pa.array([decision.id in w for w in waits])
            rows = held.drop_columns([WAITS]).filter(hit)
            quarantine = QuarantineFile(rows.column_names, f"decision-{decision.id}")
            reason = (
                f"{decision.column} '{decision.value}' was rejected "
                f"(decision {decision.id}, by {decision.decided_by})"
            )
            for values in rows.to_pylist():
                quarantine.add(
                    {k: None if v is None else _text(v) for k, v in values.items()}, ["domain"], [reason]
                )
            target = quarantine_path(
                workspace.root, datetime.now(UTC).date(), contributor, f"decision-{decision.id}-{path.stem}"
            )
            quarantine.stage(target)
            quarantine.publish()
            lines.append(
                f"quarantined {rows.num_rows} held row(s) of {decision.dataset} for {contributor}: {target}"
            )
            keep = pc.invert(hit)
            left = [w for w, out in zip(waits, hit.to_pylist(), strict=True) if not out]
        still = held.drop_columns([WAITS]).filter(keep)
        if still.num_rows:
            write(path, still, left)
        else:
            path.unlink()
    return lines


def _text(value: object) -> str:
    return value.isoformat() if isinstance(value, date | datetime) else str(value)
