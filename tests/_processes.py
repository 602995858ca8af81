"""Several OS processes on one store or one warehouse at once (tests/store/test_concurrency.py,
tests/lake/test_iceberg.py): spawned, not forked, so each imports assay afresh and opens its own
connections and catalog, as two separate ``assay`` commands would; a barrier starts them together."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Barrier

TIMEOUT_SECONDS = 120
"""Generous: a process still waiting after this long is a deadlock, not a slow machine."""

spawn = multiprocessing.get_context("spawn")


@contextmanager
def breaking(barrier: Barrier) -> Iterator[None]:
    """Break the barrier when this process fails, so that the others stop waiting for it."""
    try:
        yield
    except BaseException:
        barrier.abort()
        raise


def run_together(processes: Sequence[BaseProcess]) -> None:
    """Start ``processes``, wait for each, and check that every one exited 0."""
    for process in processes:
        process.start()
    for process in processes:
        process.join(TIMEOUT_SECONDS)
    assert [process.exitcode for process in processes] == [0] * len(processes)
