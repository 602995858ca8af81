"""Edits of a check document that keep what its author wrote: comments, key order, quotes, flow
lists and indentation survive (ruamel.yaml's round trip), and only the added lines change.

:func:`add_expectations` appends expectations (and the metrics they read) to a document on disk
and returns the change as a unified diff; :func:`edited_text` is the same edit in memory. The
edited text is checked with :func:`~assay.platform.checks.document.parse_document` before
anything is written, and written whole or not at all: a document is never left invalid or half
written. Writers of one document take turns (:func:`document_lock`): a writer reads the text it
edits and writes the result while no other writer may, so no edit is lost to a concurrent one
(:func:`write_document` for a writer that holds the lock).

>>> text = '''apiVersion: assay/v1
... kind: DatasetChecks
... dataset: {name: shop.orders, source: {path: orders.csv}}   # where it lives
... profiles:
...   - id: daily
...     metrics: [row_count]
... '''
>>> print(edited_text(text, [{"id": "some-rows", "metric": "daily.row_count", "expect": "> 0"}]), end="")
apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: shop.orders, source: {path: orders.csv}}   # where it lives
profiles:
  - id: daily
    metrics: [row_count]
expectations:
  - id: some-rows
    metric: daily.row_count
    expect: '> 0'
"""

from __future__ import annotations

import contextlib
import difflib
import fcntl
import io
import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from assay.errors import ConfigError
from assay.lang import yamlsafe
from assay.platform.checks.document import parse_document, read_text
from assay.platform.checks.model import _specs

__all__ = ["add_expectations", "document_lock", "edited_text", "expectation_text", "write_document"]


def add_expectations(
    path: Path | str,
    expectations: Sequence[Mapping[str, Any]],
    metrics: Mapping[str, Sequence[Any]] | None = None,
    *,
    comments: Mapping[str, str] | None = None,
) -> str:
    """Append ``expectations`` (each a mapping as it would be written in the document) to the
    check document at ``path``, and the ``metrics`` they read to their profiles (``{profile id:
    [entries]}``, each entry as written under ``metrics:``, such as ``"row_count"`` or
    ``{"freshness": "updated_at"}``; one the profile declares already is not added again).
    ``comments`` puts a YAML comment line above an expectation, by its id. Returns the unified
    diff of the change. An id the document has already, a profile it does not have, or an
    edit that leaves the document invalid is a :class:`ConfigError` and nothing is written.

    >>> import tempfile
    >>> doc = Path(tempfile.mkdtemp()) / "orders.yaml"
    >>> _ = doc.write_text('''apiVersion: assay/v1
    ... kind: DatasetChecks
    ... dataset: {name: shop.orders, source: {path: orders.csv}}
    ... profiles:
    ...   - id: daily       # measured once a day
    ...     metrics: []
    ... expectations: []
    ... ''')
    >>> diff = add_expectations(doc, [{"id": "rows", "metric": "daily.row_count", "expect": "> 0"}],
    ...                         {"daily": ["row_count"]})
    >>> for line in diff.splitlines()[3:]:
    ...     if line[0] in "+-":
    ...         print(line)
    -    metrics: []
    -expectations: []
    +    metrics:
    +      - row_count
    +expectations:
    +  - id: rows
    +    metric: daily.row_count
    +    expect: '> 0'
    >>> "measured once a day" in doc.read_text()
    True
    """
    target = Path(path)
    with document_lock(target):
        before = read_text(target, "check document")
        after = edited_text(before, expectations, metrics, comments=comments, filename=str(target))
        write_document(target, after)
    return diff_text(before, after, str(target))


