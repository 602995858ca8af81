"""``assay check export-dqdl`` round trip against the real ``assay check run``: on every day of the
trades example, the exported ruleset, evaluated by assay's DQDL engine on that day's file (the
rows of the day's slice) with its own history, gives each exported expectation the outcome the
check run gave it."""

from __future__ import annotations

from pathlib import Path

from assay.demo import trades
from assay.dqdl import evaluate, parse
from assay.platform.checks.document import load_document
from assay.platform.checks.export import export_dqdl, export_entries
from assay.platform.runs.check import run_document
from assay.store import MetricStore
from assay.workspace import Workspace

DAYS = 10


def test_the_exported_ruleset_gives_the_check_runs_outcomes(tmp_path: Path) -> None:
    path = trades.generate(tmp_path, DAYS)
    document = load_document(path)
    ruleset = parse(export_dqdl(document))
    exported = {e.expectation for e in export_entries(document) if e.rule is not None}
    assert {"fresh", "total-volume", "settle-after-exec", "email-complete", "fee-level"} <= exported
    compared = 0
    seen: set[str] = set()
    with MetricStore.open("sqlite://") as checks_store, MetricStore.open("sqlite://") as dqdl_store:
        for day in trades.days(DAYS):
            clock = trades.clock(day)
            run = run_document(
                document, path, at=day, now=clock, store=checks_store, workspace=Workspace(tmp_path)
            )
            theirs = {
                o["expectation"]: o["outcome"]
                for o in run.outcomes
                if o["group"] is None and o["outcome"] in ("passed", "failed")
            }
            day_file = tmp_path / "data" / "trades" / f"trades-{day}.parquet"
            result = evaluate(ruleset, day_file, dataset="trades", store=dqdl_store, now=clock)
            mine = {r.labels["expectation"]: r.outcome.lower() for r in result.rules}
            for expectation, outcome in theirs.items():
                if expectation in exported:
                    assert mine[expectation] == outcome, (day, expectation, result.rules)
                    compared += 1
                    seen.add(outcome)
    assert compared >= DAYS * 4 and seen == {"passed", "failed"}
