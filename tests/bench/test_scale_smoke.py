"""bench/scale.py end to end at a tiny scale (30 datasets x 2 days, 8 documents, 2 workers): it
prints every figure the issue asks for, and no run was lost or ran twice. No timing assertions
(STYLE.md habit 10)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_scale_bench_runs_and_prints_every_figure(tmp_path: Path) -> None:
    measurements = tmp_path / "scale.json"
    args = ["--datasets", "30", "--days", "2", "--documents", "8", "--workers", "2", "--rounds", "6"]
    done = subprocess.run(
        [sys.executable, str(BENCH / "scale.py"), *args, "--json", str(measurements)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for what in ("catalog page", "catalog API", "dataset page"):
        pattern = (
            rf"^{what} at 30 datasets: p50 \d+\.\d ms, p95 \d+\.\d ms \(target p95 <= 300 ms: (ok|OVER)\)$"
        )
        assert re.search(pattern, done.stdout, re.MULTILINE), done.stdout
    assert re.search(r"^morning: 8 due documents .* ran twice 0, lost 0$", done.stdout, re.MULTILINE)
    assert re.search(r"^store size: [\d.,]+ MB = [\d,]+ bytes per dataset-day$", done.stdout, re.MULTILINE)
    payload = json.loads(measurements.read_text())
    assert payload["fill"]["runs"] == 60 and payload["fill"]["entries"] == 30
    assert payload["morning"]["completed"] == 8
    assert "bigload" not in payload  # --big-rows 0: the big load is not run
