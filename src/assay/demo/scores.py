"""The demo's control-plane summary: every dataset's score, the trades' certification badge, and
checks proposed from the trades' stored history.

Read at the demo's last clock (1 December 2026, 06:00 UTC, after every part's runs), so that the
story is the same on any day the demo is run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.console import Console

from assay.workspace import Workspace

PROPOSALS = 3
"""How many proposals the demo shows (the strongest, by the miner's ranking)."""


def run_scores(
    console: Console, workspace: Workspace, *, badges: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Score every dataset, certify the trades and show three proposals; returns them as JSON."""
    from assay._render_runs import print_badge, print_scores
    from assay.demo.orders import CLOCK
    from assay.platform import certify, scores
    from assay.store import MetricStore

    now = datetime.fromisoformat(CLOCK)  # the demo's last clock: after every part's runs
    console.rule("[bold]5. Scores, a certification badge and proposed checks")
    with MetricStore.open(workspace=workspace.root) as store:
        found = scores.score_all(workspace.root, store, now=now)
        (trades,) = scores.subjects(workspace.root, store, ["payments.trades"])
        badge = certify.certify(trades, store, now=now)
        proposed = _proposals(workspace, store, now)
    console.print(
        "Each dataset's score: Health (pass rate, reliability) and Enrichment (metadata, check "
        "coverage); Importance (consumers, reads) ranks what to fix first. A dataset with no "
        "checks scores badly, not neutrally (docs/scores.md)\n",
        highlight=False,
    )
    print_scores(found, now, console)
    best = next(s for s in found if s.dataset == "payments.trades")
    console.print(f"\npayments.trades lost {100 - best.score:.1f} points:", highlight=False)
    for line in best.why:
        console.print(f"  {line}", highlight=False, markup=False)
    days = badges or []
    changes = [b for i, b in enumerate(days) if i == 0 or b["badge"] != days[i - 1]["badge"]]
    console.print(
        "\nCertification: the four template checks ran as advisory; the badge waited for 14 days "
        "of their outcomes. Badge changes: " + ", ".join(f"{b['badge']} on {b['at'][:10]}" for b in changes),
        highlight=False,
    )
    print_badge(badge, console)
    if proposed:
        console.print(
            f"\nChecks proposed from the trades' stored history (the {len(proposed)} strongest; "
            "each dry-run on the last load and backtested on every stored one; "
            "`assay proposals accept ID --by NAME` writes one into the document as advisory):",
            highlight=False,
        )
        for p in proposed:
            backtest = p.get("backtest") or {}
            dry = p.get("dry_run") or {}
            held = (p.get("evidence") or {}).get("held")
            what = f"{held} on every row" if held else _expectation_text(p["expectation"])
            console.print(
                f"  {p['id'][:8]} {p['kind']:<12} {what}: would have failed "
                f"{backtest.get('would_have_failed')} of {backtest.get('loads')} loads; "
                f"on the last load: {dry.get('outcome')}",
                highlight=False,
                markup=False,
            )
    return {
        "scores": [s.to_dict() for s in found],
        "certification": badge,
        "proposals": proposed,
    }


def _expectation_text(expectation: dict[str, Any]) -> str:
    if expectation.get("rule"):
        return str(expectation["rule"])
    return f"{expectation.get('metric')} {expectation.get('expect')}"


def _proposals(workspace: Workspace, store: Any, now: Any) -> list[dict[str, Any]]:
    from assay.platform.proposals import demo_proposals

    found: list[dict[str, Any]] = demo_proposals(
        workspace, store, "payments.trades", now=now, limit=PROPOSALS
    )
    return found
