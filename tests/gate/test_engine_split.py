"""The gate's split is the same on Spark as on DuckDB, row for row, on the credit-bureau data
(issue 10): the demo's generator writes three months of history for a bank and an instalment
lender, then the month's faults arrive (a swapped column mapping, doubled limits, malformed lines,
a truncated extract, a three-month backfill, a brand-new contributor). Each engine gates the same
files into a workspace of its own; every run's summary, every quarantined row (with its reasons
and line), every held row and every committed row must be equal."""

from __future__ import annotations

import csv
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from assay.demo import bureau as bu
from assay.demo import faults as fa
from assay.engine.registry import engine_factory
from assay.gate.gate import GateOptions, GateResult
from assay.lake.iceberg import Warehouse
from assay.platform.flows import gate as run_gate
from assay.store import MetricStore
from sparksession import VOLATILE

DATA = resources.files("assay.demo") / "data"
BUREAU = bu.Bureau(
    [
        bu.Contributor("BANK_A", "bank", 120),
        bu.Contributor("BANK_C", "bank", 80),
        bu.Contributor("EASYPAY", "instalment", 100),
        bu.Contributor("PAYLATER", "instalment", 90),
        bu.Contributor("NEWPAY", "instalment", 60, since=3),
    ]
)
TYPES = {c.id: c.type for c in BUREAU.contributors.values()}


def _files(folder: Path) -> list[tuple[str, Path]]:
    """The batches, in the order they arrive: history, then the month's faults."""
    folder.mkdir(parents=True, exist_ok=True)
    batches: list[tuple[str, pa.Table | str]] = []
    for index in range(3):
        batches += [(c, BUREAU.month(c, index)) for c in ("BANK_A", "BANK_C", "EASYPAY", "PAYLATER")]
    batches.append(("BANK_A", fa.swap_limit_mapping(BUREAU.month("BANK_A", 3))[0]))
    batches.append(("BANK_C", fa.backfill(BUREAU, "BANK_C", 3, months=2)[0]))
    batches.append(("EASYPAY", fa.malformed_rows(bu.csv_text(BUREAU.month("EASYPAY", 3)))[0]))
    batches.append(
        ("PAYLATER", fa.truncate(BUREAU.month("PAYLATER", 3), previous=BUREAU.month("PAYLATER", 2))[0])
    )
    batches.append(("NEWPAY", fa.first_file(BUREAU, "NEWPAY")[0]))
    files = []
    for i, (contributor, batch) in enumerate(batches):
        path = folder / f"{i:02d}_{contributor}.csv"
        path.write_text(batch if isinstance(batch, str) else bu.csv_text(batch))
        files.append((contributor, path))
    return files


def _rows(path: str | None) -> list[dict[str, str]]:
    if path is None:
        return []
    with Path(path).open() as handle:
        return sorted(
            ({k: v for k, v in row.items() if k != "dq_run_id"} for row in csv.DictReader(handle)),
            key=lambda row: sorted(row.items()),
        )


def _gate_all(root: Path, files: list[tuple[str, Path]], engine: Any) -> dict[str, Any]:
    workspace = root / "ws"
    seen: list[Any] = []
    with MetricStore.open(workspace=workspace) as store:
        for contributor, path in files:
            options = GateOptions(
                batch=path,
                rules=Path(str(DATA / "bureau_rules.csv")),
                contributor=contributor,
                contributor_type=TYPES[contributor],
                workspace=workspace,
                schema=Path(str(DATA / "accounts_schema.yaml")),
            )
            result: GateResult = run_gate(options, store=store, engine_factory=engine_factory(engine))
            summary = {k: v for k, v in result.summary.to_dict().items() if k not in VOLATILE}
            seen.append((summary, _rows(result.quarantine_file), _rows(result.summary.held_file)))
    table = Warehouse.open(workspace).read("silver.accounts", {})
    rows = sorted(table.to_pylist(), key=lambda row: (row["contributor_id"], row["account_id"], str(row)))
    return {"runs": seen, "table": rows}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, Path]]:
    return _files(tmp_path_factory.mktemp("bureau"))


def test_the_split_is_identical_on_spark(
    files: list[tuple[str, Path]], spark_session: Any, tmp_path: Path
) -> None:
    duck = _gate_all(tmp_path / "duckdb", files, "duckdb")
    spark = _gate_all(tmp_path / "spark", files, spark_session)
    # the faults were caught: not a comparison of two empty splits
    quarantined = [summary["quarantined"] for summary, _, _ in duck["runs"]]
    assert sum(quarantined[:12]) == 0, quarantined  # the history is clean
    assert all(quarantined[i] > 0 for i in (12, 14, 15)), quarantined  # swapped, malformed, truncated
    for i, (mine, theirs) in enumerate(zip(spark["runs"], duck["runs"], strict=True)):
        assert mine[0] == theirs[0], files[i]
        assert mine[1] == theirs[1], files[i]
        assert mine[2] == theirs[2], files[i]
    assert len(spark["table"]) == len(duck["table"]) > 1000
    assert spark["table"] == duck["table"]
