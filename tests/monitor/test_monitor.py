"""The drift monitor: one scan per load, stored profiles and value sets, and the five judgements."""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.judge import drift
from assay.monitor import DatasetConfig, history, profile
from assay.platform import flows
from assay.store import MetricStore

START = date(2026, 1, 5)  # a Monday


def day(i: int) -> date:
    return START + timedelta(days=i)


def trades(
    n: int = 200, *, seed: int = 0, nulls: float = 0.0, venues: tuple[str, ...] = ("XLON", "XPAR", "XETR")
) -> pa.Table:
    r = random.Random(seed)
    return pa.table(
        {
            "trade_id": [f"T{seed}-{i}" for i in range(n)],
            "venue": [venues[i % len(venues)] for i in range(n)],
            "price": [round(100 + r.random() * 5, 2) for _ in range(n)],
            "fill": [None if r.random() < nulls else r.randint(1, 100) for _ in range(n)],
            "side": [r.choice(["B", "S"]) for _ in range(n)],
        }
    )


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MetricStore:
    # a profile that writes is a recorded run (flows.profile): its runs/ go to this test's
    # workspace, the one the store is in (ASSAY_WORKSPACE is the default workspace)
    monkeypatch.setenv("ASSAY_WORKSPACE", str(tmp_path))
    with MetricStore.open(workspace=tmp_path) as opened:
        yield opened


def run(store: MetricStore, table: pa.Table, i: int, **kw: object) -> list[tuple[str, str | None, str]]:
    result = flows.profile(table, dataset="trades", load_date=day(i), store=store, **kw)  # type: ignore[arg-type]
    return [(a.kind, a.column, a.severity) for a in result.alerts]


def test_every_column_in_one_query(tmp_path: Path) -> None:
    path = tmp_path / "load.parquet"
    pq.write_table(trades(500, nulls=0.1), path)
    result = profile(path, dataset="trades", load_date=day(0))
    assert result.queries == 1
    by_name = {c.name: c for c in result.profile.columns}
    assert by_name["venue"].values == {"XLON": 167, "XPAR": 167, "XETR": 166}
    assert by_name["venue"].distinct == 3 and by_name["venue"].distinct_exact
    # an id: exactly counted, but mostly unique values are not a category
    assert by_name["trade_id"].values is None and by_name["trade_id"].distinct == 500
    prices = set(trades(500, nulls=0.1).column("price").to_pylist()) - {None}
    assert by_name["price"].minimum >= 100  # a small load: every column counted exactly
    assert (by_name["price"].distinct, by_name["price"].distinct_exact) == (len(prices), True)
    assert by_name["fill"].nulls == sum(
        1 for v in trades(500, nulls=0.1).column("fill").to_pylist() if v is None
    )
    assert by_name["venue"].top(2) == [("XLON", 167, 167 / 500), ("XPAR", 167, 167 / 500)]


def test_the_value_cap(tmp_path: Path) -> None:
    from assay.engine import DuckDBEngine
    from assay.measure.profile import profile as measure

    engine = DuckDBEngine()
    engine.register_arrow("t", pa.table({"code": [f"c{i % 30}" for i in range(300)]}))
    (code,) = measure(engine, "t", engine.columns("t"), cap=20).columns
    assert code.values is None and code.distinct == 30 and code.distinct_exact


def counted(n: int = 6000) -> pa.Table:
    """Columns whose HyperLogLog estimates are wrong: 50 ints (≈51), 40 floats (≈39), 3000 ints
    (≈3001) and 120 dates (≈119)."""
    return pa.table(
        {
            "status": [i % 50 for i in range(n)],
            "px": [(i % 40) * 0.25 for i in range(n)],
            "account": [i % 3000 for i in range(n)],
            "day": [date(2026, 1, 1) + timedelta(days=i % 120) for i in range(n)],
        }
    )


