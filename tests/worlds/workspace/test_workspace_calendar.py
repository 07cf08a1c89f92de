"""Calendar: local times with IANA zones stored as UTC, recurring events expanded deterministically
(daylight saving included), free/busy, conflicts with required attendees, and who may change,
cancel or answer what."""

from __future__ import annotations

from typing import Any

from workspace_support import ME, colleague, meeting

# Story events used below (all at the small scale, London times in May are UTC+1):
#   Board prep          Dana + Grace   Mon 18 May 09:00-10:00 New York  = 13:00-14:00 UTC
#   Hiring committee    Lukas, Ravi, Priya  Tue 19 May 10:00-12:00 Berlin = 08:00-10:00 UTC
#   Eng sync            Lukas, owner, Ravi weekly Tue 14:00 Berlin, 20 times from 7 April
#   Ops standup         owner weekly Mon-Fri 09:30-09:45 London until 31 July, not on 25 May
#   Finance offsite planning  Dana's, owner declined, Fri 22 May 10:00 New York = 14:00 UTC


def busy_utc(desk, email: str, day: str) -> list[tuple[str, str]]:
    result = desk.ok("get_free_busy", emails=[email], from_date=day, to_date=day, time_zone="UTC")
    return [(b.start_utc[11:16], b.end_utc[11:16]) for b in result.people[0].busy]


def slots_on(desk, day: str, attendees: list[str], minutes: int, **options: Any) -> list[Any]:
    """The meeting slots find_meeting_slot offers on one day."""
    found = desk.ok(
        "find_meeting_slot", attendees=attendees, duration_minutes=minutes, from_date=day, to_date=day, **options
    )
    return found.slots


# -- time zones --------------------------------------------------------------------------------


def test_the_clock_and_conversions_use_iana_zones(desk):
    now = desk.ok("get_current_time")
    assert now.now_utc == "2026-05-15T09:00:30+00:00" and now.now_local.startswith("2026-05-15T10:00 (Fri)")
    assert now.utc_offset == "UTC+01:00" and now.weekday == "Friday"
    kolkata = desk.ok("get_current_time", time_zone="Asia/Kolkata")
    assert kolkata.now_local.startswith("2026-05-15T14:31")  # a tick later
    converted = desk.ok(
        "convert_time",
        local_time="2026-05-19T14:00",
        from_time_zone="Europe/London",
        to_time_zones=["Asia/Kolkata", "America/New_York", "Australia/Sydney"],
    )
    assert converted.utc == "2026-05-19T13:00:00+00:00"
    assert [t.local[:16] for t in converted.times] == ["2026-05-19T18:30", "2026-05-19T09:00", "2026-05-19T23:00"]
    winter = desk.ok(
        "convert_time",
        local_time="2026-12-01T14:00",
        from_time_zone="Europe/London",
        to_time_zones=["Australia/Sydney"],
    )
    assert winter.times[0].local.startswith("2026-12-02T01:00") and winter.times[0].utc_offset == "UTC+11:00"
    desk.fails(
        "convert_time",
        "Unknown time zone 'Mars/Olympus'",
        local_time="2026-05-19T14:00",
        from_time_zone="Mars/Olympus",
        to_time_zones=["UTC"],
    )
    desk.fails(
        "convert_time",
        "is not an IANA time zone name",
        local_time="2026-05-19T14:00",
        from_time_zone="../../etc/passwd",
        to_time_zones=["UTC"],
    )


def test_a_local_time_skipped_by_daylight_saving_does_not_exist(desk):
    # Sydney jumps from 02:00 to 03:00 on Sunday 4 October 2026.
    desk.fails(
        "convert_time",
        "does not exist in Australia/Sydney",
        local_time="2026-10-04T02:30",
        from_time_zone="Australia/Sydney",
        to_time_zones=["UTC"],
    )
    desk.fails(
        "create_event",
        "does not exist in Australia/Sydney",
        **meeting("x", "2026-10-04", "02:30", "03:30"),
        time_zone="Australia/Sydney",
    )
    # A repeated hour (New York falls back on 1 November) means its first occurrence.
    repeated = desk.ok(
        "convert_time", local_time="2026-11-01T01:30", from_time_zone="America/New_York", to_time_zones=["UTC"]
    )
    assert repeated.utc == "2026-11-01T05:30:00+00:00"


