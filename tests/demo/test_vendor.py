"""The demo's vendor part (src/assay/demo/vendor.py): every daily file is a recorded profile run,
and the days the monitor alerts on open incidents, as `assay profile` does."""

from __future__ import annotations

from _demo_workspace import built
from assay.demo.vendor import DATASET, DAYS, NULL_DAY, VENUE_DAY
from assay.store import MetricStore


def test_every_vendor_day_is_a_recorded_run_and_its_alerts_open_incidents() -> None:
    demo, printed = built()
    with MetricStore.open(workspace=demo) as store:
        runs = store.runs(DATASET, limit=len(DAYS) + 1)
        incidents = store.incidents(dataset=DATASET)
    assert sorted(r.state for r in runs) == ["completed"] * len(DAYS)
    assert all(r.kind == "profile" for r in runs)
    assert incidents, "the hard null-rate alert and the new venue open incidents"
    vendor = printed["vendor"]
    assert {a["load_date"] for a in vendor["alerts"] if a["kind"] != "volume"} == {
        NULL_DAY.isoformat(),
        VENUE_DAY.isoformat(),
    }
    assert vendor["incidents"] == [i.id for i in incidents]
