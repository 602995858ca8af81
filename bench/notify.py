"""Delivering the outbox: ``assay notify deliver``'s pass against plain HTTP POSTs of the same payloads.

    python bench/notify.py [--notifications 2000] [--runs 3] [--json OUT]

A store's outbox holds N pending notifications for one webhook channel (put there as check runs
put them: ``MetricStore.enqueue``); a local HTTP server (in this process, a thread) answers 200.
assay's contender is one delivery pass (``deliver_pass``: lease each row, POST it with its
``Idempotency-Key``, record it sent). The baseline is the least any tool must do: the same N
payloads POSTed one after another with urllib to the same server, nothing recorded. Each round
runs both on the same server, interleaved; medians are printed with ``ratio assay/plain``
(target 2.0: the outbox's two store writes per notification may cost as much as the POST).

Then what incidents add to a check run: a 30-day document run day after day with routes (every
failure opens, repeats or resolves an incident, and its notifications go to the outbox) prints
the median share of the run's time spent on incidents and the outbox (``seconds.incidents``).
Exits 0 whatever the figures; 1 when a pass did not send every notification exactly once.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _common import table

TARGET = 2.0


class Server:
    """A local HTTP server that counts POSTs by Idempotency-Key."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        keys = self.keys

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                keys.append(self.headers.get("Idempotency-Key") or "")
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/owners"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def payloads(count: int, round_: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"00000000-0000-4000-8000-{round_:04d}{i:08d}",
            "kind": "incident_opened",
            "dataset": "shop.orders",
            "expectation": f"e{i % 40}",
            "group": None,
            "severity": "error",
            "outcome": "failed",
            "observed": float(i),
            "expected": {"condition": "> 5"},
            "message": f"e{i % 40} failed: row_count = {i}, expected > 5",
            "run_id": f"run-{round_}-{i // 40}",
            "incident_id": f"incident-{i % 40}",
        }
        for i in range(count)
    ]


def assay_pass(server: Server, count: int, round_: int, root: Path) -> tuple[float, int]:
    from assay.platform.notify import Config
    from assay.platform.outbox import deliver_pass
    from assay.store import MetricStore

    config = Config.model_validate({"channels": {"owners": {"type": "webhook", "url": server.url}}})
    now = datetime(2026, 11, 30, 8, tzinfo=UTC)
    before = len(server.keys)
    with MetricStore.open(workspace=root / f"assay-{round_}") as store:
        with store.transaction():
            for payload in payloads(count, round_):
                store.enqueue(payload, [("owners", None)], now=now)
        started = time.perf_counter()
        done = deliver_pass(store, config, now=now)
        elapsed = time.perf_counter() - started
    sent = done.count("sent")
    return elapsed, sent if len(server.keys) - before == sent else -1


def plain_posts(server: Server, count: int, round_: int) -> tuple[float, int]:
    started = time.perf_counter()
    sent = 0
    for payload in payloads(count, round_ + 1000):
        request = urllib.request.Request(
            server.url,
            data=json.dumps(payload | {"sent_at": datetime.now(UTC).isoformat()}).encode(),
            method="POST",
            headers={"Content-Type": "application/json", "Idempotency-Key": payload["id"]},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            sent += answer.status == 200
    return time.perf_counter() - started, sent


DOCUMENT = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: shop.orders
  source: {path: "../data/*.csv"}
  owners: {team: shop-data}
profiles:
  - id: daily
    slice: {column: day}
    metrics: [row_count, {null_rate: [fee]}]
expectations:
  - {id: volume, metric: daily.row_count, expect: "> 5"}
  - {id: fees, metric: daily.null_rate(fee), expect: "<= 0.1", severity: warning}
"""


def incident_share(server: Server, days: int, root: Path) -> list[float]:
    """Check runs day after day with routes; each run's share of time spent on incidents."""
    from assay.platform.checks.document import load_document
    from assay.platform.runs.check import run_document
    from assay.store import MetricStore
    from assay.workspace import Workspace

    workspace = root / "checks-ws"
    (workspace / "checks").mkdir(parents=True)
    (workspace / "data").mkdir()
    (workspace / "checks" / "orders.yaml").write_text(DOCUMENT)
    (workspace / "assay.yaml").write_text(
        f'channels: {{owners: {{type: webhook, url: "{server.url}"}}}}\n'
        "routes:\n  - {when: {outcome: failed}, to: [owners]}\n"
    )
    shares = []
    document = load_document(workspace / "checks" / "orders.yaml")
    with MetricStore.open(workspace=workspace) as store:
        for n in range(days):
            day = date(2026, 11, 1) + timedelta(days=n)
            rows = 2 if n % 3 == 0 else 10  # a failure every third day: incidents open and resolve
            nulls = 3 if n % 4 == 0 else 0
            lines = [f"{day},{'' if i < nulls else i + 0.5}" for i in range(rows)]
            (workspace / "data" / f"{day}.csv").write_text("day,fee\n" + "\n".join(lines) + "\n")
            started = time.perf_counter()
            result = run_document(
                document,
                workspace / "checks" / "orders.yaml",
                at=day,
                store=store,
                workspace=Workspace(workspace),
            )
            total = time.perf_counter() - started
            shares.append(result.seconds.get("incidents", 0.0) / total)
    return shares


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--notifications", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--json", dest="json_out")
    options = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    server = Server()
    rounds: list[dict[str, float]] = []
    exact = True
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            for round_ in range(options.runs):
                mine, sent = assay_pass(server, options.notifications, round_, root)
                theirs, posted = plain_posts(server, options.notifications, round_)
                exact = exact and sent == posted == options.notifications
                rounds.append({"assay": mine, "plain": theirs})
            shares = incident_share(server, options.days, root)
    finally:
        server.stop()
    mine = statistics.median(r["assay"] for r in rounds)
    theirs = statistics.median(r["plain"] for r in rounds)
    n = options.notifications
    print(f"{n:,} notifications to one webhook, {options.runs} round(s), medians:")
    print(
        table(
            ["contender", "s", "notifications/s"],
            [
                ["assay deliver_pass", f"{mine:.2f}", f"{n / mine:,.0f}"],
                ["plain POSTs", f"{theirs:.2f}", f"{n / theirs:,.0f}"],
            ],
        )
    )
    print(f"ratio assay/plain = {mine / theirs:.2f} (target <= {TARGET})")
    share = statistics.median(shares)
    print(f"incidents and outbox in a check run ({options.days} days): median {share:.1%} of the run's time")
    if options.json_out:
        Path(options.json_out).write_text(
            json.dumps({"rounds": rounds, "incident_shares": shares, "exact": exact}, indent=2)
        )
    if not exact:
        print("a delivery pass did not send every notification exactly once", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