def test_an_event_is_stored_in_utc_and_shown_in_the_owners_zone(desk):
    event = desk.ok(
        "create_event",
        **meeting("Sync with Dana", "2026-05-23", "09:00", "09:30"),
        time_zone="America/New_York",
        attendees=[colleague("dana")],
    )
    row = desk.row("SELECT * FROM events WHERE id = ?", event.event_id)
    assert (row["start_utc"], row["end_utc"], row["time_zone"]) == (
        "2026-05-23T13:00:00+00:00",
        "2026-05-23T13:30:00+00:00",
        "America/New_York",
    )
    assert event.start_local.startswith("2026-05-23T14:00 (Sat) Europe/London")
    in_tokyo = desk.ok("get_event", event_id=event.event_id, time_zone="Asia/Tokyo")
    assert in_tokyo.start_local.startswith("2026-05-23T22:00")
    attendee = desk.row("SELECT * FROM event_attendees WHERE event_id = ?", event.event_id)
    assert (attendee["email"], attendee["response"], attendee["optional"]) == (colleague("dana"), "needs_action", 0)


# -- recurrence --------------------------------------------------------------------------------


def test_a_recurring_series_keeps_its_local_time_across_daylight_saving(desk):
    series = desk.ok(
        "create_event",
        **meeting("NY weekly", "2026-10-26", "09:00", "09:30"),
        time_zone="America/New_York",
        attendees=[colleague("dana")],
        repeat="weekly",
        repeat_count=3,
    )
    listed = desk.ok("list_events", from_date="2026-10-26", to_date="2026-11-15", time_zone="UTC", query="NY weekly")
    # 09:00 EDT is 13:00 UTC; after New York falls back on 1 November, 09:00 EST is 14:00 UTC.
    assert [o.start_utc for o in listed.occurrences] == [
        "2026-10-26T13:00:00+00:00",
        "2026-11-02T14:00:00+00:00",
        "2026-11-09T14:00:00+00:00",
    ]
    row = desk.row("SELECT * FROM events WHERE id = ?", series.event_id)
    assert row["series_end_utc"] == "2026-11-09T14:30:00+00:00" and row["recur_count"] == 3
    # The seeded APAC review is 17:00 in Sydney: 06:00 UTC under AEDT, 07:00 UTC after 5 April.
    apac = desk.ok("list_events", from_date="2026-03-30", to_date="2026-04-12", time_zone="UTC", query="APAC")
    assert [o.start_utc for o in apac.occurrences] == ["2026-04-02T06:00:00+00:00", "2026-04-09T07:00:00+00:00"]


def test_count_until_and_weekdays_bound_a_series(desk):
    # Eng sync: 20 weekly occurrences from Tuesday 7 April, so the last is 18 August.
    sync = desk.ok("list_events", from_date="2026-08-11", to_date="2026-08-31", query="Eng sync")
    assert [o.start_local[:10] for o in sync.occurrences] == ["2026-08-11", "2026-08-18"]
    # Standup: Monday to Friday until 31 July inclusive, and cancelled on the bank holiday (25 May).
    standup = desk.ok("list_events", from_date="2026-05-25", to_date="2026-05-29", query="standup")
    assert [o.start_local[:10] for o in standup.occurrences] == ["2026-05-26", "2026-05-27", "2026-05-28", "2026-05-29"]
    end = desk.ok("list_events", from_date="2026-07-30", to_date="2026-08-04", query="standup")
    assert [o.start_local[:10] for o in end.occurrences] == ["2026-07-30", "2026-07-31"]
    weekdays = desk.ok(
        "create_event",
        **meeting("Tue/Thu check", "2026-06-02", "16:00", "16:15"),
        repeat="weekly",
        repeat_weekdays=["TH", "TU"],
        repeat_until="2026-06-11",
    )
    days = desk.ok("list_events", from_date="2026-06-01", to_date="2026-06-30", query="Tue/Thu")
    assert [o.start_local[:10] for o in days.occurrences] == ["2026-06-02", "2026-06-04", "2026-06-09", "2026-06-11"]
    assert desk.value("SELECT recur_weekdays FROM events WHERE id = ?", weekdays.event_id) == "TU,TH"
    daily = desk.ok(
        "create_event",
        **meeting("Every other day", "2026-06-01", "17:00", "17:10"),
        repeat="daily",
        repeat_interval=2,
        repeat_count=3,
    )
    assert desk.ok("get_event", event_id=daily.event_id).next_occurrences_local[2].startswith("2026-06-05T17:00")


