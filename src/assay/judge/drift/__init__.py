"""Drift: today's profile judged against a window of earlier loads of the same dataset.

Each kind is one small class in :data:`JUDGEMENTS`, each stating its rule in one line: the
schema, the row count, a column's null rate against its band, the numeric range, a categorical
column's values against every value it ever held (seed 002); a number's shape (mean, standard
deviation, quantiles) against its bands, a number flooded with a default value (0, -1), two
number columns or two categories that exchanged their values, a value every load of the window
held that is gone, and a load whose content equals an earlier one's (issue 30). Each reads a
:class:`Case` (today's load, the past the history read model found, the settings) and returns
:class:`Finding` values, kept with the band they used so that ``assay history`` can show why an
alert fired. The bands themselves are :mod:`assay.judge.drift.bands`. Nothing here reads a store.

>>> [j.kind for j in JUDGEMENTS]  # doctest: +NORMALIZE_WHITESPACE
['schema', 'volume', 'null_rate', 'range', 'new_value', 'shape', 'default_value', 'swap',
 'swap', 'vanished_value', 'duplicate_load']
"""

from __future__ import annotations

from typing import Protocol

from assay.judge.drift.bands import (
    HARD_SIGMAS,
    INCIDENTS,
    MIN_CONDITIONED,
    MIN_HISTORY,
    MIN_RANGE_HISTORY,
    RANGE_MARGIN,
    SOFT_SIGMAS,
    Band,
    Window,
    null_rate_band,
    range_band,
    volume_band,
)
from assay.judge.drift.case import Case, Finding, Past, Settings, Today
from assay.judge.drift.category_swap import CategorySwap
from assay.judge.drift.default_value import DefaultValue
from assay.judge.drift.duplicate_load import DuplicateLoad
from assay.judge.drift.new_value import NewValue
from assay.judge.drift.null_rate import NullRate
from assay.judge.drift.numeric_swap import NumericSwap
from assay.judge.drift.range import Range
from assay.judge.drift.schema import Schema
from assay.judge.drift.shape import Shape
from assay.judge.drift.vanished_value import VanishedValue
from assay.judge.drift.volume import Volume
from assay.measure.profile import ColumnProfile


class Judgement(Protocol):
    kind: str
    statement: str
    per_column: bool  # judged once per column (else once per load)

    def judge(self, case: Case, column: ColumnProfile | None = None) -> list[Finding]: ...


JUDGEMENTS: tuple[Judgement, ...] = (
    Schema(),
    Volume(),
    NullRate(),
    Range(),
    NewValue(),
    Shape(),
    DefaultValue(),
    NumericSwap(),
    CategorySwap(),
    VanishedValue(),
    DuplicateLoad(),
)
"""Every judgement, in the order a load's findings are listed: the load's, then each column's."""

KINDS = tuple(dict.fromkeys(j.kind for j in JUDGEMENTS))  # numbers and categories both judge "swap"


def judge(case: Case) -> list[Finding]:
    """Every finding on one load: each judgement the settings enable, the load's first, then each
    column's in the order of the load's columns. A load's judgement reads its own switches (the
    schema's are per column, and a column that is gone is not among today's)."""
    columns = [j for j in JUDGEMENTS if j.per_column]
    found = [f for j in JUDGEMENTS if not j.per_column for f in j.judge(case)]
    for column in case.today.profile.columns:
        for j in columns:
            if case.settings.enabled(j.kind, column.name):
                found += j.judge(case, column)
    return found


__all__ = [
    "HARD_SIGMAS",
    "INCIDENTS",
    "JUDGEMENTS",
    "KINDS",
    "MIN_CONDITIONED",
    "MIN_HISTORY",
    "MIN_RANGE_HISTORY",
    "RANGE_MARGIN",
    "SOFT_SIGMAS",
    "Band",
    "Case",
    "Finding",
    "Judgement",
    "Past",
    "Settings",
    "Today",
    "Window",
    "judge",
    "null_rate_band",
    "range_band",
    "volume_band",
]
