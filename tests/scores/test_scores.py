"""Scores and certification on real runs: a small shop's daily files, checked and profiled.

Each world is a workspace with daily Parquet files of orders (id, amount, region, updated_at),
a check document written by the test, check runs through :func:`run_document` and drift-monitor
profiles through :func:`assay.platform.flows.profile`, all into the workspace's SQLite store.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.platform import scores
from assay.platform.certify import certify
from assay.platform.checks.document import load_document
from assay.platform.flows import profile
from assay.platform.runs.check import run_document
from assay.store import MetricStore
from assay.workspace import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _invoke import assay

START = date(2026, 10, 1)
COLUMNS = {
    "id": "The order's id.",
    "amount": "What the customer paid, in euros.",
    "region": "Where the order was placed.",
    "updated_at": "When the row last changed.",
}

HEAD = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: shop.orders
  source: {path: "../data/*.parquet"}
  owners: {team: shop-data}
  description: One row per order.
  tier: 1
  tags: [domain:shop]
  columns: __COLUMNS__
  consumers: __CONSUMERS__
certification: __CERTIFICATION__
profiles:
  - id: daily
    slice: {column: day}
    metrics: [row_count, {freshness: updated_at}, {null_rate: [amount]}, {min: [amount]}]
"""

ENFORCED = """  - {id: volume, metric: daily.row_count, expect: "> 0"}
  - {id: fresh, metric: daily.freshness(updated_at), expect: "<= 2 days"}
  - {id: amounts, metric: daily.null_rate(amount), expect: "<= 0.5"}
  - {id: positive, metric: daily.min(amount), expect: ">= 0"}
"""

CERTIFIED = """  - {id: c-fresh, metric: daily.freshness(updated_at), expect: "<= 24 hours",
     mode: advisory, tags: [certification]}
  - {id: c-unique, rule: 'IsUnique "id"', profile: daily, mode: advisory, tags: [certification]}
  - {id: c-complete, rule: 'IsComplete "id"', profile: daily, mode: advisory, tags: [certification]}
  - {id: c-volume, metric: daily.row_count, expect: "> 0", mode: advisory, tags: [certification]}
"""


def clock(day: date) -> datetime:
    return datetime.combine(day + timedelta(days=1), time(3), UTC)


def write_day(root: Path, day: date, *, duplicate: bool = False, rows: int = 20) -> Path:
    ids = list(range(rows))
    if duplicate:
        ids[1] = ids[0]
    folder = root / "data"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"orders-{day}.parquet"
    stamp = datetime.combine(day, time(20), UTC)
    pq.write_table(
        pa.table(
            {
                "id": ids,
                "amount": [float(10 + i) for i in range(rows)],
                "region": ["EU" if i % 2 else "US" for i in range(rows)],
                "updated_at": [stamp] * rows,
                "day": [day] * rows,
            }
        ),
        path,
    )
    return path


def document(
    root: Path,
    expectations: str,
    *,
    described: int = 5,
    consumers: str = "[]",
    certification: str = "{}",
) -> Path:
    names = [*COLUMNS, "day"][:described]
    columns = "{" + ", ".join(f"{n}: {json.dumps(COLUMNS.get(n, 'The business date.'))}" for n in names) + "}"
    text = HEAD.replace("__COLUMNS__", columns).replace("__CONSUMERS__", consumers)
    text = text.replace("__CERTIFICATION__", certification)
    if expectations:
        text += "expectations:\n" + expectations
    path = root / "checks" / "orders.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run_days(
    root: Path,
    days: int,
    *,
    start: int = 0,
    profiled: bool = True,
    bad: Callable[[int], bool] = lambda i: False,
) -> None:
    path = root / "checks" / "orders.yaml"
    with MetricStore.open(workspace=root) as store:
        for i in range(start, start + days):
            day = START + timedelta(days=i)
            data = write_day(root, day, duplicate=bad(i))
            if profiled:
                profile(data, dataset="shop.orders", load_date=day, store=store, workspace=root)
            if path.exists():
                doc = load_document(path)
                if doc.expectations:
                    run_document(doc, path, at=day, now=clock(day), store=store, workspace=Workspace(root))


def score_of(root: Path, day: date, name: str = "shop.orders") -> scores.Score:
    with MetricStore.open(workspace=root) as store:
        (found,) = scores.score_all(root, store, [name], now=clock(day))
    return found


