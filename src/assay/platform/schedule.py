"""Schedules: each profile's ``schedule`` (cron, in its ``timezone``) decides when its checks run.

A pass (``assay run --due``, or each wake-up of ``assay scheduler``) reads the check documents of
the workspace (``<workspace>/checks/*.yaml`` of ``kind: DatasetChecks``), and for every profile
with a schedule finds its latest tick at or before the pass's time. A tick later than the last
one the store holds for that profile is due: the pass claims it in the store (inserting its row;
of two schedulers that see the same tick exactly one succeeds) and runs the profile's
expectations as ``assay check run`` would, with the tick's date in the schedule's time zone as
the run's logical date (``--at``), or the date ``lag`` days before it: a profile with ``lag: 1``
checks yesterday's slice each morning. Only the latest tick is due, however many were missed: a
scheduler that was down for three days runs each profile once when it comes back, not three
times (docs/operations.md says why).

A killed pass loses no day. A tick's row names, from its claim, the run that will check it and
the pass that holds it; each pass first recovers the workspace's dead runs, then finds the ticks
held by a process that is gone (:func:`orphans`, by the rule that finds a run's dead owner) and
finishes each whose run ended, or takes it over and runs it again (``assay recover`` does the
same: :func:`resume_orphans`).

>>> from datetime import UTC, datetime
>>> latest_tick("30 6 * * *", "Europe/Paris", datetime(2026, 12, 1, 5, 0, tzinfo=UTC)).isoformat()
'2026-11-30T05:30:00+00:00'
>>> latest_tick("30 6 * * *", "Europe/Paris", datetime(2026, 12, 1, 5, 30, tzinfo=UTC)).isoformat()
'2026-12-01T05:30:00+00:00'
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from assay.errors import AssayError, ConfigError
from assay.lang import yamlsafe
from assay.platform.runs.faults import checkpoint
from assay.platform.runs.run import owner, owner_alive
from assay.vocabulary import RunState
from assay.workspace import Workspace

if TYPE_CHECKING:
    from assay.platform.checks.document import Document
    from assay.store import MetricStore
    from assay.store.schedules import TickRecord

KIND = "DatasetChecks"
IDLE_WAIT_S = 60.0
"""The longest a scheduler sleeps between passes: documents added or edited while it sleeps
are read within a minute."""


def latest_tick(schedule: str, timezone: str, now: datetime) -> datetime:
    """The latest tick of cron ``schedule`` in ``timezone`` at or before ``now``, in UTC.

    A local time that a daylight-saving change skips (02:30 on a spring-forward night) is the
    first minute after the gap, and one that it repeats is its first occurrence (croniter's
    reading of wall-clock time)."""
    from croniter import croniter

    local = now.astimezone(ZoneInfo(timezone)) + timedelta(microseconds=1)  # a tick at `now` counts
    tick: datetime = croniter(schedule, local).get_prev(datetime)
    return tick.astimezone(UTC)


def next_tick(schedule: str, timezone: str, now: datetime) -> datetime:
    """The first tick of ``schedule`` strictly after ``now``, in UTC."""
    from croniter import croniter

    tick: datetime = croniter(schedule, now.astimezone(ZoneInfo(timezone))).get_next(datetime)
    return tick.astimezone(UTC)


@dataclass(frozen=True)
class Scheduled:
    """A check document of the workspace with at least one scheduled profile."""

    name: str  # its path relative to the workspace, with '/': how the store keys its ticks
    path: Path
    document: Document


@dataclass(frozen=True)
class Due:
    """A profile's tick that a pass found due."""

    scheduled: Scheduled
    profile: str
    schedule: str
    timezone: str
    tick: datetime  # UTC
    at: date  # the run's logical date: the tick's date in the schedule's time zone, less its lag

    @property
    def dataset(self) -> str:
        return self.scheduled.document.dataset.name

    @property
    def expectations(self) -> list[str]:
        """The ids of the document's expectations that read this profile."""
        document = self.scheduled.document
        return [e.id for e in document.expectations if document.expectation_profile(e).id == self.profile]


@dataclass(frozen=True)
class ScheduledEvent:
    """An event of the workspace's contracts whose window has a ``schedule``."""

    name: str  # how the store keys its ticks: its first contract file (relative) and the event's name
    path: Path  # its first contract file
    spec: Any  # assay.platform.events.event.EventSpec


