"""Judging a check run's expectations from stored numbers only: the run's metrics and, for
dynamic conditions (``avg(last(7))``), each profile's stored series, read in one store query per
profile. No query reaches the data."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from assay.durations import duration
from assay.judge import dynamic, verdicts
from assay.lang.dqdl import ast
from assay.measure import Measurements
from assay.platform.checks import conditions
from assay.platform.checks.document import Document, Expectation, Profile
from assay.platform.checks.measure import Group, ProfileMeasurement, group_label
from assay.platform.checks.outcomes import PLATFORM_OWNER, as_outcome, fmt
from assay.platform.checks.rules import CompiledRules
from assay.store import MetricKey
from assay.store.checks import group_key, parse_group_key
from assay.vocabulary import Outcome

ADDITIVE = ("row_count", "null_count", "sum", "count_where")
"""Metrics whose total is the sum of its groups': only these are explained by groups."""

HISTORY_REACH = 3
"""Judging reads the metrics of at most this many times as many recent loads as the deepest
window of a profile's expectations (``last(7)``: 21 loads), so that a year of history costs what
a week does; a group absent from most of those loads has a shorter history."""


class Judging:
    """The judgement of one run's chosen expectations of ``document`` at ``at``; ``store`` (None:
    no history) is read, never written."""

    def __init__(
        self, document: Document, chosen: Sequence[Expectation], *, at: datetime, store: Any
    ) -> None:
        self.document = document
        self.chosen = list(chosen)
        self.at = at
        self.store = store
        # each profile's stored series, read once per run (every expectation of it reads them)
        self.conditions: dict[str, ast.Condition] = {}
        # (expectation, group instance) judged against a history it did not have (last() of nothing)
        self.unread: set[tuple[str, str]] = set()
        self.series_cache: dict[
            tuple[str, frozenset[str]], dict[tuple[str, str, str], list[tuple[datetime, float | None]]]
        ] = {}

    def outcomes(self, measured: dict[str, ProfileMeasurement]) -> list[dict[str, Any]]:
        """Every chosen expectation's outcomes, in the document's order."""
        return [o for e in self.chosen for o in self._judge(e, measured)]

    def _series(
        self, profile_id: str, names: set[str], weekday: int | None = None
    ) -> dict[tuple[str, str, str], list[float]]:
        """The profile's stored series (read once per run), most recent first; with ``weekday``,
        only the points whose logical time falls on that weekday (``history: same_weekday``)."""
        cache = self.series_cache
        key = (profile_id, frozenset(names))
        if key not in cache:
            cache[key] = (
                {}
                if self.store is None
                else self.store.metric_series(
                    self.document.dataset.name,
                    partition=profile_id,
                    names=names,
                    before=self.at,
                    loads=HISTORY_REACH * self._depth(profile_id),
                )
            )
        return {
            k: [v for at, v in points if v is not None and (weekday is None or at.weekday() == weekday)]
            for k, points in cache[key].items()
        }

    def _depth(self, profile_id: str) -> int:
        """How many past values the profile's expectations read at most (1 at least: the
        previous value explains a change)."""
        deepest = 1
        for e in self.chosen:
            if e.metric is None or e.reference.profile != profile_id:
                continue
            try:
                condition = self._condition(e)
            except conditions.ConditionError:
                continue
            needs = max(conditions.needs_history(condition), e.min_history)
            # one point a week: k same-weekday values lie among the 7k most recent loads
            deepest = max(deepest, 7 * needs if e.history == "same_weekday" else needs)
        return deepest

    def _condition(self, expectation: Expectation) -> ast.Condition:
        """An expectation's ``expect``, parsed once per run (durations allowed on freshness)."""
        found = self.conditions.get(expectation.id)
        if found is None:
            spec = self.document.expectation_profile(expectation).spec(expectation.reference.key)
            duration = spec is not None and spec.kind == "freshness"
            found = self.conditions[expectation.id] = conditions.parse_expect(
                str(expectation.expect), duration=duration
            )
        return found

    def _profile_names(self, profile_id: str) -> set[str]:
        return {
            e.reference.key for e in self.chosen if e.metric is not None and e.reference.profile == profile_id
        }

    def _judge(
        self, expectation: Expectation, measured: dict[str, ProfileMeasurement]
    ) -> list[dict[str, Any]]:
        profile = self.document.expectation_profile(expectation)
        m = measured[profile.id]
        base = self._base(expectation)
        base["attempts"] = m.attempts
        if m.failure == "system":
            return [as_outcome(base, Outcome.SYSTEM_ERROR, PLATFORM_OWNER, m.errors["*"])]
        if m.failure == "config":
            return [as_outcome(base, Outcome.CONFIG_ERROR, self._author(), m.errors["*"])]
        if m.missing and not _whole_source(profile, expectation):
            return [
                as_outcome(
                    base, Outcome.SKIPPED, None, f"upstream missing: {m.missing}", reason="upstream_missing"
                )
            ]
        if expectation.rule is not None:
            return [self._judge_rule(expectation, m, base)]
        ref = expectation.reference
        if ref.key in m.errors:
            return [as_outcome(base, Outcome.CONFIG_ERROR, self._author(), m.errors[ref.key])]
        spec = profile.spec(ref.key)
        assert spec is not None  # the document's check: a reference names a declared metric
        condition = self._condition(expectation)
        weekday = self.at.weekday() if expectation.history == "same_weekday" else None
        series = self._series(profile.id, self._profile_names(profile.id), weekday)
        dimensions = _ordered(profile, expectation.by)
        groups: list[Group] = [()] if not expectation.by else list(m.groups.get(dimensions, []))
        vanished = self._vanished(profile, dimensions, ref.key, groups) if expectation.by else []
        out = []
        for group in [*groups, *vanished]:
            entity, instance = ("Group", group_key(dict(group))) if group else ("Dataset", "*")
            history = series.get((entity, instance, ref.key), [])
            item = dict(base, group=group_label(group))
            observed = m.value(ref.key, group)
            gone = group in vanished
            if gone:
                capped = [d for d in dimensions if m.dropped.get(d)]
                if capped:  # beyond today's top_k groups, or gone: not measured either way
                    why = f"{group_label(group)} is not among this load's top_k groups of {', '.join(capped)}"
                    out.append(as_outcome(item, Outcome.SKIPPED, None, why, reason="beyond_top_k"))
                    continue
                if spec.kind not in ADDITIVE:  # a mean or a rate of no rows is no number
                    why = f"{ref.key}: no rows in this load (the group had rows in the previous one)"
                    out.append(as_outcome(item, Outcome.SKIPPED, None, why, reason="no_rows"))
                    continue
                observed = 0.0  # a count or a sum of no rows
            item["observed"] = observed
            needed = max(expectation.min_history, 0)
            if needed and len(history) < needed:
                out.append(
                    as_outcome(
                        item,
                        Outcome.SKIPPED,
                        None,
                        f"warming up: {len(history)} stored point(s) of {ref.key}, {needed} needed",
                        reason="warming_up",
                    )
                )
                continue
            if not history and conditions.needs_history(condition):
                # failed for want of a past, not for its data: it holds nothing out of baselines
                self.unread.add((expectation.id, instance))
            try:
                verdict = conditions.judge(condition, observed, history)
            except conditions.ConditionError as error:
                out.append(as_outcome(item, Outcome.CONFIG_ERROR, self._author(), f"expect: {error}"))
                continue
            item["expected"] = verdict.expected
            seconds = spec.kind == "freshness"
            if seconds:
                item["unit"] = "seconds"
            if verdict.holds:
                message = _message(
                    ref.key, observed, verdict.expected, condition, seconds=seconds, failed=False
                )
                out.append(as_outcome(item, Outcome.PASSED, None, message))
                continue
            message = _message(ref.key, observed, verdict.expected, condition, seconds=seconds, failed=True)
            if gone:
                message += "; no rows in this load (the group had rows in the previous one)"
            failed = as_outcome(item, Outcome.FAILED, self._owner(expectation), message)
            if not group and profile.dimensions and spec.kind in ADDITIVE:
                failed["explained_by"] = self._explain(profile, m, ref.key, series)
            if spec.where is not None:
                failed["samples"] = m.samples.get(ref.key, [])
                failed["flagged"] = observed
            elif spec.reconcile is not None:  # its sample keys (platform/reconcile/metric.py)
                failed["samples"] = m.samples.get(ref.key, [])
            out.append(failed)
        return out

    def _judge_rule(
        self, expectation: Expectation, m: ProfileMeasurement, base: dict[str, Any]
    ) -> dict[str, Any]:
        rules: CompiledRules = m.rules
        measured: Measurements = rules.measurements(m.dqdl, m.dqdl_errors)
        partition = self.document.expectation_profile(expectation).id

        def history(key: MetricKey, k: int) -> list[float]:
            if self.store is None:
                return []
            points = self.store.history(
                self.document.dataset.name, key, partition=partition, before=self.at, limit=k, baseline=True
            )
            return [p.value for p in points if p.value is not None]

        outcome, message, metrics = rules.judge(expectation.id, measured, history)
        item = dict(base, group=None)
        values = [v for v in metrics.values() if v is not None]
        item["observed"] = values[0] if len(values) == 1 else None
        if metrics:
            item["metrics"] = metrics
        owner = {Outcome.FAILED: self._owner(expectation), Outcome.CONFIG_ERROR: self._author()}.get(outcome)
        text = message or f"{expectation.rule}: {outcome.value}"
        return as_outcome(item, outcome, owner, text)

    def _vanished(
        self, profile: Profile, dimensions: tuple[str, ...], key: str, today: list[Group]
    ) -> list[Group]:
        """The groups of ``dimensions`` that had a stored value of ``key`` on the profile's
        previous load and have no rows in this one: a carrier that stopped flying. Only the
        previous load's: a group gone for a week is reported the day it went, not every day after
        (its absence stores no value)."""
        stored = self.series_cache.get((profile.id, frozenset(self._profile_names(profile.id))), {})
        total = stored.get(("Dataset", "*", key), [])
        if not total:
            return []
        previous = total[0][0]
        found: list[Group] = []
        for (entity, instance, name), points in stored.items():
            if entity != "Group" or name != key or not points or points[0][0] != previous:
                continue
            values = parse_group_key(instance) or {}
            if sorted(values) != sorted(dimensions):
                continue
            group: Group = tuple((d, values[d]) for d in dimensions)
            if group not in today and group not in found:
                found.append(group)
        return sorted(found, key=lambda g: [str(v) for _, v in g])

    def _explain(
        self,
        profile: Profile,
        m: ProfileMeasurement,
        key: str,
        series: dict[tuple[str, str, str], list[float]],
    ) -> list[dict[str, Any]]:
        """The groups that explain a change of the total: each group's change from its own
        previous stored value, as a share of the total's change, largest first."""
        history = series.get(("Dataset", "*", key), [])
        observed = m.value(key)
        if not history or observed is None:
            return []
        change = observed - history[0]
        if change == 0:
            return []
        found: list[dict[str, Any]] = []
        for dimension in profile.dimensions:
            groups: list[Group] = list(m.groups.get((dimension,), []))
            # A group that sent nothing today (a venue that stopped) explains by its absence.
            for entity, instance, name in series:
                if entity == "Group" and name == key:
                    stored = parse_group_key(instance) or {}
                    absent: Group = ((dimension, stored.get(dimension)),)
                    if list(stored) == [dimension] and absent not in groups:
                        groups.append(absent)
            for group in groups:
                past = series.get(("Group", group_key(dict(group)), key), [])
                value = m.value(key, group)
                if value is None and (key, group) not in m.values:
                    value = 0.0  # an additive metric of a group with no rows
                if not past or value is None:
                    continue
                delta = value - past[0]
                share = delta / change
                if abs(share) >= 0.1:
                    found.append(
                        {
                            "dimension": dimension,
                            "value": group[0][1],
                            "observed": value,
                            "baseline": past[0],
                            "change": delta,
                            "share": round(share, 4),
                        }
                    )
        found.sort(key=lambda item: (-abs(item["share"]), item["dimension"], str(item["value"])))
        return found[:5]

    # --- owners -------------------------------------------------------------------------------------

    def _base(self, expectation: Expectation) -> dict[str, Any]:
        return {
            "expectation": expectation.id,
            "group": None,
            "outcome": None,
            "severity": expectation.severity,
            "mode": expectation.mode,
            "owner": None,
            "observed": None,
            "expected": None,
            "unit": None,  # "seconds" for a freshness: observed and expected are durations
            "message": None,
            "reason": None,
            "attempts": 1,
            "explained_by": [],
            "samples": [],
        }

    def _owner(self, expectation: Expectation) -> str | None:
        owners = self.document.dataset.owners
        return expectation.owner or owners.team or owners.contact

    def _author(self) -> str | None:
        return self.document.dataset.author or self.document.dataset.owners.team


