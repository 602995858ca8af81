"""The web control plane's pages on the demo's workspace: how long each takes to render, over HTTP.

    python bench/web.py [--workspace DIR] [--rounds 20] [--json OUT]

The application is served by uvicorn on a local port (a thread of this process) at the demo's
clock, and each main page is fetched ``--rounds`` times by a logged-in client (urllib, the
session cookie), after one warm-up fetch. The baseline, measured in the same run on the same
server, is the cheapest answer the stack gives: a static file (``/static/app.css``). Printed per
page: the median time, the ratio against the baseline, and whether it is under the issue's
300 ms. Then the check editor's dry run of a business rule with its 30-date backtest (one
measurement per date) against a dry run of the latest date alone.

Last, the catalog again after ``--datasets`` more datasets (default 300) are registered: what
listing each dataset costs (every score's evidence is read for all datasets in five queries).

``--workspace`` is a workspace ``assay demo`` built (a copy is used); without it the demo is
built first (about a minute). Exits 0 whatever the figures; 1 when a page does not answer 200.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any

from _common import table

TARGET_MS = 300.0
PAGES = {
    "catalog": "/",
    "dataset overview": "/datasets/payments.trades",
    "quality tab": "/datasets/payments.trades/quality",
    "profile tab": "/datasets/payments.trades/profile",
    "expectation chart": "/datasets/payments.trades/expectations/region-volume?group=region%3DEU",
    "add a check": "/datasets/payments.trades/checks/new",
    "runs": "/runs",
    "incidents": "/incidents",
    "decisions": "/decisions",
    "proposals": "/proposals",
    "gate runs": "/gate",
    "catalog JSON": "/api/v1/catalog",
}
RULE = {
    "measure": '- count_where: {name: early, condition: "settled_at < executed_at", sample_rows: 20}\n',
    "expect": "id: early\nmetric: daily.early\nexpect: '= 0'\n",
}


def build_demo(folder: Path) -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "assay", "demo", "--workspace", str(folder / "assay-demo"), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"assay demo failed: {done.stderr}")
    return folder / "assay-demo"


def serve(plane: Any) -> tuple[str, Any]:
    import uvicorn

    from assay.web.app import create_app

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    config = uvicorn.Config(create_app(plane=plane), log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    return f"http://127.0.0.1:{sock.getsockname()[1]}", server


def logged_in(base: str, token: str) -> urllib.request.OpenerDirector:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    form = opener.open(f"{base}/login").read().decode()
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', form)
    assert csrf is not None
    body = urllib.parse.urlencode({"token": token, "csrf_token": csrf.group(1), "next": "/"}).encode()
    opener.open(f"{base}/login", data=body).read()
    return opener


def timed(opener: urllib.request.OpenerDirector, url: str, rounds: int) -> tuple[float, int]:
    """The median seconds of ``rounds`` fetches of ``url`` (after one warm-up), and its status."""
    with opener.open(url) as answer:
        status = answer.status
        answer.read()
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        with opener.open(url) as answer:
            answer.read()
        times.append(time.perf_counter() - started)
    return statistics.median(times), status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", type=Path, help="A workspace assay demo built (copied first).")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--datasets", type=int, default=300, help="Datasets added for the crowded catalog.")
    parser.add_argument("--json", type=Path, help="Write the measurements here.")
    args = parser.parse_args()

    from assay.demo.orders import CLOCK
    from assay.web import authoring
    from assay.web.plane import Plane, Settings

    scratch = Path(tempfile.mkdtemp(prefix="assay-bench-web-"))
    try:
        if args.workspace is None:
            root = build_demo(scratch)
        else:
            root = scratch / "assay-demo"
            shutil.copytree(args.workspace, root)
        plane = Plane(Settings(root, now=datetime.fromisoformat(CLOCK)))
        token = plane.store.add_user("bench", "author", by="bench")
        base, server = serve(plane)
        opener = logged_in(base, token)
        baseline, _ = timed(opener, f"{base}/static/app.css", args.rounds)
        rows, measured, failed = [], {}, []
        for name, path in PAGES.items():
            seconds, status = timed(opener, base + path, args.rounds)
            if status != 200:
                failed.append(f"{name}: {status}")
            measured[name] = seconds
            under = "yes" if seconds * 1000 < TARGET_MS else "NO"
            rows.append([name, f"{seconds * 1000:.1f}", f"{seconds / baseline:.1f}", under])
        print(f"baseline: a static file in {baseline * 1000:.2f} ms (median of {args.rounds})")
        print(table(["page", "median ms", "ratio page/static", f"< {TARGET_MS:.0f} ms"], rows))
        worst = max(measured, key=lambda k: measured[k])
        print(f"slowest page: {worst}, {measured[worst] * 1000:.1f} ms (target < {TARGET_MS:.0f} ms)")

        # the catalog's cost per dataset: the same page with many more (registered, never run)
        for n in range(args.datasets):
            plane.store.ensure_dataset(f"bench.table_{n:04d}")
        crowded, _ = timed(opener, f"{base}/", args.rounds)
        measured[f"catalog of {len(plane.store.dataset_names())} datasets"] = crowded
        print(
            f"catalog with {args.datasets} more datasets: {crowded * 1000:.1f} ms "
            f"(with 4: {measured['catalog'] * 1000:.1f} ms; target < {TARGET_MS:.0f} ms)"
        )

        draft = authoring.Draft(RULE["measure"], RULE["expect"])
        authoring.dry_run(plane, "payments.trades", draft, days=0)  # warm: the engine's first start
        started = time.perf_counter()
        latest_only = authoring.dry_run(plane, "payments.trades", draft, days=0)
        one = time.perf_counter() - started
        started = time.perf_counter()
        backtest = authoring.dry_run(plane, "payments.trades", draft, days=30)
        thirty = time.perf_counter() - started
        print(
            f"dry run with a 30-date backtest: {thirty:.2f} s, {backtest['queries']} queries "
            f"(the latest date alone: {one:.2f} s, {latest_only['queries']} query); "
            f"ratio {thirty / one:.1f} for {backtest['queries'] / latest_only['queries']:.0f}x the dates"
        )
        server.should_exit = True
        plane.close()
        if args.json:
            args.json.write_text(
                json.dumps(
                    {
                        "baseline_ms": baseline * 1000,
                        "pages_ms": {k: v * 1000 for k, v in measured.items()},
                        "dry_run_s": {"latest": one, "backtest_30": thirty},
                        "failed": failed,
                    },
                    indent=2,
                )
            )
        if failed:
            print("pages that did not answer 200: " + ", ".join(failed))
            return 1
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