@dataclass(frozen=True)
class DueEvent:
    """An event's tick that a pass found due: it runs the last complete window before the tick."""

    scheduled: ScheduledEvent
    profile: str  # "window"
    schedule: str
    timezone: str
    tick: datetime  # UTC
    at: date  # the window's date (UTC)
    window: datetime  # the window's start (UTC)

    @property
    def dataset(self) -> str:
        return str(self.scheduled.spec.name)


@dataclass
class Started:
    """What a pass did with one due tick."""

    due: Due | DueEvent
    claimed: bool  # False: another scheduler had taken the tick
    state: str | None = None  # the run's state: completed, config_error, system_error
    run_id: str | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    message: str | None = None
    orphan_of: str | None = None  # the dead process that held the tick before this pass

    def to_dict(self) -> dict[str, Any]:
        return {
            "document": self.due.scheduled.name,
            "dataset": self.due.dataset,
            "profile": self.due.profile,
            "schedule": self.due.schedule,
            "timezone": self.due.timezone,
            "tick": self.due.tick.isoformat(),
            "at": self.due.at.isoformat(),
            "claimed": self.claimed,
            "state": self.state,
            "run_id": self.run_id,
            "summary": self.summary,
            "message": self.message,
            "orphan_of": self.orphan_of,
        }


@dataclass
class Pass:
    """One pass of the scheduler: the documents it read, what was due, what it started."""

    now: datetime
    started: list[Started] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # documents that could not be read
    next_tick: datetime | None = None
    delivery: Any = None  # the pass's delivery of the outbox (assay.platform.outbox.DeliveryPass)
    requeued: list[dict[str, Any]] = field(default_factory=list)  # ticks whose process died, queued again
    recovered: list[dict[str, Any]] = field(default_factory=list)  # dead runs finished or abandoned

    def to_dict(self) -> dict[str, Any]:
        return {
            "now": self.now.isoformat(),
            "runs": [s.to_dict() for s in self.started],
            "problems": self.problems,
            "next_tick": None if self.next_tick is None else self.next_tick.isoformat(),
            "delivery": None if self.delivery is None else self.delivery.to_dict(),
            "requeued": self.requeued,
            "recovered": self.recovered,
        }


def scheduled_documents(workspace: Workspace) -> tuple[list[Scheduled], list[str]]:
    """The workspace's check documents with a scheduled profile, and one line per document that
    claims to be a check document but does not validate (it is skipped; the others run)."""
    from assay.platform.checks.document import DocumentError, load_document

    folder = workspace.root / "checks"
    found: list[Scheduled] = []
    problems: list[str] = []
    from assay.platform.checks.document import is_check_document

    for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]):
        if not is_check_document(path):
            continue  # another kind of file (an event contract, a profile configuration): not read here
        try:
            raw = yamlsafe.load(path.read_text(encoding="utf-8"), filename=str(path))
        except (OSError, UnicodeDecodeError) as error:
            problems.append(f"{path}: cannot be read: {str(error).splitlines()[0]}")
            continue
        except ConfigError as error:  # not YAML, or past a limit: file:line:col says where
            problems.append(str(error))
            continue
        if not isinstance(raw, dict) or raw.get("kind") != KIND:
            continue  # another kind of file (a dataset's profile configuration, a contract)
        try:
            document = load_document(path)
        except DocumentError as error:
            problems.extend(str(problem) for problem in error.problems)
            continue
        except AssayError as error:
            problems.append(f"{path}: {error}")
            continue
        if any(p.schedule for p in document.profiles):
            name = path.relative_to(workspace.root).as_posix()
            found.append(Scheduled(name, path, document))
    return found, problems


def due(documents: list[Scheduled], last: dict[tuple[str, str], datetime], now: datetime) -> Iterator[Due]:
    """The ticks due at ``now``: per scheduled profile, its latest tick, when it is later than
    the last one claimed (``last``, from :meth:`MetricStore.last_ticks`)."""
    for scheduled in documents:
        for profile in scheduled.document.profiles:
            if not profile.schedule:
                continue
            tick = latest_tick(profile.schedule, profile.timezone, now)
            claimed = last.get((scheduled.name, profile.id))
            if claimed is None or tick > claimed:
                at = tick.astimezone(ZoneInfo(profile.timezone)).date() - timedelta(days=profile.lag)
                yield Due(scheduled, profile.id, profile.schedule, profile.timezone, tick, at)


def earliest_next(
    documents: list[Scheduled], now: datetime, events: list[ScheduledEvent] | None = None
) -> datetime | None:
    """The first tick of any scheduled profile or event after ``now``."""
    ticks = [
        next_tick(p.schedule, p.timezone, now) for s in documents for p in s.document.profiles if p.schedule
    ]
    ticks.extend(next_tick(e.spec.schedule, e.spec.timezone, now) for e in events or [])
    return min(ticks) if ticks else None


