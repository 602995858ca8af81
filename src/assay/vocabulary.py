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

from collections.abc import Iterable
from enum import StrEnum

from assay.errors import ConfigError


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
    """How much a failed expectation matters, worst first: the check documents' scale
    (docs/checks.md), which is also the one scale of ``--fail-on`` and of notifications. The
    gate's rules (:class:`RuleSeverity`) and the drift monitor's alerts (:class:`AlertLevel`)
    keep their own words, each placed on this scale.

    >>> [s.value for s in Severity if s.reaches(Severity.ERROR)]
    ['critical', 'error']
    """

    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"

    def reaches(self, threshold: Severity) -> bool:
        """Whether this severity is ``threshold`` or worse."""
        order = list(Severity)
        return order.index(self) <= order.index(threshold)


class RuleSeverity(StrEnum):
    """A gate rule's severity, as the control CSV says it: ``critical`` rules quarantine the rows
    they fail, ``warning`` rules commit them and count them (seed 000)."""

    CRITICAL = "critical"
    WARNING = "warning"

    @property
    def severity(self) -> Severity:
        return Severity(self.value)


class AlertLevel(StrEnum):
    """A drift alert's level (docs/monitor.md): ``hard`` for a break a person must look at,
    ``soft`` for a move worth a look. A hard alert is the monitor's loudest word, so it is
    ``critical`` on the one scale.

    >>> AlertLevel.HARD.severity, AlertLevel.SOFT.severity
    (<Severity.CRITICAL: 'critical'>, <Severity.WARNING: 'warning'>)
    """

    HARD = "hard"
    SOFT = "soft"

    @property
    def severity(self) -> Severity:
        return Severity.CRITICAL if self is AlertLevel.HARD else Severity.WARNING


FAIL_ON_ALIASES: dict[str, Severity] = {
    "failed": Severity.WARNING,  # dqdl run's: a rule failed or is in error
    "hard": Severity.CRITICAL,  # profile's: a hard alert
    "soft": Severity.WARNING,  # profile's: any alert
}
"""The words ``--fail-on`` took before it had one vocabulary, each kept for the scripts that use
it, with the level that gives the same exit codes as before (README.md, "Exit codes")."""


NOTHING = "nothing"
"""The ``--fail-on`` word of ``assay check run`` for a run that evaluated nothing: no enforced
expectation passed or failed (every one skipped, ``upstream_missing`` on a day whose rows never
came, or in error). It combines with a level: ``--fail-on error,nothing``."""


def fail_on(text: str | None, *, nothing: bool = False) -> Severity | None:
    """The level a ``--fail-on`` word names, in every command alike: exit 1 when a finding of that
    severity or worse was found. ``None`` (the option not given) is never. With ``nothing`` (the
    commands that take it), the word ``nothing`` may come too, alone or after a comma; it names
    no level (:func:`fails_on_nothing` reads it).

    >>> fail_on("error"), fail_on("hard"), fail_on(None)
    (<Severity.ERROR: 'error'>, <Severity.CRITICAL: 'critical'>, None)
    >>> fail_on("error,nothing", nothing=True), fail_on("nothing", nothing=True)
    (<Severity.ERROR: 'error'>, None)
    >>> fail_on("fatal")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: --fail-on: 'fatal' is not a level; use critical, error or warning (also ...
    """
    if text is None:
        return None
    words = [w.strip().lower() for w in text.split(",")]
    if NOTHING in words:
        if not nothing:
            raise ConfigError(f"--fail-on: '{NOTHING}' is a word of assay check run only; use a level here")
        words.remove(NOTHING)
        if not words:
            return None
    if len(words) > 1:
        raise ConfigError(f"--fail-on: '{text}' names more than one level; use one (and '{NOTHING}')")
    word = words[0]
    if word in {s.value for s in Severity}:
        return Severity(word)
    if word in FAIL_ON_ALIASES:
        return FAIL_ON_ALIASES[word]
    aliases = ", ".join(f"{old} = {new.value}" for old, new in FAIL_ON_ALIASES.items())
    raise ConfigError(
        f"--fail-on: '{text}' is not a level; use critical, error or warning (also accepted: {aliases})"
    )


def fails_on_nothing(text: str | None) -> bool:
    """Whether a ``--fail-on`` value holds the word ``nothing``.

    >>> fails_on_nothing("error, nothing"), fails_on_nothing("error"), fails_on_nothing(None)
    (True, False, False)
    """
    return text is not None and NOTHING in (w.strip().lower() for w in text.split(","))


def reached(found: Iterable[Severity], threshold: Severity | None) -> bool:
    """Whether any finding in ``found`` is at ``threshold`` or worse (never without a threshold).

    >>> reached([Severity.WARNING], fail_on("error")), reached([Severity.WARNING], fail_on("soft"))
    (False, True)
    """
    return threshold is not None and any(s.reaches(threshold) for s in found)


class RunState(StrEnum):
    """How a run stands. ``running`` until it ends; then ``completed`` (it ran, whatever its
    outcomes), ``config_error`` (the author's mistake stopped it) or ``system_error`` (the
    platform failed, or the process was killed before its commit)."""

    RUNNING = "running"
    COMPLETED = "completed"
    CONFIG_ERROR = "config_error"
    SYSTEM_ERROR = "system_error"