def test_repeat_arguments_must_be_consistent(desk):
    base = {"title": "x", "start": "2026-06-02T16:00", "end": "2026-06-02T16:30"}
    desk.fails("create_event", "exactly one of repeat_count or repeat_until", **base, repeat="weekly")
    desk.fails(
        "create_event",
        "exactly one of repeat_count or repeat_until",
        **base,
        repeat="weekly",
        repeat_count=3,
        repeat_until="2026-07-01",
    )
    desk.fails(
        "create_event",
        "must fall on one of the repeat days",
        **base,
        repeat="weekly",
        repeat_weekdays=["MO"],
        repeat_count=3,
    )
    desk.fails("create_event", "only apply to a repeating event", **base, repeat_count=3)
    desk.fails(
        "create_event", "repeat_until is before the first occurrence", **base, repeat="daily", repeat_until="2026-06-01"
    )
    desk.fails("create_event", "at most two years", **base, repeat="weekly", repeat_until="2028-07-01")
    assert desk.invalid("create_event", **base, repeat="monthly", repeat_count=3)
    assert desk.invalid("create_event", **base, repeat="weekly", repeat_count=201)


def test_events_start_in_the_future_and_last_at_most_twelve_hours(desk):
    desk.fails("create_event", "is in the past", title="x", start="2026-05-15T09:00", end="2026-05-15T09:30")
    desk.fails(
        "create_event", "The end must be after the start", title="x", start="2026-05-23T09:00", end="2026-05-23T09:00"
    )
    desk.fails("create_event", "at most 12 hours", title="x", start="2026-05-23T07:00", end="2026-05-23T19:30")
    assert desk.invalid("create_event", title="x", start="2026-05-23 09:00", end="2026-05-23T10:00")


# -- free/busy and conflicts -------------------------------------------------------------------


def test_free_busy_expands_series_skips_cancelled_occurrences_and_hides_titles(desk):
    assert ("08:30", "08:45") in busy_utc(desk, ME, "2026-05-26")
    assert ("08:30", "08:45") not in busy_utc(desk, ME, "2026-05-25")  # the bank-holiday exception
    outside = desk.ok(
        "get_free_busy",
        emails=["nadia.rahman@acmelogistics.com", colleague("dana")],
        from_date="2026-05-18",
        to_date="2026-05-18",
    )
    assert outside.people[0].calendar_known is False and outside.people[0].busy == []
    dana = outside.people[1]
    assert dana.time_zone == "America/New_York" and dana.working_hours.startswith("09:00-17:00")
    assert "Board prep" not in str(dana.model_dump())
    assert [(b.start_local[:16], b.end_local[:16]) for b in dana.busy] == [("2026-05-18T14:00", "2026-05-18T15:00")]
    desk.fails("get_free_busy", "Look at most 14 days", emails=[ME], from_date="2026-05-18", to_date="2026-06-01")


def test_a_required_attendee_busy_in_their_own_time_zone_blocks_the_slot(desk):
    budget = {"title": "Budget", "attendees": [colleague("dana")]}
    in_new_york = {**budget, "time_zone": "America/New_York"}
    # Dana's board prep is 09:00-10:00 New York; 14:30 London falls inside it.
    busy = "Dana Whitfield (dana.whitfield@larkspurlabs.com) is busy"
    result = desk.fails("create_event", busy, **budget, start="2026-05-18T14:30", end="2026-05-18T15:00")
    assert "from 2026-05-18T14:00 (Mon) Europe/London to 15:00" in result.error
    desk.fails("create_event", "Dana Whitfield", **in_new_york, start="2026-05-18T09:30", end="2026-05-18T10:00")
    # Touching is not overlapping: right after her block is free.
    desk.ok("create_event", **in_new_york, start="2026-05-18T10:00", end="2026-05-18T10:30")


