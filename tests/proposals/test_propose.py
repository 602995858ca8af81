"""Proposals mined from the trades' stored history: their evidence, backtests recomputed by hand,
one dry run that records nothing, intents, and the accept/reject trail."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from assay.errors import ConfigError
from assay.platform.checks.document import load_document
from assay.platform.proposals import accept, dry_run, propose, reject
from assay.platform.proposals.covered import covered, key
from assay.platform.proposals.history import History
from assay.platform.proposals.kinds import MINERS
from assay.store import MetricKey, MetricStore
from proposals._history import TRADE_DAYS, dump

DATASET = "payments.trades"
AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def world(trades_history: Path, tmp_path: Path) -> Path:
    """A copy of the trades' history that a test may change."""
    copy = tmp_path / "ws"
    shutil.copytree(trades_history, copy)
    return copy


def _propose(root: Path, **options: Any) -> Any:
    with MetricStore.open(workspace=root) as store:
        return propose(DATASET, store=store, workspace=root, at=AT, **options)


def _by(found: Any, kind: str, target: str | None = None) -> Any:
    return next(
        p for p in found.proposals if p.kind == kind and (target is None or target in str(p.expectation))
    )


def test_the_json_contract_and_every_kind(world: Path) -> None:
    found = _propose(world)
    assert found.loads == TRADE_DAYS and found.queries == 1  # one dry-run query for all of them
    for p in found.proposals:
        assert list(p.to_dict()) == [
            "id",
            "kind",
            "expectation",
            "evidence",
            "backtest",
            "dry_run",
            "requires",
        ]
        assert set(p.backtest) == {"loads", "would_have_failed"} and set(p.dry_run) == {"outcome", "observed"}
        assert p.event == "proposed"
        if p.kind != "classify":  # a classification is written to dataset.classified, not as a check
            assert p.expectation["mode"] == "advisory"
    kinds = {p.kind for p in found.proposals}
    assert kinds == {
        "order",
        "uniqueness",
        "values",
        "completeness",
        "range",
        "volume",
        "freshness",
        "classify",
    }
    # the trades' buyers' e-mail addresses: the one column proposed pii
    [classify] = [p for p in found.proposals if p.kind == "classify"]
    assert (classify.evidence["column"], classify.evidence["shape"]) == ("email", "email")
    assert classify.expectation["classified"] == {"pii": ["email"]}
    assert _by(found, "uniqueness").expectation["rule"] == 'IsUnique "trade_id"'
    assert _by(found, "values", "region").expectation["rule"] == 'ColumnValues "region" in ["APAC","EU","US"]'
    # fee is sometimes null: its range leaves nulls to completeness
    assert (
        _by(found, "range").expectation["rule"]
        == 'ColumnValues "fee" between 0 and 14 where "fee IS NOT NULL"'
    )
    # email has nulls on most days and the demo checks it already: never proposed complete
    assert not [p for p in found.proposals if p.kind == "completeness" and "email" in str(p.expectation)]


def test_a_row_rule_held_until_the_last_day_and_its_dry_run_shows_the_break(world: Path) -> None:
    found = _propose(world)
    settle = _by(found, "order", "executed_at_after_settled_at")
    assert settle.evidence["held"] == "settled_at >= executed_at" and settle.evidence["violations"] == 0
    assert settle.evidence["loads"] == TRADE_DAYS - 1
    assert settle.expectation["expect"] == "= 0"
    assert settle.requires["metrics"][0]["count_where"]["condition"] == "executed_at > settled_at"
    # the three fills of the last day: the backtest's one failed load, and the dry run's 3 rows
    assert settle.backtest == {"loads": TRADE_DAYS, "would_have_failed": 1}
    assert settle.dry_run == {"outcome": "failed", "observed": 3.0}
    # recomputed from the stored pair counts: executed_at > settled_at on some row of which loads
    with MetricStore.open(workspace=world) as store:
        loads = store.window(DATASET, datetime.max.date())
        metrics = store.load_metrics([x.id for x in loads])
    broken = [
        x.logical_date
        for x in loads
        if metrics[x.id][("Multicolumn", "executed_at,settled_at", "GreaterCount")]
    ]
    assert broken == [max(x.logical_date for x in loads)]


