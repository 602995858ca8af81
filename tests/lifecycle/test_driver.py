"""The one run driver (:mod:`assay.platform.runs.driver`): retries with attempts recorded, dry runs
that write nothing, timing and query counts, and a user's mistake recorded as ``config_error``.
The flows here are small real ones over a real DuckDB engine and a real SQLite store."""

from __future__ import annotations

import ast
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from sqlglot import exp

import assay.platform.runs as runs
from assay.engine import DuckDBEngine, EngineError
from assay.errors import ConfigError, PlatformError
from assay.platform.runs.driver import Driver, Failed, Flow, Persisted, Retry, Settlement
from assay.store import MetricKey, MetricStore
from assay.vocabulary import RunState
from assay.workspace import Workspace

RUNS = Path(runs.__file__).parent
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at file level or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_recovery_does_not_import_the_run() -> None:
    """run → recover, never back: the run recovers its dataset's dead runs on entry, and recovery
    works on what a run leaves on disk (its staging, in :mod:`.staging`), not on the run."""
    assert "assay.platform.runs.run" not in _imports(RUNS / "recover.py")


# --- the driver, with small real flows --------------------------------------------------------------


class Rows(Flow[int, int, bool, str]):
    """Counts a table's rows in DuckDB (failing on the platform ``fail`` times first), keeps the
    count as a pending load, judges it against ``at_least``."""

    kind = "check"
    dataset = "orders"

    def __init__(self, *, fail: int = 0, at_least: int = 1, mistake: bool = False) -> None:
        self.fail = fail
        self.at_least = at_least
        self.mistake = mistake
        self.result = ""

    def measure(self, driver: Driver) -> int:
        done = driver.attempt("rows", lambda: self._count(driver))
        if isinstance(done, Failed):
            raise done.error()
        return done

    def _count(self, driver: Driver) -> int:
        engine = driver.engine(DuckDBEngine)
        if self.mistake:  # a Flow step turns the author's measuring mistake into ConfigError
            raise ConfigError("orders.yaml, line 3: at_least must be a number, not 'many'")
        if self.fail:
            self.fail -= 1
            raise PlatformError("the engine went away")
        engine.register_arrow("orders", pa.table({"id": [1, 2, 3]}))
        query = exp.select(exp.func("count", exp.Star()).as_("n")).from_("orders")
        return int(engine.rows(query)[0]["n"])

    def persist(self, driver: Driver, rows: int) -> Persisted[int]:
        store = driver.store
        assert store is not None
        load = store.create_load(
            "orders", logical_time=NOW, run_id=driver.current.id, status="pending", row_count=rows
        )
        store.save_metrics(load, {MetricKey.dataset("RowCount"): float(rows)})
        return Persisted(load, detail={"rows": rows})

    def judge(self, driver: Driver, rows: int) -> bool:
        return rows >= self.at_least

    def settle(self, driver: Driver, load: int | None, ok: bool) -> Settlement:
        self.result = "passed" if ok else "failed"
        store = driver.store

        def writes() -> None:
            assert store is not None and load is not None
            store.settle_loads({load: "current"})

        return Settlement(RunState.COMPLETED, summary={"outcome": self.result}, writes=writes)


def _driver(store: MetricStore, root: Path, **options: Any) -> Driver:
    return Driver(store=store, workspace=Workspace(root), **options)


def test_a_system_error_twice_then_success_records_three_attempts(tmp_path: Path) -> None:
    waited: list[float] = []
    with MetricStore.open("sqlite://") as store:
        driver = _driver(store, tmp_path, retry=Retry(attempts=3, backoff=0.5, sleep=waited.append))
        assert driver.run(Rows(fail=2)) == "passed"
        assert [(a.profile, a.attempt, a.error) for a in driver.attempts] == [
            ("rows", 1, "the engine went away"),
            ("rows", 2, "the engine went away"),
            ("rows", 3, None),
        ]
        assert waited == [0.5, 1.0]  # backoff doubles
        assert store.run(driver.current.id).state == "completed"
        assert len(driver.engines) == 3  # one per attempt, every one closed with the run
        for engine in driver.engines:
            with pytest.raises(EngineError):
                engine.rows(exp.select("1"))


