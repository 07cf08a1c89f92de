"""Mail tools: searching and reading threads; sending, replying and forwarding (attachments by
reference to files, which every recipient must be able to open); archiving, trash and read
state. Deleting moves a thread to the trash; only emptying the trash destroys it."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from sqlalchemy import ColumnElement, Exists, and_, exists, false, or_
from sqlmodel import Session, col, delete, select

from mcpsim.world import ToolContext, WorldError, page

from .. import world
from ..inputs import Body, EmailList, FileIds, Limit, LocalDate, MessageId, Offset, Subject, ThreadId
from ..rules import (
    MAX_RECIPIENTS,
    check_addresses,
    day_window,
    display_name,
    get_by_id,
    iso,
    owner,
    parse,
    parse_date,
    role_of,
    show_local,
    visible_file,
    zone,
)
from ..tables import File, Message, MessageAttachment, MessageRecipient, Thread, ThreadLabel, User
from ..views import EmptiedTrash, MailSearchResult, SentMessage, ThreadState, ThreadView
from .mailbox import attachment_files, find_label, message_view, messages_of, recipients_of, state, summary

Folder = Literal["inbox", "sent", "archived", "trash", "all"]


# -- reading -------------------------------------------------------------------------------------


def _a_message(condition: ColumnElement[bool]) -> Exists:
    """The thread has a message matching `condition`."""
    return exists().where(col(Message.thread_id) == Thread.id, condition)


def _a_recipient_like(pattern: str) -> Exists:
    """The message has a recipient whose address is LIKE `pattern`."""
    return exists().where(col(MessageRecipient.message_id) == Message.id, col(MessageRecipient.email).like(pattern))


@world.tool(read_only=True, idempotent=True)
def search_mail(
    ctx: ToolContext,
    query: Annotated[
        str | None,
        Field(
            description="Words that must all appear in the thread (subject, text, names or addresses).", max_length=100
        ),
    ] = None,
    sender: Annotated[str | None, Field(description="Part of a sender's name or address.", max_length=100)] = None,
    recipient: Annotated[str | None, Field(description="Part of a recipient's address.", max_length=100)] = None,
    label: Annotated[str | None, Field(description="Only threads with this label.", max_length=60)] = None,
    folder: Annotated[
        Folder,
        Field(
            description="inbox, sent (threads with a message from you), archived, trash, or all (everything "
            "except the trash)."
        ),
    ] = "all",
    has_attachment: Annotated[
        bool | None, Field(description="Only threads with (true) or without (false) attachments.")
    ] = None,
    unread_only: bool = False,
    after: Annotated[
        LocalDate | None, Field(description="A message sent on or after this date (your time zone).")
    ] = None,
    before: Annotated[
        LocalDate | None, Field(description="A message sent on or before this date (your time zone).")
    ] = None,
    limit: Limit = 10,
    offset: Offset = 0,
) -> MailSearchResult:
    """Search the owner's mail threads, newest activity first. All filters combine; `query`
    words must each appear somewhere in the thread. Returns thread summaries (subject,
    participants, labels, location, unread, attachments, a snippet) and the total number of
    matching threads; use get_thread for the messages."""
    me = owner(ctx.session)
    tz = zone(me.time_zone)
    conditions: list[ColumnElement[bool]] = []
    if folder == "all":
        conditions.append(col(Thread.location) != "trash")
    elif folder == "sent":
        conditions.append(col(Thread.location) != "trash")
        conditions.append(_a_message(col(Message.from_email) == me.email))
    else:
        conditions.append(col(Thread.location) == folder)
    for word in (query or "").split():
        pattern = f"%{word}%"
        conditions.append(
            _a_message(
                or_(
                    col(Message.subject).like(pattern),
                    col(Message.body).like(pattern),
                    col(Message.from_email).like(pattern),
                    col(Message.from_name).like(pattern),
                    _a_recipient_like(pattern),
                )
            )
        )
    if sender:
        pattern = f"%{sender.strip()}%"
        conditions.append(_a_message(or_(col(Message.from_email).like(pattern), col(Message.from_name).like(pattern))))
    if recipient:
        conditions.append(_a_message(_a_recipient_like(f"%{recipient.strip()}%")))
    if label:
        found = find_label(ctx.session, label)
        labelled = exists().where(col(ThreadLabel.thread_id) == Thread.id, col(ThreadLabel.label_id) == found.id)
        conditions.append(labelled)
    if has_attachment is not None:
        attached = _a_message(exists().where(col(MessageAttachment.message_id) == Message.id))
        conditions.append(attached if has_attachment else ~attached)
    if unread_only:
        conditions.append(_a_message(col(Message.is_read) == false()))
    if after or before:
        lo_date = parse_date(after) if after else None
        hi_date = parse_date(before) if before else None
        if lo_date and hi_date and lo_date > hi_date:
            raise WorldError("'after' must not be later than 'before'")
        window: list[ColumnElement[bool]] = []
        if lo_date:
            window.append(col(Message.sent_at) >= iso(day_window(lo_date, lo_date, tz)[0]))
        if hi_date:
            window.append(col(Message.sent_at) < iso(day_window(hi_date, hi_date, tz)[1]))
        conditions.append(_a_message(and_(*window)))
    newest_first = [col(Thread.last_message_at).desc(), Thread.id]
    total, rows = page(ctx.session, Thread, [and_(*conditions)], newest_first, offset=offset, limit=limit)
    return MailSearchResult(total_count=total, threads=[summary(ctx.session, t, me.email, tz) for t in rows])


@world.tool(read_only=True, idempotent=True)
def get_thread(ctx: ToolContext, thread_id: ThreadId) -> ThreadView:
    """A whole thread: every message, oldest first, with sender, recipients, time, text and
    attachments (files by reference, and whether you can open each), plus the thread's labels
    and location. Reading does not change unread state (see mark_thread_read)."""
    me = owner(ctx.session)
    tz = zone(me.time_zone)
    thread = get_by_id(ctx, Thread, thread_id)
    return ThreadView.from_row(
        thread,
        labels=state(ctx.session, thread).labels,
        messages=[message_view(ctx.session, m, me.email, tz) for m in messages_of(ctx.session, thread.id)],
    )


# -- writing -------------------------------------------------------------------------------------


def _check_recipients(session: Session, to: list[str], cc: list[str], bcc: list[str], me: str) -> dict[str, list[str]]:
    groups = {kind: check_addresses(session, emails) for kind, emails in (("to", to), ("cc", cc), ("bcc", bcc))}
    everyone = [e for emails in groups.values() for e in emails]
    doubled = sorted({e for e in everyone if everyone.count(e) > 1})
    if doubled:
        raise WorldError(f"{', '.join(doubled)} appear(s) in more than one of to, cc and bcc; list each person once")
    if me in everyone:
        raise WorldError("You are the sender; do not list your own address as a recipient")
    if not everyone:
        raise WorldError("A message needs at least one recipient")
    if len(everyone) > MAX_RECIPIENTS:
        raise WorldError(f"A message can have at most {MAX_RECIPIENTS} recipients; this one has {len(everyone)}")
    return groups


def _check_attachments(session: Session, file_ids: list[str], recipients: list[str], me: str) -> list[File]:
    """Files attached by reference: the sender must be able to open each, and so must every
    recipient, or the message would carry links they cannot open."""
    files: list[File] = []
    for file_id in file_ids:
        file = visible_file(session, file_id, me)
        if file not in files:
            files.append(file)
    for file in files:
        blocked = [e for e in recipients if role_of(session, file, e) is None]
        if blocked:
            hint = (
                "share it with them first (share_file) or send without it"
                if file.owner_email == me
                else f"only its owner, {file.owner_email}, can share it with them; send without it"
            )
            raise WorldError(f"{', '.join(blocked)} cannot open '{file.name}' ({file.id}): {hint}")
    return files


def _store(
    ctx: ToolContext,
    thread: Thread,
    me: User,
    subject: str,
    body: str,
    groups: dict[str, list[str]],
    files: list[File],
    *,
    in_reply_to: str | None = None,
    forwarded_from: str | None = None,
) -> SentMessage:
    message = Message(
        id=ctx.new_id("message"),
        thread_id=thread.id,
        from_email=me.email,
        from_name=me.name,
        subject=subject,
        body=body,
        sent_at=iso(ctx.now),
        is_read=True,
        in_reply_to=in_reply_to,
        forwarded_from=forwarded_from,
    )
    ctx.session.add(message)
    ctx.session.flush()
    for kind, emails in groups.items():
        for email in emails:
            ctx.session.add(
                MessageRecipient(message_id=message.id, email=email, name=display_name(ctx.session, email), kind=kind)
            )
    for file in files:
        ctx.session.add(MessageAttachment(message_id=message.id, file_id=file.id))
    thread.last_message_at = message.sent_at
    ctx.session.add(thread)
    ctx.session.flush()
    return SentMessage(
        message_id=message.id,
        thread_id=thread.id,
        subject=subject,
        to=groups["to"],
        cc=groups["cc"],
        bcc=groups["bcc"],
        sent_utc=message.sent_at,
        attachment_file_ids=[f.id for f in files],
    )


@world.tool(irreversible=True)
def send_mail(
    ctx: ToolContext,
    to: Annotated[EmailList, Field(min_length=1, description="Main recipients.")],
    subject: Subject,
    body: Body,
    cc: Annotated[EmailList, Field(description="Copied recipients.")] = [],  # noqa: B006
    bcc: Annotated[EmailList, Field(description="Blind-copied recipients.")] = [],  # noqa: B006
    attachment_file_ids: FileIds = [],  # noqa: B006
) -> SentMessage:
    """Send a new message from the owner, starting a new thread. Every address must be valid (an
    address at the company's own domain must be a real account), each person listed once, at
    most 20 recipients. Files are attached by reference: every recipient must already be able to
    open each attached file (share it first with share_file if the owner owns it)."""
    me = owner(ctx.session)
    groups = _check_recipients(ctx.session, to, cc, bcc, me.email)
    files = _check_attachments(ctx.session, attachment_file_ids, [e for g in groups.values() for e in g], me.email)
    thread = Thread(id=ctx.new_id("thread"), subject=subject.strip(), location="sent", last_message_at=iso(ctx.now))
    ctx.session.add(thread)
    ctx.session.flush()
    return _store(ctx, thread, me, subject.strip(), body, groups, files)


def _prefixed(prefix: str, subject: str) -> str:
    return subject if subject.lower().startswith(prefix.lower()) else f"{prefix} {subject}"


@world.tool(irreversible=True)
def reply_to_thread(
    ctx: ToolContext,
    thread_id: ThreadId,
    body: Body,
    reply_all: Annotated[
        bool, Field(description="Also reply to everyone else on the message (its to and cc), not just the sender.")
    ] = True,
    add_cc: Annotated[EmailList, Field(description="Extra people to copy.")] = [],  # noqa: B006
    attachment_file_ids: FileIds = [],  # noqa: B006
) -> SentMessage:
    """Reply in a thread to its latest message from someone else: to its sender, and with
    reply_all also to its other recipients (never to bcc). If every message is from the owner,
    the reply follows up to the same people. A thread in the trash must be restored first. The
    same rules as send_mail apply to added people and attachments."""
    me = owner(ctx.session)
    thread = get_by_id(ctx, Thread, thread_id)
    if thread.location == "trash":
        raise WorldError(f"Thread {thread.id} is in the trash; restore it (restore_thread) before replying")
    messages = messages_of(ctx.session, thread.id)
    theirs = [m for m in messages if m.from_email != me.email]
    target = theirs[-1] if theirs else messages[-1]
    rcpts = recipients_of(ctx.session, target.id)
    if target.from_email != me.email:
        to = [target.from_email]
        cc = [r.email for r in rcpts if r.kind in ("to", "cc")] if reply_all else []
    else:
        to = [r.email for r in rcpts if r.kind == "to"]
        cc = [r.email for r in rcpts if r.kind == "cc"] if reply_all else []
    cc = [e for e in cc if e != me.email and e not in to]
    cc += [e for e in add_cc if e.strip().lower() not in cc and e.strip().lower() not in to]
    groups = _check_recipients(ctx.session, to, cc, [], me.email)
    files = _check_attachments(ctx.session, attachment_file_ids, groups["to"] + groups["cc"], me.email)
    return _store(ctx, thread, me, _prefixed("Re:", thread.subject), body, groups, files, in_reply_to=target.id)


@world.tool(irreversible=True)
def forward_message(
    ctx: ToolContext,
    message_id: MessageId,
    to: Annotated[EmailList, Field(min_length=1, description="Who to forward it to.")],
    note: Annotated[str, Field(description="Your note above the forwarded message.", max_length=5000)] = "",
    cc: EmailList = [],  # noqa: B006
    include_attachments: Annotated[
        bool, Field(description="Carry the original's attachments (every recipient must be able to open them).")
    ] = True,
) -> SentMessage:
    """Forward one message (note on top, the original quoted below) as a new thread. Its
    attachments come along by reference unless include_attachments is false, and every recipient
    must be able to open them: share the files first (if the owner owns them) or leave them out.
    Addresses follow the send_mail rules."""
    me = owner(ctx.session)
    original = get_by_id(ctx, Message, message_id)
    groups = _check_recipients(ctx.session, to, cc, [], me.email)
    attached = [f.id for f in attachment_files(ctx.session, original.id)] if include_attachments else []
    files = _check_attachments(ctx.session, attached, groups["to"] + groups["cc"], me.email)
    original_to = ", ".join(r.email for r in recipients_of(ctx.session, original.id) if r.kind == "to")
    tz = zone(me.time_zone)
    quoted = (
        "---------- Forwarded message ----------\n"
        f"From: {original.from_name} <{original.from_email}>\n"
        f"Date: {show_local(parse(original.sent_at), tz)}\n"
        f"Subject: {original.subject}\n"
        f"To: {original_to}\n\n{original.body}"
    )
    body = f"{note.strip()}\n\n{quoted}" if note.strip() else quoted
    subject = _prefixed("Fwd:", original.subject)
    thread = Thread(id=ctx.new_id("thread"), subject=subject, location="sent", last_message_at=iso(ctx.now))
    ctx.session.add(thread)
    ctx.session.flush()
    return _store(ctx, thread, me, subject, body, groups, files, forwarded_from=original.id)


# -- organising ----------------------------------------------------------------------------------


@world.tool(idempotent=True)
def mark_thread_read(
    ctx: ToolContext, thread_id: ThreadId, read: Annotated[bool, Field(description="false marks it unread.")] = True
) -> ThreadState:
    """Mark every message of a thread read (or, with read=false, unread)."""
    thread = get_by_id(ctx, Thread, thread_id)
    for message in messages_of(ctx.session, thread.id):
        if message.is_read != read:
            message.is_read = read
            ctx.session.add(message)
    ctx.session.flush()
    return state(ctx.session, thread)


@world.tool(idempotent=True)
def archive_thread(ctx: ToolContext, thread_id: ThreadId) -> ThreadState:
    """Archive a thread: it leaves the inbox (or the sent view) and keeps its labels; nothing is
    deleted. A thread in the trash must be restored first. Archiving an archived thread changes
    nothing."""
    return _move_thread(ctx, thread_id, "archived", "restore it (restore_thread) before archiving")


@world.tool(idempotent=True)
def move_to_inbox(ctx: ToolContext, thread_id: ThreadId) -> ThreadState:
    """Move an archived or sent thread back into the inbox. A thread in the trash must be
    restored first (restore_thread)."""
    return _move_thread(ctx, thread_id, "inbox", "use restore_thread to take it out of the trash")


def _move_thread(ctx: ToolContext, thread_id: str, location: str, trashed_hint: str) -> ThreadState:
    """Move a thread that is not in the trash to `location` (nothing changes if it is there);
    a trashed thread is refused with `trashed_hint`: only restore_thread takes it out."""
    thread = get_by_id(ctx, Thread, thread_id)
    if thread.location == "trash":
        raise WorldError(f"Thread {thread.id} is in the trash; {trashed_hint}")
    if thread.location != location:
        thread.location = location
        ctx.session.add(thread)
    return state(ctx.session, thread)


@world.tool()
def trash_thread(ctx: ToolContext, thread_id: ThreadId) -> ThreadState:
    """Delete a thread: it moves to the trash, remembering where it was, and can be restored
    with restore_thread until the trash is emptied (empty_trash is the only permanent delete)."""
    thread = get_by_id(ctx, Thread, thread_id)
    if thread.location == "trash":
        raise WorldError(f"Thread {thread.id} is already in the trash")
    thread.location_before_trash = thread.location
    thread.location = "trash"
    thread.trashed_at = iso(ctx.now)
    ctx.session.add(thread)
    return state(ctx.session, thread)


@world.tool()
def restore_thread(ctx: ToolContext, thread_id: ThreadId) -> ThreadState:
    """Take a thread out of the trash, back to where it was (inbox, sent or archived)."""
    thread = get_by_id(ctx, Thread, thread_id)
    if thread.location != "trash":
        raise WorldError(f"Thread {thread.id} is not in the trash (it is in {thread.location})")
    thread.location = thread.location_before_trash or "inbox"
    thread.location_before_trash = None
    thread.trashed_at = None
    ctx.session.add(thread)
    return state(ctx.session, thread)


@world.tool(destructive=True)
def empty_trash(
    ctx: ToolContext,
    thread_ids: Annotated[
        list[ThreadId] | None,
        Field(description="Only these trashed threads; every thread in the trash if omitted.", max_length=50),
    ] = None,
) -> EmptiedTrash:
    """Permanently delete threads in the trash (all of them, or only `thread_ids`, each of which
    must already be in the trash). This cannot be undone: their messages are destroyed. Threads
    outside the trash are never touched; trash them first."""
    if thread_ids is None:
        threads = list(ctx.session.exec(select(Thread).where(Thread.location == "trash").order_by(Thread.id)))
        if not threads:
            raise WorldError("The trash is already empty")
    else:
        threads = []
        for thread_id in thread_ids:
            thread = get_by_id(ctx, Thread, thread_id)
            if thread.location != "trash":
                raise WorldError(
                    f"Thread {thread.id} is not in the trash (it is in {thread.location}); only trashed threads can "
                    "be deleted permanently"
                )
            if thread not in threads:
                threads.append(thread)
    ids = [t.id for t in threads]
    message_ids = list(ctx.session.exec(select(Message.id).where(col(Message.thread_id).in_(ids))))
    ctx.session.exec(delete(MessageRecipient).where(col(MessageRecipient.message_id).in_(message_ids)))
    ctx.session.exec(delete(MessageAttachment).where(col(MessageAttachment.message_id).in_(message_ids)))
    ctx.session.exec(delete(ThreadLabel).where(col(ThreadLabel.thread_id).in_(ids)))
    ctx.session.exec(delete(Message).where(col(Message.id).in_(message_ids)))
    ctx.session.exec(delete(Thread).where(col(Thread.id).in_(ids)))
    return EmptiedTrash(deleted_thread_ids=ids, deleted_message_count=len(message_ids))
