"""The durable queue of scheduled runs, for a store on PostgreSQL: schedulers enqueue, workers run.

With ``--queue``, a pass of ``assay run --due`` or ``assay scheduler`` claims each due tick in
the store, as it always does (of two schedulers exactly one claims a tick), and instead of
running it puts a job on the queue; ``assay worker`` processes (any number, on any machines)
take the jobs and run them. The queue is `procrastinate <https://procrastinate.readthedocs.io>`_,
a task queue kept in PostgreSQL itself (its own tables, in the store's database): no broker to
run, jobs as durable as the store, and a job is handed to one worker at a time
(``SELECT … FOR UPDATE SKIP LOCKED``).

Exactly once: a job's tick is taken by the worker that runs it with a conditional update of its
row (``claimed`` → ``running``, naming the worker process), so even a job deferred twice runs
once; the second job finds the tick taken and does nothing. A worker killed while running a job
leaves its tick ``running``, held by the dead worker (and a pass killed between its claim and
its enqueue leaves it ``claimed``, held by the dead pass): the next ``--queue`` pass on that host
finds the process gone (:func:`requeue_orphans`), puts the tick back to ``claimed`` with no owner
and on the queue again, and the run that follows resumes from what the killed one measured (the
run lifecycle).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, PlatformError

QUEUE = "assay-runs"
TASK = "assay.run_tick"


def conninfo(url: str) -> str:
    """A libpq connection string from the store's SQLAlchemy URL.

    >>> conninfo("postgresql+psycopg://assay@127.0.0.1:5432/dq")
    'postgresql://assay@127.0.0.1:5432/dq'
    """
    import sqlalchemy as sa

    parsed = sa.make_url(url)
    if parsed.get_backend_name() != "postgresql":
        raise ConfigError(
            f"the queue of scheduled runs lives in a PostgreSQL store; --store {parsed.render_as_string()} "
            "is not one (without --queue, a pass runs its ticks itself)"
        )
    return parsed.set(drivername="postgresql").render_as_string(hide_password=False)


@dataclass(frozen=True)
class Job:
    """What a job carries: enough to run one tick anywhere the workspace is."""

    workspace: str
    document: str  # relative to the workspace
    profile: str
    tick: str  # ISO 8601, UTC
    at: str  # the logical date

    def lock(self) -> str:
        return f"{self.document}|{self.profile}|{self.tick}"


def app(url: str) -> Any:
    """A procrastinate App on the store's database, with assay's one task registered."""
    try:
        import procrastinate
    except ImportError:
        raise ConfigError("the queue needs procrastinate: pip install 'assay[queue]'") from None

    found = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo(url)))
    found.task(name=TASK, queue=QUEUE)(_run_tick_task(url))
    return found


def ensure_schema(url: str) -> None:
    """Create procrastinate's tables in the store's database when they are not there yet."""
    import psycopg

    with psycopg.connect(conninfo(url), autocommit=True) as connection:
        # One process creates them: the others wait for the lock, then find the tables (each
        # statement in autocommit is its own transaction, so the check after the lock sees them).
        connection.execute("SELECT pg_advisory_lock(hashtext('assay-queue-schema'))")
        try:
            found = connection.execute("SELECT to_regclass('procrastinate_jobs') IS NOT NULL").fetchone()
            if not (found and found[0]):
                from procrastinate.schema import SchemaManager

                with connection.transaction():
                    connection.execute(SchemaManager.get_schema())
        finally:
            connection.execute("SELECT pg_advisory_unlock(hashtext('assay-queue-schema'))")


def enqueue(queue_app: Any, job: Job) -> bool:
    """Put ``job`` on the queue; False when the same tick is already waiting there."""
    from procrastinate.exceptions import AlreadyEnqueued

    task = queue_app.tasks[TASK]
    try:
        task.configure(queueing_lock=job.lock()).defer(**job.__dict__)
    except AlreadyEnqueued:
        return False
    return True


def _run_tick_task(url: str) -> Any:
    def run_tick(workspace: str, document: str, profile: str, tick: str, at: str) -> None:
        run_job(url, Job(workspace, document, profile, tick, at))

    return run_tick


@dataclass
class JobResult:
    """How a worker's job went."""

    job: Job
    ran: bool  # False: the tick was taken already (a repeated job)
    state: str | None = None
    run_id: str | None = None
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.job.__dict__,
            "ran": self.ran,
            "state": self.state,
            "run_id": self.run_id,
            "message": self.message,
        }


