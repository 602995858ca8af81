"""bench/shapes.py runs end to end on a small load. No timing assertion (STYLE.md habit 10): it
prints its ratio and fails only when the profile does not find the planted shapes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "shapes.py"


def test_shapes_bench_runs_and_prints_its_ratio(tmp_path: Path) -> None:
    measurements = tmp_path / "shapes.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--rows", "3000", "--rounds", "1", "--json", str(measurements)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(
        r"with shapes \d+\.\d+ s, without \d+\.\d+ s, ratio \d+\.\d+$", done.stdout, re.MULTILINE
    )
    payload = json.loads(measurements.read_text())
    assert payload["shares"]["card3"] == {"card_number": 1.0}
    assert len(payload["seconds"]["with"]) == len(payload["seconds"]["without"]) == 1
