"""The platform's exceptions: each one owns the exit code the CLI returns for it.

Failures of the *data* are never exceptions; they are outcomes. These classes are for the
platform: the rule author's mistakes (:class:`ConfigError`, exit 2) and the machine's
(:class:`PlatformError`, exit 3). See DESIGN.md, "Exit codes".
"""

from __future__ import annotations


class AssayError(Exception):
    """Base class of every error assay raises on purpose."""

    exit_code: int = 3

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(AssayError):
    """The user's input is wrong: bad rule text, unknown column, unreadable file, invalid option.

    >>> raise ConfigError("rules.dqdl:3:5: unknown rule type 'RowCont'")
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: rules.dqdl:3:5: unknown rule type 'RowCont'
    """

    exit_code = 2


class PlatformError(AssayError):
    """The platform failed (engine, disk, database) after its retries: DESIGN.md's SystemError."""

    exit_code = 3