def test_optional_and_outside_attendees_never_block(desk):
    event = desk.ok(
        "create_event",
        **meeting("Budget", "2026-05-18", "14:30", "15:00"),
        optional_attendees=[colleague("dana")],
        attendees=["nadia.rahman@acmelogistics.com"],
    )
    assert {(a.email, a.optional) for a in event.attendees} == {
        (colleague("dana"), True),
        ("nadia.rahman@acmelogistics.com", False),
    }


def test_the_owner_is_never_double_booked_but_free_events_and_declined_invitations_do_not_count(desk):
    desk.ok("create_event", title="Reminder", start="2026-05-23T10:00", end="2026-05-23T11:00", show_as="free")
    desk.ok("create_event", title="Call", start="2026-05-23T10:30", end="2026-05-23T11:00")
    desk.fails(
        "create_event", "You are busy with 'Call'", title="Clash", start="2026-05-23T10:45", end="2026-05-23T11:15"
    )
    # The owner declined Dana's finance offsite planning (Fri 22 May 15:00-16:00 London): not busy.
    assert ("14:00", "15:00") not in busy_utc(desk, ME, "2026-05-22")
    desk.ok("create_event", title="Solo", start="2026-05-22T15:00", end="2026-05-22T15:30")
    offsite = desk.event("Finance offsite planning")
    desk.ok("respond_to_invitation", event_id=offsite["id"], response="tentative")
    desk.fails(
        "create_event",
        "You are busy with 'Finance offsite planning'",
        **meeting("Solo 2", "2026-05-22", "15:30", "16:00"),
    )


def test_every_occurrence_of_a_new_series_is_checked(desk):
    # Eng sync's last occurrence is Tuesday 18 August, 13:00-14:00 London; Monday the 17th is free.
    series = {
        "title": "Series",
        "attendees": [colleague("ravi")],
        "repeat": "weekly",
        "repeat_weekdays": ["MO", "TU"],
        "repeat_count": 2,
    }
    overlap = "overlapping the occurrence at 2026-08-18T13:30 (Tue)"
    result = desk.fails("create_event", overlap, **series, start="2026-08-17T13:30", end="2026-08-17T14:00")
    assert "Ravi Iyer" in result.error and "You are busy with 'Eng sync'" in result.error
    desk.ok("create_event", **series, start="2026-08-17T14:00", end="2026-08-17T14:30")


def test_meeting_slots_respect_everyones_working_hours_in_their_own_zone(desk):
    dana, ravi, day = colleague("dana"), colleague("ravi"), "2026-09-16"
    # Wednesday 16 September has no meetings for these people. Dana starts 09:00 New York (14:00 London).
    slots = slots_on(desk, day, [dana], 30)
    assert slots[0].start_local.startswith("2026-09-16T14:00") and len(slots) == 3
    # Ravi works 11:00-19:30 in Kolkata (UTC+05:30): with the owner, the day starts at 09:00 London.
    assert slots_on(desk, day, [ravi], 30, max_results=1)[0].attendee_local_starts[ravi].startswith("2026-09-16T13:30")
    # All three: from 14:00 London (Dana) until 15:00 London (Ravi stops at 19:30 IST).
    assert [s.start_local[11:16] for s in slots_on(desk, day, [dana, ravi], 45, max_results=10)] == ["14:00", "14:15"]
    assert slots_on(desk, day, [dana, ravi], 90) == []
    # Sofia (Los Angeles) and Ravi (Kolkata) never share working hours; without them anything free goes.
    apart = [colleague("sofia"), ravi]
    assert (
        desk.ok(
            "find_meeting_slot", attendees=apart, duration_minutes=30, from_date="2026-09-14", to_date="2026-09-18"
        ).slots
        == []
    )
    anytime = slots_on(desk, day, apart, 30, working_hours_only=False)
    assert anytime[0].start_local.startswith("2026-09-16T00:00")


def test_meeting_slots_avoid_busy_time_and_the_past_and_flag_outsiders(desk):
    # Tuesday 19 May: Lukas is in the hiring committee 09:00-11:00 London, then Eng sync 13:00-14:00.
    found = desk.ok(
        "find_meeting_slot",
        attendees=[colleague("lukas"), "sam.whitaker@gmail.com"],
        duration_minutes=60,
        from_date="2026-05-19",
        to_date="2026-05-19",
        max_results=10,
    )
    starts = [s.start_local[11:16] for s in found.slots]
    assert starts[0] == "11:00" and "13:00" not in starts and "12:15" not in starts
    assert found.unknown == ["sam.whitaker@gmail.com"] and found.checked == [ME, colleague("lukas")]
    today = slots_on(desk, "2026-05-15", [colleague("tom")], 30, max_results=1)
    assert today[0].start_utc >= "2026-05-15T09:15:00+00:00"  # the next quarter hour after now


