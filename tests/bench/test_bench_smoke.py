"""bench/dqdl.py and bench/gate.py run end to end on small files. No timing assertions (STYLE.md
habit 10): a benchmark prints its ratio, and exits non-zero only when assay and the baseline disagree."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPT = BENCH / "dqdl.py"


def test_dqdl_bench_runs_and_prints_its_ratio(tmp_path: Path) -> None:
    measurements = tmp_path / "dqdl.json"
    args = ["--rows", "20000", "--runs", "1", "--out", str(tmp_path), "--json", str(measurements)]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ratio assay/hand = \d+\.\d\d \(target <= 1\.3\)$", done.stdout, re.MULTILINE)
    assert json.loads(measurements.read_text())["agree"] is True


def test_gate_bench_runs_and_prints_its_ratio_and_memory(tmp_path: Path) -> None:
    measurements = tmp_path / "gate.json"
    args = ["--rows", "20000", "--runs", "1", "--out", str(tmp_path), "--json", str(measurements)]
    done = subprocess.run(
        [sys.executable, str(BENCH / "gate.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ratio gate/hand = \d+\.\d\d \(target <= 1\.3\)$", done.stdout, re.MULTILINE)
    assert re.search(
        r"^peak RSS with [\d,]+ history rows - with [\d,]+ = [+-]\d+ MB", done.stdout, re.MULTILINE
    )
    payload = json.loads(measurements.read_text())
    assert payload["agree"] is True
    assert payload["planted_caught"] is True
    assert payload["prepared"]["history"]["months"] == 10


def test_notify_bench_runs_and_prints_its_ratio(tmp_path: Path) -> None:
    measurements = tmp_path / "notify.json"
    args = ["--notifications", "50", "--runs", "1", "--days", "4", "--json", str(measurements)]
    done = subprocess.run(
        [sys.executable, str(BENCH / "notify.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ratio assay/plain = \d+\.\d\d \(target <= 2\.0\)$", done.stdout, re.MULTILINE)
    assert re.search(
        r"^incidents and outbox in a check run \(4 days\): median \d+\.\d%", done.stdout, re.MULTILINE
    )
    assert json.loads(measurements.read_text())["exact"] is True


def test_events_bench_runs_and_prints_its_ratios(tmp_path: Path) -> None:
    measurements = tmp_path / "events.json"
    args = ["--per-hour", "300", "--consumers", "2", "--runs", "1", "--json", str(measurements)]
    done = subprocess.run(
        [sys.executable, str(BENCH / "events.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ratio assay/hand = \d+\.\d\d \(target <= 1\.3\)$", done.stdout, re.MULTILINE)
    assert re.search(r"^queries to measure all contracts = 1$", done.stdout, re.MULTILINE)
    found = json.loads(measurements.read_text())
    assert found["agree"] is True and found["queries"] == 1 and found["rows"] > 0


def test_web_bench_renders_every_page_and_prints_its_figures(tmp_path: Path) -> None:
    from _demo_workspace import built

    workspace, _ = built()
    measurements = tmp_path / "web.json"
    args = ["--workspace", str(workspace), "--rounds", "1", "--datasets", "20", "--json", str(measurements)]
    done = subprocess.run(
        [sys.executable, str(BENCH / "web.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^slowest page: .+, \d+\.\d ms \(target < 300 ms\)$", done.stdout, re.MULTILINE)
    assert re.search(r"^dry run with a 30-date backtest: .+, 30 queries", done.stdout, re.MULTILINE)
    found = json.loads(measurements.read_text())
    assert found["failed"] == [] and len(found["pages_ms"]) == 13  # 12 pages and the crowded catalog
    assert re.search(r"^catalog with 20 more datasets: \d+\.\d ms", done.stdout, re.MULTILINE)


def test_detection_bench_runs_one_dataset_and_prints_every_detector(tmp_path: Path) -> None:
    measurements = tmp_path / "detection.json"
    args = ["--datasets", "seattle", "--trials", "1", "--loads", "24", "--faults", "null 2%,never-seen"]
    args += ["--no-whylogs", "--json", str(measurements)]
    done = subprocess.run(
        [sys.executable, str(BENCH / "detection.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    header = "| dataset | fault | assay | elementary | elementary-x | deequ-online | deequ-rate |"
    assert header in done.stdout
    found = json.loads(measurements.read_text())["seattle"]
    # a fault the dataset cannot express is listed, not run: seattle-weather has no naturally-null column
    assert "null rate +10 points (naturally null)" in found["not_applicable"]
    # the seed's own fault is caught on its day by assay's public path
    assert found["faults"]["null 2% (never-null number)"]["assay"]["recall"] == 1.0
    assert found["faults"]["never-seen category, 1% of rows"]["assay"]["recall"] == 1.0
    assert set(found["faults"]) == {"null 2% (never-null number)", "never-seen category, 1% of rows"}
    assert found["clean"]["assay"]["loads"] == 3


def test_checks_bench_holds_assay_to_the_hand_written_query_with_the_profile(tmp_path: Path) -> None:
    """The contender a recorded check run is held to computes the per-column profile too (issue
    30); the ratio to the bare grouped query is printed beside it, and the profile's values agree."""
    measurements = tmp_path / "checks.json"
    args = ["--rows", "20000", "--runs", "1", "--days", "3", "--out", str(tmp_path)]
    args += ["--json", str(measurements)]
    done = subprocess.run(
        [sys.executable, str(BENCH / "checks.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ratio assay/hand\+profile = \d+\.\d\d \(target <= 1\.2\)$", done.stdout, re.MULTILINE)
    assert re.search(r"^ratio assay/hand = \d+\.\d\d \(the hand-written", done.stdout, re.MULTILINE)
    assert "profile agrees: True" in done.stdout
    payload = json.loads(measurements.read_text())
    assert set(payload["measured"]) == {"hand+profile", "hand", "assay"}
