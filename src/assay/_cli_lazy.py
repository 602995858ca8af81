"""Build only the part of the command tree a command line uses.

Typer turns every command of an app into a click command before it parses anything: it reads each
command function's signature and type hints and builds its options. assay has about ninety
commands, and doing that for all of them cost more than half of ``assay --help``'s start-up time
(``bench/startup.py``), and was paid again by every command, ``assay profile`` included.

``command_for(app, args)`` follows the command line down the tree. Along the path the line names
(``assay check run …``) commands are built in full, as typer builds them; every other command is
built from a stand-in that keeps its name, help text, panel and flags but no parameters, which is
all a group's help listing shows of it. Anything the walk does not recognise (an unknown name, an
option before the command) stops the pruning at that level, so click sees the whole level and says
what it always says. tests/test_cli_lazy.py checks that every group's help is the same either way.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import inspect
import sys
import types
from collections.abc import Iterator, Sequence
from typing import Any

import typer
from typer.main import get_command, get_command_name
from typer.models import CommandInfo, TyperInfo


def command_for(app: typer.Typer, args: Sequence[str]) -> Any:
    """The click command for ``app``, built in full only along the path ``args`` names."""
    if not args or "--help" in args:
        load_help_renderer()
    return get_command(_pruned(app, list(args)))


def load_help_renderer() -> None:
    """Import typer's help renderer without the two rich modules it imports for what assay never
    shows: Markdown help (assay's help is rich markup) and pretty tracebacks (turned off). They
    were a third of ``assay --help``'s time (markdown_it alone 25 ms). The renderer gets stand-ins
    that load the real class on first use; every other importer gets the real modules."""
    if "typer.rich_utils" in sys.modules:
        return
    with _deferred("rich.markdown", "Markdown"), _deferred("rich.traceback", "Traceback"):
        importlib.import_module("typer.rich_utils")


class _Forward(type):
    """The metaclass of a stand-in: calling it, reading its attributes or testing an instance
    against it goes to the real class, imported then."""

    _module: str
    _name: str

    def _real(cls) -> Any:
        return getattr(importlib.import_module(cls._module), cls._name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls._real(), name)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls._real())


@contextlib.contextmanager
def _deferred(module: str, name: str) -> Iterator[None]:
    """While the block runs, ``from MODULE import NAME`` gives a stand-in instead of importing."""
    if module in sys.modules:
        yield
        return
    stand_in = types.ModuleType(module)
    setattr(stand_in, name, _Forward(name, (), {"_module": module, "_name": name}))
    sys.modules[module] = stand_in
    try:
        yield
    finally:
        if sys.modules.get(module) is stand_in:
            del sys.modules[module]


def _pruned(app: typer.Typer, args: list[str]) -> typer.Typer:
    name = args[0] if args and not args[0].startswith("-") else None
    names = {_command_name(info) for info in app.registered_commands} | {
        _group_name(info) for info in app.registered_groups
    }
    if name is None:  # this level's own help (or an option): every command from its stand-in
        return _outline(app)
    if name not in names:  # a name click will refuse: the whole level, so it says what it always says
        return app
    pruned = copy.copy(app)
    pruned.registered_commands = [
        info if _command_name(info) == name else _stand_in(info) for info in app.registered_commands
    ]
    pruned.registered_groups = [
        _with_instance(info, _pruned(info.typer_instance, args[1:]))
        if _group_name(info) == name
        else _with_instance(info, _outline(info.typer_instance))
        for info in app.registered_groups
        if info.typer_instance is not None
    ]
    return pruned


def _outline(app: typer.Typer) -> typer.Typer:
    """``app`` with every command replaced by its stand-in, all the way down."""
    outline = copy.copy(app)
    outline.registered_commands = [_stand_in(info) for info in app.registered_commands]
    outline.registered_groups = [
        _with_instance(info, _outline(info.typer_instance))
        for info in app.registered_groups
        if info.typer_instance is not None
    ]
    return outline


def _with_instance(info: TyperInfo, instance: typer.Typer) -> TyperInfo:
    changed = copy.copy(info)
    changed.typer_instance = instance
    return changed


def _stand_in(info: CommandInfo) -> CommandInfo:
    """A command with the same name, help and flags, and no parameters to build."""
    callback = info.callback
    if callback is None:
        return info

    def stand_in() -> None:  # never called: only the listing of a group's help reads it
        raise RuntimeError("a stand-in command was invoked")  # pragma: no cover

    stand_in.__doc__ = inspect.getdoc(callback)
    stand_in.__name__ = callback.__name__
    changed = copy.copy(info)
    changed.callback = stand_in
    return changed


def _command_name(info: CommandInfo) -> str | None:
    """The name typer gives the command (typer.main.get_command_from_info's rule)."""
    if info.name:
        return info.name
    return None if info.callback is None else get_command_name(info.callback.__name__)


def _group_name(info: TyperInfo) -> str | None:
    name = info.name
    if isinstance(name, str):
        return name
    instance = info.typer_instance
    if instance is not None and isinstance(instance.info.name, str):
        return instance.info.name
    return None
