"""Kept scores (the catalog's entries) against scores computed from scratch.

A random small history of every kind of write a score reads (a profiled load, a DQDL run, a
check run, an incident opened and resolved, a badge, a read, a check document written) goes
through the store's own write methods; after each one, the dataset it touched is stale before
any refresh (the mark lands with the write: a kill between the two cannot leave a wrong score),
and after the refresh every kept entry equals the score :func:`score_dataset` computes from
scratch.
"""

from __future__ import annotations

import tempfile
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from assay.platform.checks.document import load_document
from assay.platform.entries import Filters, Subject, refresh_stale
from assay.platform.scores import score_dataset
from assay.store import MetricStore, OutcomeRecord, RunRecord
from assay.store.incidents import IncidentRecord

NOW = datetime(2026, 12, 1, 6, tzinfo=UTC)
DATASETS = ("shop.orders", "shop.refunds", "ledger.entries")
KINDS = ("load", "dqdl", "check", "incident", "resolve", "badge", "read", "document")

DOCUMENT = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: {name}
  source: {{path: "../data/*.parquet"}}
  owners: {{team: {team}}}
  description: {description}
  tier: {tier}
  tags: [{tag}]
  columns: {{id: The id.}}
expectations:
  - {{id: volume, metric: daily.row_count, expect: "> 0"}}
profiles:
  - id: daily
    metrics: [row_count]