def test_numbers_and_dates_are_exact_up_to_the_cap(
    store: MetricStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the cap decides in loads larger than SMALL_LOAD (every column of a smaller one is counted):
    # lowered here, so that 6,000 rows show the rule
    monkeypatch.setattr("assay.measure.profile.SMALL_LOAD", 1000)
    first = flows.profile(counted(), dataset="counted", load_date=day(0), store=store)
    assert first.queries == 1
    c = {col.name: col for col in first.profile.columns}
    # first seen: integers and dates are counted exactly, floats estimated
    assert (c["status"].distinct, c["status"].distinct_exact) == (50, True)
    assert (c["day"].distinct, c["day"].distinct_exact) == (120, True)
    assert (c["account"].distinct, c["account"].distinct_exact) == (3000, True)
    assert not c["px"].distinct_exact
    # a low-cardinality number has top values, but no value set: numbers are not categories
    assert c["status"].top(1) == [("0", 120, 0.02)] and c["status"].values is None
    assert c["account"].top() == []  # one value per two rows: not low-cardinality
    second = flows.profile(counted(), dataset="counted", load_date=day(1), store=store)
    assert second.queries == 1
    c = {col.name: col for col in second.profile.columns}
    # the previous load decides: within the cap exact, beyond it estimated
    assert (c["px"].distinct, c["px"].distinct_exact) == (40, True)
    assert (c["status"].distinct, c["status"].distinct_exact) == (50, True)
    assert not c["account"].distinct_exact and abs(c["account"].distinct - 3000) < 150
    assert store.categorical_columns("counted") == set()
    assert not [a for a in second.alerts if a.kind == "new_value"]


def test_a_never_null_column_alerts_hard_on_its_first_null(store: MetricStore) -> None:
    for i in range(6):
        assert run(store, trades(seed=i), i) == []
    broken = trades(seed=9)
    fills = broken.column("fill").to_pylist()
    fills[:4] = [None] * 4  # 2% of 200 rows
    alerts = run(store, broken.set_column(3, "fill", pa.array(fills, pa.int64())), 6)
    assert alerts == [("null_rate", "fill", "hard")]


def test_the_band_respects_evidence_and_variation(store: MetricStore) -> None:
    for i in range(10):
        run(store, trades(1000, seed=i, nulls=0.05), i)
    assert run(store, trades(1000, seed=50, nulls=0.05), 10) == []
    assert ("null_rate", "fill", "hard") in run(store, trades(1000, seed=51, nulls=0.4), 11)
    # 10 nulls in 100 rows (10%) is weak evidence against a 5% rate: no alert
    assert run(store, trades(100, seed=52, nulls=0.1), 12) == [("volume", None, "hard")]


def test_a_never_seen_value_opens_a_decision(store: MetricStore) -> None:
    for i in range(3):
        run(store, trades(seed=i), i)
    result = flows.profile(
        trades(seed=3, venues=("XLON", "XNEW")), dataset="trades", load_date=day(3), store=store
    )
    (alert,) = [a for a in result.alerts if a.kind == "new_value"]
    assert alert.column == "venue" and alert.values == [
        {"value": "XNEW", "count": 100, "decision": "pending"}
    ]
    (decision,) = store.decisions("trades")
    assert (decision.value, decision.status, decision.rows) == ("XNEW", "pending", 100)
    store.decide(decision.id, "accepted", by="ana")
    assert run(store, trades(seed=4, venues=("XLON", "XNEW")), 4) == []
    # a value that was retired and replaced leaves the count unchanged but is still new
    assert ("new_value", "venue", "soft") in run(store, trades(seed=5, venues=("XLON", "XNEW", "XAMS")), 5)


def test_a_rejected_value_alerts_hard_when_it_returns(store: MetricStore) -> None:
    for i in range(3):
        run(store, trades(seed=i), i)
    run(store, trades(seed=3, venues=("XBAD",)), 3)
    (decision,) = store.decisions("trades")
    store.decide(decision.id, "rejected", by="ana", note="typo of XPAR")
    assert ("new_value", "venue", "hard") in run(store, trades(seed=4, venues=("XBAD",)), 4)


def test_the_first_load_teaches_and_does_not_alert(store: MetricStore) -> None:
    assert run(store, trades(seed=0, venues=("A", "B")), 0) == []


def test_profiling_a_date_again_replaces_it(store: MetricStore) -> None:
    for i in range(3):
        run(store, trades(seed=i), i)
    run(store, trades(seed=9, venues=("XLON", "XOOPS")), 2)  # a wrong file for day 2...
    result = flows.profile(trades(seed=2), dataset="trades", load_date=day(2), store=store)  # ...resent
    assert result.replaced == 1
    assert [load.logical_date for load in store.window("trades", date.max)] == [day(2), day(1), day(0)]
    assert "XOOPS" not in store.value_set("trades", "venue")
    assert run(store, trades(seed=3, venues=("XLON", "XOOPS")), 3)[0][:2] == ("new_value", "venue")


def test_schema_changes(store: MetricStore) -> None:
    run(store, trades(seed=0), 0)
    changed = trades(seed=1).drop_columns(["side"]).append_column("broker", pa.array(["b"] * 200))
    changed = changed.set_column(2, "price", pa.array([str(v) for v in changed.column("price").to_pylist()]))
    alerts = sorted(run(store, changed, 1))
    assert ("schema", "side", "hard") in alerts and ("schema", "broker", "soft") in alerts
    assert ("schema", "price", "hard") in alerts


def test_volume_and_range(store: MetricStore) -> None:
    for i in range(drift.MIN_RANGE_HISTORY):
        run(store, trades(200, seed=i), i)
    assert ("volume", None, "hard") in run(store, trades(20, seed=77), 10)
    wide = trades(200, seed=8)
    wide = wide.set_column(2, "price", pa.array([500.0, *wide.column("price").to_pylist()[1:]]))
    assert ("range", "price", "soft") in run(store, wide, 11)


def test_weekday_windows(store: MetricStore) -> None:
    # Mondays are big, other days small: a weekday window expects a big Monday
    for week in range(6):
        for weekday in range(5):
            n = 1000 if weekday == 0 else 200
            run(store, trades(n, seed=week * 7 + weekday), week * 7 + weekday, window="weekday:4")
    monday = trades(1000, seed=999)
    assert run(store, monday, 42, window="weekday:4") == []
    assert ("volume", None, "hard") in run(store, trades(1000, seed=998), 43, window="last:4")


def test_the_conditioned_band_follows_activity(store: MetricStore, tmp_path: Path) -> None:
    """Fills go missing more often on busy days. The plain band absorbs that variation and grows
    too wide to see a quiet day with a busy day's null rate; the conditioned band predicts the
    rate from the day's row count and catches it, without alerting on the clean days."""

    def load(n: int, seed: int, rate: float | None = None) -> pa.Table:
        return trades(n, seed=seed, nulls=rate if rate is not None else 0.002 + n / 2000 * 0.08)

    sizes = [random.Random(i).randint(300, 2000) for i in range(16)]
    config = DatasetConfig.model_validate({"null_rate": {"conditioned": {"fill": "row_count"}}})
    with MetricStore.open(workspace=tmp_path / "plain") as plain_store:
        clean_alerts = 0
        for i, n in enumerate(sizes):
            run(plain_store, load(n, i), i)
            alerts = run(store, load(n, i), i, config=config)
            if i >= drift.MIN_CONDITIONED:  # before that, the conditioned band falls back to the plain one
                clean_alerts += sum(1 for a in alerts if a[0] == "null_rate")
        quiet_but_broken = load(400, 99, rate=0.08)  # a 2000-row day's rate on a 400-row day
        plain = run(plain_store, quiet_but_broken, 20)
        conditioned = run(store, quiet_but_broken, 20, config=config)
    assert clean_alerts == 0
    assert not [a for a in plain if a[0] == "null_rate"]
    assert [a[:2] for a in conditioned if a[0] == "null_rate"] == [("null_rate", "fill")]


def test_history_with_bands(store: MetricStore) -> None:
    for i in range(7):
        run(store, trades(seed=i), i)
    broken = trades(seed=9)
    broken = broken.set_column(
        3, "fill", pa.array([None] * 10 + broken.column("fill").to_pylist()[10:], pa.int64())
    )
    run(store, broken, 7)
    points = history(store, "trades", column="fill")
    assert [p.severity for p in points][-1] == "hard"
    assert points[-1].low == 0.0 and points[-1].high == 0.0 and points[-1].value == 0.05
    assert all(p.low is None for p in points[:5])  # learning: fewer than 5 loads before


def test_the_window_parser() -> None:
    assert drift.Window.parse("last:20") == drift.Window("last", 20)
    with pytest.raises(Exception, match="last:N or weekday:N"):
        drift.Window.parse("lastweek")


def test_one_incident_does_not_widen_the_band_for_the_next_loads(store: MetricStore) -> None:
    for i in range(12):
        run(store, trades(1000, seed=i, nulls=0.03), i)
    assert ("null_rate", "fill", "hard") in run(store, trades(1000, seed=12, nulls=0.12), 12)
    # a smaller fault a few days later is still caught: the incident is left out of the estimates
    assert ("null_rate", "fill", "hard") in run(store, trades(1000, seed=13, nulls=0.07), 13)
    # the two incidents are held out of the window until a person accepts them (there is no
    # earlier load to read instead), and the message counts the loads the band read
    for i in range(14, 21):
        run(store, trades(1000, seed=i, nulls=0.03), i)
    points = history(store, "trades", column="fill")
    assert points[-1].high is not None and points[-1].high < 0.06
    assert "18 of 18 loads had missing values)" in (points[-1].message or "")


def test_the_conditioned_band_leaves_out_past_incidents_too() -> None:
    """An incident in the window widens neither band; a never-null column stays zero-width even
    when its band is configured as conditioned."""
    rows = [1000] * 20
    nulls = [5, 4, 6, 5, 5, 4, 6, 5, 100, 5, 4, 6, 5, 5, 4, 6, 5, 5, 4, 6]
    activity = [random.Random(i).random() for i in range(20)]
    plain = drift.null_rate_band(rows, nulls, 1000)
    conditioned = drift.null_rate_band(rows, nulls, 1000, activity, 0.5)
    assert plain is not None and conditioned is not None and conditioned.model == "conditioned"
    assert plain.severity(0.02) == conditioned.severity(0.02) == "hard"
    assert conditioned.hard[1] < 0.02
    # missing once in twenty loads: not a never-null column (no zero width), but 2% is still hard
    once = drift.null_rate_band(rows, [0] * 19 + [20], 1000, activity, 0.5)
    assert (
        once is not None
        and once.model == "rare"
        and once.history() == ("1 of 20 loads had missing values, 1 left out as past incidents")
    )
    assert (once.severity(0.001), once.severity(0.02)) == (None, "hard")


def test_a_conditioned_column_added_later(store: MetricStore) -> None:
    """The activity series is taken over the loads that have the column, not the whole window."""
    config = DatasetConfig.model_validate({"null_rate": {"conditioned": {"fill": "Column.qty.Maximum"}}})
    for i in range(5):
        flows.profile(
            pa.table({"qty": [i, 2 * i]}), dataset="trades", load_date=day(i), store=store, config=config
        )
    for i in range(5, 16):
        table = pa.table({"qty": [i, 2 * i, 3], "fill": [1, None if i % 2 else 2, 3]})
        result = flows.profile(table, dataset="trades", load_date=day(i), store=store, config=config)
    (judged,) = [j for j in result.judgements if (j.kind, j.column) == ("null_rate", "fill")]
    assert judged.detail is not None and judged.detail["model"] == "conditioned"


def test_profiling_a_date_again_counts_its_rows_once(store: MetricStore) -> None:
    for i in range(7):
        run(store, trades(seed=i), i)
    for _ in range(3):
        result = flows.profile(
            trades(seed=7, venues=("XLON", "XNEW", "XNEW", "XNEW")),
            dataset="trades",
            load_date=day(7),
            store=store,
        )
    (decision,) = store.decisions("trades")
    assert decision.rows == 150 and result.decisions == [decision.id]
    # the vendor corrects the file: the value was never really there, and its decision goes
    flows.profile(trades(seed=7), dataset="trades", load_date=day(7), store=store)
    assert store.decisions("trades") == []


def test_a_category_stays_a_category_in_a_small_load(store: MetricStore) -> None:
    codes = [f"C{i:02d}" for i in range(16)]
    for i in range(7):
        flows.profile(pa.table({"carrier": codes * 50}), dataset="flights", load_date=day(i), store=store)
    small = pa.table({"carrier": [*codes[:15], "NEW", *codes[:4]]})
    result = flows.profile(small, dataset="flights", load_date=day(7), store=store)
    assert [a.values for a in result.alerts if a.kind == "new_value"] == [
        [{"value": "NEW", "count": 1, "decision": "pending"}]
    ]
    # but a category that turns into mostly new values is one alert, not a flood of decisions
    ids = pa.table({"carrier": [f"ID{i}" for i in range(800)]})
    later = flows.profile(ids, dataset="flights", load_date=day(8), store=store)
    (flood,) = [a for a in later.alerts if a.kind == "new_value"]
    assert flood.severity == "soft" and flood.message.startswith("800 of 800 values never seen before")
    assert later.profile.column("carrier").values is None and later.decisions == []
    assert [d.value for d in store.decisions("flights")] == ["NEW"]


def test_dates_are_judged_relative_to_the_load_date(store: MetricStore) -> None:
    """Event dates move forward with the loads: no range alert for that, but a date years away is."""
    for i in range(10):
        when = day(i)
        table = pa.table({"event_date": [when - timedelta(days=1), when]})
        assert [a for a in flows.profile(table, dataset="events", load_date=when, store=store).alerts] == []
    late = pa.table({"event_date": [day(10) - timedelta(days=1), date(2031, 1, 1)]})
    (alert,) = flows.profile(late, dataset="events", load_date=day(10), store=store).alerts
    assert (alert.kind, alert.column, alert.severity) == ("range", "event_date", "soft")
    assert "from the load date" in alert.message
    points = history(store, "events", column="event_date", metric="Maximum")
    assert points[-1].high is not None and points[-1].high < (date(2031, 1, 1) - date(1970, 1, 1)).days
    assert points[-1].low is not None and points[-1].low > (day(0) - date(1970, 1, 1)).days


def test_a_profile_that_writes_to_a_store_is_a_recorded_run(store: MetricStore) -> None:
    # the stage library only measures: storing and judging a load is the platform's run, with
    # its run record and incidents (docs/monitor.md, "In the code")
    from assay.errors import ConfigError

    with pytest.raises(ConfigError, match=r"assay\.platform\.flows\.profile") as refused:
        profile(trades(), dataset="trades", load_date=day(0), store=store)
    assert "store=" in str(refused.value)
    with pytest.raises(ConfigError, match=r"assay\.platform\.flows\.profile"):
        profile(trades(), dataset="trades", load_date=day(0), window="last:5")
    assert store.runs("trades") == [] and store.load_for_date("trades", day(0)) == []
