"""The workspace world's tables: one person's mail, calendar, contacts and files, and the
directory of colleagues whose calendars are visible for free/busy.

Times are ISO-8601 strings in UTC (`2026-05-15T09:00:00+00:00`), which sort as text; an event
also keeps the IANA time zone it was scheduled in, so a recurring series keeps its local wall
time across daylight-saving changes. Emails are stored lower-case. Every column a tool looks rows
up by is indexed. The tables use a registry of their own.
"""

from __future__ import annotations

from sqlalchemy import Index
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel


class WorkspaceTable(SQLModel, registry=registry()):
    """Base of every workspace table (its own metadata: `WorkspaceTable.metadata`)."""


# -- people ------------------------------------------------------------------------------------


class User(WorkspaceTable, table=True):
    """A workspace account of the company (the directory). Exactly one is the owner, "me": the
    person the assistant acts for. Every user has a calendar whose free/busy the owner can see."""

    __tablename__ = "users"

    id: str = Field(primary_key=True)  # usr_0000000
    email: str = Field(unique=True, index=True)
    name: str = Field(index=True)
    title: str
    department: str = Field(index=True)
    time_zone: str  # IANA, such as "Europe/London"
    work_start: str  # local "HH:MM", Monday to Friday
    work_end: str
    is_owner: bool = Field(default=False, index=True)
    passcode: str | None = None  # the owner's assistant passcode (verification)


class Contact(WorkspaceTable, table=True):
    """An entry of the owner's address book (colleagues and outside people)."""

    __tablename__ = "contacts"

    id: str = Field(primary_key=True)  # con_0000000
    name: str = Field(index=True)
    email: str = Field(unique=True, index=True)
    phone: str = ""
    company: str = Field(default="", index=True)
    job_title: str = ""
    notes: str = ""
    starred: bool = False
    created_at: str
    updated_at: str


# -- mail --------------------------------------------------------------------------------------


class Label(WorkspaceTable, table=True):
    """A user label. Nested labels use "/" ("Clients/Acme"); the parent must exist."""

    __tablename__ = "labels"

    id: str = Field(primary_key=True)  # lbl_00000
    name: str = Field(unique=True, index=True)
    name_key: str = Field(unique=True, index=True)  # lower-case, for case-insensitive uniqueness
    created_at: str


class Thread(WorkspaceTable, table=True):
    """A conversation. Location: inbox, sent (started by the owner, no reply yet), archived,
    trash. A trashed thread remembers where it was; only emptying the trash destroys it."""

    __tablename__ = "threads"
    __table_args__ = (Index("ix_threads_location_last", "location", "last_message_at"),)

    id: str = Field(primary_key=True)  # thr_00000000
    subject: str = Field(index=True)
    location: str = Field(index=True)
    location_before_trash: str | None = None
    trashed_at: str | None = None
    last_message_at: str = Field(index=True)


class Message(WorkspaceTable, table=True):
    __tablename__ = "messages"
    __table_args__ = (Index("ix_messages_thread_sent", "thread_id", "sent_at"),)

    id: str = Field(primary_key=True)  # msg_00000000
    thread_id: str = Field(foreign_key="threads.id", index=True)
    from_email: str = Field(index=True)
    from_name: str
    subject: str
    body: str
    sent_at: str = Field(index=True)
    is_read: bool = True
    in_reply_to: str | None = None  # message id
    forwarded_from: str | None = None  # message id


class MessageRecipient(WorkspaceTable, table=True):
    __tablename__ = "message_recipients"

    message_id: str = Field(foreign_key="messages.id", primary_key=True)
    email: str = Field(primary_key=True, index=True)
    name: str = ""
    kind: str  # to | cc | bcc


class MessageAttachment(WorkspaceTable, table=True):
    """An attachment by reference: the message points at a file of the file store."""

    __tablename__ = "message_attachments"

    message_id: str = Field(foreign_key="messages.id", primary_key=True)
    file_id: str = Field(foreign_key="files.id", primary_key=True, index=True)


class ThreadLabel(WorkspaceTable, table=True):
    __tablename__ = "thread_labels"

    thread_id: str = Field(foreign_key="threads.id", primary_key=True)
    label_id: str = Field(foreign_key="labels.id", primary_key=True, index=True)


# -- calendar ----------------------------------------------------------------------------------


class Event(WorkspaceTable, table=True):
    """A meeting on its organizer's calendar. Recurring events repeat daily or weekly (on
    `recur_weekdays`, "MO,WE"), every `recur_interval` days/weeks, for `recur_count` occurrences
    or until `recur_until` (UTC), in local time of `time_zone`. `series_end_utc` is the end of
    the last occurrence (for range queries). Status: confirmed or cancelled."""

    __tablename__ = "events"
    __table_args__ = (Index("ix_events_span", "start_utc", "series_end_utc"),)

    id: str = Field(primary_key=True)  # evt_00000000
    organizer_email: str = Field(index=True)
    title: str = Field(index=True)
    description: str = ""
    location: str = ""
    start_utc: str = Field(index=True)
    end_utc: str
    time_zone: str
    recur_freq: str = "none"  # none | daily | weekly
    recur_interval: int = 1
    recur_weekdays: str = ""  # weekly: "MO,TU,..." (empty: the weekday of the start)
    recur_count: int | None = None
    recur_until: str | None = None
    series_end_utc: str = Field(index=True)
    show_as: str = "busy"  # busy | free
    status: str = Field(default="confirmed", index=True)
    created_at: str
    updated_at: str
    cancelled_at: str | None = None


class EventAttendee(WorkspaceTable, table=True):
    """An invitee (the organizer is not one). Response: needs_action, accepted, tentative,
    declined. Optional attendees never block scheduling."""

    __tablename__ = "event_attendees"

    event_id: str = Field(foreign_key="events.id", primary_key=True)
    email: str = Field(primary_key=True, index=True)
    name: str = ""
    optional: bool = False
    response: str = "needs_action"
    responded_at: str | None = None


class EventException(WorkspaceTable, table=True):
    """One cancelled occurrence of a recurring event."""

    __tablename__ = "event_exceptions"

    event_id: str = Field(foreign_key="events.id", primary_key=True)
    occurrence_start_utc: str = Field(primary_key=True)
    cancelled_at: str


# -- files -------------------------------------------------------------------------------------


class File(WorkspaceTable, table=True):
    """A file of the file store. Only its owner changes who can open it. `link_sharing`: off, or
    viewer (anyone with the link can view). A confidential file never leaves the company domain."""

    __tablename__ = "files"

    id: str = Field(primary_key=True)  # fil_0000000
    name: str = Field(index=True)
    kind: str = Field(index=True)  # document | spreadsheet | presentation | pdf | image
    folder: str = ""
    owner_email: str = Field(index=True)
    size_bytes: int
    confidential: bool = False
    link_sharing: str = "off"  # off | viewer
    created_at: str
    modified_at: str


class FilePermission(WorkspaceTable, table=True):
    """A grant on a file to one person (the owner has none: they own it)."""

    __tablename__ = "file_permissions"

    file_id: str = Field(foreign_key="files.id", primary_key=True)
    email: str = Field(primary_key=True, index=True)
    role: str  # viewer | commenter | editor
    granted_by: str
    granted_at: str
