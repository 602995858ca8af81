"""A dataset's quality score: Health and Enrichment make it, Importance ranks it.

Every formula is written out, with a worked example, in docs/scores.md; in short (all over the
last :data:`WINDOW_DAYS` days before the score's clock):

- **Health** (0–100) = 70 × pass rate + 30 × reliability. The pass rate is passed / (passed +
  failed) of the enforced outcomes (check documents' and DQDL or gate rules'): advisory
  outcomes and non-runs (config errors, system errors, skips) never enter it, so a broken check
  cannot lower it. Reliability is the share of the runs that judged the dataset which found its
  data (a run whose every outcome was skipped because the upstream was missing did not; a run
  that only had config or system errors says nothing about the pipeline and is left out).
  Nothing judged: neither gives points.
- **Enrichment** (0–100) = metadata (50: owner 10, description 10, tier 5, tags 5, columns
  described 20 × share) + check coverage (50: 10 for each quality dimension — freshness,
  volume, completeness, uniqueness, validity — with an expectation that was judged).
- **Score** = 0.6 × Health + 0.4 × Enrichment. A dataset with no checks has no pass rate, no
  reliability and no coverage: at most 0.4 × 50 = 20 (the bound the design asks for is 46).
- **Importance** (0–100) = 25 per declared consumer (at most 50) + 50 × log(1 + reads) /
  log(1 + 300), the reads being the runs that read its data and the exports and API reads assay
  recorded (300 in 30 days,
  ten a day, is full). It never enters a dataset's own score: it weighs rollups (weight
  1 + importance / 25) and orders what to fix first ((100 − score) × weight).

>>> split(70 * 1.0 + 30 * 1.0, 50 + 50)
100.0
>>> split(0.0, 50 + 0)  # no checks, perfect metadata
20.0
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from assay.errors import ConfigError

WINDOW_DAYS = 30
HEALTH_WEIGHT = 0.6
ENRICHMENT_WEIGHT = 0.4
PASS_POINTS = 70.0
RELIABILITY_POINTS = 30.0
METADATA_POINTS = {"owner": 10.0, "description": 10.0, "tier": 5.0, "tags": 5.0, "columns": 20.0}
DIMENSIONS = ("freshness", "volume", "completeness", "uniqueness", "validity")
DIMENSION_POINTS = 10.0
CONSUMER_POINTS = 25.0
CONSUMER_MAX = 50.0
READ_POINTS = 50.0
READS_FULL = 300
ROLLUP_BY = ("tag", "schema", "owner")
NO_CHECKS_MAX = ENRICHMENT_WEIGHT * sum(METADATA_POINTS.values())
"""The most a dataset with no checks can score (20): no pass rate, no runs judged, no coverage."""


def split(health: float, enrichment: float) -> float:
    """The score of a Health and an Enrichment, rounded to one decimal."""
    return round(HEALTH_WEIGHT * health + ENRICHMENT_WEIGHT * enrichment, 1)


def weight(importance: float) -> float:
    """How much a dataset weighs in a rollup and in the fix-first order (1 to 5)."""
    return 1.0 + importance / 25.0


@dataclass
class Subject:
    """What a score knows about a dataset besides the store: its check document, when it has one."""

    name: str
    document: Any = None  # assay.platform.checks.document.Document
    path: Path | None = None

    @property
    def owner(self) -> str | None:
        if self.document is None:
            return None
        owners = self.document.dataset.owners
        found: str | None = owners.team or owners.contact
        return found

    @property
    def tier(self) -> int | None:
        return None if self.document is None else self.document.dataset.tier

    @property
    def tags(self) -> tuple[str, ...]:
        return () if self.document is None else tuple(self.document.dataset.tags)

    @property
    def schema(self) -> str:
        return self.name.rsplit(".", 1)[0] if "." in self.name else "(none)"


@dataclass
class Score:
    dataset: str
    score: float
    health: float
    enrichment: float
    importance: float
    tier: int | None
    components: dict[str, Any]
    why: list[str]
    lost: list[tuple[float, str]] = field(default_factory=list)
    owner: str | None = None
    tags: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "score": self.score,
            "health": self.health,
            "enrichment": self.enrichment,
            "importance": self.importance,
            "tier": self.tier,
            "components": self.components,
            "why": list(self.why),
        }


def subjects(workspace: Path, store: Any, names: Sequence[str] = ()) -> list[Subject]:
    """The datasets to score: those named, else every dataset with a check document in the
    workspace's ``checks/`` folder and every dataset the store knows (an event's name is left
    out: events have their own score). A name that is neither is a ConfigError."""
    from assay.platform.checks.document import DocumentError, is_check_document, load_document

    found: dict[str, Subject] = {}
    events: set[str] = set()
    folder = workspace / "checks"
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        if is_check_document(path):
            try:
                document = load_document(path)
            except DocumentError:
                continue  # `assay check validate` says what is wrong; the dataset scores without it
            found.setdefault(document.dataset.name, Subject(document.dataset.name, document, path))
        else:
            events.update(_event_names(path))
    known = set(store.dataset_names())
    if names:
        unknown = [n for n in names if n not in found and n not in known]
        if unknown:
            listed = ", ".join(sorted(set(found) | known - events)) or "none"
            raise ConfigError(f"no dataset {', '.join(map(repr, unknown))} (datasets: {listed})")
        return [found.get(n) or Subject(n) for n in names]
    for name in sorted(known - events - set(found)):
        found[name] = Subject(name)
    return [found[n] for n in sorted(found)]


def _event_names(path: Path) -> set[str]:
    """The events an EventContract file names (read cheaply; never fails)."""
    from assay.platform.events.document import is_event_contract

    if not is_event_contract(path):
        return set()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return set()
    from assay.errors import ConfigError
    from assay.lang import yamlsafe

    names: set[str] = set()
    try:
        for node in yamlsafe.compose_all(text, filename=str(path)):
            raw = yamlsafe.construct(node, filename=str(path))
            event = raw.get("event") if isinstance(raw, dict) else None
            if isinstance(event, dict) and isinstance(event.get("name"), str):
                names.add(event["name"])
    except ConfigError:
        return names
    return names


def window(now: datetime) -> tuple[datetime, datetime]:
    """The window a score at ``now`` reads: the last :data:`WINDOW_DAYS` days, ``(since, until]``."""
    return now - timedelta(days=WINDOW_DAYS), now


def score_dataset(subject: Subject, store: Any, *, now: datetime) -> Score:
    """The score of one dataset at ``now``: ONE read of its outcomes, runs and reads each (from
    the store, or from the :class:`~assay.store.scores.ScoreInputs` of many datasets at once)."""
    from assay.platform.incidents import dimension_of

    since, until = window(now)
    outcomes = store.outcomes_between(subject.name, since, until)
    readers = store.load_runs_between(subject.name, since, until)
    reads = store.reads_between(subject.name, since, until)
    document = subject.document
    dimensions: dict[str, str] = {}
    if document is not None:
        dimensions = {e.id: dimension_of(e.metric, e.rule, e.dimension) for e in document.expectations}
    lost: list[tuple[float, str]] = []

    # --- health: pass rate and reliability
    counts: Counter[str] = Counter()
    advisory = 0
    for o in outcomes:
        if o.mode == "advisory":
            advisory += 1
        else:
            counts[o.outcome] += 1
    judged = counts["passed"] + counts["failed"]
    pass_rate = counts["passed"] / judged if judged else None
    if pass_rate is None:
        lost.append((HEALTH_WEIGHT * PASS_POINTS, f"no check was judged in {WINDOW_DAYS} days"))
    elif pass_rate < 1:
        lost.append(
            (
                HEALTH_WEIGHT * PASS_POINTS * (1 - pass_rate),
                f"pass rate {pass_rate:.2f} over {WINDOW_DAYS} days, "
                f"{counts['failed']} failed of {judged} judged",
            )
        )
    runs = _check_runs(outcomes)
    delivered = sum(1 for found in runs.values() if found)
    reliability = delivered / len(runs) if runs else None
    if reliability is None:
        lost.append((HEALTH_WEIGHT * RELIABILITY_POINTS, f"no run found its data in {WINDOW_DAYS} days"))
    elif reliability < 1:
        lost.append(
            (
                HEALTH_WEIGHT * RELIABILITY_POINTS * (1 - reliability),
                f"{len(runs) - delivered} of {len(runs)} runs found no data (upstream missing)",
            )
        )
    health = PASS_POINTS * (pass_rate or 0.0) + RELIABILITY_POINTS * (reliability or 0.0)

    # --- enrichment: metadata and coverage
    dataset = document.dataset if document is not None else None
    metadata = {
        "owner": bool(dataset and (dataset.owners.team or dataset.owners.contact)),
        "description": bool(dataset and dataset.description),
        "tier": bool(dataset and dataset.tier is not None),
        "tags": bool(dataset and dataset.tags),
    }
    why_missing = {
        "owner": "no owner",
        "description": "no description",
        "tier": "no tier",
        "tags": "no tags",
    }
    points = 0.0
    for key, present in metadata.items():
        if present:
            points += METADATA_POINTS[key]
        else:
            lost.append((ENRICHMENT_WEIGHT * METADATA_POINTS[key], why_missing[key]))
    columns = [name for name, _ in store.latest_schema(subject.name)]
    described_map = dict(dataset.columns) if dataset else {}
    described = sum(1 for c in columns if c in described_map)
    if columns:
        share = described / len(columns)
        points += METADATA_POINTS["columns"] * share
        if share < 1:
            lost.append(
                (
                    ENRICHMENT_WEIGHT * METADATA_POINTS["columns"] * (1 - share),
                    f"{described} of {len(columns)} columns described",
                )
            )
    else:
        lost.append(
            (
                ENRICHMENT_WEIGHT * METADATA_POINTS["columns"],
                "columns unknown: the dataset was never profiled",
            )
        )
    covered = {
        dimension_of(None, o.expectation) if o.rule else dimensions.get(o.expectation)
        for o in outcomes
        if o.outcome in ("passed", "failed")
    }
    coverage = {d: d in covered for d in DIMENSIONS}
    for d in DIMENSIONS:
        if coverage[d]:
            points += DIMENSION_POINTS
        else:
            declared = any(v == d for v in dimensions.values())
            lost.append(
                (
                    ENRICHMENT_WEIGHT * DIMENSION_POINTS,
                    f"no {d} check" + (" judged in the window" if declared else ""),
                )
            )
    enrichment = points

    # --- importance: declared consumers and recorded reads (never the score)
    consumers = len(dataset.consumers) if dataset else 0
    read_count = len(reads) + len(readers)
    importance = min(CONSUMER_MAX, CONSUMER_POINTS * consumers) + READ_POINTS * min(
        1.0, math.log1p(read_count) / math.log1p(READS_FULL)
    )

    lost.sort(key=lambda item: (-item[0], item[1]))
    why = [f"{cause} (-{points_lost:.1f} points)" for points_lost, cause in lost if points_lost >= 0.05]
    components = {
        "window_days": WINDOW_DAYS,
        "pass_rate": None if pass_rate is None else round(pass_rate, 4),
        "passed": counts["passed"],
        "failed": counts["failed"],
        "excluded": {k: counts[k] for k in ("config_error", "system_error", "skipped")},
        "advisory": advisory,
        "reliability": None if reliability is None else round(reliability, 4),
        "runs": len(runs),
        "metadata": {**metadata, "columns": len(columns), "columns_described": described},
        "coverage": coverage,
        "consumers": consumers,
        "reads": read_count,
        "lost": [{"points": round(p, 2), "cause": c} for p, c in lost],
    }
    return Score(
        dataset=subject.name,
        score=split(health, enrichment),
        health=round(health, 1),
        enrichment=round(enrichment, 1),
        importance=round(importance, 1),
        tier=subject.tier,
        components=components,
        why=why,
        lost=lost,
        owner=subject.owner,
        tags=subject.tags,
    )


def _check_runs(outcomes: Iterable[Any]) -> dict[str, bool]:
    """The runs of the outcomes, each with whether it found its data: not when every one of its
    outcomes was skipped for a missing upstream. A run whose outcomes are all config or system
    errors says nothing about the pipeline and is left out."""
    kinds: dict[str, set[str]] = defaultdict(set)
    for o in outcomes:
        if o.outcome in ("config_error", "system_error"):
            kinds[o.run_id]
            continue
        missing = o.outcome == "skipped" and o.reason == "upstream_missing"
        kinds[o.run_id].add("missing" if missing else "found")
    return {run: "found" in found for run, found in kinds.items() if found}


def score_all(
    workspace: Path, store: Any, names: Sequence[str] = (), *, now: datetime | None = None, keep: bool = True
) -> list[Score]:
    """The scores of the datasets :func:`subjects` finds, each kept as the score of its day."""
    moment = now or datetime.now(UTC)
    chosen = subjects(workspace, store, names)
    # several datasets: what each score reads is read for all of them at once
    reader = store.score_inputs(*window(moment)) if len(chosen) > 1 else store
    found = [score_dataset(s, reader, now=moment) for s in chosen]
    if keep:
        for s in found:
            store.record_score(
                "dataset", s.dataset, moment.astimezone(UTC).date(), s.score, detail={"why": s.why}
            )
    return found


def rollup(scores: Sequence[Score], by: str) -> list[dict[str, Any]]:
    """Scores rolled up by tag, schema (the dataset name up to its last dot) or owner: each
    group's score is the importance-weighted mean of its datasets', and ``fix_first`` lists
    them by (100 − score) × weight, largest first. A dataset with several tags is in each."""
    if by not in ROLLUP_BY:
        raise ConfigError(f"--by must be one of {', '.join(ROLLUP_BY)}, not '{by}'")
    groups: dict[str, list[Score]] = defaultdict(list)
    for s in scores:
        if by == "tag":
            keys = list(s.tags) or ["(untagged)"]
        elif by == "schema":
            keys = [s.dataset.rsplit(".", 1)[0] if "." in s.dataset else "(none)"]
        else:
            keys = [s.owner or "(no owner)"]
        for key in keys:
            groups[key].append(s)
    out = []
    for key in sorted(groups):
        members = groups[key]
        total = sum(weight(s.importance) for s in members)
        score = sum(s.score * weight(s.importance) for s in members) / total
        order = sorted(members, key=lambda s: (-(100 - s.score) * weight(s.importance), s.dataset))
        out.append(
            {
                "by": by,
                "group": key,
                "score": round(score, 1),
                "datasets": len(members),
                "fix_first": [
                    {
                        "dataset": s.dataset,
                        "score": s.score,
                        "importance": s.importance,
                        "priority": round((100 - s.score) * weight(s.importance), 1),
                    }
                    for s in order
                ],
            }
        )
    return out