EVENT_PROFILE = "window"
"""The profile name an event's ticks are kept under (the store keys ticks by document and profile)."""


def scheduled_events(workspace: Workspace) -> tuple[list[ScheduledEvent], list[str]]:
    """The events of the workspace's contracts (``checks/*.yaml`` of ``kind: EventContract``)
    whose window has a ``schedule``, and the mistakes that kept them from being read: contracts
    are read together (one event's contracts may be in several files), so a mistake in one
    skips the events until it is fixed; the table documents still run."""
    from assay.platform.events.event import events, workspace_contracts

    try:
        found = events(workspace_contracts(workspace.root))
    except AssayError as error:
        return [], [line for line in str(error).splitlines() if line.strip()]
    out = []
    for spec in found.values():
        if spec.schedule:
            first = spec.contracts[0].file
            path = Path(first)
            try:
                relative = path.resolve().relative_to(workspace.root.resolve()).as_posix()
            except ValueError:
                relative = path.as_posix()
            out.append(ScheduledEvent(f"{relative}#{spec.name}", path, spec))
    return out, []


def due_events(
    scheduled: list[ScheduledEvent], last: dict[tuple[str, str], datetime], now: datetime
) -> Iterator[DueEvent]:
    """The events' ticks due at ``now``: per event, its latest tick, when later than the last
    claimed; each runs the last complete window before its tick."""
    from assay.platform.events.judging import window_start

    for item in scheduled:
        spec = item.spec
        tick = latest_tick(spec.schedule, spec.timezone, now)
        claimed = last.get((item.name, EVENT_PROFILE))
        if claimed is None or tick > claimed:
            window = window_start(None, tick, spec.grain)
            yield DueEvent(item, EVENT_PROFILE, spec.schedule, spec.timezone, tick, window.date(), window)


def run_pass(
    workspace: Workspace,
    store: MetricStore,
    now: datetime,
    *,
    engine: Any = None,
    spark_master: str | None = None,
    on_start: Callable[[Due], None] | None = None,
    queue: bool = False,
) -> Pass:
    """One pass at ``now``: claim every due tick and run its profile's expectations, one after
    another; a run's failure is its tick's state, never the end of the pass. With ``queue`` (a
    PostgreSQL store), each claimed tick is put on the queue for ``assay worker`` instead
    (:mod:`assay.platform.queue`), its state ``queued`` in the pass."""

    if now.tzinfo is None:
        raise ConfigError(f"--now {now.isoformat()} has no time zone: add one (Z or +01:00)")
    queue_app = None
    if queue:
        from assay.platform import queue as queues

        queues.ensure_schema(store.database_url)
        queue_app = queues.app(store.database_url)
        queue_app.open()
    try:
        return _pass(workspace, store, now, engine, spark_master, on_start, queue_app)
    finally:
        if queue_app is not None:
            queue_app.close()


def _pass(
    workspace: Workspace,
    store: MetricStore,
    now: datetime,
    engine: Any,
    spark_master: str | None,
    on_start: Callable[[Due], None] | None,
    queue_app: Any,
) -> Pass:
    from assay.platform.runs.recover import recover

    documents, problems = scheduled_documents(workspace)
    timed_events, event_problems = scheduled_events(workspace)
    done = Pass(now, problems=problems)
    # every dead run of the workspace, whatever its dataset, before anything is due: a run killed
    # on a dataset that no tick runs today is still told to its route today
    done.recovered = [found.to_dict() for found in recover(store, workspace, now=now)]
    if queue_app is not None:
        from assay.platform.queue import requeue_orphans

        requeued = requeue_orphans(store, queue_app, workspace.root, orphans(store))
        done.requeued = [job.__dict__ for job in requeued]
    else:
        for tick in orphans(store):
            _resume(
                workspace, store, now, tick, documents, timed_events, done, engine, spark_master, on_start
            )
    me = owner()
    for item in due(documents, store.last_ticks(), now):
        scheduled = item.scheduled
        run_id = str(uuid.uuid4())
        claimed = store.claim_tick(
            scheduled.name,
            item.profile,
            item.tick,
            item.at,
            scheduled.document.dataset.name,
            owner=me,
            run_id=None if queue_app is not None else run_id,
        )
        started = Started(item, claimed)
        done.started.append(started)
        if not claimed:
            continue
        checkpoint("after-claim")
        if queue_app is not None:
            from assay.platform.queue import Job, enqueue

            job = Job(
                str(workspace.root.resolve()),
                scheduled.name,
                item.profile,
                item.tick.isoformat(),
                item.at.isoformat(),
            )
            enqueue(queue_app, job)
            store.queue_tick(scheduled.name, item.profile, item.tick, owner=me)
            started.state = "queued"
            continue
        _run(workspace, store, now, item, started, run_id, engine, spark_master, on_start)
    done.problems.extend(event_problems)
    for event in due_events(timed_events, store.last_ticks(), now):
        run_id = str(uuid.uuid4())
        claimed = store.claim_tick(
            event.scheduled.name, event.profile, event.tick, event.at, event.dataset, owner=me, run_id=run_id
        )
        started = Started(event, claimed)
        done.started.append(started)
        if claimed:
            checkpoint("after-claim")
            _run(workspace, store, now, event, started, run_id, engine, spark_master, on_start)
    done.next_tick = earliest_next(documents, now, timed_events)
    done.delivery = deliver(workspace, store, now, done.problems)
    return done


