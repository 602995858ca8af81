"""A run's results as a JUnit XML file, the format CI test-report viewers read (docs/ci.md).

One :class:`Suite` per dataset and run, one :class:`Case` per rule (``dqdl run``, ``gate``) or
per expectation outcome (``check run``), each built from the command's ``--json`` payload, so
that the file and the JSON never disagree. The mapping, in one table (:data:`RESULTS`):
``passed`` is a bare test case, ``failed`` a ``<failure>``, ``config_error`` and
``system_error`` an ``<error>`` (the rule could not be judged: JUnit's "the test did not run
properly"), ``skipped`` a ``<skipped>`` with its reason.

A failed expectation of ``warning`` severity is a ``<failure type="warning">``, not a note: the
expectation failed, and the file counts what the run's JSON counts. Whether a warning stops a
pipeline is ``--fail-on``'s decision (the exit code), never the report's.

The element and attribute names are those of the JUnit schema Jenkins' xUnit plugin checks
(junit-10.xsd), which GitLab, GitHub test-report actions and Azure read too: ``time`` in seconds
with a dot, ``timestamp`` as ISO-8601 without an offset (UTC), as Ant wrote it.

>>> cases = (Case("orders", "RowCount > 0"), Case("orders", "x < 1", Result.FAILURE, "2 >= 1"))
>>> suite = Suite("orders", cases)
>>> print(*to_xml([suite]).splitlines()[2:], sep="\\n")
  <testsuite name="orders" tests="2" failures="1" errors="0" skipped="0" time="0.000">
    <testcase classname="orders" name="RowCount &gt; 0" />
    <testcase classname="orders" name="x &lt; 1">
      <failure message="2 &gt;= 1" />
    </testcase>
  </testsuite>
</testsuites>
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from assay.vocabulary import Outcome


class Result(StrEnum):
    """What JUnit says of one test case: the element it carries (none when it passed)."""

    PASSED = "passed"
    FAILURE = "failure"
    ERROR = "error"
    SKIPPED = "skipped"


RESULTS: dict[Outcome, Result] = {
    Outcome.PASSED: Result.PASSED,
    Outcome.FAILED: Result.FAILURE,
    Outcome.CONFIG_ERROR: Result.ERROR,
    Outcome.SYSTEM_ERROR: Result.ERROR,
    Outcome.SKIPPED: Result.SKIPPED,
}


@dataclass(frozen=True)
class Case:
    """One test case: ``kind`` is the element's ``type`` (a severity, an outcome, a reason),
    ``detail`` its text (observed against expected)."""

    classname: str
    name: str
    result: Result = Result.PASSED
    message: str | None = None
    kind: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class Suite:
    """One dataset's run; ``properties`` name the run (its id, its inputs)."""

    name: str
    cases: tuple[Case, ...]
    started: datetime | None = None
    seconds: float | None = None
    properties: tuple[tuple[str, str], ...] = ()

    def count(self, result: Result) -> int:
        return sum(case.result is result for case in self.cases)


# --- from each command's JSON -----------------------------------------------------------------


def dqdl_suites(
    payload: Mapping[str, Any], *, run_id: str | None, data: str, started: datetime, seconds: float
) -> list[Suite]:
    """``assay dqdl run``'s result (its ``--json``): a case per rule, named by its text.
    DQDL rules carry no severity, so a failure has no ``type``."""
    name = payload["dataset"] or data
    cases = []
    for rule in payload["rules"]:
        outcome = Outcome.from_glue(rule["outcome"])
        measured = ", ".join(f"{k} = {v}" for k, v in rule["metrics"].items())
        detail = _lines(("observed", measured or None), ("expected", _bounds(rule["expected"])))
        cases.append(_case(name, rule["rule"], outcome, rule["message"], None, detail))
    properties = [("run_id", run_id), ("data", data), ("score", payload["score"])]
    return [Suite(name, tuple(cases), started, seconds, _properties(properties))]


def check_suites(payload: Mapping[str, Any], *, started: datetime) -> list[Suite]:
    """``assay check run``'s result (its ``--json``; event contracts: one run per event): a
    case per expectation outcome (an expectation ``by:`` a dimension has one per group), and
    one per drift alert, which ``--fail-on`` reads as a finding too."""
    return [_check_suite(run, started) for run in payload.get("events", [payload])]