@contextlib.contextmanager
def document_lock(path: Path) -> Iterator[None]:
    """Hold the write lock of the check document ``path`` (written or not yet), across threads
    and processes: an ``flock`` on ``.NAME.lock`` beside it. Not on the document itself: a write
    replaces the document's file, and a writer waiting on the old one would then hold a lock on
    a file nobody reads. Read the text to edit after taking it, and write before leaving it.

    >>> import tempfile
    >>> doc = Path(tempfile.mkdtemp()) / "orders.yaml"
    >>> with document_lock(doc):
    ...     write_document(doc, "kind: DatasetChecks")
    >>> sorted(p.name for p in doc.parent.iterdir())
    ['.orders.yaml.lock', 'orders.yaml']
    """
    lock = path.with_name(f".{path.name}.lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = lock.open("a")
    except OSError as error:
        raise ConfigError(f"{lock}: cannot lock the document to write it: {error.strerror}") from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file is closed, even by a kill
        yield


def write_document(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all, through a temporary file of this writer's
    own (two writers never share one) renamed over it; hold :func:`document_lock`. A failure is
    a :class:`ConfigError` naming the path, and leaves no temporary file."""
    partial: str | None = None
    try:
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", suffix=".partial", delete=False
        ) as handle:
            partial = handle.name
            handle.write(text)
        os.replace(partial, path)
    except OSError as error:
        if partial is not None:
            with contextlib.suppress(OSError):
                os.unlink(partial)
        raise ConfigError(f"{path}: cannot write: {error.strerror}") from None


def diff_text(before: str, after: str, name: str) -> str:
    """The unified diff from ``before`` to ``after`` (``a/NAME`` and ``b/NAME``)."""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            f"a/{name.lstrip('/')}",
            f"b/{name.lstrip('/')}",
        )
    )


def edited_text(
    text: str,
    expectations: Sequence[Mapping[str, Any]],
    metrics: Mapping[str, Sequence[Any]] | None = None,
    *,
    comments: Mapping[str, str] | None = None,
    filename: str = "<document>",
    replacing: str | None = None,
) -> str:
    """The document ``text`` with ``expectations`` and ``metrics`` added (see
    :func:`add_expectations`), checked with ``parse_document``; nothing is written. With
    ``replacing``, the first expectation takes the place of the one with that id (an edit)."""
    yaml, root = _round_trip(text, filename)
    for profile_id, entries in (metrics or {}).items():
        _add_metrics(root, profile_id, entries, filename)
    listed = root.get("expectations")
    if listed is None or not isinstance(listed, CommentedSeq):
        listed = CommentedSeq()
        root["expectations"] = listed
    if not listed:
        listed.fa.set_block_style()
    known = {item.get("id") for item in listed if isinstance(item, Mapping)}
    if replacing is not None:
        if not expectations:
            raise ConfigError(f"{filename}: nothing to replace expectation '{replacing}' with")
        place = next(
            (i for i, item in enumerate(listed) if isinstance(item, Mapping) and item.get("id") == replacing),
            None,
        )
        if place is None:
            raise ConfigError(f"{filename}: no expectation '{replacing}' to edit")
        first, *expectations = expectations
        known.discard(replacing)
        eid = first.get("id")
        if not isinstance(eid, str) or not eid:
            raise ConfigError(f"{filename}: an edited expectation needs an id")
        if eid in known:
            raise ConfigError(f"{filename}: the document has an expectation '{eid}' already")
        known.add(eid)
        _update(listed[place], first)
    for expectation in expectations:
        eid = expectation.get("id")
        if not isinstance(eid, str) or not eid:
            raise ConfigError(f"{filename}: an added expectation needs an id")
        if eid in known:
            raise ConfigError(f"{filename}: the document has an expectation '{eid}' already")
        known.add(eid)
        listed.append(_node(expectation))
        note = (comments or {}).get(eid)
        if note:
            listed.yaml_set_comment_before_after_key(
                len(listed) - 1, before=_one_line(note), indent=yaml.sequence_dash_offset
            )
    out = io.StringIO()
    yaml.dump(root, out)
    edited = out.getvalue()
    parse_document(edited, filename=filename)  # the edit must leave a valid document
    return edited


def classified_text(
    text: str,
    classes: Mapping[str, Sequence[str]],
    *,
    comment: str | None = None,
    filename: str = "<document>",
) -> str:
    r"""The document ``text`` with each column of ``classes`` (``{class: [columns]}``) added to its
    class under ``dataset.classified`` (created when absent; a column there already, in any
    class, is left where it is), checked with ``parse_document``; nothing is written. ``comment``
    goes on the line above a class list the edit creates.

    >>> doc = ("apiVersion: assay/v1\nkind: DatasetChecks\n"
    ...        "dataset:\n  name: t   # the table\n  source: {path: t.csv}\n")
    >>> print(classified_text(doc, {"pii": ["email"]}), end="")
    apiVersion: assay/v1
    kind: DatasetChecks
    dataset:
      name: t   # the table
      source: {path: t.csv}
      classified:
        pii: [email]
    >>> print(classified_text(doc + "  classified: {pii: [ic]}\n", {"pii": ["email", "ic"]}), end="")
    apiVersion: assay/v1
    kind: DatasetChecks
    dataset:
      name: t   # the table
      source: {path: t.csv}
      classified: {pii: [ic, email]}
    """
    yaml, root = _round_trip(text, filename)
    dataset = root.get("dataset")
    if not isinstance(dataset, Mapping):
        raise ConfigError(f"{filename}: the document has no dataset section to classify columns in")
    found = dataset.get("classified")
    if not isinstance(found, CommentedMap):
        found = CommentedMap()
        dataset["classified"] = found  # type: ignore[index]
    known = {str(column) for columns in found.values() for column in columns or ()}
    for name, columns in classes.items():
        wanted = [c for c in columns if c not in known]
        if not wanted:
            continue
        listed = found.get(name)
        if not isinstance(listed, CommentedSeq):
            listed = CommentedSeq()
            listed.fa.set_flow_style()
            found[name] = listed
            if comment:
                found.yaml_set_comment_before_after_key(name, before=_one_line(comment), indent=4)
        listed.extend(wanted)
        known.update(wanted)
    out = io.StringIO()
    yaml.dump(root, out)
    edited = out.getvalue()
    parse_document(edited, filename=filename)  # the edit must leave a valid document
    return edited


def _round_trip(text: str, filename: str) -> tuple[YAML, Any]:
    """The document ``text`` read for an edit that keeps its layout: the YAML that writes it back
    and its root. A broken document is reported as it stands, and ruamel reads only a text within
    the limits of assay.lang.yamlsafe that parse_document applies."""
    parse_document(text, filename=filename)
    yaml = _yaml(text)
    try:
        return yaml, yaml.load(text)
    except YAMLError as error:  # pragma: no cover - parse_document has read it already
        raise ConfigError(f"{filename}: not valid YAML: {error}") from None


def _update(node: Any, wanted: Mapping[str, Any]) -> None:
    """Make the mapping ``node`` hold ``wanted``, changing only what differs: a value left as it
    was keeps its quotes and its comments."""
    for key in [k for k in node if k not in wanted]:
        del node[key]
    for key, value in wanted.items():
        if key not in node or _plain(node[key]) != _plain(value):
            node[key] = _flow(value)


def expectation_text(text: str, expectation_id: str, *, filename: str = "<document>") -> str:
    r"""The expectation ``expectation_id`` of a document as its author wrote it (quotes and
    comments kept), as a YAML mapping of its own: what an edit starts from.

    >>> doc = "kind: DatasetChecks\nexpectations:\n  - id: fresh\n    expect: \"<= 6 hours\"\n"
    >>> print(expectation_text(doc, "fresh"), end="")
    id: fresh
    expect: "<= 6 hours"
    """
    # ruamel.yaml expands aliases and recurses as PyYAML does: the text passes the same limits
    # (and refuses a key given twice) before ruamel reads it
    yamlsafe.compose(text, filename=filename)
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    try:
        root = yaml.load(text)
    except YAMLError as error:
        raise ConfigError(f"{filename}: not valid YAML: {error}") from None
    for item in (root or {}).get("expectations") or ():
        if isinstance(item, Mapping) and item.get("id") == expectation_id:
            out = io.StringIO()
            yaml.dump(item, out)
            return out.getvalue()
    raise ConfigError(f"{filename}: no expectation '{expectation_id}'")


def _add_metrics(root: Any, profile_id: str, entries: Sequence[Any], filename: str) -> None:
    profiles = root.get("profiles")
    found = next(
        (p for p in profiles or () if isinstance(p, Mapping) and p.get("id") == profile_id),
        None,
    )
    if found is None:
        raise ConfigError(f"{filename}: no profile '{profile_id}' to add metrics to")
    declared = found.get("metrics")
    if not isinstance(declared, CommentedSeq):
        declared = CommentedSeq()
        found["metrics"] = declared  # type: ignore[index]
    if not declared:
        declared.fa.set_block_style()
    keys = {spec.key for entry in declared for spec in _specs(_plain(entry))}
    for entry in entries:
        wanted = [spec.key for spec in _specs(entry)]
        if not wanted:
            raise ConfigError(f"{filename}: {entry!r} is not a metric entry")
        if all(key in keys for key in wanted):
            continue
        declared.append(_node(entry))
        keys.update(wanted)


def _node(value: Any) -> Any:
    """``value`` as ruamel nodes: mappings in block style at the top, lists of scalars and
    mappings inside a metric entry in flow style (``by: [region]``, ``{name: …, condition: …}``)."""
    if isinstance(value, Mapping):
        node = CommentedMap()
        for key, item in value.items():
            node[key] = _flow(item)
        return node
    return _flow(value)


def _flow(value: Any) -> Any:
    if isinstance(value, Mapping):
        node = CommentedMap((key, _flow(item)) for key, item in value.items())
        node.fa.set_flow_style()
        return node
    if isinstance(value, list | tuple):
        seq = CommentedSeq(_flow(item) for item in value)
        seq.fa.set_flow_style()
        return seq
    return value


def _plain(value: Any) -> Any:
    """A ruamel node as plain dicts and lists (what ``_specs`` reads)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


_KEY = re.compile(r"^( *)[^\s#-][^:]*:")


def _yaml(text: str) -> YAML:
    """A round-trip YAML that writes with the document's own indentation."""
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096  # never fold a long rule or condition onto two lines
    sequence, offset = _sequence_indent(text)
    yaml.indent(mapping=_mapping_indent(text), sequence=sequence, offset=offset)
    return yaml


def _sequence_indent(text: str) -> tuple[int, int]:
    """How the document indents a block sequence under its key: (where an item's content starts,
    where its dash is), both from the key's column; ``profiles:\n  - id: daily`` is (4, 2)."""
    lines = _content(text)
    for parent, child in pairwise(lines):
        top = _KEY.match(parent)
        stripped = child.lstrip(" ")
        if top and parent.rstrip().endswith(":") and stripped.startswith("- "):
            dash = len(child) - len(stripped) - len(top.group(1))
            after = len(stripped) - len(stripped[1:].lstrip(" ")) - 1
            if dash >= 0:
                return dash + 1 + after, dash
    return 4, 2


def _content(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _mapping_indent(text: str) -> int:
    """How far the document indents a nested mapping's keys (2 when it nests none)."""
    for parent, child in pairwise(_content(text)):
        top, below = _KEY.match(parent), _KEY.match(child)
        if top and below and parent.rstrip().endswith(":") and len(below.group(1)) > len(top.group(1)):
            return len(below.group(1)) - len(top.group(1))
    return 2
