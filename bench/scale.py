"""The control plane at 10,000 datasets: the catalog, a dataset page, a morning of scheduled runs
with four workers, and the store's size, measured in one run on a PostgreSQL store.

    python bench/scale.py [--datasets 10000] [--days 90] [--documents 10000] [--workers 4] [--fill-jobs 2]
                          [--rounds 40] [--big-rows 0] [--store URL] [--json OUT]

1. ``_scale_fill.fill`` writes ``--datasets`` × ``--days`` of history (loads, profiles, check runs
   and outcomes, incidents, daily scores) through the store's own write paths, and the catalog's
   kept entries are refreshed; both are timed.
2. ``assay serve`` (a child process, the real command) serves the workspace; the catalog page,
   its API (``/api/v1/catalog``: first page, a deep page, a word search, an owner filter, by
   score) and dataset pages are fetched ``--rounds`` times each over HTTP; printed: p50 and p95
   against the issue's 300 ms.
3. A morning: a workspace of ``--documents`` scheduled documents on three-row CSV files;
   ``assay run --due --queue`` puts every due tick on the store's queue and ``--workers``
   ``assay worker --burst`` processes drain it. Printed: runs per minute, and from the store:
   ticks completed, datasets run twice (must be 0), ticks not run (must be 0).
4. The store's size: ``pg_total_relation_size`` of every table of the fill's database over
   datasets × days.
5. With ``--big-rows N`` > 0, ``bench/_bigload.py``'s ``measure(N, workdir)`` (the 100-million-
   row load), measured first and printed as it returns.

Without ``--store`` a PostgreSQL server is started from the machine's binaries (tests/pgserver.py)
and stopped at the end. Exits 0 whatever the figures; 1 when a run was lost or ran twice, or a
page did not answer 200.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from _common import assay_env  # noqa: E402
from _scale_fill import fill, name_of  # noqa: E402

TARGET_MS = 300.0
MORNING = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: morning.table{n:05d}
  source: {{path: "../data/table{n:05d}.csv"}}
profiles:
  - id: daily
    schedule: "0 6 * * *"
    metrics: [row_count]
expectations:
  - {{id: rows, metric: daily.row_count, expect: "> 0"}}
"""


def assay(*args: str) -> list[str]:
    return [sys.executable, "-m", "assay", *args]


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


