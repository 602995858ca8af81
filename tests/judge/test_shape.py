"""A number's shape (mean, standard deviation, quantiles) judged against bands learnt from the
window, and two number columns that exchanged their values as one ``swap`` alert.

Each load is a small Arrow table profiled by the real profiler (one DuckDB query), judged by
:func:`assay.judge.drift.judge` against a window of such loads."""

from __future__ import annotations

import functools
import gc
import math
import random
import weakref
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

import pyarrow as pa

from assay.engine import DuckDBEngine
from assay.judge import drift
from assay.judge.drift.shape_band import ShapeBand, verdict
from assay.measure.profile import LoadProfile, profile
from assay.store.profiles import LoadInfo

START = date(2026, 1, 1)
LOADS = 20
ROWS = 200


def measure(*tables: pa.Table) -> list[LoadProfile]:
    """Each table profiled in one query, by one engine."""
    engine = DuckDBEngine()
    try:
        found = []
        for i, table in enumerate(tables):
            engine.register_arrow(f"t{i}", table)
            found.append(profile(engine, f"t{i}", engine.columns(f"t{i}")))
        return found
    finally:
        engine.close()


@functools.cache
def window(make: Callable[[random.Random, int], pa.Table]) -> drift.Past:
    """LOADS earlier loads made by ``make(rng, i)``, as the history read model finds them."""
    rng = random.Random(30)
    loads, metrics = [], {}
    for i, load in enumerate(measure(*(make(rng, i) for i in range(LOADS)))):
        day = START + timedelta(days=i)
        info = LoadInfo(i + 1, day, datetime.combine(day, datetime.min.time(), UTC), load.rows)
        loads.append(info)
        metrics[info.id] = {(k.entity, k.instance, k.name): v for k, v in load.metrics().items()}
    return drift.Past(loads=list(reversed(loads)), metrics=metrics, earlier=True)


def judged(
    make: Callable[[random.Random, int], pa.Table],
    today: pa.Table,
    enabled: Callable[[str, str | None], bool] | None = None,
) -> list[drift.Finding]:
    """``today`` judged against the window made by ``make``."""
    past = window(make)
    settings = drift.Settings() if enabled is None else drift.Settings(enabled=enabled)
    day = START + timedelta(days=LOADS)
    return drift.judge(drift.Case(drift.Today(measure(today)[0], day), past, settings))


def temperatures(rng: random.Random, i: int, rows: int = ROWS) -> pa.Table:
    """Two overlapping measurements, ``temp`` about 50 and ``dewp`` about 36, each day's level
    moving a little."""
    level = rng.gauss(0, 1)
    return pa.table(
        {
            "temp": [round(rng.gauss(50 + level, 8), 1) for _ in range(rows)],
            "dewp": [round(rng.gauss(36 + level, 8), 1) for _ in range(rows)],
        }
    )


def alerts(findings: list[drift.Finding], kind: str) -> list[tuple[str | None, str | None]]:
    return [(f.column, f.severity) for f in findings if f.kind == kind and f.severity]


def test_a_clean_load_raises_no_shape_alert() -> None:
    findings = judged(temperatures, temperatures(random.Random(1), LOADS))
    shapes = [f for f in findings if f.kind == "shape"]
    assert [f.column for f in shapes] == ["temp", "dewp"]  # judged, with a band
    assert all(f.expected is not None for f in shapes)
    assert alerts(findings, "shape") == [] and alerts(findings, "swap") == []


def test_a_unit_change_is_a_hard_shape_alert_stating_the_value_and_band() -> None:
    today = temperatures(random.Random(1), LOADS)
    today = today.set_column(0, "temp", pa.array([v / 1000 for v in today.column("temp").to_pylist()]))
    findings = judged(temperatures, today)
    assert alerts(findings, "shape") == [("temp", "hard")]
    (finding,) = [f for f in findings if f.kind == "shape" and f.column == "temp"]
    assert finding.expected is not None and finding.observed is not None
    assert not finding.expected[0] <= finding.observed <= finding.expected[1]
    assert finding.message.startswith(f"{_metric(finding)} {finding.observed:.6g}; expected ")
    assert f"{finding.expected[0]:.6g} to {finding.expected[1]:.6g}" in finding.message


