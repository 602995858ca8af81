"""bench/reconcile.py runs end to end on two small tables (a PostgreSQL server of its own). No
timing assertions (STYLE.md habit 10): it prints its ratios and fails only when assay and the
hand-written join disagree."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "reconcile.py"


def test_reconcile_bench_runs_and_prints_its_ratios_and_bytes_moved(tmp_path: Path) -> None:
    measurements = tmp_path / "reconcile.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--rows", "20000", "--json", str(measurements)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ratio assay/hand = \d+\.\d\d$", done.stdout, re.MULTILINE)
    assert re.search(r"^ratio across/hand = \d+\.\d\d$", done.stdout, re.MULTILINE)
    payload = json.loads(measurements.read_text())
    assert payload["agree"] is True
    assert payload["expected"] == {"only_in_source": 13, "only_in_target": 6, "changed": 7}
    assert 0 < payload["moved_bytes"] < payload["table_bytes"] / 3
