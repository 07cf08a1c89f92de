"""Verifying the owner, and the clock: the current time and conversions between time zones."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpsim.world import ToolContext, WorldError

from .. import world
from ..inputs import Email, LocalTime, OptionalTimeZone, TimeZone
from ..rules import iso, local_to_utc, normalize_email, owner, owner_zone, show_local, utc_offset, working_hours, zone
from ..views import ConvertedTime, CurrentTime, OwnerProfile, ZoneTime


@world.tool(read_only=True, idempotent=True)
def verify_owner(
    ctx: ToolContext,
    email: Email,
    passcode: Annotated[str, Field(description="The owner's 6-digit assistant passcode.", min_length=1, max_length=12)],
) -> OwnerProfile:
    """Verify that you are talking with the workspace owner: their work email address and their
    6-digit assistant passcode must match. Do this first, before reading or changing any mail,
    event, contact or file. Returns the owner's profile: name, time zone and working hours."""
    me = owner(ctx.session)
    if normalize_email(email) != me.email or passcode.strip() != me.passcode:
        raise WorldError(
            "Verification failed: that email address and passcode do not match the owner of this workspace. "
            "Do not read or change anything in it."
        )
    tz = zone(me.time_zone)
    return OwnerProfile.from_row(
        me, verified=True, working_hours=working_hours(me), now_utc=iso(ctx.now), now_local=show_local(ctx.now, tz)
    )


@world.tool(read_only=True, idempotent=True)
def get_current_time(ctx: ToolContext, time_zone: OptionalTimeZone = None) -> CurrentTime:
    """The current date and time, in UTC and as local time in `time_zone` (the owner's time zone
    if omitted), with the weekday. Use it to work out dates such as "next Tuesday"."""
    tz = zone(time_zone) if time_zone else owner_zone(ctx.session)
    local = ctx.now.astimezone(tz)
    return CurrentTime(
        now_utc=iso(ctx.now),
        now_local=show_local(ctx.now, tz),
        time_zone=tz.key,
        utc_offset=utc_offset(ctx.now, tz),
        weekday=f"{local:%A}",
    )


@world.tool(read_only=True, idempotent=True)
def convert_time(
    ctx: ToolContext,
    local_time: LocalTime,
    from_time_zone: TimeZone,
    to_time_zones: Annotated[list[TimeZone], Field(description="Zones to convert into.", min_length=1, max_length=10)],
) -> ConvertedTime:
    """Convert a local wall time in one IANA time zone into UTC and other time zones, with their
    UTC offsets on that date (daylight saving time included). A wall time skipped by a
    daylight-saving jump does not exist and is refused."""
    source = zone(from_time_zone)
    moment = local_to_utc(local_time, source)
    times = []
    for name in to_time_zones:
        tz = zone(name)
        times.append(ZoneTime(time_zone=tz.key, local=show_local(moment, tz), utc_offset=utc_offset(moment, tz)))
    return ConvertedTime(utc=iso(moment), times=times)