LAST: list[JobResult] = []
"""The jobs this process ran, in order (``assay worker`` prints them)."""


def run_job(url: str, job: Job) -> JobResult:
    """Take the job's tick and run it as a pass would; a tick already taken is left alone."""
    from assay.errors import AssayError
    from assay.platform.checks.document import load_document
    from assay.platform.runs.check import run_document
    from assay.store import MetricStore
    from assay.workspace import Workspace

    workspace = Workspace(Path(job.workspace))
    tick = datetime.fromisoformat(job.tick)
    result = JobResult(job, ran=False)
    with MetricStore.open(url, workspace=workspace.root) as store:
        from assay.platform.runs.run import owner

        run_id = str(uuid.uuid4())
        if not store.take_tick(job.document, job.profile, tick, worker=owner(), run_id=run_id):
            LAST.append(result)
            return result
        result.ran = True
        try:
            document = load_document(workspace.root / job.document)
            profile = next((p for p in document.profiles if p.id == job.profile), None)
            if profile is None:
                raise ConfigError(f"{job.document} has no profile '{job.profile}' any more")
            chosen = tuple(
                e.id for e in document.expectations if document.expectation_profile(e).id == profile.id
            )
            done = run_document(
                document,
                workspace.root / job.document,
                at=date.fromisoformat(job.at),
                now=tick,
                store=store,
                workspace=workspace,
                only=chosen,
                run_id=run_id,
                scheduled=True,
            )
        except AssayError as error:
            result.state = "config_error" if error.exit_code == 2 else "system_error"
            result.message = str(error)
            result.run_id = run_id if store.run(run_id) is not None else None  # failed before its start
        else:
            result.state, result.run_id, result.message = done.state, done.run_id, done.error
        store.finish_tick(
            job.document, job.profile, tick, state=result.state or "system_error", run_id=result.run_id,
            message=result.message,
        )  # fmt: skip
    LAST.append(result)
    return result


def work(url: str, *, burst: bool, concurrency: int = 1) -> list[JobResult]:
    """Run jobs until stopped (SIGTERM, Ctrl-C), or with ``burst`` until the queue is empty."""
    ensure_schema(url)
    queue_app = app(url)
    LAST.clear()
    try:
        queue_app.run_worker(
            queues=[QUEUE],
            wait=not burst,
            concurrency=concurrency,
            fetch_job_polling_interval=1.0,
            delete_jobs="successful",
        )
    except OSError as error:
        raise PlatformError(f"the queue's database cannot be reached: {error}") from None
    return list(LAST)


def requeue_orphans(store: Any, queue_app: Any, workspace_root: Path, orphans: Iterable[Any]) -> list[Job]:
    """Ticks held by a process that is gone (a worker killed while running one, a pass killed
    between its claim and its enqueue) go back on the queue, once each. ``orphans`` are those
    ticks, found by the scheduler's rule for a dead run's owner
    (:func:`assay.platform.schedule.orphans`), which a process on another host never meets;
    handed in, so that the queue, which the scheduler calls, does not call the scheduler back."""
    requeued = []
    for tick in orphans:
        if store.release_tick(tick.document, tick.profile, tick.tick, dead=tick.owner):
            job = Job(
                str(workspace_root.resolve()),
                tick.document,
                tick.profile,
                tick.tick.isoformat(),
                str(tick.logical_date),
            )
            enqueue(queue_app, job)
            requeued.append(job)
    return requeued
