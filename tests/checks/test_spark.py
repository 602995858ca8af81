"""A check document run on Spark gives DuckDB's outcomes and numbers: the profile's one
statement (slice, filter, GROUPING SETS, the top-k window, the DQDL rule's scan, the samples)
rendered for Spark, on 8 days of the trades example."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.demo import trades
from assay.platform.checks.document import load_document
from assay.platform.runs.check import run_document
from assay.store import MetricStore
from assay.workspace import Workspace

DAYS = 8


def _runs(root: Path, engine: Any) -> list[dict[str, Any]]:
    path = trades.generate(root, DAYS)
    document = load_document(path)
    payloads = []
    with MetricStore.open("sqlite://") as store:
        for day in trades.days(DAYS):
            result = run_document(
                document,
                path,
                at=day,
                now=trades.clock(day),
                store=store,
                workspace=Workspace(root),
                engine=engine,
            )
            assert result.state == "completed" and result.queries == {"measure": 1, "judge": 0}
            payloads.append(result.to_dict())
    return payloads


def _shape(payload: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (o["expectation"], str(o["group"]), o["outcome"], o["reason"],
         None if o["observed"] is None else pytest.approx(o["observed"], rel=1e-9),
         len(o["samples"]), [(c["dimension"], c["value"]) for c in o["explained_by"]])
        for o in payload["outcomes"]
    ]  # fmt: skip


def test_a_document_on_spark_gives_duckdbs_outcomes(tmp_path: Path, spark_session: Any) -> None:
    on_duckdb = _runs(tmp_path / "duckdb", "duckdb")
    on_spark = _runs(tmp_path / "spark", spark_session)
    for mine, theirs in zip(on_spark, on_duckdb, strict=True):
        assert _shape(mine) == _shape(theirs)
    last = on_spark[-1]
    assert {o["outcome"] for o in last["outcomes"]} == {"passed", "failed", "config_error"}
    [settle] = [o for o in last["outcomes"] if o["expectation"] == "settle-after-exec"]
    assert len(settle["samples"]) == 3 and all(r["settled_at"] < r["executed_at"] for r in settle["samples"])


def test_an_empty_slice_measures_freshness_over_the_source_on_spark_as_on_duckdb(
    tmp_path: Path, spark_session: Any
) -> None:
    """A day whose file never came, on the trades document (dimensions region and venue) with
    ``fresh`` over the whole source: Spark's GROUPING SETS give no row at all on an empty slice,
    and the freshness, which reads the source and not the slice, must still be DuckDB's number:
    fresh while a later file came (passed), stale once it is gone too (failed)."""
    outcomes: dict[str, list[tuple[str, float | None]]] = {"duckdb": [], "spark": []}
    for name, engine in (("duckdb", "duckdb"), ("spark", spark_session)):
        for case in ("fresh", "stale"):  # one folder each: Spark keeps a listing of the files it read
            root = tmp_path / name / case
            path = trades.generate(root, 3)
            text = path.read_text()
            path.write_text(
                text.replace("- freshness: updated_at\n", "- freshness: {column: updated_at, over: source}\n")
            )
            _, gone, later = trades.days(3)
            files = root / "data" / "trades"
            for day in (gone, later) if case == "stale" else (gone,):
                (files / f"trades-{day}.parquet").unlink()
            with MetricStore.open("sqlite://") as store:
                result = run_document(
                    load_document(path), path, at=gone, now=trades.clock(gone), store=store,
                    workspace=Workspace(root), engine=engine, only=("fresh",), dry_run=True,
                )  # fmt: skip
            [fresh] = result.outcomes
            outcomes[name].append((fresh["outcome"], fresh["observed"]))
    assert outcomes["spark"] == outcomes["duckdb"]
    (fresh, ahead), (stale, age) = outcomes["duckdb"]
    assert ahead is not None and age is not None
    assert (fresh, ahead < 0) == ("passed", True)  # the later file's rows are newer than the clock
    assert (stale, age > 12 * 3600) == ("failed", True)
