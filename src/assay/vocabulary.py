"""The one outcome and severity vocabulary used inside assay (DESIGN.md, "Vocabulary").

AWS Glue's strings (``Passed``, ``Failed``, ``Error``) belong to the DQDL edge: the DQDL JSON and
console report. Everything kept or compared inside the package (the store's outcomes, the gate's
summaries, later the check documents and notifications) uses :class:`Outcome`. A rule that could
not run is never counted as passed or failed: it is ``config_error`` when its author can fix it
(an unknown column, invalid SQL) and ``system_error`` when the platform failed (the engine ran out
of memory, a file could not be read).

>>> Outcome.from_glue("Passed")
<Outcome.PASSED: 'passed'>
>>> Outcome.CONFIG_ERROR.glue
'Error'
"""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """The result of one rule on one load."""

    PASSED = "passed"
    FAILED = "failed"
    CONFIG_ERROR = "config_error"
    SYSTEM_ERROR = "system_error"
    SKIPPED = "skipped"

    @classmethod
    def from_glue(cls, text: str, *, system: bool = False) -> Outcome:
        """Glue's outcome string as an :class:`Outcome`; ``Error`` is a config error unless the
        platform failed (``system``).

        >>> Outcome.from_glue("Error", system=True)
        <Outcome.SYSTEM_ERROR: 'system_error'>
        """
        if text == "Passed":
            return cls.PASSED
        if text == "Failed":
            return cls.FAILED
        if text == "Error":
            return cls.SYSTEM_ERROR if system else cls.CONFIG_ERROR
        return cls(text)

    @property
    def glue(self) -> str:
        """The string AWS Glue reports for this outcome (``Skipped`` has none in Glue's
        dataset-level results; it is printed as is)."""
        return _GLUE[self]

    @property
    def counted(self) -> bool:
        """Whether the outcome says something about the data (passed or failed)."""
        return self in (Outcome.PASSED, Outcome.FAILED)


_GLUE = {
    Outcome.PASSED: "Passed",
    Outcome.FAILED: "Failed",
    Outcome.CONFIG_ERROR: "Error",
    Outcome.SYSTEM_ERROR: "Error",
    Outcome.SKIPPED: "Skipped",
}


class Severity(StrEnum):
    """How much a failed rule matters. The gate's control CSV says ``critical`` (quarantine the
    rows) or ``warning`` (commit and count them); the drift monitor's alerts are ``hard`` or
    ``soft``. Both are kept under their own names: a user's files and scripts read them."""

    CRITICAL = "critical"
    ERROR = "error"  # a check document's middle severity (docs/checks.md)
    WARNING = "warning"
    HARD = "hard"
    SOFT = "soft"


class RunState(StrEnum):
    """How a run stands. ``running`` until it ends; then ``completed`` (it ran, whatever its
    outcomes), ``config_error`` (the author's mistake stopped it) or ``system_error`` (the
    platform failed, or the process was killed before its commit)."""

    RUNNING = "running"
    COMPLETED = "completed"
    CONFIG_ERROR = "config_error"
    SYSTEM_ERROR = "system_error"
