"""Every flow's failures reach people the same way: as incidents, routed like a check run's.

A flow's run hands :func:`alert` its recorded summary inside its commit (the store transaction
of its outcomes, :meth:`assay.platform.runs.run.Run.complete`); a finder of :data:`FINDERS` reads the
summary into findings, one per incident key the run judged (failed or passed), and
:func:`assay.platform.incidents.judge` opens, updates, escalates or resolves the incidents and
puts what they cause in the outbox, routed by the dataset's check document (``notify:``, its
``owners``) and ``assay.yaml``'s ``routes:``. Once per incident, never once per run.

- **gate**: ``gate:<rule_id>`` per contributor (the group ``{contributor: ...}``), failed when the
  critical rule quarantined rows or refused the file (dimension: the rule's category when it is
  one, else its rule type's); ``gate:parse_error``, ``gate:contributor``, ``gate:identity``,
  ``gate:duplicate``, ``gate:domain`` for the gate's own reasons to quarantine; ``gate:held`` for
  rows held for a decision on a never-seen value (validity);
- **profile**: ``profile:<kind>(<column>)`` (``profile:volume``), failed on a hard alert or on new
  values waiting on a decision (dimension: ``null_rate`` completeness, ``volume`` volume, the rest
  validity);
- **dqdl** (``--dataset``): each rule by its DQDL text, failed when it failed (its rule type's
  dimension).

A gate run is dated by its wall clock (each delivery is an event of its own), a profile by its
load date and a DQDL run by its evaluation time (``--now``): an incident counts a logical time
once, so a re-profile of a day leaves it as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.platform.incidents import DIMENSIONS, Context, dimension_of, judge
from assay.platform.notify import Config, load_config
from assay.platform.routing import Route, route

_GATE_DIMENSIONS = {
    "parse_error": "validity",
    "contributor": "validity",
    "identity": "completeness",
    "duplicate": "uniqueness",
    "domain": "validity",
    "held": "validity",
}
"""The gate's own reasons to quarantine or hold a row (they are no rule of the control file)."""
_PROFILE_DIMENSIONS = {"null_rate": "completeness", "volume": "volume", "duplicate_load": "uniqueness"}


