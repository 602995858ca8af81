"""The demo's check document: executed trades, 30 daily loads, judged from stored metrics.

:func:`generate` writes one Parquet file per trading day (about 600 fills in three regions and
six venues) and the check document ``checks/trades.yaml`` (shipped in ``assay/demo/data``).
The days are ordinary except the last, when the EU's volume drops by more than half (one venue
stopped sending) and a few fills settle before they were executed: the run of that day fails the
EU's group of ``region-volume`` (and no other region), the total's ``total-volume`` names the EU
as the change, and ``settle-after-exec`` shows the offending rows. One expectation is broken on
purpose (a column that does not exist): a ``config_error`` for its author, never a failure.
"""

from __future__ import annotations

import functools
import json
import random
import shutil
from datetime import UTC, date, datetime, time, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from rich.console import Console

from assay._render import progress
from assay.workspace import Workspace

START = date(2026, 11, 1)
DAYS = 30
REGIONS = {"EU": ("XETR", "XPAR"), "US": ("NYSE", "NASDAQ"), "APAC": ("HKEX", "TSE")}
VOLUME = {"EU": 240, "US": 260, "APAC": 110}  # fills a day, before noise
DOCUMENT = "trades.yaml"


def days(count: int = DAYS) -> list[date]:
    return [START + timedelta(days=i) for i in range(count)]


def clock(day: date) -> datetime:
    """The run's clock for a day's load: 03:00 UTC the next morning."""
    return datetime.combine(day + timedelta(days=1), time(3, 0), UTC)


def generate(root: Path, count: int = DAYS, *, regression: bool = True) -> Path:
    """Write ``count`` days of trades under ``root/data/trades`` and the check document under
    ``root/checks``; returns the document's path. The last day carries the regression."""
    folder = root / "data" / "trades"
    folder.mkdir(parents=True, exist_ok=True)
    for i, day in enumerate(days(count)):
        last = regression and i == count - 1
        pq.write_table(
            _day(day, random.Random(day.toordinal()), regressed=last), folder / f"trades-{day}.parquet"
        )
    checks = root / "checks"
    checks.mkdir(parents=True, exist_ok=True)
    with resources.as_file(resources.files("assay.demo") / "data" / DOCUMENT) as source:
        shutil.copyfile(source, checks / DOCUMENT)
    return checks / DOCUMENT


def _day(day: date, rng: random.Random, *, regressed: bool) -> pa.Table:
    rows: dict[str, list[object]] = {
        name: []
        for name in (
            "trade_id", "trade_date", "region", "venue", "customer_id", "email", "fee", "amount",
            "is_test", "executed_at", "settled_at", "updated_at",
        )
    }  # fmt: skip
    start = datetime.combine(day, time(0), UTC)
    for region, venues in REGIONS.items():
        count = int(VOLUME[region] * rng.uniform(0.93, 1.07))
        for n in range(count):
            venue = venues[n % 2]
            if regressed and region == "EU" and venue == "XPAR":
                continue  # the venue stopped sending
            executed = start + timedelta(seconds=rng.randrange(8 * 3600, 20 * 3600))
            settled = executed + timedelta(seconds=rng.randrange(1, 7200))
            if regressed and n < 3 and region == "US":
                settled = executed - timedelta(seconds=60 * (n + 1))
            rows["trade_id"].append(f"{day:%Y%m%d}-{region}-{n:04d}")
            rows["trade_date"].append(day)
            rows["region"].append(region)
            rows["venue"].append(venue)
            rows["customer_id"].append(f"C{rng.randrange(1, 400):04d}")
            rows["email"].append(None if rng.random() < 0.002 else f"c{rng.randrange(1, 400)}@example.com")
            rows["fee"].append(None if rng.random() < 0.01 else round(rng.uniform(0.5, 12.0), 2))
            rows["amount"].append(round(rng.lognormvariate(8, 1), 2))
            rows["is_test"].append(rng.random() < 0.01)
            rows["executed_at"].append(executed)
            rows["settled_at"].append(settled)
            rows["updated_at"].append(min(settled, start + timedelta(hours=23, minutes=30)))
    return pa.table(rows)


WEEK = 7
"""The last days of the demo, run by the scheduler (one pass per morning) instead of one by one."""
ROUTES = """# Written by `assay demo`: the channels of its scheduled week, all at the demo's own webhook
# receiver (gone once the demo ends: a later delivery to it is retried, then fails).
channels:
  owners:   {{type: webhook, url: "{url}/owners"}}
  authors:  {{type: webhook, url: "{url}/authors"}}
  platform: {{type: slack, url: "{url}/platform"}}
routes:
  - {{when: {{outcome: config_error}}, to: [authors]}}
  - {{when: {{outcome: system_error}}, to: [platform]}}
  - {{when: {{outcome: failed, severity: [critical, error]}}, to: [owners]}}
  - {{when: {{outcome: failed, severity: warning}}, to: [owners], digest: daily}}
"""


def enroll(workspace: Workspace, *, store_path: Path) -> list[str]:
    """Enroll the trades in certification before their first day: the four template checks,
    advisory, written into the document (``assay certify payments.trades --enroll``; the key and
    the freshness column are named, as no profile is stored yet)."""
    from assay.platform import certify
    from assay.platform.checks.document import load_document
    from assay.platform.checks.edit import add_expectations
    from assay.platform.scores import Subject
    from assay.store import MetricStore

    document = load_document(store_path)
    subject = Subject(document.dataset.name, document, store_path)
    with MetricStore.open(workspace=workspace.root) as store:
        found = certify.templates(
            subject, store, now=clock(START - timedelta(days=1)), key="trade_id", freshness="updated_at"
        )
    add_expectations(store_path, found["expectations"], found["metrics"] or None)
    return [e["id"] for e in found["expectations"]]


