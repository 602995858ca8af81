"""``assay run --due`` and ``assay scheduler``: the profiles' schedules, one pass or continuously.

Imported by :mod:`assay.cli`, which registers the commands; parsing and rendering only, the work is
in :mod:`assay.platform.schedule`.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from assay._cli_common import EngineOption, SparkMasterOption, StoreOption, WorkspaceOption, err, out
from assay.errors import ConfigError
from assay.workspace import Workspace, store_url

if TYPE_CHECKING:
    from assay.platform.schedule import Due, Pass

_STYLE = {"completed": "green", "config_error": "yellow", "system_error": "magenta", "queued": "cyan"}
QueueOption = Annotated[
    bool,
    typer.Option(
        "--queue",
        help="Put each due tick on the PostgreSQL store's queue for assay worker processes instead "
        "of running it in this process.",
        envvar="ASSAY_QUEUE",
    ),
]


def _print_pass(done: Pass) -> None:
    for found in done.recovered:
        what = f"{found['action']} {found['kind']} run {found['run_id']} of {found['dataset']}"
        out.print(f"{what}: {found['detail']}", highlight=False, markup=False)
    print_ticks(done)
    if not done.started:
        out.print(f"nothing due at {done.now.isoformat()}", highlight=False)
    if done.delivery is not None and (done.delivery.deliveries or done.delivery.digests):
        from assay._cli_notify import print_delivery

        print_delivery(done.delivery)
    if done.next_tick is not None:
        out.print(f"next tick: {done.next_tick.isoformat()}", highlight=False)


def print_ticks(done: Pass) -> None:
    """The ticks a pass (or ``assay recover``) started or finished, one line each, and the
    documents it skipped."""
    for problem in done.problems:
        err.print(f"[yellow]skipped[/yellow] {escape(problem)}", highlight=False)
    for started in done.started:
        item = started.due
        tick = f"{item.tick:%Y-%m-%d %H:%M} UTC"
        where = f"{escape(item.scheduled.name)} {escape(item.profile)} at {item.at} (tick {tick})"
        if not started.claimed:
            out.print(f"{where}: taken by another scheduler", highlight=False)
            continue
        style = _STYLE.get(started.state or "", "")
        state = f"[{style}]{started.state}[/{style}]" if style else str(started.state)
        s = started.summary
        counts = (
            f"; {s.get('passed', 0)} passed, {s.get('failed', 0)} failed, "
            f"{s.get('config_error', 0)} config error, {s.get('system_error', 0)} system error, "
            f"{s.get('skipped', 0)} skipped"
            if s
            else ""
        )
        out.print(
            f"{where}: {state}{counts}" + (f" (run {started.run_id})" if started.run_id else ""),
            highlight=False,
        )
        if started.orphan_of:
            out.print(f"  its process ({escape(started.orphan_of)}) was gone: taken over", highlight=False)
        if started.message:
            out.print(f"  {escape(started.message)}", highlight=False)


def run_due(
    due: Annotated[
        bool,
        typer.Option(
            "--due",
            help="Start every scheduled profile whose latest tick has not run yet (required: "
            "the only kind of pass there is so far).",
        ),
    ] = False,
    now: Annotated[
        str | None,
        typer.Option(
            help="The pass's time (ISO 8601; naive means UTC): which ticks are due, and the runs' clock.",
            show_default="the current time",
        ),
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the pass as one JSON object.")] = False,
    engine: EngineOption = "duckdb",
    spark_master: SparkMasterOption = None,
    queue: QueueOption = False,
) -> None:
    """One scheduler pass, then exit (for cron, Airflow or a Kubernetes CronJob): run the checks of
    every profile in <workspace>/checks/*.yaml whose schedule has a tick due, each with its tick's
    date as --at. Exit 0 when every run completed; 1 when one did not, or a document was skipped
    (it does not validate: the others still run); 2 on a mistake in the command."""
    from assay.judge.evaluation import parse_now
    from assay.platform.schedule import run_pass
    from assay.store import MetricStore

    if not due:
        raise ConfigError("assay run needs --due: it starts the scheduled profiles whose tick is due")
    space = Workspace(workspace)
    space.ensure()
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        done = run_pass(
            space, metric_store, parse_now(now), engine=engine, spark_master=spark_master, queue=queue
        )
    if json_out:
        sys.stdout.write(json.dumps(done.to_dict(), indent=2) + "\n")
    else:
        _print_pass(done)
    if done.problems or any(s.claimed and s.state not in ("completed", "queued") for s in done.started):
        raise typer.Exit(1)


def scheduler(
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print each pass as one JSON object per line.")
    ] = False,
    engine: EngineOption = "duckdb",
    spark_master: SparkMasterOption = None,
    passes: Annotated[
        int | None,
        typer.Option(min=1, help="Stop after this many passes.", show_default="run until SIGTERM"),
    ] = None,
    queue: QueueOption = False,
) -> None:
    """Run in the foreground: a pass now, then one at each profile's next tick (documents are read
    again at least every minute). SIGTERM or Ctrl-C stops it cleanly: a run in progress finishes
    first, then it exits 0."""
    from assay.platform.schedule import serve
    from assay.store import MetricStore

    stop = threading.Event()

    def _stop(signum: int, _frame: Any) -> None:
        err.print(f"{signal.Signals(signum).name}: stopping after the current run", highlight=False)
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    space = Workspace(workspace)
    space.ensure()

    def _on_pass(done: Pass) -> None:
        if json_out:
            sys.stdout.write(json.dumps(done.to_dict()) + "\n")
            sys.stdout.flush()
        elif done.started or done.problems:
            _print_pass(done)

    def _on_start(item: Due) -> None:
        err.print(
            f"starting {escape(item.scheduled.name)} {escape(item.profile)} at {item.at}", highlight=False
        )

    err.print(f"scheduler: workspace {space.root}; SIGTERM stops it", highlight=False)
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        passes = serve(
            space,
            metric_store,
            stop,
            on_pass=_on_pass,
            on_start=_on_start,
            engine=engine,
            spark_master=spark_master,
            most=passes,
            queue=queue,
        )
    err.print(f"scheduler: stopped after {passes} pass(es)", highlight=False)


def worker(
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    burst: Annotated[
        bool, typer.Option("--burst", help="Exit once the queue is empty.", show_default="run until SIGTERM")
    ] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the jobs it ran as one JSON object when it stops.")
    ] = False,
) -> None:
    """Take scheduled runs from the PostgreSQL store's queue (put there by assay run --due --queue
    or assay scheduler --queue) and run them, one at a time; any number of workers, on any
    machines that see the workspace and the store. Each tick runs once. SIGTERM stops it after
    the current run."""
    from assay.platform.queue import conninfo, work

    space = Workspace(workspace)
    url = store_url(store) or f"sqlite:///{space.store_path}"
    conninfo(url)  # a clear mistake, not a connection error, when the store is not PostgreSQL
    err.print(f"worker: workspace {space.root}; SIGTERM stops it", highlight=False)
    done = work(url, burst=burst)
    if json_out:
        sys.stdout.write(json.dumps({"jobs": [job.to_dict() for job in done]}, indent=2) + "\n")
    for job in [] if json_out else done:
        what = f"{escape(job.job.document)} {escape(job.job.profile)} at {job.job.at}"
        if not job.ran:
            out.print(f"{what}: taken already, not run again", highlight=False)
            continue
        style = _STYLE.get(job.state or "", "")
        out.print(f"{what}: [{style}]{job.state}[/{style}] (run {job.run_id})", highlight=False)
        if job.message:
            out.print(f"  {escape(job.message)}", highlight=False)
    err.print(f"worker: stopped after {len(done)} job(s)", highlight=False)
