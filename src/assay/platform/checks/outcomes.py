"""A check run's outcomes as values: the run's JSON (:class:`CheckResult`), one outcome as a
mapping, and the run's summary. Event runs report the same shape (:mod:`assay.platform.events`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import Any

from assay.errors import ConfigError
from assay.judge.result import json_number
from assay.store.records import Attempt
from assay.vocabulary import Outcome, RunState

PLATFORM_OWNER = "platform"


@dataclass
class CheckResult:
    """A check run as its JSON reports it (docs/checks.md, "The run's JSON")."""

    run_id: str
    document: str
    dataset: str
    at: str
    now: datetime
    dry_run: bool
    state: str = RunState.COMPLETED.value
    queries: dict[str, int] = field(default_factory=lambda: {"measure": 0, "judge": 0})
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    attempts: list[Attempt] = field(default_factory=list)
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None
    seconds: dict[str, float] = field(default_factory=dict)  # wall time of measure, persist, judge
    incidents: dict[str, int] | None = None  # what the run did to incidents (a recorded run only)
    resumed_from: str | None = None  # the killed run whose stored measurement it judged
    # the drift monitor's alerts on the slices' profiles (platform/runs/slices.py): a check run's
    # (none for a dry run), not an event run's
    drift: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "run_id": self.run_id,
            "document": self.document,
            "dataset": self.dataset,
            "at": self.at,
            "now": self.now.isoformat(),
            "dry_run": self.dry_run,
            "state": self.state,
            "queries": dict(self.queries),
            "outcomes": finite(self.outcomes),
            "summary": self.summary,
            "attempts": [a.to_dict() for a in self.attempts],
            "profiles": self.profiles,
            "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
        }
        if self.error is not None:
            payload["error"] = self.error
        if self.incidents is not None:
            payload["incidents"] = dict(self.incidents)
        if self.resumed_from is not None:
            payload["resumed_from"] = self.resumed_from
        if self.drift is not None:
            payload["drift"] = finite(self.drift)
        return payload


def parse_at(text: str | date | datetime | None, now: datetime) -> tuple[datetime, str]:
    """The run's logical time and how it is printed: a date (its midnight UTC), a date-time, or
    by default the date of the run's clock."""
    if text is None:
        day = now.astimezone(UTC).date()
        return datetime.combine(day, time(0), UTC), day.isoformat()
    if isinstance(text, datetime):
        moment = text if text.tzinfo else text.replace(tzinfo=UTC)
        return moment, moment.isoformat()
    if isinstance(text, date):
        return datetime.combine(text, time(0), UTC), text.isoformat()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return datetime.combine(day, time(0), UTC), day.isoformat()
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(
            f"--at: '{text}' is not a date (2026-11-12) or date-time (2026-11-12T06:30:00Z)"
        ) from None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment, moment.isoformat()


def finite(value: Any) -> Any:
    """``value`` with NaN and infinities as None, in every list and mapping: JSON has neither
    (an empty input's Completeness is 0/0; the outcome's message says so)."""
    if isinstance(value, float):
        return json_number(value)
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def as_outcome(
    item: dict[str, Any], outcome: Outcome, owner: str | None, message: str, *, reason: str | None = None
) -> dict[str, Any]:
    out = dict(item)
    out["outcome"] = outcome.value
    out["owner"] = owner
    out["message"] = message
    out["reason"] = reason
    return out


def fmt(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4g}"


def summarize(outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts of the enforced outcomes, ``pass_rate = passed / (passed + failed)`` and
    ``evaluation_rate = (passed + failed) / scheduled``, side by side; advisory outcomes are
    counted apart and enter neither rate.

    >>> done = [{"outcome": "passed", "mode": "enforce"}, {"outcome": "skipped", "mode": "enforce"}]
    >>> summarize(done)["evaluation_rate"]
    0.5
    """
    counts = {o.value: 0 for o in Outcome}
    advisory = {o.value: 0 for o in Outcome}
    for item in outcomes:
        (advisory if item.get("mode") == "advisory" else counts)[item["outcome"]] += 1
    judged = counts["passed"] + counts["failed"]
    scheduled = sum(counts.values())
    return {
        **counts,
        "pass_rate": round(counts["passed"] / judged, 4) if judged else None,
        "evaluation_rate": round(judged / scheduled, 4) if scheduled else None,
        "advisory": advisory,
    }


def failing_severities(result: CheckResult, threshold: str) -> bool:
    """Whether an enforced expectation of ``threshold`` severity or worse failed, or a drift
    alert of that level was raised (a hard alert is ``critical``, a soft one ``warning``, as
    ``assay profile --fail-on`` reads them), or, when ``threshold`` holds ``nothing``, whether
    the run evaluated nothing (:func:`evaluated_nothing`)."""
    return bool(failures(result, threshold))


def failures(result: CheckResult, threshold: str) -> list[str]:
    """What reached ``threshold`` (:func:`failing_severities`), one phrase each, for the
    orchestrators that name why a task failed.

    >>> failed = {"expectation": "volume", "outcome": "failed", "mode": "enforce", "severity": "error"}
    >>> result = CheckResult("r1", "d.yaml", "orders", "2026-11-02", datetime.now(), False, outcomes=[failed])
    >>> failures(result, "error"), failures(result, "critical"), failures(result, "nothing")
    (['volume failed (error)'], [], [])
    """
    from assay.vocabulary import AlertLevel, Severity, fail_on, fails_on_nothing

    level = fail_on(threshold, nothing=True)
    found = [
        (Severity(o["severity"]), f"{o['expectation']} failed ({o['severity']})")
        for o in result.outcomes
        if o["outcome"] == Outcome.FAILED.value and o["mode"] == "enforce"
    ]
    found += [
        (
            AlertLevel(a["severity"]).severity,
            f"drift {a['kind']} on {a.get('column') or 'the load'} ({a['severity']})",
        )
        for a in result.drift or ()
    ]
    named = [text for severity, text in found if level is not None and severity.reaches(level)]
    if fails_on_nothing(threshold) and evaluated_nothing(result.outcomes):
        named.insert(0, "the run evaluated nothing (every expectation skipped or in error)")
    return named


def evaluated_nothing(outcomes: Sequence[Mapping[str, Any]]) -> bool:
    """Whether no enforced expectation passed or failed: every one skipped (a day whose rows
    never came is ``upstream_missing``) or in error. Such a run completed, but it said nothing
    about the data: ``--fail-on nothing`` fails it and the catalog never shows it green.

    >>> evaluated_nothing([{"mode": "enforce", "outcome": "skipped"}]), evaluated_nothing([])
    (True, True)
    >>> evaluated_nothing([{"mode": "enforce", "outcome": "failed"}])
    False
    """
    judged = (Outcome.PASSED.value, Outcome.FAILED.value)
    return not any(o.get("mode") == "enforce" and o.get("outcome") in judged for o in outcomes)