"""


def write(store: MetricStore, root: Path, kind: str, name: str, step: int) -> bool:
    """One write of ``kind`` to ``name``'s score inputs, through the store's own methods; False
    when there was nothing to write (no open incident to resolve)."""
    at = NOW - timedelta(days=step % 40, hours=1)
    run_id = str(uuid.uuid4())
    if kind == "load":
        load = store.create_load(name, logical_time=at, logical_date=at.date(), run_id=run_id)
        store.save_profile(load, [("id", "int64"), ("amount", "float64")][: 1 + step % 2], {})
    elif kind == "dqdl":
        load = store.create_load(name, logical_time=at, run_id=run_id)
        outcome = "passed" if step % 3 else "failed"
        store.record_run(
            RunRecord(
                run_id, "dqdl", name, load, "completed", at, outcomes=[OutcomeRecord("RowCount > 0", outcome)]
            )
        )
    elif kind == "check":
        store.record_run(RunRecord(run_id, "check", name, None, "completed", at))
        outcome = ("passed", "failed", "skipped")[step % 3]
        store.save_check_outcomes(
            run_id,
            name,
            at,
            [{"expectation": "volume", "outcome": outcome, "severity": "error", "mode": "enforce"}],
        )
    elif kind == "incident":
        store.save_incident(
            IncidentRecord(
                str(uuid.uuid4()), name, "volume", f"e{step}", None, "open", "error", None, at, at
            ),
            new=True,
        )
    elif kind == "resolve":
        for found in store.incidents(dataset=name, states=["open"])[:1]:
            found.state, found.resolved_at = "resolved", at
            store.save_incident(found, new=False)
            return True
        return False
    elif kind == "badge":
        store.change_badge(name, ("certified", "at_risk", "revoked")[step % 3], at=at)
    elif kind == "read":
        store.record_read(name, "api", at=at)
    else:
        path = root / "checks" / f"{name}.yaml"
        path.parent.mkdir(exist_ok=True)
        text = DOCUMENT.format(
            name=name, team=f"team{step % 2}", description=f"v{step}", tier=step % 3, tag=f"t{step % 2}"
        )
        path.write_text(text)
    return True


def documents(root: Path) -> dict[str, tuple[Path, Any]]:
    found = {}
    for path in sorted((root / "checks").glob("*.yaml")):
        document = load_document(path)
        found[document.dataset.name] = (path, document)
    return found


def assert_kept_equals_scratch(store: MetricStore, root: Path) -> None:
    docs = documents(root)
    total, kept = store.catalog_page(Filters(), sort="name", descending=False, offset=0, limit=50)
    assert total == len(kept)
    activity = store.activity()
    badges = store.badges()
    for entry in kept:
        path, document = docs.get(entry.name, (None, None))
        fresh = score_dataset(Subject(entry.name, document, path), store, now=NOW)
        got = (entry.score, entry.health, entry.enrichment, entry.importance)
        assert got == (fresh.score, fresh.health, fresh.enrichment, fresh.importance), entry.name
        assert (entry.tier, entry.tags, entry.team) == (
            fresh.tier,
            tuple(sorted(fresh.tags)),
            document and document.dataset.owners.team,
        )
        seen = activity.get(entry.name)
        assert entry.open_incidents == (seen.open_incidents if seen else 0)
        assert entry.badge == (badges[entry.name].badge if entry.name in badges else None)


# no shrinking: a failing history of at most 10 writes is read as it is (shrinking took minutes)
@settings(
    max_examples=6,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.tuples(st.sampled_from(KINDS), st.sampled_from(DATASETS)), min_size=3, max_size=10))
def test_a_kept_score_equals_the_score_from_scratch_after_every_kind_of_write(
    history: list[tuple[str, str]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        with MetricStore.open(f"sqlite:///{root / 'assay.db'}") as store:
            for step, (kind, name) in enumerate(history):
                wrote = write(store, root, kind, name, step)
                stale = store.stale_entries(NOW)
                if kind == "document":  # a file: the kept stamp no longer matches it
                    assert stale.get(name) != _stamp(root, name)
                elif wrote:
                    # the write's own transaction marked it: a kill now leaves it stale, not wrong
                    assert name in stale and stale[name] is None
                refresh_stale(store, documents(root), now=NOW)
                assert_kept_equals_scratch(store, root)
                assert all(s is not None for s in store.stale_entries(NOW).values())


def test_every_kind_of_write_marks_the_entry_stale(tmp_path: Path) -> None:
    """Each kind, once, on a dataset whose entry is fresh: the write alone makes it stale."""
    with MetricStore.open(f"sqlite:///{tmp_path / 'assay.db'}") as store:
        write(store, tmp_path, "incident", "shop.orders", 0)
        for step, kind in enumerate(KINDS, start=1):
            refresh_stale(store, documents(tmp_path), now=NOW)
            assert "shop.orders" not in store.stale_entries(NOW) or kind == "document"
            assert write(store, tmp_path, kind, "shop.orders", step)
            stale = store.stale_entries(NOW)
            if kind == "document":
                assert stale.get("shop.orders") != _stamp(tmp_path, "shop.orders")
            else:
                assert stale.get("shop.orders", "fresh") is None, kind


def _stamp(root: Path, name: str) -> str | None:
    from assay.platform.entries import document_stamp

    return document_stamp(root / "checks" / f"{name}.yaml")


def test_an_entry_a_write_made_stale_while_it_was_computed_is_not_kept(tmp_path: Path) -> None:
    with MetricStore.open(f"sqlite:///{tmp_path / 'assay.db'}") as store:
        write(store, tmp_path, "check", "shop.orders", 1)
        versions = store.entry_versions(["shop.orders"])
        write(store, tmp_path, "check", "shop.orders", 2)  # lands while the refresh computes
        from assay.platform.entries import _entry

        score = score_dataset(Subject("shop.orders"), store, now=NOW)
        assert store.write_entries([_entry(Subject("shop.orders"), score, None, None, NOW)], versions) == 0
        assert store.stale_entries(NOW) == {"shop.orders": None}


def test_assay_score_keeps_the_catalog_entries_of_what_it_scores(tmp_path: Path) -> None:
    from assay.platform.entries import score_and_keep

    with MetricStore.open(f"sqlite:///{tmp_path / 'assay.db'}") as store:
        for step, kind in enumerate(("load", "check", "read")):
            write(store, tmp_path, kind, "shop.orders", step)
        assert store.stale_entries(NOW) == {"shop.orders": None}
        (found,) = score_and_keep(tmp_path, store, now=NOW)
        assert store.stale_entries(NOW) == {}
        kept = store.catalog_page(Filters(), sort="name", descending=False, offset=0, limit=5)[1]
        assert [(e.name, e.score, e.computed_at) for e in kept] == [("shop.orders", found.score, NOW)]
