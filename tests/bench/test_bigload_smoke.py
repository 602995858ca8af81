"""bench/_bigload.py runs end to end at 200,000 rows, as docs/operations.md shows it ("A big load on
one machine"): assay's stored numbers equal the hand-written query's at each size, both ran under
the memory limit, and nothing spilled is left. No timing assertions (STYLE.md habit 10)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
SECTION = "### A big load on one machine"


def documented(language: str) -> str:
    """The one block of ``language`` in docs/operations.md's big-load part."""
    text = (ROOT / "docs" / "operations.md").read_text()
    part = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(rf"^```{language}\n(.*?)^```$", part, re.MULTILINE | re.DOTALL)
    return str(block)


def test_the_documented_bench_command_gives_the_hand_querys_numbers_within_the_limit(tmp_path: Path) -> None:
    (command,) = documented("sh").strip().splitlines()
    assert "--rows 100000000" in command  # the size the issue names, run here at 200,000
    words = shlex.split(command.replace("--rows 100000000", "--rows 200000").replace("$OUT", str(tmp_path)))
    assert words[:2] == ["python", "bench/_bigload.py"]
    figures = tmp_path / "bigload.json"  # what measure() returned at each size, as bench/scale.py reads it
    done = subprocess.run(
        [sys.executable, *words[1:], "--json", str(figures)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    sizes = re.findall(r"^\s*([\d,]+) rows: assay .* \(CPU .*\), same numbers: True", done.stdout, re.M)
    assert sizes == ["2,000", "20,000", "200,000"], done.stdout
    assert re.search(r"^ratio assay/hand = \d+\.\d\d \(target <= 1\.2\)$", done.stdout, re.MULTILINE)
    assert re.search(r"^peak memory [\d,]+ MB \(target <= 4,096 MB\)$", done.stdout, re.MULTILINE)
    # 2GB as DuckDB reports it, read back inside the run; its spill folder removed
    assert "memory limit in the run: 1.8 GiB; spill folder left: False" in done.stdout
    assert not list(tmp_path.glob("*.parquet"))  # each size's file deleted after it
    measured = json.loads(figures.read_text())
    assert [m["rows"] for m in measured] == [2_000, 20_000, 200_000]
    for m in measured:
        assert {"rows", "assay_seconds", "hand_seconds", "ratio", "peak_rss_mb"} <= set(m)
        assert m["differ"] == {} and m["agree"] is True
        # every compared number was measured (two Nones would agree), the hand query's limit too
        assert m["metrics"]["row_count"] == m["rows"]
        assert None not in m["metrics"].values() and len(m["metrics"]) == 26
        assert m["memory_limit"] == m["hand_memory_limit"] == "1.8 GiB"
        assert m["ratio"] == m["assay_seconds"] / m["hand_seconds"] > 0
        assert m["cpu_ratio"] == m["assay_cpu_seconds"] / m["hand_cpu_seconds"] > 0
