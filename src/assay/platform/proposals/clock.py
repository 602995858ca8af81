"""The clock a proposal is backtested on: when a check of a load would be judged in production.

A freshness bound is ``now − max(c)``, so it holds or fails by *when* it is judged. A load's
clock is, in this order:

1. **runs** — the time the scheduler actually ran the profile for that logical day (the tick the
   store holds for it, or its claim when that came later, within :data:`PLAUSIBLE_ARRIVAL`: a
   scheduler that was down ran late);
2. **schedule** — the tick the scheduler will run it at (:func:`scheduled_run`: the profile's
   ``schedule`` in its ``timezone``, ``lag`` days after the day);
3. **recorded** — when every load was profiled within :data:`PLAUSIBLE_ARRIVAL` of its day's
   end, the time the store recorded it (a manual ``assay check run`` follows the arrival).

Midnight after the day was the clock once; a freshness bound of an hour learned on it failed on
every 06:30 run. A profile with none of these has no clock, and no freshness proposal.

>>> scheduled_run("30 6 * * *", "Europe/Paris", 1, date(2026, 11, 30)).isoformat()
'2026-12-01T05:30:00+00:00'
>>> scheduled_run("0 6 * * 1-5", "UTC", 0, date(2026, 12, 5)) is None  # a Saturday: never run
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from assay.platform.checks.document import Profile
from assay.platform.schedule import latest_tick
from assay.store.proposals import StoredLoad
from assay.store.schedules import TickRecord

PLAUSIBLE_ARRIVAL = timedelta(days=2)
"""A load recorded (or a tick claimed) more than this after its time was backfilled or resumed:
its recorded time is not when it arrived (or ran)."""


def scheduled_run(schedule: str, timezone: str, lag: int, day: date) -> datetime | None:
    """The tick at which the scheduler judges ``day``'s slice, in UTC: the last tick on the local
    date ``day + lag`` (a pass runs a tick with that date less ``lag`` as its logical date; the
    last of several is the latest, stalest judgement). None when no tick falls on that date."""
    zone = ZoneInfo(timezone)
    local = day + timedelta(days=lag)
    end = datetime.combine(local + timedelta(days=1), time(0), zone) - timedelta(microseconds=1)
    tick = latest_tick(schedule, timezone, end)
    return tick if tick.astimezone(zone).date() == local else None


def _recorded_in_time(load: StoredLoad) -> bool:
    end = end_of_day(load.logical_date)
    return end <= load.created_at <= end + PLAUSIBLE_ARRIVAL


def end_of_day(day: date) -> datetime:
    """Midnight after ``day``, UTC: the earliest a whole day's load can have arrived."""
    return datetime.combine(day + timedelta(days=1), time(0), UTC)


@dataclass(frozen=True)
class Clock:
    """When each load of a profile is judged (see the module's order of sources)."""

    profile: Profile
    source: str  # runs, schedule, recorded or none
    runs: Mapping[date, datetime] = field(default_factory=dict)

    @classmethod
    def of(cls, profile: Profile, loads: Iterable[StoredLoad], ticks: Iterable[TickRecord]) -> Clock:
        """The clock of ``profile`` over ``loads``; ``ticks`` are the store's ticks of its
        document (:meth:`MetricStore.ticks`)."""
        runs: dict[date, datetime] = {}
        for t in ticks:
            if t.profile != profile.id:
                continue
            ran = t.claimed_at if t.tick <= t.claimed_at <= t.tick + PLAUSIBLE_ARRIVAL else t.tick
            runs[t.logical_date] = max(ran, runs.get(t.logical_date, ran))
        if profile.schedule:
            return cls(profile, "runs", runs) if runs else cls(profile, "schedule")
        loads = list(loads)
        if loads and all(_recorded_in_time(x) for x in loads):
            return cls(profile, "recorded")
        return cls(profile, "none")

    def at(self, load: StoredLoad) -> datetime | None:
        """When ``load`` is judged; None when no run judges it (a day the schedule skips)."""
        if load.logical_date in self.runs:
            return self.runs[load.logical_date]
        if self.source == "recorded":
            return load.created_at
        p = self.profile
        return scheduled_run(p.schedule, p.timezone, p.lag, load.logical_date) if p.schedule else None

    def describe(self) -> str:
        """How the clock is known, as a proposal's evidence says it."""
        p = self.profile
        lag = f", lag {p.lag}" if p.lag else ""
        schedule = f"the profile's schedule ({p.schedule} {p.timezone}{lag})"
        if self.source == "runs":
            return f"the profile's scheduled runs ({len(self.runs)} in the store), else {schedule}"
        return {"schedule": schedule, "recorded": "the loads' recorded arrival", "none": "no clock"}[
            self.source
        ]