def test_a_dataset_with_no_checks_scores_at_most_46_however_well_it_is_described(tmp_path: Path) -> None:
    document(tmp_path, "", described=5)  # owner, description, tier, tags, every column described
    run_days(tmp_path, 5)  # profiled every day: its columns are known
    found = score_of(tmp_path, START + timedelta(days=4))
    assert (
        found.components["metadata"]["columns"] == 5
        and found.components["metadata"]["columns_described"] == 5
    )
    assert found.enrichment == 50.0 and found.health == 0.0
    assert found.score <= 46 and found.score == scores.NO_CHECKS_MAX
    assert "no freshness check (-4.0 points)" in found.why
    assert any(w.startswith("no check was judged in 30 days") for w in found.why)


def test_a_broken_check_does_not_lower_the_pass_rate_or_the_score(tmp_path: Path) -> None:
    broken = '  - {id: broken, metric: daily.null_rate(amount), expect: "<= 0.1"}\n'
    worlds = {}
    for name, extra in (("plain", ""), ("broken", broken)):
        root = tmp_path / name
        document(root, ENFORCED + extra)
        if extra:  # the column it reads does not exist: a config_error on every run
            path = root / "checks" / "orders.yaml"
            text = path.read_text().replace("{null_rate: [amount]}", "{null_rate: [amount, discount]}")
            path.write_text(
                text.replace(
                    "id: broken, metric: daily.null_rate(amount)",
                    "id: broken, metric: daily.null_rate(discount)",
                )
            )
        run_days(root, 4, bad=lambda i: False)
        worlds[name] = score_of(root, START + timedelta(days=3))
    plain, with_broken = worlds["plain"], worlds["broken"]
    assert with_broken.components["excluded"]["config_error"] == 4
    assert with_broken.components["pass_rate"] == plain.components["pass_rate"] == 1.0
    assert with_broken.health == plain.health and with_broken.score == plain.score


def test_the_pass_rate_is_the_enforced_passed_over_judged_recomputed_from_the_store(tmp_path: Path) -> None:
    failing = '  - {id: few, metric: daily.row_count, expect: "> 19", severity: warning}\n'
    document(tmp_path, ENFORCED + failing)
    run_days(tmp_path, 6)
    # days 4 and 5 lose rows: `few` fails twice
    with MetricStore.open(workspace=tmp_path) as store:
        path = tmp_path / "checks" / "orders.yaml"
        for i in (6, 7):
            day = START + timedelta(days=i)
            write_day(tmp_path, day, rows=12)
            run_document(
                load_document(path), path, at=day, now=clock(day), store=store, workspace=Workspace(tmp_path)
            )
    found = score_of(tmp_path, START + timedelta(days=7))
    with sqlite3.connect(tmp_path / "assay.db") as db:
        rows = db.execute(
            "select outcome, count(*) from check_outcomes where mode = 'enforce' group by outcome"
        ).fetchall()
    counts = dict(rows)
    expected = counts["passed"] / (counts["passed"] + counts["failed"])
    assert counts["failed"] == 2 and found.components["pass_rate"] == round(expected, 4)
    assert found.health == round(70 * expected + 30 * 1.0, 1)
    assert any(w.startswith(f"pass rate {expected:.2f} over 30 days, 2 failed of") for w in found.why)


def test_importance_ranks_but_never_changes_a_datasets_own_score(tmp_path: Path) -> None:
    found = {}
    for name, consumers in (("alone", "[]"), ("used", "[{team: finance}, {team: risk}, {team: ops}]")):
        root = tmp_path / name
        document(root, ENFORCED, consumers=consumers)
        run_days(root, 3)
        found[name] = score_of(root, START + timedelta(days=2))
    assert found["used"].importance - found["alone"].importance == 50.0  # 25 a consumer, 50 at most
    assert found["used"].score == found["alone"].score


def _score(name: str, value: float, importance: float, tags: tuple[str, ...], owner: str) -> scores.Score:
    return scores.Score(name, value, value, value, importance, None, {}, [], owner=owner, tags=tags)


def test_the_rollup_is_the_importance_weighted_mean_and_fix_first_weighs_the_gap() -> None:
    found = [
        _score("sales.orders", 90.0, 100.0, ("domain:sales",), "sales"),  # weight 5
        _score("sales.refunds", 40.0, 0.0, ("domain:sales",), "sales"),  # weight 1
        _score("ops.tickets", 70.0, 25.0, (), "ops"),  # weight 2
    ]
    by_tag = {g["group"]: g for g in scores.rollup(found, "tag")}
    assert by_tag["domain:sales"]["score"] == round((90 * 5 + 40 * 1) / 6, 1)  # 81.7, not the plain 65
    assert by_tag["(untagged)"]["datasets"] == 1
    # refunds: (100-40)*1 = 60 before orders: (100-90)*5 = 50
    assert [f["dataset"] for f in by_tag["domain:sales"]["fix_first"]] == ["sales.refunds", "sales.orders"]
    by_schema = {g["group"]: g["score"] for g in scores.rollup(found, "schema")}
    assert by_schema == {"ops": 70.0, "sales": 81.7}
    assert {g["group"] for g in scores.rollup(found, "owner")} == {"ops", "sales"}


