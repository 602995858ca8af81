"""``assay propose``: checks mined from a dataset's stored history, each justified by its evidence,
backtested on the stored loads, dry-run on the latest load, and recorded for a person to decide.

1. **mine** — every kind of :data:`~assay.platform.proposals.kinds.MINERS` reads the monitor's
   profiles of the loads before the latest one (stored numbers only, never the data), and says
   what it would check, with the numbers that justify it and its backtest on every stored load;
2. **leave out** what the dataset's check document checks already, what was accepted, and what
   was rejected on the same evidence (:meth:`Candidate.evidence_hash`);
3. **rank** by the intent, when one is given (:mod:`assay.platform.proposals.intent`);
4. **dry-run** the document with every proposal added, once, on the latest load's date: ONE
   query for all of them (:class:`~assay.platform.runs.check.CheckRun`, ``dry_run=True``:
   nothing recorded);
5. **record** each proposal shown, with an event (``proposed``, ``shown``, ``reopened``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.engine import DataKind
from assay.errors import ConfigError
from assay.platform.checks.document import Document, Profile, find_document, load_document, read_text
from assay.platform.checks.edit import edited_text
from assay.platform.proposals import covered as coverage
from assay.platform.proposals.candidate import Candidate
from assay.platform.proposals.clock import end_of_day
from assay.platform.proposals.history import History
from assay.platform.proposals.intent import rank
from assay.platform.proposals.kinds import EARLY, KINDS, MINERS
from assay.workspace import Workspace

MIN_LOADS = 14
"""The fewest loads (before the latest) a proposal is mined from: two weeks of daily loads."""


@dataclass
class Proposal:
    """One proposal as ``assay propose --json`` prints it."""

    id: str
    kind: str
    expectation: dict[str, Any]
    evidence: dict[str, Any]
    backtest: dict[str, int]
    dry_run: dict[str, Any]
    requires: dict[str, Any] | None
    event: str | None = None  # what recording it did: proposed, shown, reopened (None: not recorded)
    score: float | None = None  # how well it matches the intent

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract: exactly these keys (docs/proposals.md)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "expectation": self.expectation,
            "evidence": self.evidence,
            "backtest": self.backtest,
            "dry_run": self.dry_run,
            "requires": self.requires,
        }


@dataclass
class ProposalSet:
    """What one ``assay propose`` found: the proposals shown and why others were not."""

    dataset: str
    document: Path
    profile: str
    loads: int  # the stored loads read (the mined ones and the latest)
    latest: str | None
    proposals: list[Proposal] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)  # reason -> how many
    notes: list[str] = field(default_factory=list)
    queries: int = 0  # the dry run's queries to the data (1: every proposal in one)


def propose(
    dataset: str,
    *,
    store: Any,
    workspace: Path | str | None = None,
    intent: str | None = None,
    min_loads: int = MIN_LOADS,
    profile: str | None = None,
    at: datetime | None = None,
    record: bool = True,
) -> ProposalSet:
    """Propose checks for ``dataset`` from its profiled loads (see the module's steps). ``at``
    is when they are recorded as shown (default: now); ``record=False`` records nothing (the
    demo's story).

    The dataset's check document is found in ``<workspace>/checks`` (as ``assay profile
    --dataset`` finds it); none, or no such ``profile``, is a :class:`ConfigError`.
    """
    if min_loads < 2:
        raise ConfigError(f"--min-loads must be 2 or more, got {min_loads}")
    root = Workspace(workspace).root
    path, document, chosen = _document(root, dataset, profile)
    loads = store.profiled_loads(dataset)
    if len(loads) - 1 < min_loads:
        # a dataset checked only by documents: the loads its check runs recorded with their
        # per-column profile (partition: the profile's id; older runs recorded none)
        by_checks = [x for x in store.profiled_loads(dataset, partition=chosen.id) if x.types]
        if len(by_checks) > len(loads):
            loads = by_checks
    found = ProposalSet(
        dataset, path, chosen.id, len(loads), loads[-1].logical_date.isoformat() if loads else None
    )
    enough = len(loads) - 1 >= min_loads
    if not enough:
        found.notes.append(
            f"{dataset} has {len(loads)} profiled load(s); proposals are mined from at least {min_loads} "
            "before the latest (assay profile or assay check run each load)"
            + ("; classifications are proposed from any" if loads else "")
        )
        if not loads:
            return found
    ticks = store.ticks(path.relative_to(root).as_posix())  # named as the scheduler names it
    history = History(dataset, loads, document, chosen, min_loads, ticks)
    candidates = [c for miner in (MINERS if enough else EARLY) for c in miner.mine(history)]
    if enough and history.clock.source == "none" and history.columns(DataKind.TIMESTAMP):
        found.notes.append(
            f"freshness is not proposed: profile '{chosen.id}' has no schedule and its loads were profiled "
            "long after their days, so nothing says when a check would judge them (add a schedule)"
        )
    checked = coverage.covered(document)
    fresh = []
    for c in candidates:
        if coverage.key(c) in checked:
            found.left_out["checked by the document"] = found.left_out.get("checked by the document", 0) + 1
        else:
            fresh.append(c)
    _unique_names(document, chosen, fresh)
    stored = {r.id: r for r in store.proposals(dataset=dataset)}
    shown = []
    for c in fresh:
        record_ = stored.get(c.id(dataset))
        if record_ is not None and record_.state == "accepted":
            found.left_out["accepted"] = found.left_out.get("accepted", 0) + 1
        elif (
            record_ is not None and record_.state == "rejected" and record_.evidence_hash == c.evidence_hash()
        ):
            found.left_out["rejected, same evidence"] = found.left_out.get("rejected, same evidence", 0) + 1
        else:
            shown.append(c)
    if intent is not None and intent.strip():
        descriptions = dict(document.dataset.columns)
        ranked = rank(shown, intent, descriptions)
        if len(ranked) < len(shown):
            found.left_out["not what the intent asks"] = len(shown) - len(ranked)
        shown = ranked
    if shown:
        found.queries = dry_run(history, path, shown, store=store, workspace=root)
    when = at or datetime.now(UTC)
    for c in shown:
        pid = c.id(dataset)
        event = None
        if record:
            event = store.save_proposal(
                dataset,
                id=pid,
                kind=c.kind,
                target=c.target,
                evidence_hash=c.evidence_hash(),
                expectation=c.expectation,
                requires=c.requires,
                evidence=c.evidence,
                backtest=c.backtest.to_dict(),
                dry_run=c.dry_run,
                at=when,
            )
        found.proposals.append(
            Proposal(
                pid,
                c.kind,
                c.expectation,
                c.evidence,
                c.backtest.to_dict(),
                c.dry_run or {"outcome": None, "observed": None},
                c.requires,
                event,
                c.score if intent else None,
            )
        )
    return found


def dry_run(
    history: History, path: Path, candidates: Sequence[Candidate], *, store: Any, workspace: Path
) -> int:
    """Run the document with every candidate added, as a dry run on the latest load's date (the
    clock: its scheduled run's, else midnight after it), and give each candidate its ``dry_run``
    (outcome and observed value). One run, one query for all; nothing is recorded. Returns the run's
    queries to the data."""
    from assay.platform.checks.document import parse_document
    from assay.platform.runs.check import CheckRun

    # a classification judges nothing: its "dry run" is its share on the latest load, as mined
    candidates = [c for c in candidates if c.kind != "classify"]
    if not candidates:
        return 0
    text = read_text(path, "check document")
    valid = [c for c in candidates if _addable(text, [c], str(path))]
    for c in candidates:
        if c not in valid:
            c.dry_run = {"outcome": "config_error", "observed": None}
    if not valid:
        return 0
    edited = edited_text(text, [c.expectation for c in valid], _metrics(valid), filename=str(path))
    document = parse_document(edited, filename=str(path))
    latest = history.latest
    run = CheckRun(
        document,
        path,
        at=latest.logical_date,
        now=history.arrival(latest) or end_of_day(latest.logical_date),
        store=store,
        workspace=Workspace(workspace),
        only=[c.expectation["id"] for c in valid],
        dry_run=True,
    )
    result = run.run()
    outcomes = {o["expectation"]: o for o in result.outcomes}
    for c in valid:
        o = outcomes.get(c.expectation["id"], {})
        c.dry_run = {"outcome": o.get("outcome"), "observed": o.get("observed")}
    return int(result.queries.get("measure", 0))


def _metrics(candidates: Sequence[Candidate]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for c in candidates:
        if c.requires:
            out.setdefault(c.requires["profile"], []).extend(c.requires["metrics"])
    return out


def _addable(text: str, candidates: Sequence[Candidate], filename: str) -> bool:
    try:
        edited_text(text, [c.expectation for c in candidates], _metrics(candidates), filename=filename)
    except ConfigError:
        return False
    return True


def _document(root: Path, dataset: str, profile: str | None) -> tuple[Path, Document, Profile]:
    path = find_document(root / "checks", dataset)
    if path is None:
        raise ConfigError(
            f"no check document of dataset '{dataset}' in {root / 'checks'}: proposals are written into "
            f"one (a file with kind: DatasetChecks and dataset.name: {dataset})"
        )
    document = load_document(path)
    if not document.profiles:
        raise ConfigError(f"{path}: the document has no profile to propose checks for")
    if profile is None:
        return path, document, document.profiles[0]
    for p in document.profiles:
        if p.id == profile:
            return path, document, p
    known = ", ".join(p.id for p in document.profiles)
    raise ConfigError(f"{path}: no profile '{profile}' (profiles: {known})")


def _unique_names(document: Document, profile: Profile, candidates: Sequence[Candidate]) -> None:
    """Give each candidate an expectation id (and a metric name) the document does not use for
    something else: ``-2``, ``-3``, ... after it (the same suffix every time for the same
    document)."""
    ids = {e.id for e in document.expectations}
    for c in candidates:
        base = str(c.expectation["id"])
        n = 1
        while c.expectation["id"] in ids:
            n += 1
            c.expectation["id"] = f"{base}-{n}"
        ids.add(str(c.expectation["id"]))
        if c.kind != "order" or c.requires is None:
            continue
        entry = c.requires["metrics"][0]["count_where"]
        name, n = entry["name"], 1
        while (spec := profile.spec(entry["name"])) is not None and (
            spec.where is None or coverage.comparison(spec.where.condition) != coverage.key(c)[1]
        ):
            n += 1
            entry["name"] = f"{name}_{n}"
        c.expectation["metric"] = f"{profile.id}.{entry['name']}"


def demo_proposals(
    workspace: Workspace | Path, store: Any, dataset: str, *, now: datetime | None = None, limit: int = 3
) -> list[dict[str, Any]]:
    """The demo's proposals: ``limit`` of different kinds (:func:`showcase`) of ``dataset``,
    recorded as shown at ``now`` (so that ``assay proposals accept ID`` works on the demo's
    workspace), as the JSON of ``assay propose --json``."""
    root = workspace.root if isinstance(workspace, Workspace) else Path(workspace)
    found = propose(dataset, store=store, workspace=root, at=now)
    return [p.to_dict() for p in showcase(found, limit)]


def showcase(found: ProposalSet, count: int = 3) -> list[Proposal]:
    """``count`` proposals of different kinds, in the order of :data:`KINDS` (the demo's three)."""
    picked: list[Proposal] = []
    for kind in KINDS:
        for p in found.proposals:
            if p.kind == kind:
                picked.append(p)
                break
        if len(picked) == count:
            break
    return picked
