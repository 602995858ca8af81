"""What a run's OpenLineage events say, read from what the run already has (its flow's result,
its measurements): nothing is measured again for lineage.

Each flow has one reader in :data:`READERS` (by the flow's class name, so that this package
imports no flow): the datasets it read and wrote, each with its assertions (one per expectation
or rule that was judged, with its outcome) and its metrics (rows, and per column nulls,
distinct values, minimum, maximum, sum, quantiles where the run measured them). A flow without a
reader (a test's own) is named by its dataset and inputs only.

An assertion is a judged outcome, ``passed`` or ``failed`` (``success`` true or false); an
expectation that could not be judged (``config_error``, ``system_error``) or was ``skipped``
says nothing about the data, and is no assertion (the run's summary keeps it).

>>> found = assertion_of_rule("ColumnValues \\"amount\\" >= 0", False, {"Column.amount.Minimum": -5.0})
>>> found.assertion, found.success, found.column, found.content_type
('ColumnValues', False, 'amount', 'dqdl')
>>> columns_of({"Dataset.*.RowCount": 3.0, "Column.a.NullCount": 1.0, "Column.a.Maximum": 9.0})
(3, {'a': {'nullCount': 1, 'max': 9.0}})
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.platform.lineage.naming import Identity, identity, postgres_url, table
from assay.platform.lineage.settings import NAMESPACE

# assay's metric names → the OpenLineage column metrics they are (DataQualityMetricsInputDatasetFacet)
_COLUMN_METRICS = {
    "NullCount": "nullCount",
    "DistinctValuesCount": "distinctCount",
    "Minimum": "min",
    "Maximum": "max",
    "Sum": "sum",
}
_COUNTS = frozenset({"nullCount", "distinctCount"})
_QUANTILE = "Quantile"


@dataclass(frozen=True)
class Assertion:
    """One judged expectation or rule: its kind (``assertion``: the DQDL rule type or the
    metric), whether the data passed it, its name, the column it names, its severity, what was
    expected and observed, and its text."""

    assertion: str
    success: bool
    name: str | None = None
    column: str | None = None
    severity: str | None = None
    expected: str | None = None
    actual: str | None = None
    content: str | None = None
    content_type: str | None = None


@dataclass
class Dataset:
    """A dataset a run read or wrote: its OpenLineage ``identity``, the name assay knows it by,
    and what the run found (input) or wrote (``written``: rows committed to an output)."""

    identity: Identity
    known_as: str | None = None
    rows: int | None = None
    columns: dict[str, dict[str, Any]] = field(default_factory=dict)
    assertions: list[Assertion] = field(default_factory=list)
    written: int | None = None


@dataclass
class Facts:
    """A run's datasets as its events name them."""

    inputs: list[Dataset] = field(default_factory=list)
    outputs: list[Dataset] = field(default_factory=list)


def facts(flow: Any, workspace: Path, *, finished: bool) -> Facts:
    """What the events of ``flow``'s run say: at its start (``finished`` False) the datasets only,
    at its end with what the run found in them."""
    return READERS.get(type(flow).__name__, _named)(flow, workspace, finished)


# --- shared readers ---------------------------------------------------------------------------


def assertion_of_rule(rule: str, success: bool, metrics: Mapping[str, Any], **more: Any) -> Assertion:
    """A DQDL rule's assertion: its type, the one column its metrics name (if one)."""
    named = {key.split(".")[1] for key in metrics if key.startswith("Column.") and key.count(".") >= 2}
    return Assertion(
        assertion=rule_type(rule),
        success=success,
        name=more.pop("name", rule),
        column=next(iter(named)) if len(named) == 1 else None,
        content=rule,
        content_type="dqdl",
        **more,
    )


def rule_type(rule: str) -> str:
    """A DQDL rule's type, ``composite`` for rules joined by ``and`` / ``or`` (Glue's composite rules).

    >>> rule_type('IsComplete "id"'), rule_type('(IsComplete "id") and (IsUnique "id")')
    ('IsComplete', 'composite')
    """
    return "composite" if rule.startswith("(") else rule.split(" ", 1)[0]


