"""``assay check export-dqdl`` round trip against the real ``assay check run``: on every day of the
trades example, the exported ruleset, evaluated by assay's DQDL engine on that day's file (the
rows of the day's slice) with its own history, gives each exported expectation the outcome the
check run gave it; a freshness over the whole source, on every file that arrived."""

from __future__ import annotations

import itertools
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

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


def test_freshness_over_the_source_round_trips_on_the_whole_source(tmp_path: Path) -> None:
    """``fresh`` over the whole source (issue 30): the ruleset reads one day's slice, so the
    expectation is a comment naming its rule; that rule, evaluated on every file that has
    arrived, gives the check run's outcome on a day whose file came (passed) and on the morning
    after a day whose file never came (failed: the newest row is the day before's)."""
    path = trades.generate(tmp_path, 4)
    text = path.read_text()
    assert "- freshness: updated_at\n" in text
    path.write_text(
        text.replace("- freshness: updated_at\n", "- freshness: {column: updated_at, over: source}\n")
    )
    document = load_document(path)
    [entry] = [e for e in export_entries(document) if e.expectation == "fresh"]
    assert entry.rule is None
    [note] = entry.notes
    head, rule = note.split("; on the whole source it is: ")
    assert head == (
        "not exported: fresh: freshness over the whole source (over: source), "
        "and this ruleset is evaluated on one slice's rows"
    )
    ruleset = parse(f"Rules = [ {rule} ]")
    folder = tmp_path / "data" / "trades"
    days = trades.days(4)
    seen = set()
    with MetricStore.open("sqlite://") as store:
        for day, after in reversed(list(itertools.pairwise(days))):
            (folder / f"trades-{after}.parquet").unlink(missing_ok=True)  # as on the morning after `day`
            arrived = pa.concat_tables(pq.read_table(p) for p in sorted(folder.glob("*.parquet")))
            for at in (day, after):  # `after`: a day whose file never came
                clock = trades.clock(at)
                run = run_document(
                    document,
                    path,
                    at=at,
                    now=clock,
                    store=store,
                    workspace=Workspace(tmp_path),
                    only=("fresh",),
                )
                [theirs] = [o["outcome"] for o in run.outcomes]
                [mine] = [r.outcome.lower() for r in evaluate(ruleset, arrived, now=clock).rules]
                assert mine == theirs, (at, run.outcomes)
                seen.add(theirs)
    assert seen == {"passed", "failed"}
