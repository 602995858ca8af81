"""Text for an operator's terminal: what a data provider or an author wrote is shown, never obeyed.

A cell of a contributor's file, a value in a new-value decision, a document's field or an error
message quoting any of them may hold escape sequences: ``ESC ] 0 ; … BEL`` retitles the window,
``ESC [ 2 J`` clears it, and a right-to-left override (U+202E) makes ``txt.exe`` read as
``exe.txt``. Every console assay prints to shows such characters as their escape (``\\x1b``,
``\\u202e``) instead; tab and line feed stay what they are. JSON output needs nothing: the
encoder already writes every control character as ``\\u00XX`` (bidi overrides as ``\\u202e``).

>>> visible("venue \\x1b]0;pwned\\x07 ok")
'venue \\\\x1b]0;pwned\\\\x07 ok'
>>> visible("invoice\\u202efdp.exe")
'invoice\\\\u202efdp.exe'
>>> visible("two\\tcolumns\\nand lines")
'two\\tcolumns\\nand lines'
"""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console, ConsoleDimensions, ConsoleOptions
from rich.text import Text

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_CONTROLS = (*(c for c in range(0x20) if c not in (0x09, 0x0A)), 0x7F, *range(0x80, 0xA0))

_ESCAPES = {c: f"\\x{c:02x}" for c in _CONTROLS} | {c: f"\\u{c:04x}" for c in _BIDI}


def visible(text: str) -> str:
    """``text`` with every terminal control and bidi override written as its escape."""
    return text.translate(_ESCAPES)


PIPED_WIDTH = 200
"""The width of a console that is not a terminal (a pipe, a file, a CI log) when ``COLUMNS``
does not give one. Rich's own is 80, or the width of whatever terminal stdin or stderr is: a rule's
message folded over three lines of a four-column table, and the run's summary over two, so a
``grep`` found half of either."""


class SafeConsole(Console):
    """A Rich console that prints every string it is given through :func:`visible` (rich strips
    a few control codes itself, but not ESC, C1 controls or bidi overrides). When it is not a
    terminal, it is :data:`PIPED_WIDTH` wide (unless ``COLUMNS`` says otherwise) and draws its
    tables and rules in ASCII (``+``, ``-``, ``|``): a log viewer or a file read as Latin-1
    shows box drawing as ``â”‚``."""

    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(visible(text), **options)

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._width is None and not self.is_terminal and not os.environ.get("COLUMNS", "").isdigit():
            return ConsoleDimensions(PIPED_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size

    @property
    def options(self) -> ConsoleOptions:
        options = super().options
        if not self.is_terminal:
            options.encoding = "ascii"  # Rich draws boxes and rules in ASCII for an ASCII file
        return options


out = SafeConsole()
"""Standard output, escaped (every command and the demo print through it)."""
err = SafeConsole(stderr=True)