def orphans(store: MetricStore) -> list[TickRecord]:
    """The ticks held by a process that is gone, by the rule that finds a run's dead owner
    (:func:`assay.platform.runs.run.owner_alive`): on this host, its pid no longer running (or reused
    by another process). A tick held on another host is never judged from here."""
    return [tick for tick in store.held_ticks() if owner_alive(tick.owner) is False]


def resume_orphans(
    workspace: Workspace, store: MetricStore, now: datetime, *, dataset: str | None = None
) -> Pass:
    """Finish or run again every tick (of ``dataset``, when given) whose process is gone, as the
    next pass would (``assay recover`` calls it, after recovering the dead runs): a tick whose
    run ended is finished with its run's state; one whose run never started, or was abandoned by
    recovery, runs again under a new run id, at ``now``."""
    documents, _ = scheduled_documents(workspace)  # a document that does not validate: see _resume
    timed_events, _ = scheduled_events(workspace)
    done = Pass(now)
    for tick in orphans(store):
        if dataset is None or tick.dataset == dataset:
            _resume(workspace, store, now, tick, documents, timed_events, done, None, None, None)
    return done


def _resume(
    workspace: Workspace,
    store: MetricStore,
    now: datetime,
    tick: TickRecord,
    documents: list[Scheduled],
    timed_events: list[ScheduledEvent],
    done: Pass,
    engine: Any,
    spark_master: str | None,
    on_start: Callable[[Any], None] | None,
) -> None:
    """One orphaned tick: finished when its run ended by itself, else taken over and run again
    (the dead runs were recovered first, so a run of an orphan is never still ``running``)."""
    from assay.platform.runs.recover import abandoned

    dead = tick.owner or ""
    run = store.run(tick.run_id) if tick.run_id else None
    item = _due_of(tick, documents, timed_events)
    if run is not None and run.state != RunState.RUNNING.value and not abandoned(run):
        store.finish_tick(
            tick.document, tick.profile, tick.tick, state=run.state, run_id=run.id, message=run.error
        )
        if item is not None:
            summary = (run.summary or {}).get("summary")
            done.started.append(
                Started(item, True, run.state, run.id, dict(summary or {}), run.error, orphan_of=dead)
            )
        return
    run_id = str(uuid.uuid4())
    if not store.take_over_tick(
        tick.document, tick.profile, tick.tick, dead=dead, owner=owner(), run_id=run_id
    ):
        return  # another pass took it first
    if item is None:
        message = (
            f"{tick.document} has no schedule '{tick.profile}' that can be read now (it is gone, or the "
            "document does not validate: `assay check validate` says why): the tick is not run again"
        )
        store.finish_tick(
            tick.document, tick.profile, tick.tick, state="config_error", run_id=None, message=message
        )
        done.problems.append(message)
        return
    started = Started(item, True, orphan_of=dead)
    done.started.append(started)
    _run(workspace, store, now, item, started, run_id, engine, spark_master, on_start)