class Client:
    """One keep-alive HTTP connection to the served plane, as a user with a token."""

    def __init__(self, port: int, token: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.headers = {"authorization": f"Bearer {token}"}

    def time(self, path: str) -> tuple[float, int]:
        started = time.perf_counter()
        self.connection.request("GET", path, headers=self.headers)
        response = self.connection.getresponse()
        response.read()
        return (time.perf_counter() - started) * 1000, response.status


def serve(workspace: Path, url: str) -> tuple[subprocess.Popen[str], int]:
    child = subprocess.Popen(
        assay("serve", "--workspace", str(workspace), "--store", url, "--port", "0", "--json"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=assay_env(),
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    if not line:
        raise SystemExit(f"assay serve did not start: {child.stderr.read() if child.stderr else ''}")
    port = int(json.loads(line)["url"].rsplit(":", 1)[1].split("/")[0])
    return child, port


def pages(datasets: int, rounds: int) -> dict[str, list[str]]:
    deep = max(1, datasets // 50 // 2)
    catalog = [
        "/",
        f"/?page={deep}",
        "/?q=table00",
        "/?owner=team3",
        "/?sort=score&desc=true",
        "/?tag=area5&sort=freshness",
    ]
    api = ["/api/v1/catalog?" + p[2:] if p != "/" else "/api/v1/catalog" for p in catalog]
    dataset = [f"/datasets/{name_of((i * 7919) % datasets)}" for i in range(rounds)]
    return {"catalog page": catalog, "catalog API": api, "dataset page": dataset}


def measure_web(workspace: Path, url: str, datasets: int, rounds: int) -> dict[str, Any]:
    from assay.store import MetricStore

    with MetricStore.open(url, workspace=workspace) as store:
        token = store.add_user("bench", "viewer", by="bench")
    child, port = serve(workspace, url)
    found: dict[str, Any] = {}
    try:
        client = Client(port, token)
        for what, paths in pages(datasets, rounds).items():
            client.time(paths[0])  # warm-up: the first read refreshes what the fill left stale
            samples, bad = [], []
            for i in range(rounds):
                path = paths[i % len(paths)]
                ms, status = client.time(path)
                samples.append(ms)
                if status != 200:
                    bad.append(f"{path}: {status}")
            p50, p95 = percentiles(samples)
            found[what] = {
                "p50_ms": round(p50, 1),
                "p95_ms": round(p95, 1),
                "requests": rounds,
                "failed": bad,
            }
    finally:
        child.terminate()
        child.wait(timeout=30)
    return found


def morning(root: Path, url: str, documents: int, workers: int) -> dict[str, Any]:
    """Queue a morning's due ticks and drain them with ``workers`` worker processes."""
    from assay.store import MetricStore

    (root / "checks").mkdir(parents=True)
    (root / "data").mkdir()
    for n in range(documents):
        (root / "checks" / f"table{n:05d}.yaml").write_text(MORNING.format(n=n))
        (root / "data" / f"table{n:05d}.csv").write_text("id\n1\n2\n3\n")
    store = ["--workspace", str(root), "--store", url]
    now = (datetime.now(UTC).replace(hour=7, minute=0, second=0, microsecond=0)).isoformat()
    started = time.perf_counter()
    queued = subprocess.run(
        assay("run", "--due", "--queue", "--now", now, "--json", *store),
        capture_output=True,
        text=True,
        env=assay_env(),
        check=False,
    )
    queue_seconds = time.perf_counter() - started
    if queued.returncode != 0:
        raise SystemExit(f"assay run --due --queue failed: {queued.stderr}")
    started = time.perf_counter()
    running = [
        subprocess.Popen(
            assay("worker", "--burst", *store),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=assay_env(),
        )
        for _ in range(workers)
    ]
    for child in running:
        _, err = child.communicate()
        if child.returncode != 0:
            raise SystemExit(f"assay worker failed: {err}")
    seconds = time.perf_counter() - started
    with MetricStore.open(url, workspace=root) as opened:
        ticks = opened.ticks()
        runs = opened.runs(kind="check", limit=documents * 3)
    per_dataset = Counter(r.dataset for r in runs)
    return {
        "documents": documents,
        "workers": workers,
        "queue_seconds": round(queue_seconds, 1),
        "seconds": round(seconds, 1),
        "runs_per_minute": round(len(runs) / seconds * 60, 1),
        "completed": sum(1 for t in ticks if t.state == "completed"),
        "ran_twice": sum(1 for n in per_dataset.values() if n > 1),
        "lost": documents - len(per_dataset),
    }


def store_size(url: str, datasets: int, days: int) -> dict[str, Any]:
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            total = connection.execute(
                sa.select(sa.func.sum(sa.func.pg_total_relation_size(sa.column("relid")))).select_from(
                    sa.table("pg_stat_user_tables", sa.column("relid"))
                )
            ).scalar_one()
    finally:
        engine.dispose()
    return {"bytes": int(total), "bytes_per_dataset_day": round(int(total) / (datasets * days))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--fill-jobs", type=int, default=2, help="processes filling the store at once")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--big-rows", type=int, default=0)
    parser.add_argument(
        "--store", help="a PostgreSQL server's URL (a database of it per part); else one is started"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    server = None
    if args.store is None:
        from pgserver import PostgresServer

        server = PostgresServer.start()
    try:
        out = run(args, server)
    finally:
        if server is not None:
            server.stop()
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    web_ok = all(not v["failed"] for v in out["web"].values())
    return 0 if web_ok and not out["morning"]["ran_twice"] and not out["morning"]["lost"] else 1


def _database(args: argparse.Namespace, server: Any, name: str) -> str:
    if server is not None:
        return str(server.create_database(name))
    return str(args.store)


def run(args: argparse.Namespace, server: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="assay-scale-") as folder:
        root = Path(folder)
        # First: its ratio to the hand-written statement is the figure most sensitive to whatever else
        # the machine does, and its file and spill (about 25 GB at 100 M rows) are gone before the fill.
        if args.big_rows > 0:
            from _bigload import measure  # the "bigload" part's own module, imported only when asked

            out["bigload"] = measure(args.big_rows, root / "bigload")
            print(f"bigload: {json.dumps(out['bigload'])}")
        url = _database(args, server, "catalog")
        out["fill"] = fill(url, root / "catalog", datasets=args.datasets, days=args.days, jobs=args.fill_jobs)
        f = out["fill"]
        dataset_days = f["datasets"] * f["days"]
        print(
            f"fill: {f['datasets']:,} datasets x {f['days']} days through the store's write paths in "
            f"{f['fill_seconds']:.0f} s ({dataset_days / max(f['fill_seconds'], 1e-9):,.0f} dataset-days/s); "
            f"catalog entries refreshed in {f['refresh_seconds']:.1f} s"
        )
        out["size"] = store_size(url, f["datasets"], f["days"])
        print(
            f"store size: {out['size']['bytes'] / 2**20:,.1f} MB = "
            f"{out['size']['bytes_per_dataset_day']:,} bytes per dataset-day"
        )
        out["web"] = measure_web(root / "catalog", url, args.datasets, args.rounds)
        for what, v in out["web"].items():
            verdict = "ok" if v["p95_ms"] <= TARGET_MS else "OVER"
            print(
                f"{what} at {args.datasets:,} datasets: p50 {v['p50_ms']:.1f} ms, p95 {v['p95_ms']:.1f} ms "
                f"(target p95 <= {TARGET_MS:.0f} ms: {verdict})"
                + (f"; FAILED {v['failed']}" if v["failed"] else "")
            )
        queue_url = url if server is None else _database(args, server, "morning")
        out["morning"] = m = morning(root / "morning", queue_url, args.documents, args.workers)
        print(
            f"morning: {m['documents']:,} due documents queued in {m['queue_seconds']:.1f} s, run by "
            f"{m['workers']} workers in {m['seconds']:.1f} s = {m['runs_per_minute']:,.0f} runs/min; "
            f"completed {m['completed']:,}, ran twice {m['ran_twice']}, lost {m['lost']}"
        )
    return out


if __name__ == "__main__":
    sys.exit(main())
