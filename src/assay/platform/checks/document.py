"""The check document (``kind: DatasetChecks``): what to measure on a dataset, and what makes it wrong.

A document is YAML, validated with pydantic (the model: :mod:`assay.platform.checks.model`), then
checked as a whole: every metric reference must name a metric its profile declares, every
``expect`` must be a DQDL condition, every DQDL ``rule`` must parse, ids must be unique. Every
mistake is reported at once, each as ``file:line:col: message`` (:class:`DocumentError`, exit 2).
Nothing here reads the data: that a column exists is known only when a run sees the source's
schema (a ``config_error`` outcome).

>>> document = parse_document('''
... apiVersion: assay/v1
... kind: DatasetChecks
... dataset: {name: shop.orders, source: {path: orders.csv}}
... profiles:
...   - id: daily
...     metrics: [row_count, {null_rate: [email]}]
... expectations:
...   - {id: volume, metric: daily.row_count, expect: "> 0"}
... ''')
>>> document.expectations[0].reference.key
'row_count'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from assay.errors import ConfigError
from assay.lang import yamlsafe
from assay.platform.checks.model import (
    _ID,
    METRIC_KINDS,
    OVER,
    CountWhere,
    Document,
    Expectation,
    MetricSpec,
    Profile,
    ReconcileMetric,
    _first_error,
    _specs,
    check_schedule,
    check_timezone,
    parse_reference,
)
from assay.workspace import Workspace
from assay.workspace import is_check_document as is_check_document  # its home moved; callers keep it

# The model's names that callers import from here, where the model was before it had a module of
# its own (assay.platform.checks.model), with this module's own.
__all__ = [
    "METRIC_KINDS",
    "Document",
    "DocumentError",
    "Expectation",
    "MetricSpec",
    "Path_",
    "Problem",
    "Profile",
    "check_schedule",
    "check_timezone",
    "find_document",
    "is_check_document",
    "load_document",
    "parse_document",
    "read_text",
]

# --- YAML with positions ------------------------------------------------------------------------


Path_ = tuple[str | int, ...]


def _load_with_marks(text: str, filename: str) -> tuple[Any, dict[Path_, tuple[int, int]]]:
    """The YAML document and the (line, column) of each path in it, both 1-based; read within
    the limits of :mod:`assay.lang.yamlsafe` (a :class:`~assay.lang.yamlsafe.YAMLProblem`)."""
    marks: dict[Path_, tuple[int, int]] = {}
    node = yamlsafe.compose(text, filename=filename)
    if node is None:
        return None, marks

    def walk(node: yaml.Node, path: Path_) -> None:
        marks.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                child = (*path, str(key.value))
                marks[child] = (value.start_mark.line + 1, value.start_mark.column + 1)
                marks[(*child, "__key__")] = (key.start_mark.line + 1, key.start_mark.column + 1)
                walk(value, child)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, (*path, i))

    walk(node, ())
    return yamlsafe.construct(node, filename=filename), marks


# --- loading and checking ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One mistake in a document, where it is."""

    file: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}"


class DocumentError(ConfigError):
    """A check document with mistakes; ``problems`` lists every one, in document order."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.line, p.column, p.message))
        super().__init__("\n".join(str(p) for p in self.problems))


def read_text(path: Path, noun: str) -> str:
    """A user's YAML file as text (UTF-8); a file that is missing, a folder, not UTF-8 or
    unreadable is a ConfigError that names it as ``noun`` ("check document", "contract file")."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such {noun}") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, not a {noun}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None


def load_document(path: Path | str) -> Document:
    """Read and check the document at ``path``; a :class:`DocumentError` lists every mistake."""
    path = Path(path)
    return parse_document(read_text(path, "check document"), filename=str(path))