def _due_of(
    tick: TickRecord, documents: list[Scheduled], timed_events: list[ScheduledEvent]
) -> Due | DueEvent | None:
    """The due tick a stored tick is, from the workspace's documents as they are now; None when
    its document or schedule is gone."""
    from assay.platform.events.judging import window_start

    for scheduled in documents:
        if scheduled.name != tick.document:
            continue
        for profile in scheduled.document.profiles:
            if profile.id == tick.profile and profile.schedule:
                return Due(
                    scheduled, profile.id, profile.schedule, profile.timezone, tick.tick, tick.logical_date
                )
    for event in timed_events:
        if event.name == tick.document and tick.profile == EVENT_PROFILE:
            spec = event.spec
            window = window_start(None, tick.tick, spec.grain)
            return DueEvent(
                event, EVENT_PROFILE, spec.schedule, spec.timezone, tick.tick, tick.logical_date, window
            )
    return None


def _run(
    workspace: Workspace,
    store: MetricStore,
    now: datetime,
    item: Due | DueEvent,
    started: Started,
    run_id: str,
    engine: Any,
    spark_master: str | None,
    on_start: Callable[[Any], None] | None,
) -> None:
    """Run a claimed tick as the run ``run_id`` (the id its row names) and record how it ended;
    a run's failure is its tick's state, never the end of the pass."""
    if on_start is not None:
        on_start(item)
    try:
        if isinstance(item, DueEvent):
            from assay.platform.runs.event import run_event

            result: Any = run_event(
                item.scheduled.spec, at=item.window, now=now, store=store, workspace=workspace, run_id=run_id
            )
        else:
            from assay.platform.runs.check import run_document

            scheduled = item.scheduled
            result = run_document(
                scheduled.document,
                scheduled.path,
                at=item.at,
                now=now,
                store=store,
                workspace=workspace,
                only=tuple(item.expectations),
                engine=engine,
                spark_master=spark_master,
                run_id=run_id,
                scheduled=True,
            )
    except AssayError as error:
        started.state = "config_error" if error.exit_code == 2 else "system_error"
        started.message = str(error)
        started.run_id = run_id if store.run(run_id) is not None else None  # failed before its start
        if isinstance(item, Due):
            _notify_run_error(workspace, store, item.scheduled.document, started, now)
    else:
        started.state, started.run_id = result.state, result.run_id
        started.summary = dict(result.summary)
        started.message = result.error
    store.finish_tick(
        item.scheduled.name,
        item.profile,
        item.tick,
        state=started.state,
        run_id=started.run_id,
        message=started.message,
    )


def deliver(workspace: Workspace, store: MetricStore, now: datetime, problems: list[str]) -> Any:
    """The pass's delivery of the outbox; a broken assay.yaml is one of the pass's problems."""
    from assay.platform.notify import load_config
    from assay.platform.outbox import deliver_pass

    try:
        config = load_config(workspace.root)
    except ConfigError as error:
        problems.append(str(error))
        return None
    return deliver_pass(store, config, now=now)


def _notify_run_error(
    workspace: Workspace, store: MetricStore, document: Document, started: Started, now: datetime
) -> None:
    """A scheduled run that failed as a whole (nothing judged): its config or system error to
    its route, once as docs/operations.md says."""
    from assay.platform.notify import notify_run_error

    kind = started.state or "system_error"
    tick = f"{started.due.scheduled.name}/{started.due.profile}/{started.due.tick.isoformat()}"
    notify_run_error(
        store,
        workspace.root,
        kind=kind,
        dataset=document.dataset.name,
        message=started.message or kind,
        run_id=started.run_id or str(uuid.uuid5(uuid.NAMESPACE_URL, tick)),
        now=now,
        document=document,
        flow="check",
    )


def serve(
    workspace: Workspace,
    store: MetricStore,
    stop: threading.Event,
    *,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    on_pass: Callable[[Pass], None] | None = None,
    on_start: Callable[[Due], None] | None = None,
    engine: Any = None,
    spark_master: str | None = None,
    most: int | None = None,
    queue: bool = False,
) -> int:
    """Run passes until ``stop`` is set (by SIGTERM in ``assay scheduler``), or ``most`` passes
    were made: one now, then one at each next tick, waking at least every :data:`IDLE_WAIT_S` to
    read the documents again. A run in progress when ``stop`` is set finishes first. Returns the
    number of passes made."""
    passes = 0
    while not stop.is_set() and (most is None or passes < most):
        done = run_pass(
            workspace,
            store,
            clock(),
            engine=engine,
            spark_master=spark_master,
            on_start=on_start,
            queue=queue,
        )
        passes += 1
        if on_pass is not None:
            on_pass(done)
        if most is not None and passes >= most:
            break
        wait = IDLE_WAIT_S
        if done.next_tick is not None:
            wait = min(wait, max(0.0, (done.next_tick - clock()).total_seconds()))
        stop.wait(wait)
    return passes
