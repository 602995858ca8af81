"""Fixtures for gate tests: a workspace, a metric store and a small control CSV."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.engine import Engine
from assay.engine.registry import engine_factory, open_engine
from assay.gate.gate import GateOptions, GateResult
from assay.platform.flows import gate as run_gate
from assay.store import MetricStore
from sparksession import engine, spark_session  # noqa: F401

RULES = '''rule_id,contributor_type,category,severity,rule,description
C01,all,completeness,critical,"IsComplete ""account_id""",Every record names its account
F01,all,financial,critical,credit_limit = product_limit + temporary_limit,The limit adds up
T01,bank,trend,critical,credit_limit = prev_credit_limit OR account_status = 'ADMIN_CHANGE',Limit stability
D02,all,domain,warning,"ColumnValues ""account_status"" in [""ACTIVE"",""ADMIN_CHANGE""]",Known statuses
A02,all,aggregate,critical,"RowCount >= 0.8 * last()",The extract is not truncated
'''
HEADER = "contributor_id,account_id,statement_date,account_status,credit_limit,product_limit,temporary_limit"


class Bench:
    """A workspace with helpers to write batches and gate them."""

    def __init__(self, root: Path, store: MetricStore, engine: Any = "duckdb") -> None:  # noqa: F811
        self.root = root
        self.store = store
        self.engine = engine  # an engine fixture's value: "duckdb" or the session's SparkSession
        self.rules = root / "rules.csv"
        self.rules.write_text(RULES)
        self.workspace = root / "ws"
        self.files = 0

    def csv(self, *rows: str, header: str = HEADER) -> Path:
        self.files += 1
        path = self.root / f"batch{self.files}.csv"
        path.write_text("\n".join([header, *rows]) + "\n")
        return path

    def month(
        self, contributor: str, day: str, limits: dict[str, int], status: dict[str, str] | None = None
    ) -> Path:
        status = status or {}
        rows = [
            f"{contributor},{account},{day},{status.get(account, 'ACTIVE')},{limit},{limit},0"
            for account, limit in limits.items()
        ]
        return self.csv(*rows)

    def gate(
        self, batch: Path, contributor: str = "B1", contributor_type: str = "bank", **kw: object
    ) -> GateResult:
        options = GateOptions(
            batch=batch,
            rules=kw.pop("rules", self.rules),  # type: ignore[arg-type]
            contributor=contributor,
            contributor_type=contributor_type,
            workspace=self.workspace,
            **kw,  # type: ignore[arg-type]
        )
        return run_gate(options, store=self.store, engine_factory=engine_factory(self.engine))


@pytest.fixture
def reader(engine: Any) -> Iterator[Engine]:  # noqa: F811
    """An open engine of each kind (the ``engine`` fixture: DuckDB, then the shared Spark)."""
    made = open_engine(engine)
    yield made
    made.close()


@pytest.fixture
def bench(tmp_path: Path, engine: Any) -> Iterator[Bench]:  # noqa: F811
    """A workspace and its store, gated on each engine in turn (tests/sparksession.py)."""
    with MetricStore.open(workspace=tmp_path / "ws") as store:
        yield Bench(tmp_path, store, engine)
