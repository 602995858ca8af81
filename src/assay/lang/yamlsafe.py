"""Every YAML text a user gives assay is read here, within limits that its author never meets
and that a hostile text cannot pass: check documents, event contracts, ``assay.yaml``, schema
files, ODCS contracts and the web editor's drafts.

PyYAML composes an alias as a second reference to its anchor's node, so the text reads fast;
whatever walks the result afterwards (pydantic, the positions of keys, a diff) visits every
repetition. A 563-byte "billion laughs" (nine aliases of nine aliases, nine levels deep) walked
that way took a server to 2.5 GB for 72 s (issue 28). So the nodes are counted while they are
composed, before anything walks them, and a text is refused at the first node past a limit:

- :data:`MAX_BYTES`: the text's size. A check document of a hundred expectations is 20 KB.
- :data:`MAX_DEPTH`: how deep collections nest. A check document nests 5 deep; ten thousand
  ``[`` overflowed Python's stack in the composer (a traceback, exit 3).
- :data:`MAX_REPEATED`: the nodes all aliases of a text repeat, counted as expanded (an alias of
  an alias counts everything it stands for). Anchors for shared settings stay usable.

A key given twice in one mapping is refused too: PyYAML keeps the last silently, so a second
``expect:`` replaced the first one unseen. Every refusal, and every YAML syntax error, is a
:class:`YAMLProblem` (a ConfigError, exit 2) that reads ``file:line:col: reason``.

>>> load("a: &x [1, 2]\\nb: *x\\n", filename="ok.yaml")
{'a': [1, 2], 'b': [1, 2]}
>>> load("a: 1\\nb: 2\\na: 3\\n", filename="twice.yaml")
Traceback (most recent call last):
...
assay.lang.yamlsafe.YAMLProblem: twice.yaml:3:1: key 'a' at line 3 repeats line 1
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml
from yaml.constructor import SafeConstructor

from assay.errors import ConfigError

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_REPEATED",
    "YAMLProblem",
    "compose",
    "compose_all",
    "construct",
    "load",
]

MAX_BYTES = 1_048_576
"""At most 1 MiB of text: fifty times the largest check document of the demo and the tests."""

MAX_DEPTH = 64
"""Collections nest at most 64 deep; the composer recurses twice per level, well within Python's
stack, and a check document nests 6 deep (an expectation's ``by:`` list)."""

MAX_REPEATED = 10_000
"""All aliases of a text together repeat at most 10,000 nodes: a shared block of settings used
a hundred times is some hundreds; the issue's 563-byte bomb stands for 435 million."""

_MERGE = "tag:yaml.org,2002:merge"


class YAMLProblem(ConfigError):
    """A YAML text that is not valid or that passes a limit, where: ``file:line:col: reason``
    (``line`` and ``column`` are 1-based)."""

    def __init__(self, filename: str, line: int, column: int, reason: str) -> None:
        self.filename = filename
        self.line = line
        self.column = column
        self.reason = reason
        super().__init__(f"{filename}:{line}:{column}: {reason}")


class _Refused(yaml.MarkedYAMLError):
    """A limit passed, at a mark; its ``problem`` is the whole reason (not a syntax error)."""

    def __init__(self, reason: str, mark: Any) -> None:
        super().__init__(problem=reason, problem_mark=mark)


class _Loader(yaml.SafeLoader):
    """The safe loader, counting while it composes: the depth it is at, and each node's size
    (itself and everything below it, aliases expanded) and height."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.depth = 0
        self.repeated = 0
        self.sizes: dict[yaml.Node, tuple[int, int]] = {}

    def fetch_flow_collection_start(self, token: Any) -> None:
        # The scanner reads up to 1,024 characters ahead of each unclosed '[' for a possible
        # "key:" (YAML's simple keys), quadratic in the brackets: 0.5 s before the composer
        # would see the first level too many. A flow level past the limit is refused at once.
        if self.flow_level >= MAX_DEPTH:
            raise _Refused(f"nested deeper than {MAX_DEPTH} levels", self.get_mark())
        super().fetch_flow_collection_start(token)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            node = super().compose_node(parent, index)
            assert node is not None  # PyYAML's composer returns a node for every event
            size = self.sizes.get(node)
            if size is None:  # its anchor's node is still being composed: it contains the alias
                raise _Refused(
                    f"alias *{event.anchor} is inside its own anchor: no recursive data", event.start_mark
                )
            nodes, height = size
            self.repeated += nodes
            if self.repeated > MAX_REPEATED:
                raise _Refused(
                    f"alias *{event.anchor} repeats {nodes:,} nodes: aliases may repeat at most "
                    f"{MAX_REPEATED:,} nodes in all",
                    event.start_mark,
                )
            if self.depth + height > MAX_DEPTH:
                raise _Refused(
                    f"alias *{event.anchor} nests deeper than {MAX_DEPTH} levels", event.start_mark
                )
            return node
        if self.depth >= MAX_DEPTH:
            raise _Refused(f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
        self.depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self.depth -= 1
        assert node is not None
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        below = [self.sizes[child] for child in children]
        self.sizes[node] = (1 + sum(n for n, _ in below), 1 + max((h for _, h in below), default=0))
        return node

    def compose_mapping_node(self, anchor: Any) -> yaml.MappingNode:
        node = super().compose_mapping_node(anchor)
        first: dict[tuple[str, str], yaml.Node] = {}
        for key, _ in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE:
                continue  # `<<: *defaults` may be overridden by the keys beside it, as YAML says
            seen = first.setdefault((key.tag, key.value), key)
            if seen is not key:
                now, then = key.start_mark, seen.start_mark
                where = (
                    f"at line {now.line + 1} repeats line {then.line + 1}"
                    if now.line != then.line
                    else f"at column {now.column + 1} repeats column {then.column + 1}"
                )
                raise _Refused(f"key '{key.value}' {where}", now)
        return node


def _problem(filename: str, error: yaml.YAMLError) -> YAMLProblem:
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    if isinstance(error, _Refused):
        return YAMLProblem(filename, line, column, str(error.problem))
    reason = getattr(error, "problem", None) or str(error)
    return YAMLProblem(filename, line, column, f"not valid YAML: {reason}")


def _check_size(text: str, filename: str) -> None:
    if len(text) > MAX_BYTES // 4 and len(size := text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise YAMLProblem(
            filename, 1, 1, f"{len(size):,} bytes: a YAML text assay reads is at most {MAX_BYTES:,} bytes"
        )


def compose_all(text: str, *, filename: str) -> list[yaml.Node]:
    """The root node of each document of ``text`` (``---`` separates them), composed within the
    limits; a :class:`YAMLProblem` otherwise.

    >>> [node.tag for node in compose_all("a: 1\\n---\\n[2]\\n", filename="two.yaml")]
    ['tag:yaml.org,2002:map', 'tag:yaml.org,2002:seq']
    """
    _check_size(text, filename)
    loader = _Loader(text)
    try:
        nodes = []
        while loader.check_node():
            node = loader.get_node()
            assert node is not None  # check_node() said a document follows
            nodes.append(node)
        return nodes
    except yaml.YAMLError as error:
        raise _problem(filename, error) from None
    finally:
        loader.dispose()


def construct(node: yaml.Node | None, *, filename: str) -> Any:
    """The Python value of a node :func:`compose_all` returned (what ``yaml.safe_load`` builds).

    >>> construct(compose_all("when: 2026-12-01\\n", filename="d.yaml")[0], filename="d.yaml")
    {'when': datetime.date(2026, 12, 1)}
    """
    if node is None:
        return None
    try:
        return SafeConstructor().construct_document(node)
    except yaml.YAMLError as error:
        raise _problem(filename, error) from None
    except ValueError as error:  # a timestamp such as 2026-13-45 fails in datetime itself
        raise YAMLProblem(
            filename, node.start_mark.line + 1, node.start_mark.column + 1, f"not valid YAML: {error}"
        ) from None


def compose(text: str, *, filename: str) -> yaml.Node | None:
    """The root node of the one document of ``text`` (None for an empty text), composed within
    the limits; several documents are a YAMLProblem.

    >>> compose("# nothing\\n", filename="empty.yaml") is None
    True
    """
    nodes = compose_all(text, filename=filename)
    if len(nodes) > 1:
        mark = nodes[1].start_mark
        raise YAMLProblem(
            filename, mark.line + 1, mark.column + 1, "a second YAML document ('---'): this file holds one"
        )
    return nodes[0] if nodes else None


def load(text: str, *, filename: str) -> Any:
    """The one document of ``text`` as Python values (None for an empty text), read within the
    limits: ``yaml.safe_load`` for text a user wrote.

    >>> load("when: [1, 2.5, yes]", filename="values.yaml")
    {'when': [1, 2.5, True]}
    """
    return construct(compose(text, filename=filename), filename=filename)


def file_part(config: Path, key: str) -> Any:
    """The ``key:`` part of the YAML file ``config`` (a workspace's ``assay.yaml``) as read: None
    without the file or the key; a file that cannot be read is a ConfigError naming it."""
    if not config.is_file():
        return None
    try:
        text = config.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{config}: cannot be read: {str(error).splitlines()[0]}") from None
    raw = load(text, filename=str(config))
    return raw.get(key) if isinstance(raw, dict) else None


def model_part(config: Path, key: str, model: type[M]) -> M:
    """The ``key:`` part of ``config`` validated by the pydantic ``model`` (the model's defaults
    without the file or the key); every mistake in it is one ConfigError line naming the file and
    the field (``assay.yaml: engine.threads: ...``)."""
    from pydantic import ValidationError

    raw = file_part(config, key)
    try:
        return model.model_validate(raw if raw is not None else {})
    except ValidationError as error:
        lines = []
        for e in error.errors():
            where = ".".join(str(p) for p in e["loc"])
            message = str(e["msg"]).removeprefix("Value error, ")
            lines.append(f"{config}: {key}{'.' + where if where else ''}: {message}")
        raise ConfigError("\n".join(lines)) from None