@dataclass(frozen=True)
class Finding:
    """One incident key's evaluation in one run of a flow."""

    expectation: str
    dimension: str
    failed: bool
    severity: str
    observed: float | None = None
    expected: Any = None
    message: str | None = None
    group: dict[str, Any] | None = None
    detail: dict[str, Any] | None = None  # the notification's ``detail``: the flow's counts, files

    def outcome(self, owner: str | None) -> dict[str, Any]:
        """As a check run's outcome, which incidents judge."""
        return {
            "expectation": self.expectation,
            "group": self.group,
            "outcome": "failed" if self.failed else "passed",
            "severity": self.severity,
            "mode": "enforce",
            "owner": owner,
            "observed": self.observed,
            "expected": self.expected,
            "message": self.message,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Routing:
    """Where a dataset's incidents go: read before the run commits, so that a mistake in
    ``assay.yaml`` is the run's config error (exit 2), not a failure after its commit point."""

    dataset: str
    config: Config
    routes: tuple[Route, ...]
    owner: str | None = None
    tags: tuple[str, ...] = ()
    tier: int | None = None
    source: str | None = None
    workspace_root: Path | None = None  # where the other datasets' routing is read from

    @classmethod
    def of(cls, workspace_root: Path, dataset: str) -> Routing:
        """The routing of ``dataset`` in the workspace: its check document's, then assay.yaml's."""
        from assay.platform.notify import document_of

        config = load_config(workspace_root)
        document = document_of(workspace_root, dataset)
        if document is None:
            return cls(dataset, config, config.routes, workspace_root=workspace_root)
        config.refuse_undeclared(
            document.notify,
            what=f"checks/ document of {dataset}: notify: routes",
            config=workspace_root / "assay.yaml",
        )
        owners = document.dataset.owners
        return cls(
            dataset,
            config,
            (*document.notify, *config.routes),
            owners.team or owners.contact,
            document.dataset.tags,
            document.dataset.tier,
            document.dataset.source.describe(),
            workspace_root,
        )

    def context(self, dimensions: Mapping[str, str], divided: frozenset[str], flow: str) -> Context:
        routes = self.routes
        return Context(
            dataset=self.dataset,
            source=self.source or self.dataset,
            tags=self.tags,
            tier=self.tier,
            dimensions=dimensions,
            divided=divided,
            route=lambda facts: route(routes, facts),
            move_share=self.config.incidents.move_share,
            flow=flow,
            others=neighbours(self.workspace_root, flow) if self.workspace_root else None,
        )


def neighbours(workspace_root: Path, flow: str) -> Callable[[str], Context | None]:
    """The routing of any other dataset of the workspace, for a notification to its owners (a
    ``downstream_incident``): its check document's routes, then assay.yaml's; None for a
    dataset whose document routes to a channel assay.yaml does not declare (its run says so)."""
    from assay.errors import ConfigError

    def of(dataset: str) -> Context | None:
        try:
            routing = Routing.of(workspace_root, dataset)
        except ConfigError:
            return None
        return routing.context({}, frozenset(), flow)

    return of


def alert(
    store: Any,
    routing: Routing,
    flow: str,
    summary: Mapping[str, Any],
    *,
    at: datetime,
    run_id: str,
    now: datetime,
) -> dict[str, int]:
    """Judge a run's summary into its dataset's incidents (call inside the run's commit); the
    counts of what happened, the summary's ``incidents``."""
    findings = FINDERS[flow](summary)
    context = routing.context(
        {f.expectation: f.dimension for f in findings},
        frozenset(f.expectation for f in findings if f.group is not None),
        flow,
    )
    outcomes = [f.outcome(routing.owner) for f in findings]
    return judge(store, outcomes, context, at=at, run_id=run_id, now=now)


# --- what each flow's summary says ----------------------------------------------------------------


def gate_findings(summary: Mapping[str, Any]) -> list[Finding]:
    """A gate run's findings: a critical rule that quarantined rows (or refused the file), the
    gate's own reasons to quarantine, and held rows, each per contributor; passed when the run
    judged rows and it did not fire. A duplicate or an empty file judges nothing."""
    total = int(summary.get("total") or 0)
    if summary.get("duplicate_of") or not total:
        return []
    contributor = {"contributor": summary.get("contributor")}
    fired: Mapping[str, Mapping[str, Any]] = summary.get("quarantined_by") or {}
    rules: Mapping[str, Mapping[str, Any]] = summary.get("rules") or {}
    counts = {
        "total": total,
        "committed": int(summary.get("passed") or 0),
        "quarantined": int(summary.get("quarantined") or 0),
        "held": int(summary.get("held") or 0),
    }
    refused = counts["committed"] == 0 and counts["held"] == 0
    batch = (summary.get("source") or {}).get("path")
    where = f"; quarantine file {summary['quarantine_file']}" if summary.get("quarantine_file") else ""
    detail = {
        "flow": "gate",
        "contributor": summary.get("contributor"),
        "batch": batch,
        "counts": counts,
        "rules": [
            {"rule_id": r, "rows": int(f["rows"]), "rule": f.get("rule") or r} for r, f in fired.items()
        ],
        "quarantine_file": summary.get("quarantine_file"),
        "held_file": summary.get("held_file"),
        "decisions": list(summary.get("decisions") or []),
    }
    out: list[Finding] = []
    judged = [r for r, s in rules.items() if s.get("severity") == "critical"]
    for rule_id in [*judged, *(r for r in _GATE_DIMENSIONS if r != "held")]:
        stats, found = rules.get(rule_id, {}), fired.get(rule_id)
        dimension = _GATE_DIMENSIONS.get(rule_id) or _rule_dimension(stats, found)
        if found is None:
            out.append(Finding(f"gate:{rule_id}", dimension, False, "critical", 0.0, 0, group=contributor))
            continue
        rows = int(found["rows"])
        whole = "; refused the whole file" if refused and rule_id in rules else ""
        message = (
            f"{contributor['contributor']}'s batch {batch}: {rows} of {total} row(s) quarantined by "
            f"{rule_id}{whole}: {found.get('reason') or found.get('rule') or rule_id}{where}"
        )
        severity = str(stats.get("severity") or "error")
        out.append(
            Finding(
                f"gate:{rule_id}", dimension, True, severity, float(rows), 0, message, contributor, detail
            )
        )
    held = counts["held"]
    told: str | None = None
    if held:
        decisions = ", ".join(str(d) for d in summary.get("decisions") or [])
        told = (
            f"{contributor['contributor']}'s batch {batch}: {held} of {total} row(s) held for a "
            f"decision on a never-seen value (decisions {decisions}); held file {summary.get('held_file')}"
        )
    out.append(
        Finding("gate:held", "validity", bool(held), "error", float(held), 0, told, contributor, detail)
    )
    return out


def _rule_dimension(stats: Mapping[str, Any], fired: Mapping[str, Any] | None) -> str:
    category = str(stats.get("category") or "")
    if category in DIMENSIONS:
        return category
    return dimension_of(None, stats.get("dqdl") or (fired or {}).get("rule"))


def profile_findings(summary: Mapping[str, Any]) -> list[Finding]:
    """A profile's findings: each judgement of the load, failed on a hard alert or on new
    values waiting on a decision (a warning: they wait for a person, they are not broken)."""
    alerts = {(a.get("kind"), a.get("column") or ""): a for a in summary.get("alerts") or []}
    out = []
    for kind, column in [tuple(j) for j in summary.get("judged") or []]:
        name = f"profile:{kind}" + (f"({column})" if column else "")
        dimension = _PROFILE_DIMENSIONS.get(str(kind), "validity")
        found = alerts.get((kind, column))
        waiting = (
            found is not None
            and kind == "new_value"
            and any(v.get("decision") == "pending" for v in found.get("values") or [])
        )
        if found is None or not (found.get("severity") == "hard" or waiting):
            out.append(Finding(name, dimension, False, "error"))
            continue
        severity = "error" if found.get("severity") == "hard" else "warning"
        detail = {
            "flow": "profile",
            "load_date": summary.get("load_date"),
            "rows": summary.get("rows"),
            "alert": found,
            "decisions": list(summary.get("decisions") or []),
        }
        message = f"{summary.get('load_date')}: {found.get('message')}"
        out.append(
            Finding(
                name,
                dimension,
                True,
                severity,
                found.get("observed"),
                found.get("expected"),
                message,
                None,
                detail,
            )
        )
    return out


def dqdl_findings(summary: Mapping[str, Any]) -> list[Finding]:
    """A DQDL run's findings: each rule that passed or failed (a rule in error is no finding)."""
    out = []
    for rule in summary.get("rules") or []:
        outcome = rule.get("outcome")
        if outcome not in ("Passed", "Failed"):
            continue
        text = str(rule.get("rule"))
        detail = {"flow": "dqdl", "ruleset": summary.get("ruleset"), "data": summary.get("data")}
        out.append(
            Finding(
                text,
                dimension_of(None, text),
                outcome == "Failed",
                "error",
                None,
                None,
                rule.get("message") or f"{text} failed",
                None,
                detail,
            )
        )
    return out


FINDERS: dict[str, Callable[[Mapping[str, Any]], list[Finding]]] = {
    "gate": gate_findings,
    "profile": profile_findings,
    "dqdl": dqdl_findings,
}
"""Each flow's reading of its summary; a check or event run judges its own outcomes."""


@dataclass(frozen=True)
class Alerting:
    """What a run judges into incidents at its commit (:attr:`assay.platform.runs.run.Run.alerting`):
    the flow's finder, the dataset's routing, and the logical time (None: the commit's clock)."""

    routing: Routing
    flow: str
    at: datetime | None = None
    now: datetime | None = None  # the run's clock (``--now``), for the outbox

    def __call__(self, store: Any, summary: Mapping[str, Any], *, run_id: str) -> dict[str, int]:
        clock = datetime.now(UTC)
        now = self.now or clock
        return alert(store, self.routing, self.flow, summary, at=self.at or clock, run_id=run_id, now=now)
