"""Calendar tools: listing and reading events, scheduling, changing and cancelling the owner's
own events, and answering invitations from others."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from sqlalchemy import or_
from sqlmodel import col, select

from mcpsim.world import ToolContext, WorldError

from .. import world
from ..inputs import EmailList, EventId, LocalDate, LocalTime, OptionalTimeZone, Response
from ..recurrence import event_rule, expand, occurrences_in, series_end
from ..rules import WEEKDAYS, check_addresses, day_window, display_name, iso, owner, parse, parse_date, zone
from ..tables import Event, EventAttendee, EventException, User
from ..views import EventList, EventView
from .calendar import (
    Schedule,
    attendees_of,
    build_schedule,
    conflicts,
    event_view,
    occurrence_view,
    occurrences_of,
    refuse_conflicts,
    visible_event,
)

Title = Annotated[str, Field(description="The event title.", min_length=1, max_length=120)]
Weekday = Literal["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
MAX_LIST_DAYS = 31


def _organized(ctx: ToolContext, event_id: str, me: User, verb: str) -> Event:
    event = visible_event(ctx.session, event_id, me.email)
    if event.organizer_email != me.email:
        raise WorldError(
            f"Only the organizer can {verb} '{event.title}'; it is organized by "
            f"{display_name(ctx.session, event.organizer_email) or event.organizer_email} ({event.organizer_email}). "
            "As an invitee you can only respond to the invitation (respond_to_invitation)."
        )
    if event.status == "cancelled":
        raise WorldError(f"'{event.title}' ({event.id}) is cancelled")
    return event


# -- reading -------------------------------------------------------------------------------------


@world.tool(read_only=True, idempotent=True)
def list_events(
    ctx: ToolContext,
    from_date: LocalDate,
    to_date: LocalDate,
    time_zone: OptionalTimeZone = None,
    query: Annotated[str | None, Field(description="Words that must appear in the title.", max_length=100)] = None,
    include_declined: Annotated[bool, Field(description="Also list invitations you declined.")] = False,
    include_cancelled: bool = False,
    limit: Annotated[int, Field(description="At most this many occurrences (1 to 100).", ge=1, le=100)] = 50,
) -> EventList:
    """The owner's calendar between two dates inclusive (at most 31 days), in `time_zone` (the
    owner's if omitted): every occurrence of the events they organize or are invited to, with
    recurring events expanded and cancelled occurrences left out, in start order."""
    me = owner(ctx.session)
    tz = zone(time_zone) if time_zone else zone(me.time_zone)
    first, last = parse_date(from_date, "from_date"), parse_date(to_date, "to_date")
    if last < first:
        raise WorldError("to_date is before from_date")
    if (last - first).days >= MAX_LIST_DAYS:
        raise WorldError(f"List at most {MAX_LIST_DAYS} days at a time")
    lo, hi = day_window(first, last, tz)
    invited = select(EventAttendee.event_id).where(EventAttendee.email == me.email)
    if not include_declined:
        invited = invited.where(EventAttendee.response != "declined")
    statement = select(Event).where(
        Event.start_utc < iso(hi),
        Event.series_end_utc > iso(lo),
        or_(col(Event.organizer_email) == me.email, col(Event.id).in_(invited)),
    )
    if not include_cancelled:
        statement = statement.where(Event.status == "confirmed")
    for word in (query or "").split():
        statement = statement.where(col(Event.title).like(f"%{word}%"))
    found = []
    for event in ctx.session.exec(statement):
        for occurrence in occurrences_in(ctx.session, event, lo, hi):
            found.append(occurrence_view(ctx.session, event, occurrence, me.email, tz))
    found.sort(key=lambda o: (o.start_utc, o.event_id))
    return EventList(
        time_zone=tz.key,
        from_date=first.isoformat(),
        to_date=last.isoformat(),
        occurrences=found[:limit],
        truncated=len(found) > limit,
    )


@world.tool(read_only=True, idempotent=True)
def get_event(ctx: ToolContext, event_id: EventId, time_zone: OptionalTimeZone = None) -> EventView:
    """One event of the owner's calendar: times (UTC and local in `time_zone`, the owner's if
    omitted), organizer, attendees with their responses, recurrence, cancelled occurrences and
    the next occurrences. Events of others that do not invite the owner are private."""
    me = owner(ctx.session)
    tz = zone(time_zone) if time_zone else zone(me.time_zone)
    return event_view(ctx.session, visible_event(ctx.session, event_id, me.email), me.email, tz, ctx.now)


# -- the owner's events --------------------------------------------------------------------------


def _people(ctx: ToolContext, required: list[str], optional: list[str], me: str) -> tuple[list[str], list[str]]:
    req = check_addresses(ctx.session, required)
    opt = check_addresses(ctx.session, optional)
    both = sorted(set(req) & set(opt))
    if both:
        raise WorldError(f"{', '.join(both)} cannot be both a required and an optional attendee")
    if me in req or me in opt:
        raise WorldError("You are the organizer; do not list yourself as an attendee")
    if len(req) + len(opt) > 50:
        raise WorldError("An event can have at most 50 attendees")
    return req, opt


@world.tool(irreversible=True)
def create_event(
    ctx: ToolContext,
    title: Title,
    start: LocalTime,
    end: LocalTime,
    time_zone: OptionalTimeZone = None,
    attendees: Annotated[EmailList, Field(description="Required attendees (invited; must be free).")] = [],  # noqa: B006
    optional_attendees: Annotated[EmailList, Field(description="Optional attendees (invited; never block).")] = [],  # noqa: B006
    description: Annotated[str, Field(max_length=2000)] = "",
    location: Annotated[str, Field(max_length=200)] = "",
    repeat: Annotated[Literal["none", "daily", "weekly"], Field(description="How the event repeats.")] = "none",
    repeat_interval: Annotated[int, Field(description="Every N days or weeks.", ge=1, le=4)] = 1,
    repeat_weekdays: Annotated[
        list[Weekday], Field(description="Weekly: the days it repeats on (the start's day must be one).", max_length=7)
    ] = [],  # noqa: B006
    repeat_count: Annotated[int | None, Field(description="How many occurrences in all.", ge=2, le=200)] = None,
    repeat_until: Annotated[LocalDate | None, Field(description="The last date an occurrence may fall on.")] = None,
    show_as: Literal["busy", "free"] = "busy",
) -> EventView:
    """Schedule an event organized by the owner and invite attendees. `start` and `end` are
    local wall times in `time_zone` (the owner's if omitted); they are stored in UTC. The start
    must be in the future. Nobody required may be busy: neither the owner nor any required
    attendee in the directory (checked on their own calendars, time zones included, over every
    occurrence of a repeating event); optional attendees and outside people are not checked.
    A repeating event (daily or weekly) needs exactly one of repeat_count or repeat_until."""
    me = owner(ctx.session)
    tz_name = time_zone or me.time_zone
    schedule = build_schedule(
        start,
        end,
        tz_name,
        ctx.now,
        repeat=repeat,
        interval=repeat_interval,
        weekdays=repeat_weekdays,
        count=repeat_count,
        until=repeat_until,
    )
    required, optional = _people(ctx, attendees, optional_attendees, me.email)
    occurrences = occurrences_of(schedule)
    refuse_conflicts(conflicts(ctx.session, [me.email, *required], occurrences, schedule.tz, me=me.email))
    event = Event(
        id=ctx.new_id("event"),
        organizer_email=me.email,
        title=title.strip(),
        description=description.strip(),
        location=location.strip(),
        start_utc=iso(schedule.start),
        end_utc=iso(schedule.end),
        time_zone=schedule.tz.key,
        recur_freq=repeat,
        recur_interval=repeat_interval,
        recur_weekdays=",".join(sorted(set(repeat_weekdays), key=WEEKDAYS.index)),
        recur_count=repeat_count,
        recur_until=iso(schedule.rule.until) if schedule.rule.until else None,
        series_end_utc=iso(occurrences[-1].end),
        show_as=show_as,
        status="confirmed",
        created_at=iso(ctx.now),
        updated_at=iso(ctx.now),
    )
    ctx.session.add(event)
    ctx.session.flush()
    for email, is_optional in [*((e, False) for e in required), *((e, True) for e in optional)]:
        ctx.session.add(
            EventAttendee(event_id=event.id, email=email, name=display_name(ctx.session, email), optional=is_optional)
        )
    ctx.session.flush()
    return event_view(ctx.session, event, me.email, zone(me.time_zone), ctx.now)


@world.tool(irreversible=True)
def update_event(
    ctx: ToolContext,
    event_id: EventId,
    title: Title | None = None,
    start: LocalTime | None = None,
    end: LocalTime | None = None,
    time_zone: Annotated[
        str | None,
        Field(
            description="The IANA zone of start and end; the event's own zone if omitted.", min_length=3, max_length=64
        ),
    ] = None,
    description: Annotated[str | None, Field(max_length=2000)] = None,
    location: Annotated[str | None, Field(max_length=200)] = None,
    add_attendees: Annotated[
        EmailList, Field(description="New required attendees (or optional ones made required).")
    ] = [],  # noqa: B006
    add_optional_attendees: Annotated[
        EmailList, Field(description="New optional attendees (or required ones made optional).")
    ] = [],  # noqa: B006
    remove_attendees: Annotated[EmailList, Field(description="Attendees to uninvite.")] = [],  # noqa: B006
    show_as: Literal["busy", "free"] | None = None,
) -> EventView:
    """Change an event the owner organizes (only the organizer can). Give only what changes.
    New times (both start and end, local in `time_zone`) must be in the future and every
    required attendee and the owner must be free then; a new time resets everyone's response to
    needs_action. Added required attendees must be free at every occurrence. The time of a
    repeating series whose first occurrence has passed cannot be moved: cancel it and create a
    new one. An event that has already ended cannot be changed."""
    me = owner(ctx.session)
    event = _organized(ctx, event_id, me, "change")
    if parse(event.series_end_utc) <= ctx.now:
        raise WorldError(f"'{event.title}' has already taken place and can no longer be changed")
    existing = {a.email: a for a in attendees_of(ctx.session, event.id)}
    added_req, added_opt = _people(ctx, add_attendees, add_optional_attendees, me.email)
    removed = check_addresses(ctx.session, remove_attendees)
    clash = sorted((set(added_req) | set(added_opt)) & set(removed))
    if clash:
        raise WorldError(f"{', '.join(clash)} cannot be both added and removed")
    missing = [e for e in removed if e not in existing]
    if missing:
        raise WorldError(f"{', '.join(missing)} is not invited to '{event.title}'")
    if start is None and end is None and time_zone is not None:
        raise WorldError("time_zone only applies when start and end are given")
    retimed = start is not None or end is not None
    start_utc, end_utc, tz, rule = event_rule(event)
    if retimed:
        if start is None or end is None:
            raise WorldError("Give both start and end to move an event")
        if rule.freq != "none" and start_utc <= ctx.now:
            raise WorldError(
                f"'{event.title}' is a series that has already started; its time cannot be moved. Cancel it and "
                "create a new series"
            )
        moved: Schedule = build_schedule(start, end, time_zone or event.time_zone, ctx.now)
        schedule = Schedule(moved.start, moved.end, moved.tz, rule)
    else:
        schedule = Schedule(start_utc, end_utc, tz, rule)
    final_required = [e for e, a in existing.items() if e not in removed and not a.optional and e not in added_opt] + [
        e for e in added_req if e not in existing or existing[e].optional
    ]
    newly_required = [e for e in added_req if e not in existing or existing[e].optional]
    occurrences = [o for o in expand(schedule.start, schedule.end, schedule.tz, schedule.rule) if o.end > ctx.now]
    to_check = [me.email, *final_required] if retimed else newly_required
    refuse_conflicts(
        conflicts(ctx.session, to_check, occurrences, zone(me.time_zone), me=me.email, exclude_event=event.id)
    )
    if title is not None:
        event.title = title.strip()
    if description is not None:
        event.description = description.strip()
    if location is not None:
        event.location = location.strip()
    if show_as is not None:
        event.show_as = show_as
    if retimed:
        event.start_utc, event.end_utc, event.time_zone = iso(schedule.start), iso(schedule.end), schedule.tz.key
        event.series_end_utc = iso(series_end(schedule.start, schedule.end, schedule.tz, schedule.rule))
    for email in removed:
        ctx.session.delete(existing[email])
    for email, is_optional in [*((e, False) for e in added_req), *((e, True) for e in added_opt)]:
        row = existing.get(email)
        if row is None:
            ctx.session.add(
                EventAttendee(
                    event_id=event.id, email=email, name=display_name(ctx.session, email), optional=is_optional
                )
            )
        elif row.optional != is_optional:
            row.optional = is_optional
            ctx.session.add(row)
    if retimed:
        for email, row in existing.items():
            if email not in removed and row.response != "needs_action":
                row.response, row.responded_at = "needs_action", None
                ctx.session.add(row)
    event.updated_at = iso(ctx.now)
    ctx.session.add(event)
    ctx.session.flush()
    return event_view(ctx.session, event, me.email, zone(me.time_zone), ctx.now)


@world.tool(destructive=True, irreversible=True)
def cancel_event(
    ctx: ToolContext,
    event_id: EventId,
    occurrence_date: Annotated[
        LocalDate | None,
        Field(
            description="Cancel only the occurrence of a repeating event on this date (the event's time zone); "
            "the whole event or series if omitted."
        ),
    ] = None,
) -> EventView:
    """Cancel an event the owner organizes (only the organizer can; an invitee declines
    instead), or one future occurrence of a repeating event. The event stays on record as
    cancelled and frees everyone's time. Events that have already taken place cannot be
    cancelled."""
    me = owner(ctx.session)
    event = _organized(ctx, event_id, me, "cancel")
    start, end, tz, rule = event_rule(event)
    if occurrence_date is not None:
        if rule.freq == "none":
            raise WorldError(f"'{event.title}' does not repeat; cancel the whole event instead (omit occurrence_date)")
        day = parse_date(occurrence_date, "occurrence_date")
        match = next((o for o in expand(start, end, tz, rule) if o.start.astimezone(tz).date() == day), None)
        if match is None:
            raise WorldError(f"'{event.title}' has no occurrence on {day.isoformat()} ({tz.key})")
        key = iso(match.start)
        if ctx.session.get(EventException, (event.id, key)) is not None:
            raise WorldError(f"The occurrence of '{event.title}' on {day.isoformat()} is already cancelled")
        if match.start <= ctx.now:
            raise WorldError(f"The occurrence of '{event.title}' on {day.isoformat()} has already started")
        ctx.session.add(EventException(event_id=event.id, occurrence_start_utc=key, cancelled_at=iso(ctx.now)))
    else:
        if parse(event.series_end_utc) <= ctx.now:
            raise WorldError(f"'{event.title}' has already taken place and cannot be cancelled")
        event.status = "cancelled"
        event.cancelled_at = iso(ctx.now)
    event.updated_at = iso(ctx.now)
    ctx.session.add(event)
    ctx.session.flush()
    return event_view(ctx.session, event, me.email, zone(me.time_zone), ctx.now)


@world.tool(idempotent=True, irreversible=True)
def respond_to_invitation(ctx: ToolContext, event_id: EventId, response: Response) -> EventView:
    """Answer an invitation the owner received: accepted, tentative or declined (for a
    repeating event, the whole series). Only an invitee responds; the organizer of an event
    changes or cancels it instead. Cancelled or past events cannot be answered."""
    me = owner(ctx.session)
    event = visible_event(ctx.session, event_id, me.email)
    if event.organizer_email == me.email:
        raise WorldError(
            f"You organize '{event.title}'; only invitees respond to invitations. Change it with update_event or "
            "cancel it with cancel_event"
        )
    if event.status == "cancelled":
        raise WorldError(f"'{event.title}' has been cancelled by its organizer; there is nothing to answer")
    if parse(event.series_end_utc) <= ctx.now:
        raise WorldError(f"'{event.title}' has already taken place")
    mine = ctx.session.get(EventAttendee, (event.id, me.email))
    assert mine is not None  # visible_event: the owner is the organizer or an invitee
    if mine.response != response:
        mine.response = response
        mine.responded_at = iso(ctx.now)
        ctx.session.add(mine)
        ctx.session.flush()
    return event_view(ctx.session, event, me.email, zone(me.time_zone), ctx.now)
