"""Deterministic expansion of events into occurrences, and free/busy from them.

A recurring event repeats in the local wall time of its own time zone: a weekly 09:00
America/New_York meeting stays at 09:00 New York time when the clocks change, so its UTC time
moves by an hour. `COUNT` counts every generated occurrence, cancelled ones included (as in
RFC 5545, where an exception date does not give the series an extra occurrence).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import or_
from sqlmodel import Session, col, select

from .rules import WEEKDAYS, parse, zone
from .tables import Event, EventAttendee, EventException

MAX_OCCURRENCES = 800  # daily for two years fits; a guard, never reached by valid series
MAX_SERIES_DAYS = 731


@dataclass(frozen=True)
class Rule:
    freq: str = "none"  # none | daily | weekly
    interval: int = 1
    weekdays: tuple[int, ...] = ()  # 0 = Monday
    count: int | None = None
    until: datetime | None = None  # UTC; an occurrence starting after it is not generated

    @classmethod
    def of(cls, event: Event) -> Rule:
        days = tuple(sorted(WEEKDAYS.index(d) for d in event.recur_weekdays.split(",") if d))
        return cls(
            freq=event.recur_freq,
            interval=event.recur_interval,
            weekdays=days,
            count=event.recur_count,
            until=parse(event.recur_until) if event.recur_until else None,
        )


@dataclass(frozen=True)
class Occurrence:
    start: datetime  # UTC
    end: datetime
    index: int  # 0 for the first occurrence of the series


def _local_dates(first: date, rule: Rule) -> Iterator[date]:
    if rule.freq == "none":
        yield first
        return
    if rule.freq == "daily":
        step = 0
        while True:
            yield first + timedelta(days=step * rule.interval)
            step += 1
    days = rule.weekdays or (first.weekday(),)
    monday = first - timedelta(days=first.weekday())
    week = 0
    while True:
        for weekday in days:
            candidate = monday + timedelta(days=7 * week + weekday)
            if candidate >= first:
                yield candidate
        week += rule.interval


def expand(
    start: datetime, end: datetime, tz: ZoneInfo, rule: Rule, *, until: datetime | None = None
) -> Iterator[Occurrence]:
    """Every occurrence in order, stopping at the rule's count or until, or at the first one
    starting at or after `until` (a query window's end)."""
    duration = end - start
    local = start.astimezone(tz)
    wall = local.replace(tzinfo=None).time()
    for index, day in enumerate(_local_dates(local.date(), rule)):
        if index >= MAX_OCCURRENCES or (rule.count is not None and index >= rule.count):
            return
        moment = datetime.combine(day, wall).replace(tzinfo=tz, fold=0).astimezone(UTC)
        if rule.until is not None and moment > rule.until:
            return
        if until is not None and moment >= until:
            return
        yield Occurrence(moment, moment + duration, index)


def event_rule(event: Event) -> tuple[datetime, datetime, ZoneInfo, Rule]:
    return parse(event.start_utc), parse(event.end_utc), zone(event.time_zone), Rule.of(event)


def series_end(start: datetime, end: datetime, tz: ZoneInfo, rule: Rule) -> datetime:
    last = end
    for occurrence in expand(start, end, tz, rule):
        last = occurrence.end
    return last


def cancelled_starts(session: Session, event_id: str) -> set[str]:
    return set(session.exec(select(EventException.occurrence_start_utc).where(EventException.event_id == event_id)))


def occurrences_in(
    session: Session, event: Event, lo: datetime, hi: datetime, *, skip_cancelled: bool = True
) -> list[Occurrence]:
    """The occurrences of `event` overlapping [lo, hi)."""
    start, end, tz, rule = event_rule(event)
    cancelled = cancelled_starts(session, event.id) if skip_cancelled and rule.freq != "none" else set()
    found = []
    for occurrence in expand(start, end, tz, rule, until=hi):
        if occurrence.end > lo and occurrence.start.isoformat(timespec="seconds") not in cancelled:
            found.append(occurrence)
    return found


@dataclass(frozen=True)
class Busy:
    start: datetime
    end: datetime
    event_id: str


def blocking_events(session: Session, email: str, lo: datetime, hi: datetime) -> list[Event]:
    """Confirmed, busy events that occupy `email` at some time in [lo, hi): organized by them,
    or with them as an invitee who has not declined."""
    invited = select(EventAttendee.event_id).where(EventAttendee.email == email, EventAttendee.response != "declined")
    return list(
        session.exec(
            select(Event)
            .where(
                Event.status == "confirmed",
                Event.show_as == "busy",
                Event.start_utc < hi.isoformat(timespec="seconds"),
                Event.series_end_utc > lo.isoformat(timespec="seconds"),
                or_(col(Event.organizer_email) == email, col(Event.id).in_(invited)),
            )
            .order_by(Event.start_utc, Event.id)
        )
    )


def busy_intervals(
    session: Session, email: str, lo: datetime, hi: datetime, *, exclude_event: str | None = None, clip: bool = True
) -> list[Busy]:
    """`email`'s busy time overlapping [lo, hi), clipped to the window unless `clip` is false, sorted."""
    found: list[Busy] = []
    for event in blocking_events(session, email, lo, hi):
        if event.id == exclude_event:
            continue
        for occurrence in occurrences_in(session, event, lo, hi):
            if clip:
                found.append(Busy(max(occurrence.start, lo), min(occurrence.end, hi), event.id))
            else:
                found.append(Busy(occurrence.start, occurrence.end, event.id))
    found.sort(key=lambda b: (b.start, b.end, b.event_id))
    return found


def merged(intervals: list[Busy]) -> list[tuple[datetime, datetime]]:
    """Overlapping or touching busy intervals merged into blocks."""
    blocks: list[tuple[datetime, datetime]] = []
    for busy in sorted(intervals, key=lambda b: (b.start, b.end)):
        if blocks and busy.start <= blocks[-1][1]:
            blocks[-1] = (blocks[-1][0], max(blocks[-1][1], busy.end))
        else:
            blocks.append((busy.start, busy.end))
    return blocks