def test_assay_score_json_is_the_contract_and_a_rollup_by_an_unknown_key_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document(tmp_path, ENFORCED)
    run_days(tmp_path, 3)
    now = clock(START + timedelta(days=2)).isoformat()
    assert assay("score", "--json", "--workspace", str(tmp_path), "--now", now) == 0
    [item] = json.loads(capsys.readouterr().out)
    assert set(item) == {
        "dataset",
        "score",
        "health",
        "enrichment",
        "importance",
        "tier",
        "components",
        "why",
    }
    assert item["dataset"] == "shop.orders" and item["tier"] == 1
    assert all(isinstance(w, str) and "points" in w for w in item["why"])
    assert assay("score", "--by", "colour", "--workspace", str(tmp_path)) == 2
    assert "--by must be one of tag, schema, owner" in capsys.readouterr().err
    assert assay("score", "nothing.here", "--workspace", str(tmp_path)) == 2
    assert "no dataset 'nothing.here'" in capsys.readouterr().err
    with sqlite3.connect(tmp_path / "assay.db") as db:  # the day's score is kept
        assert db.execute("select name, day from scores").fetchall() == [("shop.orders", "2026-10-04")]


def test_certification_waits_out_the_advisory_period_then_slips_is_revoked_and_returns(
    tmp_path: Path,
) -> None:
    document(
        tmp_path,
        ENFORCED + CERTIFIED,
        certification="{advisory_days: 5, grace_days: 2, min_score: 60}",
    )
    path = tmp_path / "checks" / "orders.yaml"
    badges: list[tuple[int, str]] = []

    def day(i: int, *, duplicate: bool = False) -> dict[str, Any]:
        run_days(tmp_path, 1, start=i, bad=lambda _: duplicate)
        with MetricStore.open(workspace=tmp_path) as store:
            (subject,) = scores.subjects(tmp_path, store, ["shop.orders"])
            result = certify(subject, store, now=clock(START + timedelta(days=i)))
        badges.append((i, result["badge"]))
        return result

    for i in range(4):
        first = day(i)  # at most four days of outcomes: the checks are still advisory
    rates = next(c for c in first["criteria"] if c["name"] == "pass_rates")
    assert first["badge"] == "not_certified" and not rates["met"]
    assert "still advisory" in rates["evidence"]  # four days of outcomes, five needed
    certified = day(4)  # five days of outcomes: the advisory period is measured
    assert certified["badge"] == "certified", certified["criteria"]
    assert all(c["met"] for c in certified["criteria"])
    slipping = day(5, duplicate=True)  # ids repeat: c-unique fails, its pass rate 4/5 < 0.95
    assert slipping["badge"] == "at_risk"
    rates = next(c for c in slipping["criteria"] if c["name"] == "pass_rates")
    assert rates["met"] is False and "c-unique 0.80 (4 of 5)" in rates["evidence"]
    assert day(6)["badge"] == "at_risk"  # within the grace period
    assert day(7)["badge"] == "at_risk"  # two days: still within it
    assert day(8)["badge"] == "revoked"  # at risk for more than 2 days
    assert day(9)["badge"] == "revoked"  # the failing day is still within the period
    back = day(10)
    assert back["badge"] == "certified"  # the failing day left the period
    history = [h["badge"] for h in back["history"]]
    assert history == ["not_certified", "certified", "at_risk", "revoked", "certified"]
    assert back["since"] == clock(START + timedelta(days=10)).isoformat()
    assert [i for i, b in badges if b == "certified"] == [4, 10]
    assert load_document(path)  # the document is unchanged and valid


def test_the_worked_example_of_docs_scores_md() -> None:
    """docs/scores.md's table, from the module's own constants."""
    import math

    health = scores.PASS_POINTS * (108 / 120) + scores.RELIABILITY_POINTS * 1.0
    metadata = sum(scores.METADATA_POINTS[k] for k in ("owner", "description", "tier"))
    enrichment = metadata + scores.METADATA_POINTS["columns"] * 3 / 12 + 4 * scores.DIMENSION_POINTS
    assert (round(health, 1), enrichment) == (93.0, 70.0)
    assert scores.split(health, enrichment) == 83.8
    importance = min(scores.CONSUMER_MAX, 2 * scores.CONSUMER_POINTS) + scores.READ_POINTS * math.log1p(
        61
    ) / math.log1p(scores.READS_FULL)
    assert round(importance, 1) == 86.2
    lost = [0.4 * 20 * 9 / 12, 0.6 * 70 * 0.10, 0.4 * 10, 0.4 * 5]
    assert [round(x, 1) for x in lost] == [6.0, 4.2, 4.0, 2.0] and round(100 - sum(lost), 1) == 83.8


