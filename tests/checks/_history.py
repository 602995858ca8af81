"""The trades example with its first 29 days run (``assay check run`` on DuckDB, in process):
the stored history the 30th day is judged against, built once per test run (tests/_shared.py)
for every module that judges that day (tests/checks/test_run.py on each engine,
tests/engine/test_spark_connect.py). Copy it before running anything in it."""

from __future__ import annotations

from pathlib import Path

from _invoke import assay
from _shared import once
from assay.demo import trades


def trades29() -> Path:
    """The folder of the 29 days' workspace, built on first use."""
    return once("trades29", _build)


def _build(root: Path) -> None:
    trades.generate(root)
    out = root / "out.json"
    for day in trades.days()[:-1]:
        code = assay(
            "check", "run", str(root / "checks" / "trades.yaml"), "--at", str(day),
            "--now", trades.clock(day).isoformat(), "--workspace", str(root), "--json", str(out),
            "--engine", "duckdb",
        )  # fmt: skip
        assert code == 0, out.read_text() if out.exists() else code
        out.unlink()