def test_the_volume_backtest_recomputed_by_hand(world: Path) -> None:
    found = _propose(world)
    volume = _by(found, "volume")
    low, high = volume.evidence["band"]
    k = volume.evidence["k"]
    assert volume.expectation["expect"] == f"between avg(last({k})) * {low:g} and avg(last({k})) * {high:g}"
    assert "history" not in volume.expectation  # the trades' weekdays do not differ
    with MetricStore.open(workspace=world) as store:
        loads = sorted(store.window(DATASET, datetime.max.date()), key=lambda x: x.logical_date)
        rows = [store.load_metrics([x.id])[x.id][("Dataset", "*", "RowCount")] for x in loads]
    judged = failed = 0
    for i in range(k, len(rows)):
        average = sum(rows[i - k : i]) / k
        judged += 1
        failed += not (average * low < rows[i] < average * high)
    assert volume.backtest == {"loads": judged, "would_have_failed": failed}
    assert judged == TRADE_DAYS - k


def test_completeness_and_freshness_evidence(world: Path) -> None:
    found = _propose(world)
    customer = _by(found, "completeness", "customer_id")
    with MetricStore.open(workspace=world) as store:
        loads = store.window(DATASET, datetime.max.date())
        nulls = [store.load_metrics([x.id])[x.id][("Column", "customer_id", "NullCount")] for x in loads]
        rows = sum(x.row_count or 0 for x in loads[1:])  # every load but the latest
    assert nulls == [0.0] * TRADE_DAYS
    assert customer.evidence["rows"] == rows and customer.backtest == {
        "loads": TRADE_DAYS,
        "would_have_failed": 0,
    }
    # a text column: judged on nulls plus blanks (missing_rate), not DQDL's nulls-only IsComplete
    assert customer.expectation["metric"] == "daily.missing_rate(customer_id)"
    assert customer.dry_run == {"outcome": "passed", "observed": 0.0}
    fresh = _by(found, "freshness")
    # settled_at (= updated_at on these days) is the first column closest to arrival; arrival
    # is the profile's 06:30 schedule (the loads were profiled long after their days)
    assert fresh.evidence["column"] == "settled_at" and "schedule" in fresh.evidence["arrival"]
    assert fresh.expectation["expect"] == f"<= {fresh.evidence['bound_hours']} hours"
    assert fresh.evidence["lag_seconds"]["max"] * 1.25 <= fresh.evidence["bound_hours"] * 3600
    assert fresh.requires == {"profile": "daily", "metrics": [{"freshness": "settled_at"}]}
    assert fresh.backtest["would_have_failed"] == 0 and fresh.dry_run["outcome"] == "passed"


def test_the_dry_run_is_one_query_and_records_nothing(world: Path) -> None:
    with MetricStore.open(workspace=world) as store:
        document = load_document(world / "checks" / "trades.yaml")
        history = History(DATASET, store.profiled_loads(DATASET), document, document.profiles[0])
        candidates = [c for miner in MINERS for c in miner.mine(history)]
        before = dump(world / "assay.db")
        runs = sorted((world / "runs").iterdir())
        assert (
            dry_run(history, world / "checks" / "trades.yaml", candidates, store=store, workspace=world) == 1
        )
        assert dump(world / "assay.db") == before and sorted((world / "runs").iterdir()) == runs
    checks = [c for c in candidates if c.kind != "classify"]
    assert all(c.dry_run and c.dry_run["outcome"] in ("passed", "failed") for c in checks)
    # a classification is not run: its "dry run" is the latest load's share, as mined
    [classify] = [c for c in candidates if c.kind == "classify"]
    assert classify.dry_run == {"outcome": None, "observed": 1.0}


def test_what_the_demo_document_checks_already_is_not_proposed(world: Path) -> None:
    found = _propose(world)
    shipped = load_document(Path(__file__).parents[2] / "src" / "assay" / "demo" / "data" / "trades.yaml")
    checked = covered(shipped)
    assert ("order", "executed_at > settled_at") in checked and ("volume", "row_count") in checked
    assert ("freshness", "*") in checked and ("completeness", "email") in checked
    settle = _by(found, "order", "executed_at_after_settled_at")
    assert key_of(settle) in checked


def key_of(proposal: Any) -> tuple[str, str]:
    from assay.platform.proposals.candidate import Backtest, Candidate

    c = Candidate(proposal.kind, "", (), proposal.expectation, proposal.evidence, Backtest(0, 0), ())
    return key(c)


@pytest.mark.parametrize(
    ("intent", "expected"),
    [
        ("settlement never before execution", ("order", "executed_at_after_settled_at")),
        ("no missing customer ids", ("completeness", "daily.missing_rate(customer_id)")),
        ("volume per region", ("volume", "row_count")),
    ],
)
def test_an_intent_filters_and_ranks(world: Path, intent: str, expected: tuple[str, str]) -> None:
    everything = _propose(world)
    found = _propose(world, intent=intent)
    assert 0 < len(found.proposals) < len(everything.proposals)
    first = found.proposals[0]
    assert (first.kind, expected[1] in str(first.expectation)) == (expected[0], True)
    assert [p.score for p in found.proposals] == sorted((p.score for p in found.proposals), reverse=True)


