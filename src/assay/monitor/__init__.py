"""The drift monitor, a stage library: profile every load, keep the profiles, judge today against
a window of earlier loads. Its parts take values and return values:

- :mod:`~assay.monitor.settings`: a dataset's monitor settings (the check document composes them);
- :mod:`~assay.monitor.profiler`: the profile's steps (measure, persist, judge, route);
- :mod:`~assay.monitor.history`: the history read model, a dataset's past profiles in the store;
- the judgements themselves are :mod:`assay.judge.drift`, one small class each.

A profile recorded as a run, with its incidents, is the platform's
(:mod:`assay.platform.runs.profile`); nothing here imports the platform or the gate.
"""

from __future__ import annotations

from assay.monitor.history import MISSING_RATE, History, Point, default_metric, history
from assay.monitor.profiler import Alert, ProfileResult, profile
from assay.monitor.settings import (
    KINDS,
    SENSITIVITY,
    ColumnChecks,
    ColumnConfig,
    DatasetChecks,
    DatasetConfig,
    NullRateConfig,
    from_document,
)

__all__ = [
    "KINDS",
    "MISSING_RATE",
    "SENSITIVITY",
    "Alert",
    "ColumnChecks",
    "ColumnConfig",
    "DatasetChecks",
    "DatasetConfig",
    "History",
    "NullRateConfig",
    "Point",
    "ProfileResult",
    "default_metric",
    "from_document",
    "history",
    "profile",
]
