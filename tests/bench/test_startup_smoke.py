"""bench/startup.py runs and prints its figures (no timing assertion: STYLE.md habit 10)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "startup.py"


def test_startup_bench_prints_the_help_time_against_a_bare_start(tmp_path: Path) -> None:
    out = tmp_path / "startup.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--runs", "1", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^assay --help: \d+\.\d{3} s, (under|OVER) the 0\.25 s target", done.stdout, re.M)
    assert set(json.loads(out.read_text())["medians"]) == {
        "python -c pass",
        "import assay.cli",
        "assay --help",
    }