def _whole_source(profile: Profile, expectation: Expectation) -> bool:
    """Whether the expectation reads a freshness over the whole source: judged on a day whose
    slice is empty (or whose source has no file: no value, so it fails), never skipped."""
    spec = profile.spec(expectation.reference.key) if expectation.metric is not None else None
    return spec is not None and spec.over == "source"


def _ordered(profile: Profile, by: Sequence[str]) -> tuple[str, ...]:
    return tuple(d for d in profile.dimensions if d in by)


def metric_key(key: str, group: Group) -> MetricKey:
    if not group:
        return MetricKey("Dataset", "*", key)
    return MetricKey("Group", group_key(dict(group)), key)


def _message(
    key: str,
    observed: float | None,
    expected: dict[str, Any],
    condition: ast.Condition,
    *,
    seconds: bool,
    failed: bool,
) -> str:
    """``key = observed, expected ...``: a freshness in durations (its condition, read as seconds,
    would print ``<= 28800``), a failed dynamic condition with the bound it set on this history
    (``expected at least 8.8 (>= 0.8 * last())``), any other as its condition."""
    shown = "no value" if observed is None else duration(observed) if seconds else fmt(observed)
    operands = [expected[k] for k in ("low", "high") if k in expected] or list(expected.get("values", []))
    text = conditions.text(condition)
    reads_history = any(dynamic.is_dynamic(o) for o in condition.operands)
    if seconds:
        bound = verdicts.expected_text(condition.op, operands, duration)
        return f"{key} = {shown}, expected {bound}" + (f" ({text}, in seconds)" if reads_history else "")
    if failed and reads_history:
        return f"{key} = {shown}, expected {verdicts.expected_text(condition.op, operands, fmt)} ({text})"
    return f"{key} = {shown}, expected {text}"