def _metric(finding: drift.Finding) -> str:
    assert finding.detail is not None
    metric = str(finding.detail["metric"])
    return "standard deviation" if metric == "StandardDeviation" else "mean" if metric == "Mean" else metric


def test_a_level_shift_and_a_flood_of_zeros_are_shape_alerts() -> None:
    base = temperatures(random.Random(1), LOADS)
    values = base.column("temp").to_pylist()
    level = base.set_column(0, "temp", pa.array([v * 1.5 for v in values]))
    flood = base.set_column(0, "temp", pa.array([0.0 if i % 5 == 0 else v for i, v in enumerate(values)]))
    assert alerts(judged(temperatures, level), "shape") == [("temp", "hard")]
    assert [column for column, _ in alerts(judged(temperatures, flood), "shape")] == ["temp"]


def test_a_column_that_turns_constant_is_a_hard_alert() -> None:
    base = temperatures(random.Random(1), LOADS)
    stuck = base.set_column(0, "temp", pa.array([48.5] * ROWS))
    findings = judged(temperatures, stuck)
    assert alerts(findings, "shape") == [("temp", "hard")]
    (finding,) = [f for f in findings if f.kind == "shape" and f.column == "temp"]
    assert finding.message.startswith("constant: every value is 48.5")


def test_a_column_with_one_value_per_load_is_not_judged() -> None:
    """A day of the month holds one value a load: its shape says which load this is."""

    def days(rng: random.Random, i: int) -> pa.Table:
        return pa.table({"day": [i + 1] * 50})

    assert [f for f in judged(days, pa.table({"day": [LOADS + 1] * 50})) if f.kind == "shape"] == []


def test_two_swapped_numbers_are_one_hard_swap_alert_naming_both() -> None:
    """Two daily series that barely move: swapped, each leaves its own band and fits the other's."""
    today = temperatures(random.Random(1), LOADS)
    swapped = pa.table({"temp": today.column("dewp"), "dewp": today.column("temp")})
    findings = judged(temperatures, swapped)
    assert alerts(findings, "swap") == [("dewp", "hard")]
    (swap,) = [f for f in findings if f.kind == "swap"]
    assert swap.detail == {"columns": ["dewp", "temp"]}
    assert swap.message.startswith("columns dewp and temp exchanged their values")
    assert alerts(findings, "shape") == []  # one alert, not three


def seasons(rng: random.Random, i: int, rows: int = ROWS) -> pa.Table:
    """A daily maximum always above the minimum, both drifting with the season: their bands are
    wide, so a swap stays inside each column's own band and shows as the two crossing."""
    level = 10 * (i % 7) + rng.gauss(0, 2)
    low = [rng.gauss(level, 3) for _ in range(rows)]
    return pa.table({"high": [v + 8 + abs(rng.gauss(0, 2)) for v in low], "low": low})


def test_two_crossed_columns_inside_their_own_bands_are_a_swap() -> None:
    today = seasons(random.Random(1), 3)
    swapped = pa.table({"high": today.column("low"), "low": today.column("high")})
    findings = judged(seasons, swapped)
    assert alerts(findings, "shape") == []
    assert alerts(findings, "swap") == [("high", "hard")]
    assert alerts(judged(seasons, today), "swap") == []


def test_shape_and_swap_can_be_switched_off() -> None:
    today = temperatures(random.Random(1), LOADS)
    swapped = pa.table({"temp": today.column("dewp"), "dewp": today.column("temp")})

    def no_swap(kind: str, column: str | None = None) -> bool:
        return kind != "swap"

    findings = judged(temperatures, swapped, no_swap)
    assert alerts(findings, "swap") == []
    assert sorted(alerts(findings, "shape")) == [("dewp", "soft"), ("temp", "soft")]

    def no_shape_for_temp(kind: str, column: str | None = None) -> bool:
        return not (kind == "shape" and column == "temp")

    findings = judged(temperatures, swapped, no_shape_for_temp)
    assert [f.column for f in findings if f.kind == "shape"] == ["dewp"]