# -- who may change what -----------------------------------------------------------------------


def test_only_an_invitee_answers_an_invitation(desk):
    allhands = desk.event("Quarterly all-hands")
    answered = desk.ok("respond_to_invitation", event_id=allhands["id"], response="accepted")
    assert answered.your_response == "accepted" and answered.your_role == "attendee"
    row = desk.row("SELECT * FROM event_attendees WHERE event_id = ? AND email = ?", allhands["id"], ME)
    assert row["response"] == "accepted" and row["responded_at"] == "2026-05-15T09:00:30+00:00"
    standup = desk.event("Ops standup")
    desk.fails("respond_to_invitation", "You organize 'Ops standup'", event_id=standup["id"], response="declined")
    board = desk.event("Board prep")  # Dana's, without the owner: private
    desk.fails("respond_to_invitation", "not found on your calendar", event_id=board["id"], response="accepted")
    desk.fails("get_event", "not found on your calendar", event_id=board["id"])
    assert desk.invalid("respond_to_invitation", event_id=allhands["id"], response="maybe")


def test_cancelled_or_past_invitations_cannot_be_answered(desk):
    critique = desk.event("Design critique: onboarding flow")
    desk.ep.edit("UPDATE events SET status = 'cancelled' WHERE id = ?", (critique["id"],))
    desk.fails(
        "respond_to_invitation", "has been cancelled by its organizer", event_id=critique["id"], response="accepted"
    )
    panel = desk.event("Interview panel: Senior Data Engineer")
    desk.ep.edit(
        "UPDATE events SET start_utc = '2026-05-14T09:00:00+00:00', end_utc = '2026-05-14T10:00:00+00:00', "
        "series_end_utc = '2026-05-14T10:00:00+00:00' WHERE id = ?",
        (panel["id"],),
    )
    desk.fails("respond_to_invitation", "has already taken place", event_id=panel["id"], response="declined")


def test_declining_frees_the_owners_time(desk):
    allhands = desk.event("Quarterly all-hands")  # Thu 21 May 15:00-16:00 UTC, owner needs_action
    assert ("15:00", "16:00") in busy_utc(desk, ME, "2026-05-21")
    desk.ok("respond_to_invitation", event_id=allhands["id"], response="declined")
    assert ("15:00", "16:00") not in busy_utc(desk, ME, "2026-05-21")
    hidden = desk.ok("list_events", from_date="2026-05-21", to_date="2026-05-21")
    assert "Quarterly all-hands" not in [o.title for o in hidden.occurrences]
    shown = desk.ok("list_events", from_date="2026-05-21", to_date="2026-05-21", include_declined=True)
    assert "Quarterly all-hands" in [o.title for o in shown.occurrences]


def test_only_the_organizer_changes_or_cancels_an_event(desk):
    sync = desk.event("Eng sync")
    desk.update_fails(
        sync, "Only the organizer can change 'Eng sync'; it is organized by Lukas Becker", title="Renamed"
    )
    desk.fails(
        "cancel_event",
        "Only the organizer can cancel 'Quarterly all-hands'",
        event_id=desk.event("Quarterly all-hands")["id"],
    )


def test_moving_an_event_checks_everyone_and_resets_responses(desk):
    call = desk.event("Acme Logistics renewal call")  # Nadia and Tom accepted
    # Tom accepted the all-hands, Thu 21 May 16:00-17:00 London.
    desk.update_fails(
        call, "Tom Okafor (tom.okafor@larkspurlabs.com) is busy", start="2026-05-21T16:15", end="2026-05-21T17:00"
    )
    moved = desk.ok("update_event", event_id=call["id"], start="2026-05-23T10:00", end="2026-05-23T10:45")
    assert moved.start_utc == "2026-05-23T09:00:00+00:00"
    assert {a.response for a in moved.attendees} == {"needs_action"}
    desk.update_fails(call, "Give both start and end", start="2026-05-23T11:00")
    desk.update_fails(call, "is in the past", start="2026-05-14T11:00", end="2026-05-14T11:30")


