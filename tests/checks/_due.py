"""A workspace of many small due documents, each with a tiny CSV of its own: the morning the
queue's workers share out (tests/checks/test_queue.py, tests/checks/test_deployment_scale.py)."""

from __future__ import annotations

from pathlib import Path

DOCUMENT = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: shop.table{n}
  source: {{path: "../data/table{n}.csv"}}
profiles:
  - id: daily
    schedule: "0 6 * * *"
    metrics: [row_count]
expectations:
  - {{id: rows, metric: daily.row_count, expect: "> 0"}}
"""


def due_world(root: Path, documents: int) -> Path:
    """``root`` with ``documents`` check documents due at 06:00 every day, ``shop.table<n>``."""
    (root / "checks").mkdir(parents=True)
    (root / "data").mkdir()
    for n in range(documents):
        (root / "checks" / f"table{n}.yaml").write_text(DOCUMENT.format(n=n))
        (root / "data" / f"table{n}.csv").write_text("id\n1\n2\n")
    return root
