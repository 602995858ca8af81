"""What one drift judgement reads and what it returns, as values: today's load (:class:`Today`),
the window of earlier loads the history read model found (:class:`Past`), the dataset's settings
(:class:`Settings`), and one :class:`Finding` per thing judged. Nothing here reads a store."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar, cast

from assay.measure.profile import LoadProfile, Metrics

if TYPE_CHECKING:
    from assay.store.profiles import LoadInfo

T = TypeVar("T")


@dataclass(frozen=True)
class Today:
    """The load being judged: its profile, its date, the columns whose type the reader inferred
    from text, the categories flooded with new values (``{column: (new, distinct)}``), and the
    categories still ``learning`` their values (a panel's first loads: kept, not judged)."""

    profile: LoadProfile
    load_date: date
    inferred: frozenset[str] = frozenset()
    floods: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    learning: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Past:
    """The earlier loads a load is judged against, as the store kept them.

    ``loads`` is the window (most recent first) and ``metrics`` their stored metrics; ``schema``
    the latest earlier load's columns with their last known types (None: no earlier load);
    ``seen`` and ``status``, per categorical column, every value an earlier load held and the
    decisions taken on values; ``earlier`` whether any earlier load exists at all; ``counts``,
    per load of the window, the value counts it kept of each categorical column; ``delivered``,
    the window's loads as they arrived (most recent first, with every metric, held or not: a
    file sent again is the same as the load it repeats, whether that load alerted or not)."""

    loads: Sequence[LoadInfo] = ()
    metrics: Mapping[int, Metrics] = field(default_factory=dict)
    schema: Sequence[tuple[str, str]] | None = None
    seen: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    status: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    earlier: bool = False
    counts: Mapping[int, Mapping[str, Mapping[str, int]]] = field(default_factory=dict)
    delivered: Sequence[tuple[LoadInfo, Metrics]] = ()


def _always(kind: str, column: str | None = None) -> bool:
    return True


@dataclass(frozen=True)
class Settings:
    """The monitor's settings a judgement reads: the sensitivity dividing the bands' sigma
    multipliers, whether blanks count as missing, the activity each conditioned column's null
    rate follows, and which judgements run for which column (``enabled(kind, column)``)."""

    sensitivity: float = 1.0
    blanks: bool = True
    conditioned: Mapping[str, str] = field(default_factory=dict)
    enabled: Callable[[str, str | None], bool] = _always


@dataclass(frozen=True)
class Case:
    """One load to judge: today, its past, the settings; and what several judgements of this
    load read, computed once (:meth:`once`)."""

    today: Today
    past: Past
    settings: Settings = field(default_factory=Settings)
    _once: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def once(self, name: str, compute: Callable[[Case], T]) -> T:
        """``compute(self)``, computed on the first call for ``name`` and kept by this case: the
        number columns that swapped are read by ``shape`` for every column and by ``swap`` once.
        The case owns it, so it lives as long as the judgement of this load, never longer.

        >>> case = Case(Today(LoadProfile(0), date(2026, 1, 1)), Past())
        >>> calls = []
        >>> [case.once("n", lambda c: calls.append(1) or len(calls)) for _ in range(2)], calls
        ([1, 1], [1])
        """
        if name not in self._once:
            self._once[name] = compute(self)
        return cast("T", self._once[name])

    def series(self, entity: str, instance: str, name: str) -> list[float | None]:
        """One stored metric over the window, one entry per load (most recent first)."""
        return [self.past.metrics.get(load.id, {}).get((entity, instance, name)) for load in self.past.loads]

    def held(self, column: str) -> list[Mapping[str, int] | None]:
        """A category's value counts over the window, one entry per load (most recent first);
        None where a load kept no values of it."""
        return [self.past.counts.get(load.id, {}).get(column) for load in self.past.loads]

    @cached_property
    def measured(self) -> Metrics:
        """Today's load as it is stored: ``{(entity, instance, name): value}``."""
        return {(k.entity, k.instance, k.name): v for k, v in self.today.profile.metrics().items()}


@dataclass(frozen=True)
class Finding:
    """One judgement of one load: what was observed, against which band (``expected``), the alert
    it raised (``severity``: None within the band, else ``soft`` or ``hard``) and why (``message``).

    A new-value finding lists its never-seen ``values`` (each with its count and decision) and
    the values still ``waiting`` on a decision an earlier load opened, whose rows are added to it."""

    column: str | None
    kind: str
    observed: float | None
    expected: tuple[float, float] | None
    severity: str | None
    message: str
    values: list[dict[str, Any]] | None = None
    detail: Mapping[str, Any] | None = None
    waiting: tuple[tuple[str, int], ...] = ()
