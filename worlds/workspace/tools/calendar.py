"""Calendar rules shared by the event and availability tools: who can see an event, rendering,
recurrence arguments and the conflict check against required attendees' busy time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlmodel import Session, select

from mcpsim.world import WorldError

from ..recurrence import (
    MAX_SERIES_DAYS,
    Occurrence,
    Rule,
    busy_intervals,
    cancelled_starts,
    event_rule,
    expand,
    series_end,
)
from ..rules import WEEKDAYS, directory_user, display_name, is_internal, local_to_utc, parse, show_local, zone
from ..tables import Event, EventAttendee
from ..views import AttendeeView, EventView, OccurrenceView

MAX_EVENT_HOURS = 12


def visible_event(session: Session, event_id: str, me: str) -> Event:
    """An event on the owner's calendar (organized by them or inviting them); any other event
    is private to its organizer and reported as not found."""
    event = session.get(Event, event_id.strip())
    if event is None or (event.organizer_email != me and session.get(EventAttendee, (event.id, me)) is None):
        raise WorldError(f"Event {event_id} not found on your calendar")
    return event


def attendees_of(session: Session, event_id: str) -> list[EventAttendee]:
    return list(
        session.exec(select(EventAttendee).where(EventAttendee.event_id == event_id).order_by(EventAttendee.email))
    )


def recurrence_text(event: Event) -> str:
    if event.recur_freq == "none":
        return "does not repeat"
    unit = "days" if event.recur_freq == "daily" else "weeks"
    every = "" if event.recur_interval == 1 else f" every {event.recur_interval} {unit}"
    days = f" on {event.recur_weekdays}" if event.recur_freq == "weekly" and event.recur_weekdays else ""
    if event.recur_count is not None:
        bound = f", {event.recur_count} times"
    else:
        bound = f" until {show_local(parse(event.recur_until or event.series_end_utc), zone(event.time_zone))[:10]}"
    return f"{event.recur_freq}{every}{days}{bound} ({event.time_zone})"


def event_view(session: Session, event: Event, me: str, tz: ZoneInfo, now: datetime) -> EventView:
    start, end, event_tz, rule = event_rule(event)
    mine = session.get(EventAttendee, (event.id, me))
    cancelled = sorted(cancelled_starts(session, event.id))
    upcoming: list[str] = []
    if rule.freq != "none" and event.status == "confirmed":
        for occurrence in expand(start, end, event_tz, rule):
            if occurrence.end > now and occurrence.start.isoformat(timespec="seconds") not in cancelled:
                upcoming.append(show_local(occurrence.start, tz))
                if len(upcoming) == 5:
                    break
    return EventView.from_row(
        event,
        organizer_name=display_name(session, event.organizer_email),
        your_role="organizer" if event.organizer_email == me else "attendee",
        your_response=mine.response if mine else None,
        start_local=show_local(start, tz),
        end_local=show_local(end, tz),
        event_time_zone=event.time_zone,
        recurrence=recurrence_text(event),
        attendees=AttendeeView.from_rows(attendees_of(session, event.id)),
        cancelled_occurrences_local=[show_local(parse(c), tz) for c in cancelled],
        next_occurrences_local=upcoming,
    )


def occurrence_view(session: Session, event: Event, occurrence: Occurrence, me: str, tz: ZoneInfo) -> OccurrenceView:
    mine = session.get(EventAttendee, (event.id, me)) if event.organizer_email != me else None
    return OccurrenceView.from_row(
        event,
        start_utc=occurrence.start.isoformat(timespec="seconds"),
        end_utc=occurrence.end.isoformat(timespec="seconds"),
        start_local=show_local(occurrence.start, tz),
        end_local=show_local(occurrence.end, tz),
        your_role="organizer" if event.organizer_email == me else "attendee",
        your_response=mine.response if mine else None,
        recurring=event.recur_freq != "none",
    )


# -- arguments -----------------------------------------------------------------------------------


@dataclass
class Schedule:
    start: datetime  # UTC
    end: datetime
    tz: ZoneInfo
    rule: Rule


def build_schedule(
    start_local: str,
    end_local: str,
    tz_name: str,
    now: datetime,
    *,
    repeat: str = "none",
    interval: int = 1,
    weekdays: Sequence[str] | None = None,
    count: int | None = None,
    until: str | None = None,
) -> Schedule:
    tz = zone(tz_name)
    start = local_to_utc(start_local, tz)
    end = local_to_utc(end_local, tz)
    if end <= start:
        raise WorldError("The end must be after the start")
    if end - start > timedelta(hours=MAX_EVENT_HOURS):
        raise WorldError(f"An event can last at most {MAX_EVENT_HOURS} hours")
    if start <= now:
        raise WorldError(
            f"{show_local(start, tz)} is in the past (it is now {show_local(now, tz)}); "
            "events are scheduled in the future"
        )
    days: tuple[int, ...] = ()
    until_utc = None
    if repeat == "none":
        if count is not None or until is not None or weekdays or interval != 1:
            raise WorldError(
                "repeat_count, repeat_until, repeat_weekdays and repeat_interval only apply to a repeating event"
            )
    else:
        if (count is None) == (until is None):
            raise WorldError("A repeating event needs exactly one of repeat_count or repeat_until")
        first_local = start.astimezone(tz)
        if weekdays:
            if repeat != "weekly":
                raise WorldError("repeat_weekdays only applies to a weekly event")
            days = tuple(sorted({WEEKDAYS.index(d) for d in weekdays}))
            if first_local.weekday() not in days:
                raise WorldError(
                    f"The first occurrence ({first_local:%A} {first_local:%Y-%m-%d}) must fall on one of the repeat "
                    f"days ({', '.join(WEEKDAYS[d] for d in days)})"
                )
        if until is not None:
            last_day = date.fromisoformat(until)
            if last_day < first_local.date():
                raise WorldError("repeat_until is before the first occurrence")
            if (last_day - first_local.date()).days > MAX_SERIES_DAYS:
                raise WorldError("A series can run for at most two years; choose an earlier repeat_until")
            until_utc = local_to_utc(datetime.combine(last_day, time(23, 59)), tz)
    schedule = Schedule(start, end, tz, Rule(repeat, interval, days, count, until_utc))
    if repeat != "none" and (series_end(start, end, tz, schedule.rule) - start).days > MAX_SERIES_DAYS:
        raise WorldError("A series can run for at most two years; choose a smaller repeat_count")
    return schedule


def occurrences_of(schedule: Schedule) -> list[Occurrence]:
    return list(expand(schedule.start, schedule.end, schedule.tz, schedule.rule))


def conflicts(
    session: Session,
    people: list[str],
    occurrences: list[Occurrence],
    tz: ZoneInfo,
    *,
    me: str,
    exclude_event: str | None = None,
) -> list[str]:
    """For each person in the directory, the first of their busy intervals that overlaps one of
    the occurrences, as sentences. People outside the directory have no known calendar."""
    if not occurrences:
        return []
    lo, hi = occurrences[0].start, occurrences[-1].end
    found: list[str] = []
    for email in people:
        if not is_internal(email) or directory_user(session, email) is None:
            continue
        busy = busy_intervals(session, email, lo, hi, exclude_event=exclude_event, clip=False)
        hit = next(((o, b) for o in occurrences for b in busy if b.start < o.end and o.start < b.end), None)
        if hit is None:
            continue
        occurrence, block = hit
        who = "You are" if email == me else f"{display_name(session, email)} ({email}) is"
        what = ""
        if email == me:
            other = session.get(Event, block.event_id)
            what = f" with '{other.title}'" if other else ""
        found.append(
            f"{who} busy{what} from {show_local(block.start, tz)} to {show_local(block.end, tz)[11:16]}, "
            f"overlapping the occurrence at {show_local(occurrence.start, tz)}"
        )
    return found


def refuse_conflicts(problems: list[str]) -> None:
    if problems:
        raise WorldError(
            "Cannot schedule: a required attendee is busy. "
            + "; ".join(problems)
            + ". Pick another time (find_meeting_slot) or make the person optional."
        )
