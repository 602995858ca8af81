"""How the suite is shared out between pytest-xdist's workers (``scripts/test.sh`` runs ``-n 2``).

Every test that runs Spark — on the session's SparkSession, on the Spark Connect server, or in an
``assay … --engine spark`` subprocess — goes to one worker as one unit of work, so that one
SparkSession serves the run and two Spark JVMs never compete for the machine's two cores. Every
other test goes with the rest of its module, so a module's fixtures (a profiled history, a
PostgreSQL database) are built once, on one worker.

The unit is read from the test's id, which is all xdist's scheduler sees: a Spark test has
``spark`` in its id (its module, its name or its engine parameter), or runs docs/engines.md.
``test_every_spark_test_says_so_in_its_id`` (tests/test_suite.py) holds every test to that.
(xdist's own ``--dist loadgroup`` would read ``xdist_group`` marks, but with pytest 9.2 the
group never reaches the scheduler: xdist 3.8 renames ``item._nodeid``, which pytest no longer
reads.)
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from _units import unit_of

# The width of the consoles of commands run in this process, as cli_env gives the subprocesses:
# a worker's temporary folders (…/popen-gw0/…) are longer, and a wrapped path breaks a `in out`.
os.environ["COLUMNS"] = "200"


class _ByUnit:
    """Registered only when pytest-xdist is there (its hook is unknown to pytest otherwise)."""

    @pytest.hookimpl
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        from xdist.scheduler import LoadScopeScheduling

        class ByUnit(LoadScopeScheduling):  # type: ignore[misc]
            def _split_scope(self, nodeid: str) -> str:
                return unit_of(nodeid)

        return ByUnit(config, log)


def pytest_configure(config: pytest.Config) -> None:
    """On xdist's controller: schedule by unit, and name the run, so that its workers and this
    process agree on the folder they share builds in (tests/_shared.py)."""
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return
    config.pluginmanager.register(_ByUnit(), "assay-units")
    if getattr(config.option, "testrunuid", "unset") is None:
        import uuid

        config.option.testrunuid = uuid.uuid4().hex


def pytest_unconfigure(config: pytest.Config) -> None:
    """On xdist's controller, at the end: remove the builds the workers shared (tests/_shared.py)."""
    run = getattr(config.option, "testrunuid", None)
    if hasattr(config, "workerinput") or not run:
        return
    import shutil

    from _shared import shared_root

    shutil.rmtree(shared_root(run) or "", ignore_errors=True)
