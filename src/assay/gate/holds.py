"""Rows held for a decision: a never-seen value in a domain column is decided, not defaulted.

A dataset may declare *domain columns* (``domain_columns`` in its document, found by
:meth:`assay.workspace.Workspace.document_for`; the platform passes them to :func:`find`).
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
from sqlglot import exp

from assay.errors import ConfigError
from assay.lake import storage
from assay.lake.quarantine import QuarantineFile, quarantine_path
from assay.privacy import Masker
from assay.workspace import Workspace

if TYPE_CHECKING:
    from assay.engine import Engine
    from assay.store import MetricStore
    from assay.store.profiles import Decision

WAITS = "__waits"
HELD_BY = "assay.held-by"  # a decision's commit of held rows names the run that held them
ROW = "__row"


WAIT = pa.struct([("column", pa.string()), ("value", pa.string())])
"""What a held row waits on: the decision on one value of one domain column."""


@dataclass
class Holds:
    waits: dict[int, list[tuple[str, str]]] = field(default_factory=dict)  # row -> (column, value)s
    rejected: dict[int, list[str]] = field(default_factory=dict)  # row -> why it is quarantined
    needed: dict[tuple[str, str], int] = field(default_factory=dict)  # (column, value) -> rows held


def find(
    engine: Engine,
    store: MetricStore,
    table: str,
    columns: list[str],
    rows: exp.Query,
    names: list[str],
    *,
    document: Path | None = None,
    masker: Masker | None = None,
) -> Holds:
    """The rows of ``rows`` (a query of the batch in ``engine``, with ``__row``; ``names``, its
    columns) that carry an undecided or rejected never-seen value (``document``: where the
    ``columns`` were declared, named by a mistake).

    Each domain column's distinct values come back first (a handful), are turned into text as
    the store keeps them, and only the rows carrying a new one are fetched. Nothing is written:
    the decisions a run needs (``needed``) are opened when the run commits, so a run that fails
    or is killed asks nobody to decide anything."""
    holds = Holds()
    batch = exp.alias_(exp.Subquery(this=rows), "__holds_rows", table=True, quoted=True)
    for column in columns:
        if column not in names:
            where = document or f"checks/{table}.yaml"
            raise ConfigError(f"{where}: domain column '{column}' is not a column of the table")
        if not store.value_set(table, column):
            continue  # no committed history: this batch teaches the column its domain
        known = store.known_values(table, column)
        status = store.decision_status(table, column)
        cell = exp.column(column, quoted=True)
        distinct = engine.query(
            exp.select(exp.alias_(cell.copy(), "v", quoted=True))
            .from_(batch.copy())
            .where(exp.not_(cell.copy().is_(exp.null())))
            .group_by(cell.copy())
        ).column("v")
        # a classified column's values are known (and decided) as their keyed hashes
        mask = masker or Masker.none()
        texts = [mask.value(column, t) for t in pc.cast(distinct, pa.string()).to_pylist()]
        new = [i for i, value in enumerate(texts) if value not in known and status.get(value) != "accepted"]
        if not new:
            continue
        engine.register_arrow("__holds_values", pa.table({"v": distinct.take(pa.array(new, pa.int64()))}))
        wanted = exp.select(exp.column("v", quoted=True)).from_(
            exp.to_identifier("__holds_values", quoted=True)
        )
        found = engine.query(
            exp.select(exp.column(ROW, quoted=True), cell.copy())
            .from_(batch.copy())
            .where(exp.In(this=cell.copy(), query=exp.Subquery(this=wanted)))
            .order_by(exp.column(ROW, quoted=True))
        )
        positions: dict[str, list[int]] = defaultdict(list)
        values = [mask.value(column, v) for v in pc.cast(found.column(column), pa.string()).to_pylist()]
        for row, value in zip(found.column(ROW).to_pylist(), values, strict=True):
            positions[value].append(row)
        for value, at in positions.items():
            if status.get(value) == "rejected":
                for row in at:
                    holds.rejected.setdefault(row, []).append(
                        f"{column} '{value}' was rejected as a value of {column}"
                    )
                continue
            holds.needed[(column, value)] = len(at)
            for row in at:
                holds.waits.setdefault(row, []).append((column, value))
    return holds


def held_folder(workspace: Workspace, table: str, contributor: str) -> Path:
    return workspace.root / "held" / table / f"contributor={contributor}"


def held_path(workspace: Workspace, table: str, contributor: str, run_id: str) -> Path:
    return held_folder(workspace, table, contributor) / f"{run_id}.parquet"


@dataclass(frozen=True)
class Layout:
    """The table's columns that releasing held rows needs: the key, the order (statement date)
    and the contributor column. Kept in each held file's metadata."""

    key: str
    order: str
    contributor: str


