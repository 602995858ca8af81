"""A check run's slices judged by the drift monitor, as ``assay profile`` judges a load.

A recorded check run measures the per-column profile of each profile's slice in its one
statement and stores it on the profile's load (partition: the profile's id). Here that profile is
judged by the monitor's own steps (:mod:`assay.monitor.profiler`): the same judgements
(:data:`assay.judge.drift.JUDGEMENTS`) against the same clean window of earlier loads
(:class:`assay.monitor.History`, of the profile's partition), with the same new-value decisions
(pending for a person, never a default). Its findings reach people by the one alert path: read as
``assay profile``'s summary is (:func:`assay.platform.alerts.profile_findings`, incident keys
``profile:<kind>(<column>)``), judged with the check run's outcomes by
:func:`assay.platform.incidents.judge`, and a hard alert holds its column (or the profile's own
counts) out of later baselines (:func:`holds`).

All of it runs inside the check run's commit (``CheckRun._settle``), the one transaction of its
loads, outcomes and incidents: a run killed before it leaves nothing of it, a run killed after it
left everything, and no new write boundary appears. A dry run records nothing and judges none.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.judge import drift
from assay.lake.files import file_format
from assay.measure.profile import LoadProfile
from assay.monitor import DatasetConfig, History, ProfileResult
from assay.monitor import profiler as steps
from assay.platform.alerts import Finding, profile_findings
from assay.platform.baselines import profile_holds
from assay.store import MetricStore
from assay.store.baselines import Hold


@dataclass
class Slice:
    """One profile's slice of a check run, as the drift monitor takes it.

    Made before the slice's value counts are stored (:meth:`of`), as ``assay profile`` decides
    which columns are categories before it stores a load; judged once the load is current
    (:meth:`judge`)."""

    profile: str
    history: History
    result: ProfileResult
    findings: list[drift.Finding] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        store: MetricStore,
        dataset: str,
        profile: str,
        day: date,
        columns: LoadProfile,
        config: DatasetConfig,
        inferred: frozenset[str],
    ) -> Slice:
        history = History(store, dataset, day, partition=profile)
        result = steps.recorded(
            history, columns, dataset=dataset, load_date=day, config=config, inferred=inferred
        )
        return cls(profile, history, result)

    def values(self) -> dict[str, dict[str, int]]:
        """The value counts the load keeps: its categories' (ids and timestamps are none)."""
        return {c.name: c.values for c in self.result.profile.columns if c.values is not None}

    def judge(
        self, store: MetricStore, load: int, config: DatasetConfig, *, run_id: str, at: datetime
    ) -> None:
        """Judge the slice against its window, keep the judgements, open the decisions its new
        values wait on, and hold what raised a hard alert out of later baselines."""
        result = self.result
        result.load_id = load
        self.findings = steps.judge(self.history, result, steps.window_of(None, config), config)
        # the decisions' rows of a load date counted once per profile, apart from assay
        # profile's own (each settles only the rows it brought)
        steps.route(store, result, self.findings, source=f"check:{self.profile}:{result.load_date}")
        store.hold_out_of_baselines(load, holds(result), run_id=run_id, at=at)

    def alerts(self) -> list[dict[str, Any]]:
        """The slice's alerts, as the run's JSON lists them (``drift``)."""
        return [{"profile": self.profile, **a.to_dict()} for a in self.result.alerts]

    def outcomes(self, owner: str | None) -> tuple[list[dict[str, Any]], dict[str, str]]:
        """The slice's judgements as outcomes that incidents judge, and each one's dimension: a
        hard alert or new values waiting on a decision fail, everything else judged passes."""
        found = [self._of_check(f) for f in profile_findings(self.result.run_summary())]
        return [f.outcome(owner) for f in found], {f.expectation: f.dimension for f in found}

    def _of_check(self, finding: Finding) -> Finding:
        if finding.detail is None:
            return finding
        return replace(finding, detail={**finding.detail, "flow": "check", "profile": self.profile})


OWN_COUNTS = ("RowCount", "ColumnCount")
"""The load-wide metrics the per-column profile stores (:meth:`LoadProfile.metrics`)."""


def holds(result: ProfileResult) -> list[Hold]:
    """What a slice's hard alerts keep out of later baselines: a column's, every metric of the
    column, as ``assay profile``'s (:func:`~assay.platform.baselines.profile_holds`); a load's
    (volume), only the profile's own counts. The document's metrics on the same load (its
    ``row_count``, a ``by:`` group's) are its expectations' to judge and hold: a check that reads
    its volume against the same weekday must keep its Saturdays, which the monitor's plain
    window finds small."""
    found = profile_holds((a.kind, a.column, a.severity) for a in result.alerts)
    return [
        replace(hold, name=name)
        for hold in found
        for name in (OWN_COUNTS if hold.entity == "Dataset" else (hold.name,))
    ]


def inferred(source_path: str | None, columns: LoadProfile) -> frozenset[str]:
    """The columns whose types the reader inferred from text: every column of a CSV or JSON
    source (a check document declares no types), none of a typed one (Parquet, a table).

    >>> inferred("../data/*.csv", LoadProfile(3)), inferred(None, LoadProfile(3))
    (frozenset(), frozenset())
    """
    if source_path is None:
        return frozenset()
    try:
        kind = file_format(Path(source_path))
    except ConfigError:  # a pattern without a suffix: the files' own formats, unknown here
        return frozenset()
    if kind not in ("csv", "json", "jsonl"):
        return frozenset()
    return frozenset(c.name for c in columns.columns)


__all__ = ["OWN_COUNTS", "Slice", "holds", "inferred"]
