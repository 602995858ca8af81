"""What a JUnit file must be for the CI viewers that read it: the rules of the JUnit schema that
Jenkins' xUnit plugin validates against (junit-10.xsd, the shape GitLab, Azure and the GitHub
test-report actions read too), as a table checked by :func:`valid`. No XML Schema validator is
installed here (lxml, xmlschema); the table states the schema's element and attribute rules one
by one, and ``valid`` also checks what the schema leaves to the readers: the counts add up.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

# element: (attributes allowed, attributes required, children allowed)
SCHEMA: dict[str, tuple[set[str], set[str], set[str]]] = {
    "testsuites": ({"name", "time", "tests", "failures", "errors"}, set(), {"testsuite"}),
    "testsuite": (
        {"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp", "hostname", "id"}
        | {"package", "file", "log", "url"},
        {"name", "tests", "failures", "errors"},
        {"testsuite", "properties", "testcase", "system-out", "system-err"},
    ),
    "properties": (set(), set(), {"property"}),
    "property": ({"name", "value"}, {"name", "value"}, set()),
    "testcase": (
        {"name", "time", "classname", "group"},
        {"name"},
        {"skipped", "error", "failure", "system-out", "system-err"},
    ),
    "failure": ({"type", "message"}, set(), set()),
    "error": ({"type", "message"}, set(), set()),
    "skipped": ({"type", "message"}, set(), set()),
}
SUREFIRE_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?")
# Ant's ISO8601_DATETIME_PATTERN, the strictest reader's timestamp
TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")


def valid(path: Path) -> ET.Element:
    """The file's root, after checking it against :data:`SCHEMA` (AssertionError listing what
    is wrong otherwise)."""
    root = ET.parse(path).getroot()
    problems: list[str] = []

    def walk(element: ET.Element) -> None:
        allowed, required, children = SCHEMA[element.tag]
        problems.extend(f"<{element.tag}> has {a}=" for a in set(element.attrib) - allowed)
        problems.extend(f"<{element.tag}> lacks {a}=" for a in required - set(element.attrib))
        for child in element:
            if child.tag not in children:
                problems.append(f"<{child.tag}> inside <{element.tag}>")
            else:
                walk(child)
        if "time" in element.attrib and not SUREFIRE_TIME.fullmatch(element.attrib["time"]):
            problems.append(f"<{element.tag}> time={element.attrib['time']!r}")
        if "timestamp" in element.attrib and not TIMESTAMP.fullmatch(element.attrib["timestamp"]):
            problems.append(f"<{element.tag}> timestamp={element.attrib['timestamp']!r}")

    assert root.tag == "testsuites", root.tag
    walk(root)
    for suite in root.iter("testsuite"):
        cases = suite.findall("testcase")
        for attribute, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
            found = sum(case.find(tag) is not None for case in cases)
            if int(suite.get(attribute, "0")) != found:
                problems.append(
                    f"suite {suite.get('name')}: {attribute}={suite.get(attribute)}, found {found}"
                )
        if int(suite.attrib["tests"]) != len(cases):
            problems.append(f"suite {suite.get('name')}: tests={suite.get('tests')}, found {len(cases)}")
        if "timestamp" not in suite.attrib or "time" not in suite.attrib:
            problems.append(f"suite {suite.get('name')}: no timestamp or time")
    assert not problems, "\n".join(problems)
    return root


def outcome(case: ET.Element) -> tuple[str, ET.Element | None]:
    """The test case's result (passed, failure, error, skipped) and its element."""
    for tag in ("failure", "error", "skipped"):
        found = case.find(tag)
        if found is not None:
            return tag, found
    return "passed", None
