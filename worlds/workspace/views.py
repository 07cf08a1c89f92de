"""What the workspace tools return: pydantic models, separate from the tables. Every time is
given in UTC (`..._utc`) and as local wall time (`..._local`, with the zone named). A view
shaped from one row is a RowView: `ContactView.from_row(contact)` reads every field the row has
(`contact_id` from `id`) and takes the rest as keywords."""

from __future__ import annotations

from pydantic import BaseModel

from mcpsim.world import RowView

# -- identity and time ---------------------------------------------------------------------------


class OwnerProfile(RowView):
    verified: bool
    name: str
    email: str
    title: str
    time_zone: str
    working_hours: str  # "09:00-17:30 Mon-Fri (Europe/London)"
    now_utc: str
    now_local: str


class CurrentTime(BaseModel):
    now_utc: str
    now_local: str
    time_zone: str
    utc_offset: str
    weekday: str


class ZoneTime(BaseModel):
    time_zone: str
    local: str
    utc_offset: str


class ConvertedTime(BaseModel):
    utc: str
    times: list[ZoneTime]


# -- mail ----------------------------------------------------------------------------------------


class ThreadSummary(RowView):
    id_field = "thread_id"
    thread_id: str
    subject: str
    location: str  # inbox | sent | archived | trash
    labels: list[str]
    participants: list[str]  # emails, the owner excluded
    message_count: int
    unread: bool
    has_attachments: bool
    last_message_utc: str
    last_message_local: str
    snippet: str


class MailSearchResult(BaseModel):
    total_count: int
    threads: list[ThreadSummary]


class AttachmentView(RowView):
    id_field = "file_id"
    file_id: str
    name: str
    kind: str
    owner_email: str
    you_can_open: bool


class MessageView(RowView):
    id_field = "message_id"
    message_id: str
    from_email: str
    from_name: str
    to: list[str]
    cc: list[str]
    bcc: list[str]
    subject: str
    body: str
    sent_utc: str
    sent_local: str
    is_read: bool
    in_reply_to: str | None
    forwarded_from: str | None
    attachments: list[AttachmentView]


class ThreadView(RowView):
    id_field = "thread_id"
    thread_id: str
    subject: str
    location: str
    labels: list[str]
    messages: list[MessageView]


class SentMessage(BaseModel):
    message_id: str
    thread_id: str
    subject: str
    to: list[str]
    cc: list[str]
    bcc: list[str]
    sent_utc: str
    attachment_file_ids: list[str]


class ThreadState(RowView):
    id_field = "thread_id"
    thread_id: str
    subject: str
    location: str
    labels: list[str]
    unread: bool


class LabelView(RowView):
    id_field = "label_id"
    label_id: str
    name: str
    thread_count: int


class LabelChange(BaseModel):
    label: str
    changed_thread_ids: list[str]  # threads whose labels changed
    unchanged_thread_ids: list[str]  # already as asked


class EmptiedTrash(BaseModel):
    deleted_thread_ids: list[str]
    deleted_message_count: int


# -- calendar ------------------------------------------------------------------------------------


class AttendeeView(RowView):
    email: str
    name: str
    optional: bool
    response: str  # needs_action | accepted | tentative | declined


class EventView(RowView):
    id_field = "event_id"
    event_id: str
    title: str
    status: str  # confirmed | cancelled
    organizer_email: str
    organizer_name: str
    your_role: str  # organizer | attendee
    your_response: str | None  # for an attendee
    start_utc: str
    end_utc: str
    start_local: str
    end_local: str
    event_time_zone: str
    location: str
    description: str
    show_as: str
    recurrence: str  # "does not repeat", "weekly on MO,WE until 2026-08-31 (Europe/London)"
    attendees: list[AttendeeView]
    cancelled_occurrences_local: list[str]
    next_occurrences_local: list[str]  # the next few from now, for a recurring event


class OccurrenceView(RowView):
    id_field = "event_id"
    event_id: str
    title: str
    start_utc: str
    end_utc: str
    start_local: str
    end_local: str
    organizer_email: str
    your_role: str
    your_response: str | None
    recurring: bool
    status: str
    show_as: str
    location: str


class EventList(BaseModel):
    time_zone: str
    from_date: str
    to_date: str
    occurrences: list[OccurrenceView]
    truncated: bool


class BusyBlock(BaseModel):
    start_utc: str
    end_utc: str
    start_local: str
    end_local: str


class PersonFreeBusy(RowView):
    email: str
    name: str
    calendar_known: bool  # false: not in the directory, free/busy unknown
    time_zone: str | None
    working_hours: str | None
    busy: list[BusyBlock]


class FreeBusyResult(BaseModel):
    time_zone: str
    from_utc: str
    to_utc: str
    people: list[PersonFreeBusy]


class SlotView(BaseModel):
    start_utc: str
    end_utc: str
    start_local: str
    end_local: str
    attendee_local_starts: dict[str, str]  # email -> that person's local start


class MeetingSlots(BaseModel):
    time_zone: str
    duration_minutes: int
    checked: list[str]  # whose calendars were checked (the owner and internal attendees)
    unknown: list[str]  # attendees outside the directory: not checked
    slots: list[SlotView]


# -- contacts ------------------------------------------------------------------------------------


class ContactView(RowView):
    id_field = "contact_id"
    contact_id: str
    name: str
    email: str
    phone: str
    company: str
    job_title: str
    notes: str
    starred: bool


class PersonHit(BaseModel):
    source: str  # contact | directory
    contact_id: str | None
    name: str
    email: str
    company: str
    title: str
    time_zone: str | None  # directory people only


class ContactSearchResult(BaseModel):
    total_count: int
    people: list[PersonHit]


# -- files ---------------------------------------------------------------------------------------


class FileView(RowView):
    id_field = "file_id"
    file_id: str
    name: str
    kind: str
    folder: str
    owner_email: str
    owner_name: str
    your_role: str  # owner | editor | commenter | viewer
    confidential: bool
    link_sharing: str  # off | viewer
    size_bytes: int
    modified_utc: str
    shared_with_count: int


class FileSearchResult(BaseModel):
    total_count: int
    files: list[FileView]


class PermissionView(RowView):
    email: str
    name: str
    role: str


class FilePermissions(RowView):
    id_field = "file_id"
    file_id: str
    name: str
    owner_email: str
    confidential: bool
    link_sharing: str
    permissions: list[PermissionView]