def test_a_judged_load_is_not_kept_after_its_judgement() -> None:
    """The swaps ``shape`` and ``swap`` both read are computed once per judged load and kept by
    that load's case: nothing outlives the judgement (a web worker judging dataset after dataset
    kept the last one's whole window alive)."""
    today = temperatures(random.Random(1), LOADS)
    swapped = pa.table({"temp": today.column("dewp"), "dewp": today.column("temp")})
    case = drift.Case(drift.Today(measure(swapped)[0], START + timedelta(days=LOADS)), window(temperatures))
    assert alerts(drift.judge(case), "swap") == [("dewp", "hard")]
    kept = weakref.ref(case)
    del case
    gc.collect()
    assert kept() is None


def test_one_dataset_judged_after_another_gets_the_answer_it_gets_alone() -> None:
    today = temperatures(random.Random(1), LOADS)
    swapped = pa.table({"temp": today.column("dewp"), "dewp": today.column("temp")})
    crossed = seasons(random.Random(1), 3)
    crossed = pa.table({"high": crossed.column("low"), "low": crossed.column("high")})
    alone = [(f.kind, f.column, f.severity, f.message) for f in judged(seasons, crossed)]
    judged(temperatures, swapped)
    after = [(f.kind, f.column, f.severity, f.message) for f in judged(seasons, crossed)]
    assert after == alone
    assert ("swap", "high", "hard") in [f[:3] for f in after]


def test_a_spread_that_shrinks_alerts_only_beyond_the_hard_band() -> None:
    """Half the usual spread, the mean kept (a drier month of rain, fewer cities reporting in a
    panel) is recorded, not alerted; the same column divided by 1,000 is a hard alert."""
    today = temperatures(random.Random(1), LOADS)
    values = today.column("temp").to_pylist()
    mean = sum(values) / len(values)
    narrower = today.set_column(0, "temp", pa.array([mean + (v - mean) / 2.2 for v in values]))
    findings = judged(temperatures, narrower)
    (finding,) = [f for f in findings if f.kind == "shape" and f.column == "temp"]
    assert finding.detail is not None and finding.detail["metric"] == "StandardDeviation"
    assert finding.expected is not None and finding.observed is not None
    assert finding.observed < finding.expected[0]  # below the soft band: the judgement says so
    assert finding.severity is None


def test_locations_that_agree_alert_when_the_spread_shrank_only_a_little() -> None:
    """A column whose spread shrank a little beyond its soft band, and whose mean and median
    both left theirs: the spread alone says nothing, the two locations together still alert."""
    bands = {
        "Mean": ShapeBand("Mean", 10.0, 1.0),
        "Quantile50": ShapeBand("Quantile50", 10.0, 1.0),
        "StandardDeviation": ShapeBand("StandardDeviation", 0.0, 1.0, log=True),
    }
    # the spread 6.5 spreads below its centre, but within twice its soft band's low end
    today = {"Mean": 16.3, "Quantile50": 16.2, "StandardDeviation": math.exp(-6.5)}
    found = verdict(today, bands, usual_spread=True)
    assert found is not None and found.metric == "StandardDeviation"  # the farthest out
    assert bands["StandardDeviation"].severity(today["StandardDeviation"]) is None
    assert found.severity == "soft"


def test_a_spread_far_below_its_band_is_a_soft_alert_inside_its_hard_band() -> None:
    band = ShapeBand("StandardDeviation", 0.0, 1.0, log=True)
    assert band.severity(math.exp(-6.5)) is None  # 1.6 times below the soft band
    assert band.severity(math.exp(-7)) == "soft"  # 2.7 times below
    assert band.severity(math.exp(-13)) == "hard"
    assert band.severity(math.exp(6.5)) == "soft"  # a spread that grew: 6 spreads is enough
