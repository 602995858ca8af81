"""What a Spark cluster's executors need, checked before they are given work: Python of the
driver's version, the inputs at the same path on every machine, the warehouse writable there.

On ``local[N]`` the executors are threads of the driver's JVM and see what it sees; on a cluster
(``spark://``, ``yarn``, ``k8s://``) they are other processes, often on other hosts, and a path
the driver reads may be missing there, or the Python that PySpark starts may be another version
or absent. Spark would say so deep inside a failed task (a stack trace, exit 3); these checks run
one small job on the executors first and turn each such gap into a :class:`ConfigError` (exit 2)
naming what to change (docs/operations.md, "Spark cluster").

A Spark Connect session (``sc://``) is left alone: its executors are the server's, reached through
no API a client may run Python on.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError, PlatformError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# How long the check waits for an executor to take its tasks: a cluster whose workers lack the
# cores or the memory an executor asks for (spark.executor.memory) never runs them, and Spark
# only warns, forever. Executors start in 5-15 s on a busy two-core machine (measured).
WAIT_SECONDS = 180.0
GUIDE = 'docs/operations.md, "Spark cluster"'
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def on_cluster(session: SparkSession) -> bool:
    """Whether ``session`` is a classic session whose executors are processes of their own (its
    master is not ``local``)."""
    context = getattr(session, "_sc", None)  # a Spark Connect session has no SparkContext
    return context is not None and not str(context.master).startswith("local")


def local_paths(paths: Iterable[str]) -> list[str]:
    """The paths the executors read from their own filesystem (no ``s3://``, ``hdfs://``: those
    every node reaches alike); a relative one is refused, since it would name the driver's folder.

    >>> local_paths(["/data/a.csv", "s3://bucket/b.csv", "file:///data/c.csv"])
    ['/data/a.csv', '/data/c.csv']
    >>> local_paths(["data/a.csv"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: data/a.csv: a relative path, read by the Spark cluster's executors ...
    """
    found = []
    for path in paths:
        if path.startswith("file://"):
            path = path[len("file://") :]
        elif _SCHEME.match(path):
            continue
        if not os.path.isabs(path):
            raise ConfigError(
                f"{path}: a relative path, read by the Spark cluster's executors in folders of their "
                f"own: give an absolute path that every worker can read ({GUIDE})"
            )
        found.append(path)
    return found


def check(session: SparkSession, read: Iterable[str] = (), write: Iterable[str] = ()) -> None:
    """Run one small job on the executors of ``session``: it starts their Python (PySpark refuses
    one of another version than the driver's) and looks at each path in ``read`` (readable) and
    ``write`` (a folder that can be made: its nearest existing parent writable). A gap is a
    ConfigError saying what to change; a cluster that runs no task in :data:`WAIT_SECONDS` is a
    PlatformError."""
    # a folder to be made is checked at its nearest parent that the driver has: the executors
    # must have that one too (else they would write where the driver never looks)
    readable, writable = local_paths(read), [_existing(p) for p in local_paths(write)]
    context = session.sparkContext
    # one task per executor at least (the driver counts in the status), each a look of its own
    executors = max(1, context._jsc.sc().getExecutorMemoryStatus().size() - 1)
    tasks = max(2, executors)
    group = f"assay-check-{uuid.uuid4().hex[:8]}"
    done: dict[str, Any] = {}

    def look(_: Iterable[int]) -> Iterable[dict[str, Any]]:
        # runs on an executor, pickled by value (assay is not installed there): stdlib only
        import os as os_
        import socket

        yield {
            "host": socket.gethostname(),
            "unreadable": [p for p in readable if not os_.access(p, os_.R_OK)],
            "unwritable": [p for p in writable if not os_.access(p, os_.W_OK | os_.X_OK)],
        }

    def job() -> None:
        try:
            context.setJobGroup(group, "assay: what the executors need", interruptOnCancel=True)
            done["reports"] = context.parallelize(range(tasks), tasks).mapPartitions(look).collect()
        except Exception as error:
            done["error"] = error

    worker = threading.Thread(target=job, name=group, daemon=True)
    worker.start()
    worker.join(WAIT_SECONDS)
    if worker.is_alive():
        context.cancelJobGroup(group)
        worker.join(30)
        raise PlatformError(
            f"no Spark executor of {context.master} took work in {WAIT_SECONDS:.0f} s: are its workers "
            f"registered, with a free core and the spark.executor.memory an executor asks for?"
        )
    if "error" in done:
        raise _python_gap(done["error"], context.pythonExec) from None
    _report(done["reports"], str(context.master))


def _existing(folder: str) -> str:
    """The folder, or its nearest parent that exists here."""
    while not os.path.exists(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return folder


def _report(reports: list[dict[str, Any]], master: str) -> None:
    for key, need in (("unreadable", "readable"), ("unwritable", "writable")):
        for report in reports:
            if report[key]:
                raise ConfigError(
                    f"{report[key][0]}: not {need} by the executors of {master} on {report['host']}: "
                    f"every worker needs it at the same path, {need} by the workers' user ({GUIDE})"
                )


_MISMATCH = re.compile(r"different version:? ?(\d+\.\d+) than that in driver:? ?(\d+\.\d+)")


def _python_gap(error: Exception, python: str) -> Exception:
    """The failure of the check's job as what to change: the executors' Python (another version,
    or missing), else the machine's failure as PySpark gave it."""
    from assay.engine.spark_session import failure

    text = str(error)
    mismatch = _MISMATCH.search(text)
    setting = f"PYSPARK_PYTHON={os.environ['PYSPARK_PYTHON']}" if "PYSPARK_PYTHON" in os.environ else None
    named = setting or f"{python} (PySpark's default; PYSPARK_PYTHON is not set)"
    driver = f"{sys.version_info.major}.{sys.version_info.minor}"
    if mismatch is not None:
        return ConfigError(
            f"the Spark executors run Python {mismatch.group(1)} ({named}) and this driver Python "
            f"{mismatch.group(2)}: set PYSPARK_PYTHON to a Python {driver} at the same path on every worker "
            f"({GUIDE})"
        )
    if "Cannot run program" in text:
        return ConfigError(
            f"the Spark executors cannot start Python {named}: set PYSPARK_PYTHON to a Python {driver} "
            f"at the same path on every worker ({GUIDE})"
        )
    if "Error from python worker" in text:  # it started, and could not run PySpark's worker
        raised = re.findall(
            r"^\s*(\w+(?:Error|Exception): .*)$", text.split("Error from python worker", 1)[1], re.M
        )
        why = f" ({raised[0].strip()})" if raised else ""
        return ConfigError(
            f"the Spark executors' Python {named} cannot run PySpark{why}: set PYSPARK_PYTHON to a Python "
            f"{driver} at the same path on every worker ({GUIDE})"
        )
    return failure(error)
