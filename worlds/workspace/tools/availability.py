"""Availability tools: free/busy of people in the directory, and the earliest slots when the
owner and every required attendee are free (within everyone's own working hours)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated

from pydantic import Field

from mcpsim.world import ToolContext, WorldError

from .. import world
from ..inputs import Email, LocalDate, OptionalTimeZone
from ..recurrence import busy_intervals, merged
from ..rules import (
    check_addresses,
    day_window,
    directory_user,
    display_name,
    hhmm,
    is_internal,
    iso,
    owner,
    parse_date,
    show_local,
    working_hours,
    zone,
)
from ..tables import User
from ..views import BusyBlock, FreeBusyResult, MeetingSlots, PersonFreeBusy, SlotView

MAX_WINDOW_DAYS = 14
STEP = timedelta(minutes=15)


def _window(from_date: str, to_date: str, tz_name: str) -> tuple[datetime, datetime]:
    first, last = parse_date(from_date, "from_date"), parse_date(to_date, "to_date")
    if last < first:
        raise WorldError("to_date is before from_date")
    if (last - first).days >= MAX_WINDOW_DAYS:
        raise WorldError(f"Look at most {MAX_WINDOW_DAYS} days at a time")
    return day_window(first, last, zone(tz_name))


@world.tool(read_only=True, idempotent=True)
def get_free_busy(
    ctx: ToolContext,
    emails: Annotated[list[Email], Field(description="Whose free/busy to see.", min_length=1, max_length=10)],
    from_date: LocalDate,
    to_date: LocalDate,
    time_zone: OptionalTimeZone = None,
) -> FreeBusyResult:
    """Busy blocks (no titles: calendars are private) of people in the company directory between
    two dates inclusive (at most 14 days) in `time_zone` (the owner's if omitted), with each
    person's own time zone and working hours. Busy means a confirmed event they organize or were
    invited to and have not declined; cancelled occurrences and events shown as free do not
    count. People outside the directory have no known calendar."""
    me = owner(ctx.session)
    tz = zone(time_zone) if time_zone else zone(me.time_zone)
    lo, hi = _window(from_date, to_date, tz.key)
    people = []
    for email in check_addresses(ctx.session, emails):
        user = directory_user(ctx.session, email) if is_internal(email) else None
        if user is None:
            people.append(
                PersonFreeBusy(
                    email=email,
                    name=display_name(ctx.session, email),
                    calendar_known=False,
                    time_zone=None,
                    working_hours=None,
                    busy=[],
                )
            )
            continue
        blocks = merged(busy_intervals(ctx.session, email, lo, hi))
        people.append(
            PersonFreeBusy.from_row(
                user,
                calendar_known=True,
                working_hours=working_hours(user),
                busy=[
                    BusyBlock(
                        start_utc=iso(s), end_utc=iso(e), start_local=show_local(s, tz), end_local=show_local(e, tz)
                    )
                    for s, e in blocks
                ],
            )
        )
    return FreeBusyResult(time_zone=tz.key, from_utc=iso(lo), to_utc=iso(hi), people=people)


def _within_hours(user: User, start: datetime, end: datetime) -> bool:
    tz = zone(user.time_zone)
    local_start, local_end = start.astimezone(tz), end.astimezone(tz)
    if local_start.weekday() >= 5 or local_end.date() != local_start.date():
        return False
    return hhmm(user.work_start) <= local_start.time() and local_end.time() <= hhmm(user.work_end)


@world.tool(read_only=True, idempotent=True)
def find_meeting_slot(
    ctx: ToolContext,
    attendees: Annotated[
        list[Email], Field(description="Required attendees besides you.", min_length=1, max_length=10)
    ],
    duration_minutes: Annotated[int, Field(description="Meeting length.", ge=15, le=240)],
    from_date: LocalDate,
    to_date: LocalDate,
    time_zone: OptionalTimeZone = None,
    working_hours_only: Annotated[
        bool, Field(description="Only inside everyone's working hours (Mon-Fri, each in their own time zone).")
    ] = True,
    max_results: Annotated[int, Field(ge=1, le=10)] = 3,
) -> MeetingSlots:
    """The earliest times, on a 15-minute grid, between two dates inclusive (at most 14 days, in
    `time_zone`, the owner's if omitted) when the owner and every attendee in the directory are
    free, and by default inside each one's working hours in their own time zone. Slots start
    after the current time. Attendees outside the directory are not checked (listed as unknown)."""
    me = owner(ctx.session)
    tz = zone(time_zone) if time_zone else zone(me.time_zone)
    lo, hi = _window(from_date, to_date, tz.key)
    emails = [e for e in check_addresses(ctx.session, attendees) if e != me.email]
    users = [me]
    unknown = []
    for email in emails:
        user = directory_user(ctx.session, email) if is_internal(email) else None
        if user is None:
            unknown.append(email)
        else:
            users.append(user)
    busy = {u.email: merged(busy_intervals(ctx.session, u.email, lo, hi)) for u in users}
    length = timedelta(minutes=duration_minutes)
    epoch = datetime(2000, 1, 1, tzinfo=UTC)
    earliest = max(lo, ctx.now)
    cursor = epoch + -(-(earliest - epoch) // STEP) * STEP  # round up to the grid
    slots: list[SlotView] = []
    while cursor + length <= hi and len(slots) < max_results:
        end = cursor + length
        free = all(not any(s < end and cursor < e for s, e in busy[u.email]) for u in users)
        if free and (not working_hours_only or all(_within_hours(u, cursor, end) for u in users)):
            slots.append(
                SlotView(
                    start_utc=iso(cursor),
                    end_utc=iso(end),
                    start_local=show_local(cursor, tz),
                    end_local=show_local(end, tz),
                    attendee_local_starts={u.email: show_local(cursor, zone(u.time_zone)) for u in users},
                )
            )
        cursor += STEP
    return MeetingSlots(
        time_zone=tz.key,
        duration_minutes=duration_minutes,
        checked=[u.email for u in users],
        unknown=unknown,
        slots=slots,
    )