def parse_document(text: str, *, filename: str = "<document>") -> Document:
    """Check document text; see :func:`load_document`."""
    try:
        raw, marks = _load_with_marks(text, filename)
    except yamlsafe.YAMLProblem as error:
        raise DocumentError([Problem(filename, error.line, error.column, error.reason)]) from None
    if not isinstance(raw, dict):
        raise DocumentError(
            [Problem(filename, 1, 1, "a check document is a YAML mapping (apiVersion, kind, ...)")]
        )
    problems: list[Problem] = []

    def where(path: Path_, key: bool = False) -> tuple[int, int]:
        trimmed = path
        while trimmed:
            found = marks.get((*trimmed, "__key__")) if key and trimmed == path else marks.get(trimmed)
            if found:
                return found
            trimmed = trimmed[:-1]
        return (1, 1)

    def report(path: Path_, message: str, *, key: bool = False) -> None:
        line, column = where(path, key)
        problems.append(Problem(filename, line, column, message))

    document: Document | None = None
    try:
        document = Document.model_validate(raw)
    except ValidationError as error:
        for item in error.errors():
            loc = tuple(part for part in item["loc"] if not (isinstance(part, str) and part in _UNION_TAGS))
            message = item["msg"].removeprefix("Value error, ")
            if item["type"] == "extra_forbidden":
                report(loc, f"unknown field '{loc[-1]}'", key=True)
            elif item["type"] == "missing":
                report(loc[:-1], f"missing field '{loc[-1]}'")
            elif item["type"] == "literal_error":
                report(loc, f"{'.'.join(map(str, loc))}: {message}")
            else:
                report(loc, f"{'.'.join(map(str, loc))}: {message}")
    _check_semantics(raw, report)
    if problems:
        raise DocumentError(_unique(problems))
    assert document is not None
    return document


_UNION_TAGS = {"str", "dict[str,any]", "int", "function-after[_seconds(), float]"}


def _unique(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[int, int, str]] = set()
    out = []
    for p in problems:
        if (p.line, p.column, p.message) not in seen:
            seen.add((p.line, p.column, p.message))
            out.append(p)
    return out


def _check_semantics(raw: dict[str, Any], report: Any) -> None:
    """What pydantic cannot see: metric entries, references, conditions, rules, unique ids. Reads
    the raw YAML defensively, so that one mistake never hides another."""
    from assay.platform.checks.conditions import ConditionError, parse_expect

    profiles: list[Any] = raw["profiles"] if isinstance(raw.get("profiles"), list) else []
    declared: dict[str, dict[str, MetricSpec]] = {}
    dimensions: dict[str, set[str]] = {}
    for i, profile in enumerate(profiles):
        if not isinstance(profile, dict):
            continue
        pid = profile.get("id")
        if isinstance(pid, str):
            if pid in declared:
                report(("profiles", i, "id"), f"duplicate profile id '{pid}'")
            declared.setdefault(pid, {})
            dims = profile.get("dimensions")
            dimensions[pid] = {d for d in dims if isinstance(d, str)} if isinstance(dims, list) else set()
        metrics = profile.get("metrics")
        if isinstance(metrics, list):
            for j, entry in enumerate(metrics):
                problem = _metric_problem(entry)
                if problem:
                    report(("profiles", i, "metrics", j), problem)
                    continue
                for found in _specs(entry):
                    if isinstance(pid, str):
                        if found.key in declared[pid]:
                            report(("profiles", i, "metrics", j), f"metric '{found.key}' is declared twice")
                        declared[pid][found.key] = found
    expectations: list[Any] = raw["expectations"] if isinstance(raw.get("expectations"), list) else []
    ids: set[str] = set()
    for i, item in enumerate(expectations):
        if not isinstance(item, dict):
            continue
        eid = item.get("id")
        if isinstance(eid, str):
            if eid in ids:
                report(("expectations", i, "id"), f"duplicate expectation id '{eid}'")
            ids.add(eid)
        metric = item.get("metric")
        spec: MetricSpec | None = None
        if isinstance(metric, str):
            try:
                ref = parse_reference(metric)
            except ValueError as error:
                report(("expectations", i, "metric"), str(error))
            else:
                if ref.profile not in declared:
                    known = ", ".join(sorted(declared)) or "none"
                    report(
                        ("expectations", i, "metric"), f"unknown profile '{ref.profile}' (profiles: {known})"
                    )
                elif ref.key not in declared[ref.profile]:
                    known = ", ".join(declared[ref.profile]) or "none"
                    report(
                        ("expectations", i, "metric"),
                        f"unknown metric '{ref.key}' in profile '{ref.profile}' (it declares: {known})",
                    )
                else:
                    spec = declared[ref.profile][ref.key]
                by = item.get("by")
                if isinstance(by, list) and ref.profile in dimensions:
                    for k, column in enumerate(by):
                        if isinstance(column, str) and column not in dimensions[ref.profile]:
                            report(
                                ("expectations", i, "by", k),
                                f"'{column}' is not a dimension of profile '{ref.profile}' "
                                f"(dimensions: {', '.join(sorted(dimensions[ref.profile])) or 'none'})",
                            )
        expect = item.get("expect")
        if isinstance(expect, str | int | float) and not isinstance(expect, bool):
            try:
                parse_expect(str(expect), duration=spec is not None and spec.kind == "freshness")
            except ConditionError as error:
                named = f" of '{eid}'" if isinstance(eid, str) else ""
                report(("expectations", i, "expect"), f"expect{named}: {error}")
        rule = item.get("rule")
        if isinstance(rule, str):
            from assay.platform.checks.rules import RuleError, parse_rule

            try:
                parse_rule(rule)
            except RuleError as error:
                report(("expectations", i, "rule"), f"rule: {error}")
        profile_name = item.get("profile")
        if isinstance(profile_name, str) and profile_name not in declared:
            report(("expectations", i, "profile"), f"unknown profile '{profile_name}'")
        if isinstance(rule, str) and profile_name is None and len(declared) > 1:
            report(("expectations", i), "a rule needs profile: when the document has several profiles")
        if isinstance(rule, str) and not declared:
            report(("expectations", i), "a rule needs a profile to be measured by; the document has none")