@dataclass
class HeldFile:
    rows: pa.Table
    waits: list[list[tuple[str, str]]]
    layout: Layout


def write(path: Path, rows: pa.Table, waits: list[list[tuple[str, str]]], layout: Layout) -> None:
    """Write held rows with what each waits on, atomically (written beside, then renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    column = pa.array([[{"column": c, "value": v} for c, v in w] for w in waits], pa.list_(WAIT))
    table = rows.append_column(WAITS, column)
    metadata = {f"assay.{name}".encode(): value.encode() for name, value in vars(layout).items()}
    pq.write_table(table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata}), partial)
    partial.replace(path)


def read(path: Path) -> HeldFile:
    """A held file's rows, what each waits on, and the table's layout."""
    held = pq.read_table(path)
    metadata = held.schema.metadata or {}
    waits = [[(w["column"], w["value"]) for w in ws] for ws in held.column(WAITS).to_pylist()]
    rows = held.drop_columns([WAITS]).replace_schema_metadata(None)
    layout = Layout(
        *(metadata.get(f"assay.{n}".encode(), b"").decode() for n in ("key", "order", "contributor"))
    )
    return HeldFile(rows, waits, layout)


def counts(waits: list[list[tuple[str, str]]]) -> dict[tuple[str, str], int]:
    """How many held rows wait on each (column, value)."""
    found: dict[tuple[str, str], int] = defaultdict(int)
    for wait in waits:
        for item in set(wait):
            found[item] += 1
    return dict(found)


def withdraw(
    workspace: Workspace, store: MetricStore, table: str, contributor: str, months: set[date], *, keep: str
) -> int:
    """Rows held by earlier runs for months that run ``keep`` has just replaced are withdrawn: the
    month sent again stands instead, and accepting a decision later must not add a second record
    of a key. The decisions those runs asked for lose the withdrawn rows (a decision left with
    none is closed). Returns the rows withdrawn; safe to repeat."""
    folder = held_folder(workspace, table, contributor)
    if not months or not folder.exists():
        return 0
    withdrawn = 0
    for path in sorted(folder.glob("*.parquet")):
        if path.stem == keep:
            continue
        held = read(path)
        if held.layout.order not in held.rows.column_names:
            continue
        dates = held.rows.column(held.layout.order).to_pylist()
        stay = [_day(d) not in months for d in dates]
        if all(stay):
            continue
        withdrawn += stay.count(False)
        left = [w for w, s in zip(held.waits, stay, strict=True) if s]
        if any(stay):
            write(path, held.rows.filter(pa.array(stay)), left, held.layout)
        else:
            path.unlink()
        source = f"gate:{path.stem}"
        still = [
            store.open_decision(table, column, value, n, None, source=source)
            for (column, value), n in counts(left).items()
        ]
        store.settle_decisions(table, source, keep=still)
    return withdrawn


def release(workspace: Workspace, store: MetricStore, decision: Decision) -> list[str]:
    """Apply a decision to the rows held for it; returns what was done, one line per file.

    An accepted row is committed only if the table has no record of its key for its month yet
    (a resend may have brought one meanwhile, or an earlier release was stopped after its
    commit): such a row is quarantined with that reason instead, so no key is ever committed twice.
    """
    folder = workspace.root / "held" / decision.dataset
    if decision.status == "pending" or not folder.exists():
        return []
    lines = []
    wanted = (decision.column, decision.value)
    for path in sorted(folder.glob("contributor=*/*.parquet")):
        held = read(path)
        rows, waits = held.rows, held.waits
        hit = [wanted in w for w in waits]
        if not any(hit):
            continue
        contributor = path.parent.name.removeprefix("contributor=")
        if decision.status == "accepted":
            remaining = [[item for item in w if item != wanted] for w in waits]
            ready = [not w for w in remaining]
            taken = _committed_keys(workspace, decision.dataset, rows, ready, held.layout, contributor)
            commit = [r and not t for r, t in zip(ready, taken, strict=True)]
            chosen = rows.filter(pa.array(commit))
            if chosen.num_rows:
                with workspace.warehouse() as warehouse:
                    warehouse.commit(
                        decision.dataset,
                        chosen,
                        properties={
                            "assay.run-id": f"decision-{decision.id}",
                            "assay.contributor": contributor,
                            HELD_BY: path.stem,  # the run that held them: its audit follows them here
                        },
                    )
                lines.append(
                    f"committed {chosen.num_rows} held row(s) of {decision.dataset} for {contributor}"
                )
            if any(taken):
                lines.append(
                    _quarantine(
                        workspace,
                        decision.dataset,
                        rows.filter(pa.array(taken)),
                        contributor,
                        f"decision-{decision.id}-{path.stem}-committed",
                        f"a record of this {held.layout.key} for this month is already committed",
                    )
                )
            keep = [not r for r in ready]
            left = [w for w, k in zip(remaining, keep, strict=True) if k]
        else:
            reason = (
                f"{decision.column} '{decision.value}' was rejected "
                f"(decision {decision.id}, by {decision.decided_by})"
            )
            lines.append(
                _quarantine(
                    workspace,
                    decision.dataset,
                    rows.filter(pa.array(hit)),
                    contributor,
                    f"decision-{decision.id}-{path.stem}",
                    reason,
                )
            )
            keep = [not h for h in hit]
            left = [w for w, k in zip(waits, keep, strict=True) if k]
        still = rows.filter(pa.array(keep))
        if still.num_rows:
            write(path, still, left, held.layout)
        else:
            path.unlink()
    return lines


def _committed_keys(
    workspace: Workspace,
    table: str,
    rows: pa.Table,
    ready: list[bool],
    layout: Layout,
    contributor: str,
) -> list[bool]:
    """For each held row, whether the table already has a record of its key for its month."""
    key, order = layout.key, layout.order
    if not key or key not in rows.column_names or order not in rows.column_names or not any(ready):
        return [False] * rows.num_rows
    months = sorted({d for d, r in zip(rows.column(order).to_pylist(), ready, strict=True) if r and d})
    where: dict[str, object] = {order: months}
    if layout.contributor:
        where[layout.contributor] = contributor
    with workspace.warehouse() as warehouse:
        present = warehouse.read(table, where, columns=[key, order])
    seen = set(zip(present.column(key).to_pylist(), present.column(order).to_pylist(), strict=True))
    pairs = zip(rows.column(key).to_pylist(), rows.column(order).to_pylist(), strict=True)
    return [(k, d) in seen for k, d in pairs]


def _quarantine(
    workspace: Workspace, table: str, rows: pa.Table, contributor: str, name: str, reason: str
) -> str:
    quarantine = QuarantineFile(rows.column_names, name)
    for values in rows.to_pylist():
        quarantine.add({k: None if v is None else _text(v) for k, v in values.items()}, ["domain"], [reason])
    target = quarantine_path(workspace.root, datetime.now(UTC).date(), contributor, name)
    published = workspace.published(target)  # under `storage: dq_error:` when it is on S3
    quarantine.stage(target)
    if storage.is_url(published):
        # one object, its key the decision's: a release repeated after a kill overwrites it
        staged = target.with_name(target.name + ".partial")
        try:
            storage.put(published, staged, workspace.storage)
        finally:
            staged.unlink(missing_ok=True)
            _remove_empty(target.parent, workspace.root)
    else:
        quarantine.publish()
    return f"quarantined {rows.num_rows} held row(s) of {table} for {contributor}: {published}"


def _remove_empty(folder: Path, root: Path) -> None:
    """Remove ``folder`` and its parents up to ``root`` while they are empty (the local staging
    of an object published to S3 leaves no trace in the workspace)."""
    while folder != root and folder.is_relative_to(root):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _day(value: object) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    return value if isinstance(value, date) else None


def _text(value: object) -> str:
    return value.isoformat() if isinstance(value, date | datetime) else str(value)