def columns_of(metrics: Mapping[str, Any]) -> tuple[int | None, dict[str, dict[str, Any]]]:
    """The row count and column metrics among assay's metrics (``Scope.column.Name``)."""
    rows: int | None = None
    columns: dict[str, dict[str, Any]] = {}
    for key, value in metrics.items():
        if value is None or not isinstance(value, int | float) or value != value:  # NaN: not measured
            continue
        scope, _, rest = str(key).partition(".")
        column, _, name = rest.rpartition(".")
        if scope == "Dataset" and name == "RowCount":
            rows = int(value)
        elif scope == "Column" and column:
            if name in _COLUMN_METRICS:
                field_name = _COLUMN_METRICS[name]
                columns.setdefault(column, {})[field_name] = int(value) if field_name in _COUNTS else value
            elif name.startswith(_QUANTILE) and name[len(_QUANTILE) :].isdigit():
                share = int(name[len(_QUANTILE) :]) / 100
                columns.setdefault(column, {}).setdefault("quantiles", {})[str(share)] = value
    return rows, columns


def _keyed(metrics: Mapping[Any, Any]) -> dict[str, Any]:
    """Stored metrics (``MetricKey``) by their display keys (``Column.amount.Minimum``)."""
    return {getattr(key, "key", str(key)): value for key, value in metrics.items()}


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _judged(outcome: Any) -> bool | None:
    """True for passed, False for failed, None for what says nothing about the data."""
    return {"passed": True, "failed": False}.get(str(getattr(outcome, "value", outcome)).lower())


def _located(flow: Any, workspace: Path) -> list[Dataset]:
    """The datasets of the run's inputs, named by where they are; a dataset read from memory (the
    Python API's tables) by its own name in assay's namespace."""
    out = []
    for item in getattr(flow, "inputs", ()) or ():
        out.append(Dataset(where(item.path, workspace), getattr(flow, "dataset", None)))
    if not out and getattr(flow, "dataset", None):
        out.append(Dataset((NAMESPACE, str(flow.dataset)), flow.dataset))
    return out


def where(location: str, workspace: Path, *, base: Path | None = None) -> Identity:
    """A source's identity from how assay describes it (a path, ``iceberg:T``, ``duckdb:P:T``)."""
    if location.startswith("iceberg:"):
        return _iceberg(workspace, location.removeprefix("iceberg:"))
    if location.startswith("duckdb:"):
        database, _, name = location.removeprefix("duckdb:").rpartition(":")
        return table(database, name, base=base)
    return identity(location, base=base)


def _iceberg(workspace: Path, name: str, warehouse: Any = None) -> Identity:
    """An Iceberg table by its location, as the OpenLineage Spark integration names one; by its
    catalog name (namespace ``iceberg``) when the catalog cannot say."""
    from assay.workspace import Workspace

    try:
        if warehouse is not None:
            return identity(warehouse.location(name))
        with Workspace(workspace).warehouse() as opened:
            return identity(opened.location(name))
    except Exception:  # a name is still a name: the event goes out with it
        return "iceberg", name


# --- one reader a flow ------------------------------------------------------------------------


def _named(flow: Any, workspace: Path, finished: bool) -> Facts:
    return Facts(_located(flow, workspace))


def _dqdl(flow: Any, workspace: Path, finished: bool) -> Facts:
    found = Facts(_located(flow, workspace))
    # the reference data its rules join (--ref customers=...) is read too
    references = getattr(flow, "options", {}).get("references") or {}
    referenced = [
        where(os.fspath(path), workspace)
        for path in references.values()
        if isinstance(path, str | os.PathLike)
    ]
    result = getattr(flow, "result", None)
    primary = found.inputs[:1]
    found.inputs += [Dataset(named) for named in referenced]
    if not finished or result is None or not primary:
        return found
    target = primary[0]
    metrics: dict[str, Any] = {}
    for rule in result.rules:
        metrics.update(rule.metrics)
        success = _judged(rule.state)
        if success is not None:
            expected = _text(rule.expected) if rule.expected else None
            target.assertions.append(assertion_of_rule(rule.rule, success, rule.metrics, expected=expected))
    for analyzer in result.analyzers:
        metrics.update(analyzer.metrics)
    target.rows, target.columns = columns_of(metrics)
    return found


def document_identity(document: Any, path: Path, workspace: Path) -> Identity:
    """Where a check document's dataset lives, as OpenLineage names it (``path``: the document's
    file, which a relative source is relative to)."""
    source = document.dataset.source
    if source.postgres is not None:
        return postgres_url(source.postgres.url, source.postgres.table)
    return where(source.describe(), workspace, base=path.parent)


def _check(flow: Any, workspace: Path, finished: bool) -> Facts:
    document = flow.document
    found = Facts([Dataset(document_identity(document, flow.path, workspace), flow.dataset)])
    result = getattr(flow, "result", None)
    if not finished or result is None:
        return found
    target = found.inputs[0]
    expectations = {e.id: e for e in document.expectations}
    metrics: dict[str, Any] = {}
    for measured in getattr(flow, "measured", {}).values():
        if measured.columns is not None:
            metrics.update(_keyed(measured.columns.metrics()))
        rows = getattr(measured, "rows", None)
        if rows is not None and "Dataset.*.RowCount" not in metrics:
            metrics["Dataset.*.RowCount"] = rows
    target.rows, target.columns = columns_of(metrics)
    target.assertions = list(_outcomes(result.outcomes, expectations))
    return found


