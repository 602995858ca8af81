"""bench/profile.py runs end to end on a small file, without the peers' virtual environments. No
timing assertions (STYLE.md habit 10): the benchmark prints its ratio, and exits non-zero only when
a contender could not run or its metrics differ from the hand-written query's."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "profile.py"


def test_profile_bench_runs_and_prints_its_ratio(tmp_path: Path) -> None:
    measurements = tmp_path / "profile.json"
    args = ["--rows", "20000", "--runs", "1", "--only", "hand,assay", "--out", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--json", str(measurements)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ratio assay/hand = \d+\.\d\d \(target <= 1\.3\)$", done.stdout, re.MULTILINE)
    # the whole `assay profile` process against the hand-written query's whole process
    assert re.search(
        r"^whole process: `assay profile` .* ratio \d+\.\d\d \(target <= 1\.3\)$", done.stdout, re.M
    )
    payload = json.loads(measurements.read_text())
    assert payload["agree"] is True
    assert payload["failed"] == {}
    assert set(payload["contenders"]) == {
        "hand",
        "assay",
        "hand process",
        "floor process",
        "floor overlapped",
        "assay CLI",
    }
    assert payload["cli_process_ratio"] > 0
    # the floor: the hand-written query's process after the libraries assay cannot start without
    assert re.search(r"^the floor: .* ratio \d+\.\d\d$", done.stdout, re.M)
    assert payload["floor_process_ratio"] > 0
    # and with the query started first, the libraries imported while it runs
    assert re.search(r"^the floor overlapped: .* ratio \d+\.\d\d$", done.stdout, re.M)
    assert payload["overlapped_floor_process_ratio"] > 0
