"""The unit of work in which a test goes to a pytest-xdist worker (tests/conftest.py)."""

from __future__ import annotations

SPARK_DOCUMENTS = ("docs/engines.md",)  # its examples run `--engine spark` and `engine="spark"`


def unit_of(nodeid: str) -> str:
    """The unit of work a test goes to a worker in: ``spark``, or its module.

    >>> unit_of("tests/gate/test_gate.py::test_a_month[spark]")
    'spark'
    >>> unit_of("tests/gate/test_gate.py::test_a_month[duckdb]")
    'tests/gate/test_gate.py'

    """
    if "spark" in nodeid.lower() or any(document in nodeid for document in SPARK_DOCUMENTS):
        return "spark"
    return nodeid.split("::")[0]