def certify_day(workspace: Workspace, store: Any, dataset: str, now: datetime) -> dict[str, Any]:
    """The day's certification of the trades (``assay certify payments.trades``), at its clock."""
    from assay.platform import certify
    from assay.platform.scores import subjects

    (subject,) = subjects(workspace.root, store, [dataset])
    result: dict[str, Any] = certify.certify(subject, store, now=now)
    result["at"] = now.isoformat()
    return result


def profile_day(workspace: Workspace, store: Any, document: Path, dataset: str, day: date) -> None:
    """Profile a day's file of trades as the drift monitor does (every column, one query, judged
    with the document's ``monitor:`` section, as ``assay profile`` judges it): the column history
    that ``assay propose`` mines."""
    from assay.platform.checks.settings import load_config
    from assay.platform.flows import profile

    path = workspace.root / "data" / "trades" / f"trades-{day}.parquet"
    config = functools.partial(load_config, document)  # read inside the run, as the CLI reads it
    profile(path, dataset=dataset, load_date=day, store=store, workspace=workspace.root, config=config)


def run_trades(console: Console, workspace: Workspace, *, status: Console) -> dict[str, Any]:
    """The check-document part of the demo: daily runs of ``checks/trades.yaml``, the last
    :data:`WEEK` days by the scheduler (``assay run --due`` passes, one each morning at the
    profile's tick) with notifications routed to a local webhook receiver; the last day's
    outcomes and everything the receiver got are shown. Returns the last run's JSON and the
    notifications (for ``assay demo --json``)."""
    from assay._render_runs import print_run
    from assay.demo.receiver import WebhookReceiver
    from assay.platform.checks.document import load_document
    from assay.platform.runs.check import run_document
    from assay.platform.schedule import run_pass
    from assay.store import MetricStore

    path = generate(workspace.root)
    enrolled = enroll(workspace, store_path=path)
    document = load_document(path)
    console.rule("[bold]4. A check document: 30 daily loads judged from stored metrics")
    console.print(
        f"Enrolled {document.dataset.name} in certification: {', '.join(enrolled)} written to {path.name} "
        "as advisory (they count toward the badge after 14 days of outcomes)",
        highlight=False,
    )
    console.print(
        f"{path}: {len(document.expectations)} expectations on {document.dataset.name}, "
        f"measured by profile '{document.profiles[0].id}' in one query per day; the last "
        f"{WEEK} days run by the scheduler, its notifications sent to a local webhook receiver\n",
        highlight=False,
    )
    all_days = days()
    runs: list[str] = []
    badges: list[dict[str, Any]] = []
    with (
        WebhookReceiver() as receiver,
        MetricStore.open(workspace=workspace.root) as store,
        progress(status, "Running 30 days of checks", len(all_days)) as step,
    ):
        for day in all_days[:-WEEK]:
            profile_day(workspace, store, path, document.dataset.name, day)
            runs.append(
                run_document(document, path, at=day, now=clock(day), store=store, workspace=workspace).run_id
            )
            badges.append(certify_day(workspace, store, document.dataset.name, clock(day)))
            step()
        (workspace.root / "assay.yaml").write_text(ROUTES.format(url=receiver.url))
        for day in all_days[-WEEK:]:
            profile_day(workspace, store, path, document.dataset.name, day)
            # the morning after: the 06:30 tick checks the day's slice (the profile's lag: 1)
            scheduled = run_pass(workspace, store, datetime.combine(day + timedelta(days=1), time(7, 0), UTC))
            runs.extend(s.run_id for s in scheduled.started if s.run_id)
            badges.append(certify_day(workspace, store, document.dataset.name, clock(day)))
            step()
        received = list(receiver.received)
    payload = json.loads((workspace.runs / f"{runs[-1]}.json").read_text())
    print_run(payload, console)
    console.print(
        f"\nEvery day's metrics are kept: `assay check history {path} --workspace {workspace.root}` "
        "shows the 30 runs; `--dry-run` judges without recording.",
        highlight=False,
    )
    console.print(f"\nThe scheduler's week: what the webhook receiver got ({len(received)} notifications)")
    for item in received:
        body = item["body"]
        about = " ".join(str(x) for x in (body.get("dataset"), body.get("expectation")) if x)
        console.print(
            f"  {item['path']:<10} {body.get('kind', '?'):<18} {about}: {body.get('message') or ''}",
            highlight=False,
            markup=False,
        )
    console.print(
        f"`assay incidents list --workspace {workspace.root}` lists the incidents; "
        f"`assay notify outbox --workspace {workspace.root}` what was sent.",
        highlight=False,
    )
    return {
        "document": str(path),
        "enrolled": enrolled,
        "badges": [{"at": b["at"], "badge": b["badge"]} for b in badges],
        "at": payload["at"],
        "summary": payload["summary"],
        "queries": payload["queries"],
        "notifications": [
            {
                "channel": item["path"].strip("/"),
                **{k: item["body"].get(k) for k in ("id", "kind", "expectation", "incident_id")},
            }
            for item in received
        ],
    }
