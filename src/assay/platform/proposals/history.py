"""What proposals are mined from: a dataset's profiled loads, as the drift monitor stored them.

Every current load of the monitor's partition (``assay profile``, or the demo's
:func:`~assay.demo.trades.profile_day`), oldest first, with its metrics (null counts, distinct
counts, minimum and maximum, the column pairs' orders, row counts), its schema and the value
counts of its categorical columns. The **latest** load is the one a proposal is dry-run on; the
loads **before** it are the ones it is mined from, so that a proposal never learns today's
problem as normal, nor a load held out of baselines; the backtest reads them all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from assay.engine import DataKind
from assay.platform.checks.document import Document, Profile
from assay.platform.proposals.clock import Clock
from assay.store.proposals import StoredLoad
from assay.store.schedules import TickRecord

KINDS = {
    "boolean": DataKind.BOOLEAN,
    "int": DataKind.INTEGER,
    "long": DataKind.INTEGER,
    "float": DataKind.FLOAT,
    "double": DataKind.FLOAT,
    "string": DataKind.STRING,
    "date": DataKind.DATE,
    "timestamp": DataKind.TIMESTAMP,
    "timestamptz": DataKind.TIMESTAMP,
}
"""The data kinds of the canonical (Iceberg) type names the store keeps; ``decimal(p,s)`` is a
decimal; anything else is no kind a proposal is mined for."""

_SAFE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def kind_of(type_name: str) -> DataKind:
    """The data kind of a stored (canonical) type name.

    >>> kind_of("decimal(18,2)"), kind_of("timestamptz"), kind_of("list<int>")
    (<DataKind.DECIMAL: 'decimal'>, <DataKind.TIMESTAMP: 'timestamp'>, <DataKind.OTHER: 'other'>)
    """
    if type_name.startswith("decimal"):
        return DataKind.DECIMAL
    return KINDS.get(type_name, DataKind.OTHER)


def plain_name(column: str) -> bool:
    """Whether a column name can be written unquoted in SQL and inside a DQDL string."""
    return bool(_SAFE.match(column))


@dataclass
class History:
    """A dataset's profiled loads and the document and profile proposals are written for."""

    dataset: str
    loads: list[StoredLoad]  # oldest first; the last is the latest
    document: Document
    profile: Profile
    min_loads: int = 14
    ticks: Sequence[TickRecord] = ()  # the store's ticks of the document: its runs' clock

    @property
    def mined(self) -> list[StoredLoad]:
        """The loads before the latest that nothing holds out of baselines: a load that raised a
        hard alert or failed an expectation is neither learnt from nor backtested on until a
        person accepts it (:mod:`assay.platform.baselines`)."""
        return [load for load in self.loads[:-1] if not load.held]

    @property
    def latest(self) -> StoredLoad:
        return self.loads[-1]

    def kind(self, column: str) -> DataKind:
        return kind_of(self.latest.types.get(column, ""))

    def columns(self, *kinds: DataKind) -> list[str]:
        """The latest load's columns of these kinds, in its column order."""
        return [c for c, t in self.latest.types.items() if kind_of(t) in kinds]

    def span(self, column: str) -> list[StoredLoad]:
        """The mined loads a column can be judged on: the most recent run of loads that have it
        with its latest type; none when that run is shorter than ``min_loads``."""
        wanted = self.latest.types.get(column)
        run: list[StoredLoad] = []
        for load in reversed(self.mined):
            if load.types.get(column) != wanted:
                break
            run.append(load)
        run.reverse()
        return run if len(run) >= self.min_loads else []

    def judged(self, column: str) -> list[StoredLoad]:
        """The loads a backtest judges a column's proposal on: its span and the latest load."""
        span = self.span(column)
        return [*span, self.latest] if span else []

    # --- arrival --------------------------------------------------------------------------------

    @cached_property
    def clock(self) -> Clock:
        """When each load is judged in production (:mod:`assay.platform.proposals.clock`)."""
        return Clock.of(self.profile, self.loads, self.ticks)

    def arrival(self, load: StoredLoad) -> datetime | None:
        """When ``load`` is judged: its scheduled run (None: no run judges it, or no clock)."""
        return self.clock.at(load)

    def describe_arrival(self) -> str:
        return self.clock.describe()


def metric(load: StoredLoad, column: str, name: str) -> float | None:
    """A column metric of a load (``NullCount``, ``Minimum``, ...)."""
    return load.metrics.get(("Column", column, name))


def days(load: StoredLoad) -> str:
    return load.logical_date.isoformat()
