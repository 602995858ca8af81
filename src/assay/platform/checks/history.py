"""What a check document recorded (``assay check history``) and what it will do (``assay check plan``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.lake.readers import Registered
from assay.measure import ScanPlan
from assay.platform.checks.document import Document
from assay.platform.checks.engine import default_engine
from assay.platform.checks.measure import ROWS, Plan, register_rows
from assay.platform.checks.outcomes import parse_at
from assay.platform.checks.rules import CompiledRules, parse_rule
from assay.platform.checks.source import open_source
from assay.platform.sources import confine
from assay.rules.plan import Context
from assay.workspace import Workspace

OUTCOME_FIELDS = (
    "expectation", "group", "outcome", "severity", "mode", "owner", "observed", "expected",
    "message", "reason", "attempts", "explained_by", "samples",
)  # fmt: skip


def history(
    store: Any, dataset: str, *, expectation: str | None = None, group: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``{"dataset", "runs": [{"run_id", "at", "state", "stages", "outcomes": [...]}]}``, oldest first;
    production runs only (a dry run is never recorded). The same store always gives the same
    value: nothing in it depends on the clock or on the order rows come back in."""
    runs = []
    for run in store.check_runs(dataset):
        outcomes = [
            {name: item.get(name) for name in OUTCOME_FIELDS}
            for item in run["outcomes"]
            if (expectation is None or item["expectation"] == expectation)
            and _in_group(item.get("group"), group)
        ]
        runs.append(
            {
                "run_id": run["run_id"],
                "at": run["at"],
                "state": run["state"],
                "stages": run["stages"],
                "outcomes": outcomes,
            }
        )
    return {"dataset": dataset, "runs": runs}


def _in_group(found: Mapping[str, Any] | None, wanted: Mapping[str, str] | None) -> bool:
    if not wanted:
        return True
    if not found:
        return False
    return all(str(found.get(k)) == v for k, v in wanted.items())


def plan(
    document: Document, path: Path, *, at: str | None = None, workspace: Workspace | None = None
) -> dict[str, Any]:
    """Each profile's metrics with the expectations that read them, its DQDL rules, and the one
    statement it would send (rendered for its engine); the source's schema is read, no data."""
    now = datetime.now(UTC)
    moment, _ = parse_at(at, now)
    profiles = []
    for profile in document.profiles:
        readers: dict[str, list[str]] = {}
        rules = {}
        for e in document.expectations:
            if document.expectation_profile(e).id != profile.id:
                continue
            if e.metric is not None:
                readers.setdefault(e.reference.key, []).append(e.id)
            else:
                assert e.rule is not None
                rules[e.id] = parse_rule(e.rule)
        item: dict[str, Any] = {"id": profile.id, "source": document.dataset.source.describe(), "sql": None}
        errors: dict[str, str] = {}
        engine = None
        try:
            confine(document.dataset.source, base=path.parent, workspace=(workspace or Workspace(None)).root)
            engine = default_engine(document)
            opened = open_source(
                engine, document, base=path.parent, workspace=(workspace or Workspace(None)).root
            )
            if opened.registered is None:
                item["error"] = f"upstream missing: {opened.missing}"
            else:
                register_rows(engine, profile, opened.registered, moment, now)
                rows = Registered(ROWS, opened.registered.columns)
                ctx = Context(engine=engine, primary=rows, references={}, now=now, scan=ScanPlan(ROWS))
                compiled = CompiledRules(rules, ctx)
                by = [
                    tuple(e.by)
                    for e in document.expectations
                    if e.by and e.metric and e.reference.profile == profile.id
                ]
                built = Plan(
                    profile,
                    rows.columns,
                    now=now,
                    extra_groupings=by,
                    dqdl=compiled.statement(),
                    dialect=engine.dialect,
                )
                errors = built.errors
                item["sql"] = engine.render(built.statement())
                item["groupings"] = [list(g) for g in built.groupings]
        except ConfigError as error:
            item["error"] = error.message
        finally:
            if engine is not None:
                engine.close()
        item["metrics"] = [
            {"metric": spec.key, "expectations": readers.get(spec.key, []), "error": errors.get(spec.key)}
            for spec in profile.specs()
        ]
        item["rules"] = list(rules)
        profiles.append(item)
    return {"document": str(path), "dataset": document.dataset.name, "profiles": profiles}