def _metric_problem(entry: Any) -> str | None:
    """Why a profile's metric entry is malformed, or None."""
    if isinstance(entry, str):
        if entry == "row_count":
            return None
        if entry in METRIC_KINDS:
            example = "column" if entry == "freshness" else "[column]"
            return f"metric '{entry}' needs its column(s): write {{{entry}: {example}}}"
        return f"unknown metric '{entry}' (metrics: {', '.join(METRIC_KINDS)})"
    if not isinstance(entry, dict) or len(entry) != 1:
        return "a metric is a name (row_count) or one mapping such as {null_rate: [email]}"
    kind, value = next(iter(entry.items()))
    if kind not in METRIC_KINDS:
        return f"unknown metric '{kind}' (metrics: {', '.join(METRIC_KINDS)})"
    if kind == "row_count":
        return "row_count takes no column: write it as a plain name"
    if kind == "freshness":
        return _freshness_problem(value)
    if kind == "count_where":
        return _named_entry_problem(kind, CountWhere, value, "{name, condition, sample_rows, sample_columns}")
    if kind == "reconcile":  # docs/reconcile.md
        return _named_entry_problem(
            kind, ReconcileMetric, value, "{name, target, key} (and columns, tolerance, samples)"
        )
    columns = [value] if isinstance(value, str) else value
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) and c for c in columns):
        return f"{kind} needs a column or a list of columns"
    return None


def _named_entry_problem(kind: str, model: type[BaseModel], value: Any, needs: str) -> str | None:
    """Why a metric entry that is a mapping with a ``name`` of its own (``count_where``,
    ``reconcile``) is malformed, or None: its model's first error, else a name that is no id or is
    a metric kind's name (its metrics are keyed ``NAME``, so it must not read as another kind)."""
    if not isinstance(value, dict):
        return f"{kind} needs {needs}"
    try:
        model.model_validate(value)
    except ValidationError as error:
        field, message = _first_error(error)
        return f"{kind} {field}: {message}" if field else f"{kind}: {message}"
    name = str(value.get("name"))
    if not _ID.match(name):
        return f"{kind} name '{name}' is not an id: use letters, digits, '_' and '-'"
    if name in METRIC_KINDS:
        return f"{kind} name '{name}' is a metric kind's name: choose another"
    return None


def _freshness_problem(value: Any) -> str | None:
    """Why a ``freshness`` entry is malformed: it is a column, or ``{column, over}``."""
    if isinstance(value, str) and value:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("column"), str) or not value["column"]:
        return (
            "freshness names one timestamp column: {freshness: c} or {freshness: {column: c, over: source}}"
        )
    unknown = sorted(set(value) - {"column", "over"})
    if unknown:
        return f"freshness takes column and over, not {', '.join(unknown)}"
    if value.get("over", "slice") not in OVER:
        return f"freshness over '{value.get('over')}': use {' or '.join(OVER)}"
    return None


def find_document(folder: Path, dataset: str) -> Path | None:
    """The check document in ``folder`` (``<workspace>/checks``) of ``dataset``: its document by
    the workspace's one rule (:meth:`assay.workspace.Workspace.document_for`), if that is a check
    document (``checks/<dataset>.yaml`` may be a plain monitor configuration)."""
    path = Workspace(folder.parent).document_for(dataset)
    return path if path is not None and is_check_document(path) else None
