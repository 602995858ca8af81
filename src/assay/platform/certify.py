"""Certification: a badge that answers "can I depend on this table?".

A dataset earns ``certified`` when every criterion holds: an owner, a description, its columns
described, a tier, a freshness, a uniqueness, a completeness and a volume check that have run
daily, their pass rates over the advisory period, and its score above a threshold. Only checks
tagged ``certification`` count (``assay certify --enroll`` writes the four templates so, as
``advisory``), and a check counts only once it has outcomes over the whole advisory period
(14 days by default), so that its real pass rate is known before it gates the badge.

A certified dataset whose criteria slip is ``at_risk`` (still certified) for the grace period,
then ``revoked``; a revoked dataset is certified again when every criterion holds again. Each
change of badge is kept with the criteria as they stood (docs/scores.md, "Certification").
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from assay.errors import ConfigError

CORE = ("freshness", "uniqueness", "completeness", "volume")
"""The quality dimensions a certified dataset has a daily check of."""

TAG = "certification"
TEMPLATE_PREFIX = "cert-"


@dataclass(frozen=True)
class Criterion:
    name: str
    met: bool
    evidence: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "met": self.met, "evidence": self.evidence}


def missed_days_allowed(days: int) -> int:
    """How many days of the advisory period a daily check may miss and still have "run daily":
    one per full fortnight (a day of the platform being down is not the table's fault).

    >>> missed_days_allowed(14), missed_days_allowed(7), missed_days_allowed(30)
    (1, 0, 2)
    """
    return days // 14


def criteria(subject: Any, store: Any, *, now: datetime, score: Any = None) -> list[Criterion]:
    """The criteria of ``subject`` (a :class:`~assay.platform.scores.Subject` with its document)
    at ``now``, each met or not with its evidence."""
    from assay.platform.incidents import dimension_of
    from assay.platform.scores import score_dataset

    document = subject.document
    if document is None:
        raise ConfigError(
            f"{subject.name} has no check document in the workspace's checks/ folder: "
            "certification reads its owner, description, tier and checks from it"
        )
    dataset = document.dataset
    settings = document.certification
    period = settings.advisory_days
    out: list[Criterion] = []
    owner = dataset.owners.team or dataset.owners.contact
    out.append(Criterion("owner", bool(owner), f"owned by {owner}" if owner else "no owner declared"))
    out.append(
        Criterion(
            "description",
            bool(dataset.description),
            "described" if dataset.description else "no description",
        )
    )
    columns = [name for name, _ in store.latest_schema(subject.name)]
    described = sum(1 for c in columns if c in dataset.columns)
    needed = math.ceil(settings.columns_described * len(columns))
    out.append(
        Criterion(
            "columns_described",
            bool(columns) and described >= needed,
            f"{described} of {len(columns)} columns described ({needed} needed)"
            if columns
            else "columns unknown: the dataset was never profiled",
        )
    )
    out.append(
        Criterion(
            "tier",
            dataset.tier is not None,
            f"tier {dataset.tier}" if dataset.tier is not None else "no tier declared",
        )
    )

    # the certification checks: tagged, per core dimension
    tagged: dict[str, list[str]] = defaultdict(list)
    for e in document.expectations:
        if TAG in e.tags:
            tagged[dimension_of(e.metric, e.rule, e.dimension)].append(e.id)
    # the period: the last `period` UTC dates before the clock's (a daily run at 03:00 judges
    # yesterday's load), and what the clock's own date already has
    end = now
    start = datetime.combine(now.astimezone(UTC).date(), datetime.min.time(), UTC) - timedelta(days=period)
    outcomes = store.outcomes_between(subject.name, start - timedelta(days=period), end)
    by_check: dict[str, list[Any]] = defaultdict(list)
    for o in outcomes:
        if not o.rule:
            by_check[o.expectation].append(o)
    rates: list[str] = []
    rates_met = True
    for dimension in CORE:
        ids = tagged.get(dimension, [])
        if not ids:
            out.append(Criterion(f"{dimension}_check", False, f"no {dimension} check tagged {TAG}"))
            rates_met = False
            rates.append(f"{dimension}: no check")
            continue
        best: tuple[int, str] | None = None
        for check in ids:
            days = {o.at.astimezone(UTC).date() for o in by_check[check] if o.at >= start and _judged(o)}
            if best is None or len(days) > best[0]:
                best = (len(days), check)
        assert best is not None
        ran, check = best
        allowed = period - missed_days_allowed(period)
        out.append(
            Criterion(
                f"{dimension}_check",
                ran >= allowed,
                f"{check} judged on {ran} of the last {period} days ({allowed} needed)",
            )
        )
        # its pass rate over the advisory period, once it has been measured that long
        window = [o for o in by_check[check] if o.at >= start and _judged(o)]
        first = min((o.at for o in by_check[check] if _judged(o)), default=None)
        if first is None or first > start:
            since = "never judged" if first is None else f"judged since {first.date().isoformat()}"
            rates.append(f"{check}: still advisory ({since}, {period} days needed)")
            rates_met = False
            continue
        passed = sum(1 for o in window if o.outcome == "passed")
        rate = passed / len(window) if window else 0.0
        if rate < settings.min_pass_rate:
            rates_met = False
        rates.append(f"{check} {rate:.2f} ({passed} of {len(window)})")
    out.append(
        Criterion(
            "pass_rates",
            rates_met,
            f"over {period} days, at least {settings.min_pass_rate:.2f} each: " + "; ".join(rates),
        )
    )
    found = score if score is not None else score_dataset(subject, store, now=now)
    out.append(
        Criterion(
            "score",
            found.score >= settings.min_score,
            f"score {found.score:.1f}, {settings.min_score:g} needed",
        )
    )
    return out


def _judged(outcome: Any) -> bool:
    return bool(outcome.outcome in ("passed", "failed"))


def certify(subject: Any, store: Any, *, now: datetime, by: str | None = None) -> dict[str, Any]:
    """Judge ``subject``'s criteria at ``now``, move its badge (recorded when it changes) and
    return ``{"dataset", "badge", "criteria", "since", "history"}``."""
    found = criteria(subject, store, now=now)
    history = store.badge_history(subject.name)
    last = history[-1] if history else None
    previous = last.badge if last is not None else "not_certified"
    grace = subject.document.certification.grace_days
    unmet = [c.name for c in found if not c.met]
    if not unmet:
        badge, reason = "certified", "every criterion met"
    elif previous == "certified":
        badge, reason = "at_risk", "slipping: " + ", ".join(unmet)
    elif previous == "at_risk":
        assert last is not None
        if now - last.at > timedelta(days=grace):
            badge, reason = "revoked", f"at risk for more than {grace} days: " + ", ".join(unmet)
        else:
            badge, reason = "at_risk", "slipping: " + ", ".join(unmet)
    elif previous == "revoked":
        badge, reason = "revoked", "not met: " + ", ".join(unmet)
    else:
        badge, reason = "not_certified", "not met: " + ", ".join(unmet)
    if store.change_badge(
        subject.name, badge, at=now, by=by, reason=reason, criteria=[c.to_dict() for c in found]
    ):
        history = store.badge_history(subject.name)
    current = history[-1] if history else None
    return {
        "dataset": subject.name,
        "badge": badge,
        "criteria": [c.to_dict() for c in found],
        "since": current.at.isoformat() if current is not None and current.badge == badge else None,
        "history": [
            {"badge": h.badge, "at": h.at.isoformat(), "by": h.by, "reason": h.reason} for h in history
        ],
    }


# --- enrolment: the four template checks ----------------------------------------------------------

_FRESH_WORDS = ("updated", "modified", "loaded", "ingested", "inserted", "created", "_at", "_ts", "time")


def templates(
    subject: Any,
    store: Any,
    *,
    now: datetime,
    key: str | None = None,
    freshness: str | None = None,
) -> dict[str, Any]:
    """The template checks ``--enroll`` writes for the core dimensions the document's
    certification checks do not cover yet: ``{"expectations": [...], "metrics": {profile: [...]}}``
    (the metrics to declare for them). ``key`` is the column that must be unique and complete,
    ``freshness`` the timestamp column; both are found from the stored profile when not given."""
    from assay.platform.incidents import dimension_of

    document = subject.document
    if document is None:
        raise ConfigError(f"{subject.name} has no check document in the workspace's checks/ folder")
    if not document.profiles:
        raise ConfigError(
            f"{subject.path}: the document has no profile to measure the certification checks by; "
            "add one (see docs/checks.md)"
        )
    profile = document.profiles[0]
    covered = {dimension_of(e.metric, e.rule, e.dimension) for e in document.expectations if TAG in e.tags}
    ids = {e.id for e in document.expectations}
    schema = store.latest_schema(subject.name)
    names = [n for n, _ in schema]
    types = dict(schema)
    expectations: list[dict[str, Any]] = []
    metrics: list[Any] = []
    declared = {spec.key for spec in profile.specs()}
    today = now.astimezone(UTC).date().isoformat()

    def add(dimension: str, item: dict[str, Any]) -> None:
        item = {
            "id": _free(f"{TEMPLATE_PREFIX}{dimension}", ids),
            **item,
            "mode": "advisory",
            "severity": "error",
            "dimension": dimension,
            "tags": [TAG],
            "description": f"Certification template ({dimension}), enrolled {today}; advisory until "
            f"{document.certification.advisory_days} days of outcomes are kept.",
        }
        ids.add(item["id"])
        expectations.append(item)

    if "freshness" not in covered:
        column = freshness or _freshness_column(profile, names, types)
        if column is None:
            raise ConfigError(
                f"{subject.name}: no timestamp column to check freshness on; give --freshness COLUMN"
            )
        if f"freshness({column})" not in declared:
            metrics.append({"freshness": column})
        add("freshness", {"metric": f"{profile.id}.freshness({column})", "expect": "<= 24 hours"})
    needs_key = {"uniqueness", "completeness"} - covered
    column = key
    if needs_key and column is None:
        column = _key_column(store, subject.name, names)
        if column is None:
            raise ConfigError(
                f"{subject.name}: no column was unique and complete on every stored load; "
                "give --key COLUMN (the column that identifies a row)"
            )
    if "uniqueness" not in covered:
        add("uniqueness", {"rule": f'IsUnique "{column}"', "profile": profile.id})
    if "completeness" not in covered:
        add("completeness", {"rule": f'IsComplete "{column}"', "profile": profile.id})
    if "volume" not in covered:
        if "row_count" not in declared:
            metrics.append("row_count")
        add(
            "volume",
            {
                "metric": f"{profile.id}.row_count",
                "expect": "between avg(last(7)) * 0.5 and avg(last(7)) * 1.5",
                "min_history": 5,
            },
        )
    return {"expectations": expectations, "metrics": {profile.id: metrics} if metrics else {}}


def _free(base: str, ids: set[str]) -> str:
    if base not in ids:
        return base
    n = 2
    while f"{base}-{n}" in ids:
        n += 1
    return f"{base}-{n}"


def _freshness_column(profile: Any, names: list[str], types: dict[str, str]) -> str | None:
    for spec in profile.specs():
        if spec.kind == "freshness" and spec.column:
            return str(spec.column)
    stamps = [n for n in names if "timestamp" in types.get(n, "").lower()]
    for word in _FRESH_WORDS:
        for name in stamps:
            if word in name.lower():
                return name
    return stamps[0] if stamps else None


def _key_column(store: Any, dataset: str, names: list[str]) -> str | None:
    """The first column, key-like names first (``id``, ``*_id``, ``*_key``), that had no nulls
    and as many distinct values as rows on every stored load."""
    loads = store.window(dataset, date.max, partition="")[:30]
    if not loads:
        return None
    values = store.load_metrics([load.id for load in loads])

    def unique(column: str) -> bool:
        for load in loads:
            found = values.get(load.id, {})
            nulls = found.get(("Column", column, "NullCount"))
            distinct = found.get(("Column", column, "DistinctValuesCount"))
            if nulls != 0 or distinct is None or load.row_count is None or distinct < load.row_count:
                return False
        return True

    ranked = sorted(
        names,
        key=lambda n: (0 if n.lower() == "id" or n.lower().endswith(("_id", "_key")) else 1, names.index(n)),
    )
    return next((n for n in ranked if unique(n)), None)


def enroll_path(subject: Any) -> Path:
    if subject.path is None:
        raise ConfigError(f"{subject.name} has no check document to enroll in")
    return Path(subject.path)
