"""Airflow 3 operators and a deferrable sensor (``pip install 'assay[airflow]'``, docs/airflow.md).

Each operator runs one flow through the same platform functions as its ``assay`` command and
returns the run's JSON, exactly as the command's ``--json`` writes it, so Airflow pushes it to
XCom as ``return_value``: :class:`AssayCheckOperator` (``assay check run``),
:class:`AssayGateOperator` (``assay gate``), :class:`AssayProfileOperator` (``assay profile``).
:class:`AssayIncidentSensor` waits until a dataset has no unresolved incident, deferred to
:class:`~assay.integrations.airflow.triggers.AssayIncidentTrigger` or poking.

The names are imported on first use: importing this package imports no Airflow, so that listing
assay's modules (tests/test_doctests.py) does not start Airflow in that process.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.integrations.airflow.base import AssayOperator
    from assay.integrations.airflow.operators import (
        AssayCheckOperator,
        AssayGateOperator,
        AssayProfileOperator,
    )
    from assay.integrations.airflow.sensors import AssayIncidentSensor
    from assay.integrations.airflow.triggers import AssayIncidentTrigger

_WHERE = {
    "AssayOperator": "base",
    "AssayCheckOperator": "operators",
    "AssayGateOperator": "operators",
    "AssayProfileOperator": "operators",
    "AssayIncidentSensor": "sensors",
    "AssayIncidentTrigger": "triggers",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)


__all__ = [
    "AssayCheckOperator",
    "AssayGateOperator",
    "AssayIncidentSensor",
    "AssayIncidentTrigger",
    "AssayOperator",
    "AssayProfileOperator",
]
