"""Quarantined rows: ``<workspace>/dq_error/date=<YYYY-MM-DD>/contributor=<ID>/<run_id>.csv``.

Every input column as the contributor sent it (the raw text), then ``dq_failed_rules`` (rule ids
joined by ``;``), ``dq_reasons`` (readable messages, joined by `` | ``), ``dq_run_id``, and for a
line that could not be split into columns, its number and raw text in ``dq_line``/``dq_raw_line``.
The file is written beside its final name and renamed into place only when the run commits, so
a reader never sees the quarantine of a run that did not happen.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

EXTRA = ("dq_failed_rules", "dq_reasons", "dq_run_id", "dq_line", "dq_raw_line")


def quarantine_path(workspace: Path, day: date, contributor: str, run_id: str) -> Path:
    """Where a run's quarantined rows go (the contributor name is validated by the caller)."""
    return workspace / "dq_error" / f"date={day.isoformat()}" / f"contributor={contributor}" / f"{run_id}.csv"


class QuarantineFile:
    """Rows to quarantine, collected during a run, written as one CSV.

    >>> import tempfile
    >>> q = QuarantineFile(["a"], "run-1")
    >>> q.add({"a": "x"}, ["R1"], ["R1: bad"])
    >>> target = Path(tempfile.mkdtemp()) / "q.csv"
    >>> q.stage(target); q.publish(); target.read_text().splitlines()[1]
    '"x","R1","R1: bad","run-1",,'
    """

    def __init__(self, columns: list[str], run_id: str) -> None:
        self.columns = columns
        self.run_id = run_id
        self.rows: list[dict[str, str | None]] = []
        self._staged: Path | None = None
        self._target: Path | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def add(
        self,
        values: dict[str, str | None],
        rule_ids: list[str],
        reasons: list[str],
        *,
        line: int | None = None,
        raw_line: str | None = None,
    ) -> None:
        row: dict[str, str | None] = {c: values.get(c) for c in self.columns}
        row["dq_failed_rules"] = ";".join(rule_ids)
        row["dq_reasons"] = " | ".join(reasons)
        row["dq_run_id"] = self.run_id
        row["dq_line"] = None if line is None else str(line)
        row["dq_raw_line"] = raw_line
        self.rows.append(row)

    def stage(self, target: Path) -> None:
        """Write the file next to ``target``; :meth:`publish` renames it into place."""
        staged = target.with_name(target.name + ".partial")
        self.write(staged)
        self._staged, self._target = staged, target

    def write(self, path: Path) -> None:
        """Write the file at ``path`` (a run's staging folder, which publishes it at its commit)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        names = [*self.columns, *EXTRA]
        table = pa.table({n: pa.array([r[n] for r in self.rows], pa.string()) for n in names})
        pacsv.write_csv(table, path)

    def publish(self) -> None:
        if self._staged is not None and self._target is not None:
            self._staged.replace(self._target)
            self._staged = None