def _outcomes(outcomes: Iterable[Mapping[str, Any]], expectations: Mapping[str, Any]) -> Iterable[Assertion]:
    """A check run's (or an event run's) judged outcomes, one assertion each (one per group)."""
    for outcome in outcomes:
        success = _judged(outcome.get("outcome"))
        if success is None:
            continue
        name = str(outcome.get("expectation"))
        group = outcome.get("group")
        if group:
            name = f"{name} {_text(group)}"
        expectation = expectations.get(str(outcome.get("expectation")))
        kind, column, content, content_type = "expectation", None, None, None
        if expectation is not None and expectation.metric is not None:
            reference = expectation.reference
            kind, column = reference.metric, reference.column
            content, content_type = f"{expectation.metric} {expectation.expect}", "assay"
        elif expectation is not None and expectation.rule is not None:
            kind, content, content_type = rule_type(expectation.rule), expectation.rule, "dqdl"
        yield Assertion(
            assertion=kind,
            success=success,
            name=name,
            column=column,
            severity=outcome.get("severity"),
            expected=_text(outcome.get("expected")),
            actual=_text(outcome.get("observed")),
            content=content,
            content_type=content_type,
        )


def _event(flow: Any, workspace: Path, finished: bool) -> Facts:
    found = Facts([Dataset(identity(flow.event.source), flow.dataset)])
    result = getattr(flow, "result", None)
    if finished and result is not None:
        found.inputs[0].assertions = list(_outcomes(result.outcomes, {}))
    return found


def _profile(flow: Any, workspace: Path, finished: bool) -> Facts:
    found = Facts(_located(flow, workspace))
    result = getattr(flow, "result", None)
    if not finished or result is None or not found.inputs:
        return found
    target = found.inputs[0]
    target.rows, target.columns = columns_of(_keyed(result.profile.metrics()))
    for judged in result.judgements:
        target.assertions.append(
            Assertion(
                assertion=judged.kind,
                success=judged.severity is None,
                name=f"{judged.kind}({judged.column})" if judged.column else judged.kind,
                column=judged.column or None,
                severity=judged.severity,
                expected=_text({"low": judged.low, "high": judged.high}),
                actual=_text(judged.observed),
            )
        )
    return found


def _gate(flow: Any, workspace: Path, finished: bool) -> Facts:
    found = Facts(_located(flow, workspace))
    result = getattr(flow, "result", None)
    if not finished or result is None or not found.inputs:
        # the table is named once the run has it open (a first run creates it): a run's events
        # add up, so the output the end event names is the run's
        return found
    read = getattr(flow, "found", None)
    output = Dataset(_iceberg(workspace, flow.options.table, getattr(read, "warehouse", None)), flow.dataset)
    found.outputs.append(output)
    summary = result.summary
    target = found.inputs[0]
    target.rows = summary.total
    for rule_id, stats in summary.rules.items():
        if not stats.passed and not stats.failed:
            continue  # skipped on every row: judged nothing
        target.assertions.append(
            assertion_of_rule(
                stats.dqdl or rule_id,
                stats.failed == 0,
                {},
                name=rule_id,
                severity=stats.severity,
                actual=_text({"passed": stats.passed, "failed": stats.failed}),
            )
        )
    for group in summary.groups:
        for rule in group.dataset_rules:
            success = _judged(rule.outcome)
            if success is not None:
                target.assertions.append(assertion_of_rule(rule.rule, success, rule.metrics))
    committed = summary.duplicate_of is None and summary.snapshot_id is not None
    output.written = summary.passed if committed else 0
    return found


READERS: dict[str, Callable[[Any, Path, bool], Facts]] = {
    "DqdlRun": _dqdl,
    "CheckRun": _check,
    "EventRun": _event,
    "ProfileFlow": _profile,
    "GateRun": _gate,
}
"""Each flow's reader, by its class's name (a flow's module imports this package, not the reverse)."""

JOB_KINDS = {
    "DqdlRun": "dqdl",
    "CheckRun": "check",
    "EventRun": "event",
    "GateRun": "gate",
    "ProfileFlow": "profile",
}
"""A job's kind by its flow (an event run is a check run to the store, an ``event`` job here)."""