def _check_suite(run: Mapping[str, Any], started: datetime) -> Suite:
    dataset = run["dataset"]
    cases = []
    for item in run["outcomes"]:
        group = ", ".join(f"{k}={v}" for k, v in (item.get("group") or {}).items())
        name = f"{item['expectation']} [{group}]" if group else item["expectation"]
        outcome = Outcome(item["outcome"])
        unit = f" {item['unit']}" if item.get("unit") else ""
        observed = None if item.get("observed") is None else f"{item['observed']}{unit}"
        detail = _lines(
            ("observed", observed),
            ("expected", _bounds(item.get("expected"))),
            ("owner", item.get("owner")),
            ("mode", item.get("mode")),
        )
        # the element's type: the severity of a failure (advisory ones are not enforced), the
        # outcome of an error, the reason of a skip (upstream_missing)
        kind = {
            Outcome.FAILED: "advisory" if item.get("mode") == "advisory" else item.get("severity"),
            Outcome.SKIPPED: item.get("reason"),
        }.get(outcome, outcome.value)
        cases.append(_case(dataset, name, outcome, item.get("message"), kind, detail))
    for alert in run.get("drift") or ():
        name = f"drift: {alert['kind']}" + (f" of {alert['column']}" if alert.get("column") else "")
        cases.append(Case(dataset, name, Result.FAILURE, alert["message"], alert["severity"]))
    if run.get("error") and not any(case.result is Result.ERROR for case in cases):
        cases.append(Case(dataset, "run", Result.ERROR, run["error"], run["state"]))
    seconds = sum(run.get("seconds", {}).values())
    properties = [("run_id", run["run_id"]), ("document", run["document"]), ("at", run["at"])]
    properties += [("state", run["state"]), ("dry_run", run["dry_run"])]
    return Suite(dataset, tuple(cases), started, seconds, _properties(properties))


def gate_suites(payload: Mapping[str, Any]) -> list[Suite]:
    """``assay gate``'s run summary (its ``--json``): a case per rule of the control CSV, named
    by its id and DQDL text; a row rule fails when a row failed it, a dataset-level rule when a
    month failed it; a rule that judged no row (every row without a previous record) is skipped.
    Rows the gate quarantined for a reason of its own (``parse_error``, ``identity``,
    ``duplicate``) are one failed case per reason: they never reached a rule."""
    table = payload["table"]
    months: dict[str, list[Mapping[str, Any]]] = {}
    for group in payload["groups"]:
        for rule in group["dataset_rules"]:
            months.setdefault(rule["rule_id"], []).append({**rule, "month": group["statement_date"]})
    cases = []
    for rule_id, stats in payload["rules"].items():
        name = f"{rule_id}: {stats['dqdl']}"
        severity = stats["severity"]
        if rule_id in months:
            cases.append(_month_case(table, name, severity, months[rule_id]))
            continue
        judged = stats["passed"] + stats["failed"]
        rows = judged + stats["skipped"]
        if stats["failed"]:
            routed = "quarantined" if severity == "critical" else "committed and warned"
            message = f"{stats['failed']} of {rows} row(s) failed ({routed})"
            cases.append(Case(table, name, Result.FAILURE, message, severity))
        elif not judged:
            message = (
                f"no row judged: {rows} row(s) skipped (a row without a previous record skips prev_ rules)"
            )
            cases.append(Case(table, name, Result.SKIPPED, message))
        else:
            cases.append(Case(table, name))
    for reason, entry in payload["quarantined_by"].items():
        if reason not in payload["rules"]:
            message = f"{entry['rows']} row(s) quarantined: {entry['reason']}"
            cases.append(Case(table, reason, Result.FAILURE, message, "critical"))
    properties = [("run_id", payload["run_id"]), ("contributor", payload["contributor"])]
    properties += [("source", payload["source"]["path"])]
    properties += [(k, payload[k]) for k in ("total", "passed", "quarantined", "warned", "held")]
    started = _instant(payload["started_at"])
    finished = _instant(payload["finished_at"])
    seconds = (finished - started).total_seconds() if started and finished else None
    return [Suite(table, tuple(cases), started, seconds, _properties(properties))]


