"""Errors of the DQDL front end, positioned so that a person can act on them."""

from __future__ import annotations

from assay.errors import ConfigError


class DQDLSyntaxError(ConfigError):
    """A ruleset that is not valid DQDL.

    ``line`` and ``column`` are 1-based; ``str(error)`` reads
    ``file:line:col: message`` followed by the offending line and a caret under the column.

    >>> from assay.dqdl import parse
    >>> try:
    ...     parse('Rules = [ IsComplete "a" > 0.5 ]')
    ... except DQDLSyntaxError as e:
    ...     print(e.line, e.column)
    1 26
    """

    def __init__(
        self,
        message: str,
        line: int,
        column: int,
        *,
        source: str = "",
        filename: str = "<ruleset>",
    ) -> None:
        self.reason = message
        self.line = line
        self.column = column
        self.filename = filename
        self.source = source
        super().__init__(self._render())

    def with_filename(self, filename: str) -> DQDLSyntaxError:
        """The same error, reported against ``filename``."""
        return DQDLSyntaxError(self.reason, self.line, self.column, source=self.source, filename=filename)

    def _render(self) -> str:
        head = f"{self.filename}:{self.line}:{self.column}: {self.reason}"
        lines = self.source.split("\n")
        if not 1 <= self.line <= len(lines):
            return head
        text = lines[self.line - 1].replace("\t", " ")
        caret = " " * (max(self.column, 1) - 1) + "^"
        return f"{head}\n    {text}\n    {caret}"


class DQDLWarning:
    """Something the parser accepted for compatibility but the author should know about."""

    def __init__(self, message: str, line: int, column: int) -> None:
        self.message = message
        self.line = line
        self.column = column

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: warning: {self.message}"

    def __repr__(self) -> str:
        return f"DQDLWarning({self.message!r}, {self.line}, {self.column})"