def test_enroll_writes_the_four_templates_as_advisory_and_they_earn_the_badge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = document(tmp_path, ENFORCED, certification="{advisory_days: 3, min_score: 60}")
    path.write_text("# the shop's orders: kept by shop-data\n" + path.read_text())
    run_days(tmp_path, 2)  # profiled: the key column and the timestamp are found from the profile
    now = clock(START + timedelta(days=1)).isoformat()
    code = assay("certify", "shop.orders", "--enroll", "--json", "--workspace", str(tmp_path), "--now", now)
    assert code == 0
    enrolled = json.loads(capsys.readouterr().out)
    assert enrolled["enrolled"] == ["cert-freshness", "cert-uniqueness", "cert-completeness", "cert-volume"]
    assert 'IsUnique "id"' in enrolled["diff"] and enrolled["diff"].startswith("---")
    text = path.read_text()
    assert text.startswith("# the shop's orders: kept by shop-data\n")  # the user's comment is kept
    doc = load_document(path)
    templates = [e for e in doc.expectations if e.id.startswith("cert-")]
    assert {e.mode for e in templates} == {"advisory"} and all("certification" in e.tags for e in templates)
    assert {e.rule for e in templates if e.rule} == {'IsUnique "id"', 'IsComplete "id"'}
    assert assay("certify", "shop.orders", "--enroll", "--workspace", str(tmp_path)) == 0
    assert "every core dimension has a certification check already" in capsys.readouterr().out
    assert load_document(path) == doc  # enrolling twice changes nothing
    # the templates run daily (cert-volume once 5 loads are stored: from day 5); once their
    # 3-day advisory period is covered they carry the badge
    run_days(tmp_path, 6, start=2)
    early = assay(
        "certify", "shop.orders", "--json", "--workspace", str(tmp_path),
        "--now", clock(START + timedelta(days=6)).isoformat(),
    )  # fmt: skip
    assert early == 0  # on day 6, cert-volume had been judged for two days only
    rates = next(c for c in json.loads(capsys.readouterr().out)["criteria"] if c["name"] == "pass_rates")
    assert "cert-volume: still advisory (judged since 2026-10-06, 3 days needed)" in rates["evidence"]
    code = assay(
        "certify", "shop.orders", "--json", "--workspace", str(tmp_path),
        "--now", clock(START + timedelta(days=7)).isoformat(),
    )  # fmt: skip
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["badge"] == "certified", [c for c in result["criteria"] if not c["met"]]
    checks = {c["name"]: c["evidence"] for c in result["criteria"]}
    assert checks["volume_check"] == "cert-volume judged on 3 of the last 3 days (3 needed)"
    assert [h["badge"] for h in result["history"]] == ["not_certified", "certified"]


def test_certify_refuses_a_dataset_without_a_document_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_days(tmp_path, 1)  # profiled only: the store knows it, no document does
    assert assay("certify", "shop.orders", "--workspace", str(tmp_path)) == 2
    assert "has no check document in the workspace's checks/ folder" in capsys.readouterr().err


def test_every_score_read_at_once_equals_each_read_alone(tmp_path: Path) -> None:
    """``score_inputs`` (five queries for every dataset: the catalog, ``assay score``) gives each
    dataset the score its own reads give, on the demo's four datasets of every kind (a check
    document, DQDL runs, gate runs, a profiled dataset)."""
    from _demo_workspace import copy
    from assay.demo.orders import CLOCK
    from assay.platform.scores import score_dataset, subjects, window

    root = copy(tmp_path / "demo")
    now = datetime.fromisoformat(CLOCK)
    with MetricStore.open(workspace=root) as store:
        found = subjects(root, store)
        assert {s.name for s in found} == {"orders", "payments.trades", "silver.accounts", "vendor_trades"}
        inputs = store.score_inputs(*window(now))
        for s in found:
            alone, together = score_dataset(s, store, now=now), score_dataset(s, inputs, now=now)
            assert together.to_dict() == alone.to_dict(), s.name
        assert inputs.outcomes["orders"] and inputs.schemas["payments.trades"]
        assert inputs.load_runs["payments.trades"]
        with pytest.raises(ValueError, match="were read for"):
            inputs.outcomes_between("orders", now, now)
