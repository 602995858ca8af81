"""Reading event contract files: YAML documents with the position of every key, validated one
by one; every mistake as ``file:line:col: message`` (:class:`ContractError`, exit 2).

A file may hold several contracts, as YAML documents separated by ``---``; each is validated on
its own, at the lines and columns it has in the file. Checking contracts together (those of one
event must read it the same way) is :mod:`assay.platform.events.event`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.errors import ConfigError
from assay.lake import storage
from assay.lang import yamlsafe
from assay.platform.checks.document import DocumentError, Path_, Problem, _load_with_marks
from assay.platform.events.contract import KIND, Contract


@dataclass(frozen=True)
class Loaded:
    """A contract with where it was read: its file and the position of each of its keys."""

    contract: Contract
    file: Path
    marks: dict[Path_, tuple[int, int]] = field(repr=False)

    def where(self, path: Path_) -> tuple[int, int]:
        trimmed = path
        while trimmed:
            if trimmed in self.marks:
                return self.marks[trimmed]
            trimmed = trimmed[:-1]
        return self.marks.get((), (1, 1))

    def problem(self, path: Path_, message: str) -> Problem:
        line, column = self.where(path)
        return Problem(str(self.file), line, column, message)

    @property
    def source_pattern(self) -> str:
        """The source's glob, absolute (a relative path is read from the contract's folder), or
        its ``s3://`` URL as written."""
        if storage.is_url(self.contract.event.source.path):
            return str(self.contract.event.source.path)
        path = Path(self.contract.event.source.path)
        return str(path if path.is_absolute() else (self.file.parent / path).resolve())


class ContractError(DocumentError):
    """Contracts with mistakes; ``problems`` lists every one, by file, then position."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line, p.column, p.message))
        ConfigError.__init__(self, "\n".join(str(p) for p in self.problems))


def is_event_contract(path: Path) -> bool:
    """Whether the YAML file at ``path`` says ``kind: EventContract`` (read cheaply, never fails)."""
    try:
        with path.open(encoding="utf-8") as handle:
            head = handle.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    return bool(re.search(rf"^kind:\s*['\"]?{KIND}['\"]?\s*(#.*)?$", head, re.MULTILINE))


def event_files(doc: Path, more: Sequence[Path] | None) -> list[Path] | None:
    """The event contract files of a ``check run`` (DOC says kind: EventContract), or None for a
    check document; several files are for event contracts only."""
    if is_event_contract(doc):
        return [doc, *(more or [])]
    if more:
        raise ConfigError(
            f"several files at once are event contracts only; {doc} is not one (kind: EventContract)"
        )
    return None


def parse_located(text: str, *, file: Path) -> list[Loaded]:
    """The contracts of one file, each with its positions; a file of several YAML documents
    (``---``) holds several contracts."""
    loaded, problems = parse_file(text, file)
    if problems:
        raise ContractError(problems)
    return loaded


def parse_file(text: str, file: Path) -> tuple[list[Loaded], list[Problem]]:
    """The valid contracts of one file and the mistakes of the others."""
    filename = str(file)
    try:
        nodes = yamlsafe.compose_all(text, filename=filename)
    except yamlsafe.YAMLProblem as error:
        return [], [Problem(filename, error.line, error.column, error.reason)]
    if not nodes:
        return [], [Problem(filename, 1, 1, "an event contract is a YAML mapping (apiVersion, kind, ...)")]
    loaded: list[Loaded] = []
    problems: list[Problem] = []
    for node in nodes:
        start, end = node.start_mark, node.end_mark
        # the document alone, at the same lines and columns as in the file
        piece = "\n" * start.line + " " * start.column + text[start.index : end.index]
        raw, marks = _load_with_marks(piece, filename)
        if raw is None:
            continue
        found, mistakes = _validate(raw, marks, filename, (start.line + 1, start.column + 1))
        problems.extend(mistakes)
        if found is not None:
            loaded.append(Loaded(found, file, marks))
    return loaded, problems


def _validate(
    raw: Any, marks: dict[Path_, tuple[int, int]], filename: str, start: tuple[int, int]
) -> tuple[Contract | None, list[Problem]]:
    problems: list[Problem] = []
    if not isinstance(raw, dict):
        line, column = start
        return None, [
            Problem(filename, line, column, "an event contract is a YAML mapping (apiVersion, kind, ...)")
        ]

    def report(loc: Sequence[Any], message: str, *, key: bool = False) -> None:
        path = _path_in(raw, loc)
        line, column = start
        trimmed = path
        while trimmed:
            found = marks.get((*trimmed, "__key__")) if key and trimmed == path else marks.get(trimmed)
            if found:
                line, column = found
                break
            trimmed = trimmed[:-1]
        problems.append(Problem(filename, line, column, message))

    if raw.get("kind") not in (None, KIND):
        report(
            ("kind",),
            f"kind: {raw.get('kind')!r} in a file of event contracts; keep each kind in its own files",
        )
        return None, problems
    try:
        contract = Contract.model_validate(raw)
    except ValidationError as error:
        for item in error.errors():
            loc = item["loc"]
            named = ".".join(str(p) for p in _path_in(raw, loc))
            message = item["msg"].removeprefix("Value error, ")
            if item["type"] == "extra_forbidden":
                report(loc, f"unknown field '{loc[-1]}'", key=True)
            elif item["type"] == "missing":
                report(loc[:-1], f"missing field '{_alias(loc[-1])}'")
            else:
                report(loc, f"{named}: {message}" if named else message)
        return None, _unique(problems)
    return contract, []


def _alias(name: Any) -> str:
    return {"in_": "in", "is_": "is"}.get(str(name), str(name))


def _path_in(raw: Any, loc: Sequence[Any]) -> Path_:
    """The part of a pydantic error's location that names keys of the YAML (its model and
    union tags left out), with the YAML's names (``in``, not ``in_``)."""
    out: list[str | int] = []
    node = raw
    for part in loc:
        key: str | int = _alias(part) if isinstance(part, str) else part
        listed = isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node)
        if listed or (isinstance(node, dict) and key in node):
            node = node[key]
            out.append(key)
    return tuple(out)


def _unique(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[int, int, str]] = set()
    out = []
    for p in problems:
        if (p.line, p.column, p.message) not in seen:
            seen.add((p.line, p.column, p.message))
            out.append(p)
    return out


__all__ = ["ContractError", "Loaded", "event_files", "is_event_contract", "parse_file", "parse_located"]
