"""A profile's minimum and maximum are kept as numbers (assay.measure.values.as_number: dates as
days since 1970, timestamps as seconds); from_number gives back what they were made from, for the
pages that show them."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from assay.measure.values import as_number, from_number


@pytest.mark.parametrize(
    ("value", "type_name"),
    [
        (date(2026, 11, 30), "date"),
        (date(1969, 7, 20), "date"),
        (datetime(2026, 11, 30, 21, 37, 54, tzinfo=UTC), "timestamptz"),
        (datetime(1999, 12, 31, 23, 59, 59), "timestamp"),
        (11.98, "double"),
        (-3.0, "bigint"),
    ],
)
def test_from_number_undoes_as_number(value: object, type_name: str) -> None:
    kept = as_number(value)
    assert kept is not None
    assert from_number(kept, type_name) == value


def test_an_offset_timestamp_comes_back_as_the_same_instant_in_utc() -> None:
    paris = datetime(2026, 11, 30, 22, 0, tzinfo=timezone(timedelta(hours=1)))
    back = from_number(as_number(paris) or 0.0, "timestamptz")
    assert back == paris and back.utcoffset() == timedelta(0)
