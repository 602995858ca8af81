"""Finish what killed runs left: roll forward a run past its commit point, abandon one before it.

Every run starts by recovering the runs of its own dataset (so the next gate on a table repairs
what the last one left); ``assay recover`` does it for the whole workspace. A run is only
touched when the process that owns it is gone (same host, pid no longer running, or a pid reused
by another process); a run owned by a live process or by another host is left alone.

- ``running``, commit point passed (a gate whose Iceberg snapshot carries its id): the store
  part is settled from the run's manifest, the staged files are published, the run completes.
- ``running``, commit point not passed: its pending loads are rejected, the decisions it asked
  for lose its rows, its staged files are deleted, and it becomes a ``system_error`` saying so.
- ``completed`` with a staging folder left (killed while publishing, or its summary could not
  be written): publishing is finished, ``runs/<id>.json`` included.

A run abandoned here is told as a run that failed as a whole is: its ``system_error``
notification goes to the outbox (routed by assay.yaml and the dataset's check document) in the
transaction that records it, so the record and the notice land together or not at all.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from assay.errors import AssayError, ConfigError
from assay.platform.runs.faults import checkpoint
from assay.platform.runs.limits import spill_folder
from assay.platform.runs.staging import (
    MANIFEST,
    STAGING,
    Manifest,
    abandon,
    owner_alive,
    publish,
    write_error_record,
)
from assay.store.records import RunRecord
from assay.vocabulary import RunState

if TYPE_CHECKING:
    from assay.store import MetricStore
    from assay.workspace import Workspace


ABANDONED = "abandoned"
"""The ``recovered`` mark in the summary of a run that recovery abandoned: its process died
before its commit, so nothing was checked (a scheduled tick naming it runs again)."""


def abandoned(run: RunRecord) -> bool:
    """Whether recovery abandoned ``run`` (rather than the run recording its own end)."""
    return (run.summary or {}).get("recovered") == ABANDONED


@dataclass(frozen=True)
class Recovered:
    """What recovery did to one run: ``finished`` (rolled forward) or ``abandoned``."""

    run_id: str
    kind: str
    dataset: str | None
    action: str
    detail: str

    def to_dict(self) -> dict[str, str | None]:
        return {
            "run_id": self.run_id,
            "kind": self.kind,
            "dataset": self.dataset,
            "action": self.action,
            "detail": self.detail,
        }


def recover(
    store: MetricStore,
    workspace: Workspace,
    *,
    dataset: str | None = None,
    exclude: str | None = None,
    now: datetime | None = None,
) -> list[Recovered]:
    """Recover the dead runs of ``dataset`` (every dataset when None) in this workspace; the
    notices of those abandoned are written at ``now`` (a pass's clock; the wall clock when None)."""
    now = now or datetime.now(UTC)
    done: list[Recovered] = []
    seen: set[str] = set()
    staging = workspace.root / STAGING
    folders = sorted(staging.iterdir()) if staging.is_dir() else []
    for folder in folders:
        run = store.run(folder.name) if _is_uuid(folder.name) else None
        if folder.name == exclude or (run is not None and dataset is not None and run.dataset != dataset):
            continue
        seen.add(folder.name)
        if run is None:
            if dataset is None:  # a folder no run of this store made (a kill before its first record)
                shutil.rmtree(folder, ignore_errors=True)
            continue
        found = _recover(store, workspace, run, now)
        if found is not None:
            done.append(found)
    for run in store.runs(dataset, limit=1000, state=RunState.RUNNING.value):
        if run.id in seen or run.id == exclude:
            continue
        found = _recover(store, workspace, run, now)
        if found is not None:
            done.append(found)
    return done


def _recover(store: MetricStore, workspace: Workspace, run: RunRecord, now: datetime) -> Recovered | None:
    manifest_path = workspace.root / STAGING / run.id / MANIFEST
    manifest = Manifest.read(manifest_path) if manifest_path.is_file() else None
    if run.state == RunState.COMPLETED.value:
        if manifest is not None:
            if not manifest.summary:
                manifest.summary = dict(run.summary or {})
            publish(workspace, manifest)
            return Recovered(run.id, run.kind, run.dataset, "finished", "published what it had staged")
        shutil.rmtree(workspace.root / STAGING / run.id, ignore_errors=True)
        return None
    if run.state != RunState.RUNNING.value:
        shutil.rmtree(workspace.root / STAGING / run.id, ignore_errors=True)
        return None
    if owner_alive(run.owner) is not False:
        return None  # still running, or on a host this process cannot see
    # its process is gone: what its engine spilled is of no use to anyone (closing would have removed it)
    shutil.rmtree(spill_folder(workspace.root, run.id), ignore_errors=True)
    snapshot = _snapshot(workspace, run) if manifest is not None and run.kind == "gate" else None
    with store.transaction(lock=run.dataset):
        again = store.run(run.id)
        if again is None or again.state != RunState.RUNNING.value:
            return None  # another process recovered it meanwhile
        if manifest is not None and snapshot is not None:
            from assay.gate import publish as gate_publish

            manifest.settle["snapshot_id"] = snapshot
            summary = dict(manifest.summary)
            summary["snapshot_id"] = snapshot
            summary["finished_at"] = datetime.now(UTC).isoformat()
            summary.update(gate_publish.settle(store, workspace, manifest))
            alerted = _alert(store, workspace, again, summary, now)
            if alerted is not None:  # what the killed run would have told, in the same transaction
                summary["incidents"] = alerted
            manifest.summary = summary
            store.record_run(_with(again, RunState.COMPLETED, summary, None))
            action, detail = "finished", f"its snapshot {snapshot} was committed; the rest is now published"
        else:
            abandon(store, run.id)
            why = (
                f"the process that ran it ({run.owner or 'unknown'}) stopped before the run's commit; "
                "nothing it wrote was kept"
            )
            summary = {"error": why, "recovered": ABANDONED}
            store.record_run(_with(again, RunState.SYSTEM_ERROR, summary, why))
            _notify(store, workspace, again, why, now)
            checkpoint("in-recovery")  # recorded and told, not committed: both land or neither
            action, detail = ABANDONED, why
    if action == "finished" and manifest is not None:
        publish(workspace, manifest)
    else:
        shutil.rmtree(workspace.root / STAGING / run.id, ignore_errors=True)
        write_error_record(workspace, run.id, run.kind, RunState.SYSTEM_ERROR, detail)
    return Recovered(run.id, run.kind, run.dataset, action, detail)


def _alert(
    store: MetricStore, workspace: Workspace, run: RunRecord, summary: dict[str, Any], now: datetime
) -> dict[str, int] | None:
    """The incidents of a gate run finished by recovery, judged as its own commit would have;
    None when assay.yaml cannot be read (the run's record is then the account)."""
    from assay.platform.alerts import Alerting, Routing

    if run.dataset is None:
        return None
    try:
        routing = Routing.of(workspace.root, run.dataset)
    except ConfigError:
        return None
    return Alerting(routing, "gate", now=now)(store, summary, run_id=run.id)


def _notify(store: MetricStore, workspace: Workspace, run: RunRecord, why: str, now: datetime) -> None:
    """The abandoned run's ``system_error`` notice, as a run that failed as a whole sends it."""
    if run.dataset is None:
        return  # an ad-hoc run: no dataset, no route
    from assay.platform.notify import notify_run_error

    source = run.inputs[0].get("path") if run.inputs else None  # what the run read: the dedupe key
    notify_run_error(
        store,
        workspace.root,
        kind=RunState.SYSTEM_ERROR.value,
        dataset=run.dataset,
        message=why,
        run_id=run.id,
        now=now,
        source=str(source) if source else None,
        flow=run.kind,
    )


def _snapshot(workspace: Workspace, run: RunRecord) -> int | None:
    """The snapshot of the run's table that carries the run's id, if it committed one."""
    if run.dataset is None:
        return None
    try:
        with workspace.warehouse() as warehouse:
            if not warehouse.exists(run.dataset):
                return None
            found = warehouse.find_snapshot(run.dataset, **{"assay.run-id": run.id})
    except AssayError:
        return None
    return None if found is None else found.snapshot_id


def _with(run: RunRecord, state: RunState, summary: dict[str, object], error: str | None) -> RunRecord:
    return replace(run, state=state.value, finished_at=datetime.now(UTC), summary=summary, error=error)


def _is_uuid(text: str) -> bool:
    import uuid

    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True