def _month_case(table: str, name: str, severity: str, months: list[Mapping[str, Any]]) -> Case:
    """A dataset-level rule, judged once per statement date of the batch."""
    failed = [m for m in months if m["outcome"] == Outcome.FAILED.value]
    if failed:
        message = "; ".join(f"{m['month']}: {m['message']}" for m in failed)
        return Case(table, name, Result.FAILURE, message, severity)
    if all(m["outcome"] == Outcome.SKIPPED.value for m in months):
        return Case(table, name, Result.SKIPPED, "; ".join(f"{m['month']}: {m['message']}" for m in months))
    return Case(table, name)


def error_suite(subject: str, command: str, error: Exception, kind: str, started: datetime) -> Suite:
    """The file of a command that stopped before it had results (exit 2 or 3): one case, in
    error, so that a CI report step shows why instead of nothing or an earlier run's file."""
    return Suite(subject, (Case(subject, command, Result.ERROR, str(error), kind),), started, 0.0)


# --- the XML ------------------------------------------------------------------------------------


def to_xml(suites: Sequence[Suite]) -> str:
    """The JUnit document of ``suites``, built as an element tree (rule text holds ``<``, ``&``
    and quotes: the serializer escapes them, nothing is pasted)."""
    root = ET.Element("testsuites", name="assay")
    totals = {r: sum(s.count(r) for s in suites) for r in Result}
    root.set("tests", str(sum(len(s.cases) for s in suites)))
    root.set("failures", str(totals[Result.FAILURE]))
    root.set("errors", str(totals[Result.ERROR]))
    root.set("time", _seconds(sum(s.seconds or 0.0 for s in suites)))
    for suite in suites:
        root.append(_suite(suite))
    ET.indent(root)  # a person opens the file too
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def write(path: Path, suites: Sequence[Suite]) -> None:
    """Write the JUnit file whole or not at all (a ``.partial`` renamed into place): a run
    killed while writing leaves the earlier file or none, never half of one."""
    from assay.lake.writers import write_text
    from assay.platform.runs.faults import checkpoint

    write_text(path, to_xml(suites) + "\n", before_rename=lambda: checkpoint("report-partial"))


def _suite(suite: Suite) -> ET.Element:
    element = ET.Element("testsuite", name=_text(suite.name))
    element.set("tests", str(len(suite.cases)))
    element.set("failures", str(suite.count(Result.FAILURE)))
    element.set("errors", str(suite.count(Result.ERROR)))
    element.set("skipped", str(suite.count(Result.SKIPPED)))
    element.set("time", _seconds(suite.seconds or 0.0))
    if suite.started is not None:
        element.set("timestamp", suite.started.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S"))
    if suite.properties:
        properties = ET.SubElement(element, "properties")
        for key, value in suite.properties:
            ET.SubElement(properties, "property", name=key, value=_text(value))
    for case in suite.cases:
        testcase = ET.SubElement(element, "testcase", classname=_text(case.classname), name=_text(case.name))
        if case.result is Result.PASSED:
            continue
        found = ET.SubElement(testcase, case.result.value)
        if case.message is not None:
            found.set("message", _text(case.message))
        if case.kind is not None:
            found.set("type", _text(case.kind))
        if case.detail:
            found.text = _text(case.detail)
    return element


def _case(
    classname: str, name: str, outcome: Outcome, message: str | None, kind: str | None, detail: str
) -> Case:
    result = RESULTS[outcome]
    if result is Result.PASSED:
        return Case(classname, name)
    return Case(classname, name, result, message or outcome.value, kind, detail)


# XML 1.0 allows no control character but tab, newline and carriage return, not even escaped
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: str) -> str:
    """``value`` as XML can hold it: a control character (a data value's ``\\x01``) is shown
    as ``\\x01`` instead of making the file unreadable."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", value)


def _seconds(value: float) -> str:
    return f"{max(value, 0.0):.3f}"


def _bounds(expected: Mapping[str, Any] | None) -> str | None:
    if not expected:
        return None
    return ", ".join(f"{k} {v}" for k, v in expected.items())


def _lines(*pairs: tuple[str, str | None]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in pairs if v is not None)


def _properties(pairs: Iterable[tuple[str, Any]]) -> tuple[tuple[str, str], ...]:
    """The given values, as the JSON says them (``true``, not Python's ``True``)."""
    return tuple((k, v if isinstance(v, str) else json.dumps(v)) for k, v in pairs if v is not None)


def _instant(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None
