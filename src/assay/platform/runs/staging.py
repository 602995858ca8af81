"""What a run leaves on disk, and how it is finished or undone: its staging folder and manifest,
the publishing of a committed run, the abandoning of one that did not commit, and the process that
owns a run. Both the run (:mod:`.run`) and recovery (:mod:`.recover`) work on these; neither
imports the other's lifecycle (recovery reads what a run left, never the run itself)."""

from __future__ import annotations

import json
import os
import shutil
import socket
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError, PlatformError
from assay.lake import storage
from assay.platform.runs.faults import checkpoint
from assay.vocabulary import RunState

if TYPE_CHECKING:
    from assay.store import MetricStore
    from assay.workspace import Workspace

STAGING = "staging"
MANIFEST = "manifest.json"


@dataclass
class Manifest:
    """What a run will publish when it commits, kept durable in its staging folder so that a
    later process can finish a run that was killed after its commit point.

    ``moves`` are (staged, target) paths relative to the workspace; ``settle`` is the flow's own
    account of its store writes (the gate's months, decisions and value sets); ``summary`` is
    the payload of ``runs/<run_id>.json``."""

    run_id: str
    kind: str
    dataset: str | None
    moves: list[tuple[str, str]] = field(default_factory=list)
    settle: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "kind": self.kind,
            "dataset": self.dataset,
            "moves": [list(move) for move in self.moves],
            "settle": self.settle,
            "summary": self.summary,
        }

    @classmethod
    def read(cls, path: Path) -> Manifest:
        document = json.loads(path.read_text())
        return cls(
            document["run_id"],
            document["kind"],
            document.get("dataset"),
            [(str(a), str(b)) for a, b in document.get("moves", [])],
            dict(document.get("settle") or {}),
            dict(document.get("summary") or {}),
        )


def write_error_record(
    workspace: Workspace, run_id: str, kind: str, state: RunState, error: str | None
) -> None:
    """``runs/<run_id>.json`` of a run that did not complete, when the disk allows: the error
    record in the store is the one that counts."""
    with suppress(OSError, PlatformError):  # an unreachable bucket too: the store's record counts
        workspace.write_run(run_id, {"run_id": run_id, "kind": kind, "state": state.value, "error": error})


def abandon(store: MetricStore, run_id: str) -> None:
    """A run that did not commit: its pending loads are rejected, and the decisions it asked
    for withdraw its rows (a decision left without rows is closed)."""
    loads = {load: "rejected" for load, status in store.run_loads(run_id).items() if status == "pending"}
    if loads:
        store.settle_loads(loads)
    for dataset in store.decision_datasets(f"gate:{run_id}"):
        store.settle_decisions(dataset, f"gate:{run_id}", keep=[])


def publish(workspace: Workspace, manifest: Manifest) -> None:
    """Move a committed run's staged files into place, write ``runs/<id>.json``, remove the
    staging folder. Every step can be repeated: a process killed half-way is finished by the next."""
    root = workspace.root
    for number, (staged, target) in enumerate(manifest.moves):
        source, destination = root / staged, root / target
        if source.exists():
            published = workspace.published(destination)
            try:
                if storage.is_url(published):
                    # one object per staged file, its key the run's: a run finished again after a
                    # kill overwrites it; the staged file goes only once the object is whole
                    storage.put(published, source, workspace.storage)
                    source.unlink()
                else:
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    source.replace(destination)
            except OSError as error:
                raise PlatformError(
                    f"run {manifest.run_id} is committed, but publishing {destination} failed: "
                    f"{error.strerror or error}; the next run or `assay recover` finishes it"
                ) from None
            except PlatformError as error:
                raise PlatformError(
                    f"run {manifest.run_id} is committed, but publishing failed: {error.message}; "
                    f"{_left_to_recovery(workspace, manifest)}"
                ) from None
        if number == 0:
            checkpoint("after-publish")
    if manifest.summary:
        try:
            workspace.write_run(manifest.run_id, manifest.summary)
        except OSError as error:
            raise PlatformError(
                f"run {manifest.run_id} is committed, but writing its summary in {workspace.runs} failed: "
                f"{error.strerror or error}; {_left_to_recovery(workspace, manifest)}"
            ) from None
        except PlatformError as error:
            raise PlatformError(
                f"run {manifest.run_id} is committed, but writing its summary failed: {error.message}; "
                f"{_left_to_recovery(workspace, manifest)}"
            ) from None
    checkpoint("after-summary")
    shutil.rmtree(root / STAGING / manifest.run_id, ignore_errors=True)


def _left_to_recovery(workspace: Workspace, manifest: Manifest) -> str:
    """Keep the manifest of a committed run whose publishing failed in its staging folder, where
    recovery finds it (a run with no staged files had none on disk); say who finishes the run."""
    path = workspace.root / STAGING / manifest.run_id / MANIFEST
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_durably(path, json.dumps(manifest.to_dict(), indent=1, default=str))
    except OSError as error:
        return (
            f"keeping its manifest in {path.parent} failed too ({error.strerror or error}): "
            "its record in the store is complete, and nothing will write its runs/ file"
        )
    return "the next run or `assay recover` finishes it"


# --- owners --------------------------------------------------------------------------------------


def owner() -> str:
    """This process as ``host:pid:start`` (start: its start time in clock ticks, where Linux
    tells it), so that a pid reused by another process is not taken for the run's owner."""
    return f"{socket.gethostname()}:{os.getpid()}:{_start_ticks(os.getpid()) or ''}"


def owner_alive(text: str | None) -> bool | None:
    """Whether the process that owns a run is still running: True, False, or None when it runs
    on another host (nothing here can tell)."""
    if not text:
        return False
    host, _, rest = text.partition(":")
    pid_text, _, start = rest.partition(":")
    if host != socket.gethostname():
        return None
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, under another user
    found = _process(pid)
    if found is None:
        return True  # no /proc here: the pid exists, which is all that can be told
    state, ticks = found
    if state in ("Z", "X"):
        return False  # a zombie has ended: it owns nothing
    return not start or str(ticks) == start


def _start_ticks(pid: int) -> int | None:
    found = _process(pid)
    return None if found is None else found[1]


def _process(pid: int) -> tuple[str, int] | None:
    """A process's state letter and start time (clock ticks since boot), from /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    try:
        return fields[0], int(fields[19])
    except (IndexError, ValueError):
        return None


# --- files -----------------------------------------------------------------------------------------


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        raise ConfigError(f"{path} is outside the workspace {root}") from None


def _write_durably(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    with partial.open("w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    partial.replace(path)