def test_accept_writes_the_document_and_reject_holds_until_the_evidence_changes(world: Path) -> None:
    path = world / "checks" / "trades.yaml"
    before = path.read_text()
    found = _propose(world)
    settle = _by(found, "order", "executed_at_after_settled_at")
    unique = _by(found, "uniqueness")
    with MetricStore.open(workspace=world) as store:
        done = accept(store, settle.id[:8], by="ana", workspace=world, at=AT)
        # accepted: the expectation, advisory, with who and when; its metric in the profile
        assert done.proposal.state == "accepted" and done.proposal.decided_by == "ana"
        added = [
            line[1:] for line in done.diff.splitlines() if line.startswith("+") and not line.startswith("+++")
        ]
        assert not [
            line for line in done.diff.splitlines() if line.startswith("-") and not line.startswith("---")
        ]
        text = path.read_text()
        assert text.startswith(before.split("expectations:")[0].split("metrics:")[0])  # comments kept
        assert "# Executed trades: what to measure each day" in text
        assert any("count_where: {name: executed_at_after_settled_at" in line for line in added)
        document = load_document(path)
        written = next(e for e in document.expectations if e.id == settle.expectation["id"])
        assert written.mode == "advisory" and "Accepted by ana on 2026-12-01 09:00 UTC" in (
            written.description or ""
        )
        with pytest.raises(ConfigError, match="already accepted by ana"):
            accept(store, settle.id, by="bob", workspace=world, at=AT)
        rejected = reject(store, unique.id, by="bob", why="ids repeat across venues", at=AT)
        assert rejected.state == "rejected" and rejected.why == "ids repeat across venues"
        with pytest.raises(ConfigError, match="already rejected by bob"):
            reject(store, unique.id, by="ana", why="x", at=AT)
        with pytest.raises(ConfigError, match="say why"):
            reject(store, _by(found, "values", "venue").id, by="ana", why=" ", at=AT)
    again = _propose(world)
    ids = {p.id for p in again.proposals}
    assert settle.id not in ids and unique.id not in ids
    assert again.left_out.get("rejected, same evidence") == 1
    with MetricStore.open(workspace=world) as store:
        trail = store.proposal(unique.id).events
        assert [e["kind"] for e in trail] == ["proposed", "rejected"]
        assert trail[1]["by"] == "bob" and trail[1]["detail"]["why"] == "ids repeat across venues"
        assert [e["kind"] for e in store.proposal(_by(found, "range").id).events] == ["proposed", "shown"]
        # new evidence (the history doubled, its bounds changed): the rejected proposal returns
        record = store.proposal(unique.id)
        event = store.save_proposal(
            DATASET,
            id=record.id,
            kind=record.kind,
            target=record.target,
            evidence_hash="changed",
            expectation=record.expectation,
            requires=None,
            evidence=record.evidence,
            backtest=record.backtest,
            dry_run=record.dry_run,
            at=AT,
        )
        assert event == "reopened" and store.proposal(unique.id).state == "open"


def test_too_little_history_and_unknown_datasets(world: Path) -> None:
    found = _propose(world, min_loads=TRADE_DAYS)
    assert "at least 24" in found.notes[0]
    # only a classification, which needs no run of earlier loads (docs/privacy.md)
    assert [p.kind for p in found.proposals] == ["classify"]
    with MetricStore.open(workspace=world) as store, pytest.raises(ConfigError, match="no check document"):
        propose("payments.nothing", store=store, workspace=world)
    with MetricStore.open(workspace=world) as store, pytest.raises(ConfigError, match="no profile 'hourly'"):
        propose(DATASET, store=store, workspace=world, profile="hourly")
    with MetricStore.open(workspace=world) as store, pytest.raises(ConfigError, match="no proposal 'zz'"):
        store.proposal("zz")


def test_the_pair_counts_are_stored_metrics(world: Path) -> None:
    with MetricStore.open(workspace=world) as store:
        [load] = store.load_for_date(DATASET, datetime(2026, 11, 24).date())
        metrics = store.metrics_of(load)
    assert metrics[MetricKey.multicolumn(["executed_at", "settled_at"], "GreaterCount")] == 3.0
    assert metrics[MetricKey.multicolumn(["executed_at", "settled_at"], "LessCount")] > 400