def test_a_system_error_on_every_attempt_is_the_runs_system_error(tmp_path: Path) -> None:
    with MetricStore.open("sqlite://") as store:
        driver = _driver(store, tmp_path, retry=Retry(attempts=2, sleep=lambda _: None))
        with pytest.raises(PlatformError, match="the engine went away"):
            driver.run(Rows(fail=5))
        run = store.run(driver.current.id)
        assert (run.state, run.error) == ("system_error", "the engine went away")
        assert len(driver.attempts) == 2
        assert store.run_loads(run.id) == {}


def test_a_dry_run_writes_nothing_to_the_store(tmp_path: Path) -> None:
    with MetricStore.open("sqlite://") as store:
        driver = _driver(store, tmp_path, dry_run=True)
        assert driver.run(Rows(at_least=4)) == "failed"
        assert store.runs("orders", limit=10) == []
        assert store.stages(driver.current.id) == []
        assert store.run_loads(driver.current.id) == {}
        assert not (tmp_path / "runs").exists()


def test_timing_and_query_counts_are_recorded(tmp_path: Path) -> None:
    with MetricStore.open("sqlite://") as store:
        driver = _driver(store, tmp_path)
        driver.run(Rows())
        assert driver.queries == {"measure": 1, "judge": 0}  # one count; judging reads no data
        assert set(driver.seconds) == {"measure", "persist", "judge"}
        assert all(seconds >= 0 for seconds in driver.seconds.values())
        assert driver.seconds["measure"] > 0
        run = store.run(driver.current.id)
        assert [stage for stage, _ in store.stages(run.id)] == ["running", "measured", "judged", "notified"]
        assert store.stage_detail(run.id, "measured") == {"rows": 3}
        assert run.started_at <= run.finished_at
        # the flow's summary, with where its time and queries went (every flow's says so)
        written = json.loads((tmp_path / "runs" / f"{run.id}.json").read_text())
        assert written == {
            "outcome": "passed",
            "seconds": written["seconds"],
            "queries": driver.queries,
            "engine": written["engine"],  # the limits its engine ran within (docs/operations.md)
        }
        assert written["engine"]["temp_directory"] == str(tmp_path / "tmp" / "duckdb" / run.id)
        assert not (tmp_path / "tmp").exists()  # its spill folder removed when it ended
        assert set(written["seconds"]) == {"measure", "persist", "judge"}
        assert run.summary == written


def test_a_config_error_is_recorded_as_config_error_and_not_retried(tmp_path: Path) -> None:
    with MetricStore.open("sqlite://") as store:
        driver = _driver(store, tmp_path, retry=Retry(attempts=3, sleep=lambda _: None))
        with pytest.raises(ConfigError, match="line 3"):
            driver.run(Rows(mistake=True))
        run = store.run(driver.current.id)
        assert (run.state, run.error) == (
            "config_error",
            "orders.yaml, line 3: at_least must be a number, not 'many'",
        )
        assert [(a.attempt, a.error) for a in driver.attempts] == [(1, None)]


FLOWS = ("dqdl", "check", "event", "gate", "profile")
ORCHESTRATION = ("commit", "checkpoint", "add_stage")


def _orchestrates(path: Path) -> list[str]:
    """Every call in ``path`` of the driver's own steps: ``.commit(``, ``checkpoint(``, ``add_stage(``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ORCHESTRATION:
                found.append(f"{path.name}:{node.lineno}: {name}(")
    return found


@pytest.mark.parametrize("flow", FLOWS)
def test_no_flow_commits_checkpoints_or_records_a_stage_itself(flow: str) -> None:
    """Only driver.py and run.py orchestrate (issue 29): a flow hands the driver its steps."""
    assert _orchestrates(RUNS / f"{flow}.py") == []


def test_the_orchestration_check_finds_the_drivers_own_calls() -> None:
    found = " ".join(_orchestrates(RUNS / "driver.py"))
    assert all(f"{name}(" in found for name in ORCHESTRATION)