def test_attendee_changes_on_an_organized_event(desk):
    standup = desk.event("Ops standup")
    # Ravi is in the hiring committee on Tuesday 19 May 09:00-11:00 London, over the 09:30 standup.
    desk.update_fails(standup, "Ravi Iyer (ravi.iyer@larkspurlabs.com) is busy", add_attendees=[colleague("ravi")])
    updated = desk.ok(
        "update_event",
        event_id=standup["id"],
        add_optional_attendees=[colleague("ravi")],
        remove_attendees=[colleague("oliver")],
        title="Ops standup (daily)",
    )
    assert {a.email: a.optional for a in updated.attendees} == {
        colleague("priya"): False,
        colleague("chloe"): False,
        colleague("ravi"): True,
    }
    responses = {a.email: a.response for a in updated.attendees}
    assert responses[colleague("priya")] == "accepted"  # no new time: answers are kept
    desk.update_fails(standup, "is not invited", remove_attendees=[colleague("dana")])
    desk.update_fails(
        standup,
        "cannot be both added and removed",
        add_attendees=[colleague("tom")],
        remove_attendees=[colleague("tom")],
    )
    desk.update_fails(
        standup, "has already started; its time cannot be moved", start="2026-05-18T10:00", end="2026-05-18T10:15"
    )
    desk.update_fails(desk.event("Q2 planning retro"), "already taken place", title="x")


def test_cancelling_one_occurrence_or_the_whole_event(desk):
    standup = desk.event("Ops standup")
    cancelled = desk.ok("cancel_event", event_id=standup["id"], occurrence_date="2026-05-19")
    assert any(c.startswith("2026-05-19T09:30") for c in cancelled.cancelled_occurrences_local)
    assert desk.row(
        "SELECT * FROM event_exceptions WHERE event_id = ? AND occurrence_start_utc = ?",
        standup["id"],
        "2026-05-19T08:30:00+00:00",
    )
    assert ("08:30", "08:45") not in busy_utc(desk, ME, "2026-05-19")
    assert cancelled.status == "confirmed"
    desk.fails("cancel_event", "is already cancelled", event_id=standup["id"], occurrence_date="2026-05-19")
    desk.fails("cancel_event", "has no occurrence on 2026-05-23", event_id=standup["id"], occurrence_date="2026-05-23")
    desk.fails("cancel_event", "has already started", event_id=standup["id"], occurrence_date="2026-05-14")
    call = desk.event("Acme Logistics renewal call")
    desk.fails("cancel_event", "does not repeat", event_id=call["id"], occurrence_date="2026-05-20")
    whole = desk.ok("cancel_event", event_id=call["id"])
    assert whole.status == "cancelled" and len(whole.attendees) == 2
    assert desk.value("SELECT status FROM events WHERE id = ?", call["id"]) == "cancelled"
    assert ("14:00", "14:45") not in busy_utc(desk, ME, "2026-05-20")
    desk.fails("cancel_event", "is cancelled", event_id=call["id"])
    desk.fails("cancel_event", "already taken place", event_id=desk.event("Q2 planning retro")["id"])


def test_listing_is_bounded_and_expands_series(desk):
    desk.fails("list_events", "List at most 31 days", from_date="2026-05-01", to_date="2026-06-01")
    desk.fails("list_events", "to_date is before from_date", from_date="2026-05-20", to_date="2026-05-19")
    week = desk.ok("list_events", from_date="2026-05-18", to_date="2026-05-22")
    assert [o.start_local[:10] for o in week.occurrences if o.title == "Ops standup"] == [
        "2026-05-18",
        "2026-05-19",
        "2026-05-20",
        "2026-05-21",
        "2026-05-22",
    ]
    assert week.occurrences == sorted(week.occurrences, key=lambda o: o.start_utc)
    assert "Warehouse tour" not in [
        o.title for o in desk.ok("list_events", from_date="2026-05-27", to_date="2026-05-27").occurrences
    ]
    assert len(desk.ok("list_events", from_date="2026-05-18", to_date="2026-05-22", limit=3).occurrences) == 3
