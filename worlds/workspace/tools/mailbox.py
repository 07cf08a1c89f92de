"""Reading the owner's mailbox: rows to views, shared by the mail and label tools."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from sqlalchemy import false
from sqlmodel import Session, col, select

from mcpsim.world import WorldError

from ..rules import parse, role_of, show_local
from ..tables import File, Label, Message, MessageAttachment, MessageRecipient, Thread, ThreadLabel
from ..views import AttachmentView, MessageView, ThreadState, ThreadSummary


def find_label(session: Session, name: str) -> Label:
    key = " ".join(name.split()).lower()
    label = session.exec(select(Label).where(Label.name_key == key)).first()
    if label is None:
        raise WorldError(f"Label {name!r} does not exist; create it first with create_label")
    return label


def label_names(session: Session, thread_id: str) -> list[str]:
    return sorted(
        session.exec(
            select(Label.name)
            .join(ThreadLabel, col(ThreadLabel.label_id) == Label.id)
            .where(ThreadLabel.thread_id == thread_id)
        )
    )


def messages_of(session: Session, thread_id: str) -> list[Message]:
    return list(
        session.exec(select(Message).where(Message.thread_id == thread_id).order_by(Message.sent_at, Message.id))
    )


def recipients_of(session: Session, message_id: str) -> list[MessageRecipient]:
    return list(session.exec(select(MessageRecipient).where(MessageRecipient.message_id == message_id)))


def attachment_files(session: Session, message_id: str) -> list[File]:
    return list(
        session.exec(
            select(File)
            .join(MessageAttachment, col(MessageAttachment.file_id) == File.id)
            .where(MessageAttachment.message_id == message_id)
            .order_by(File.name)
        )
    )


def message_view(session: Session, message: Message, me: str, tz: ZoneInfo) -> MessageView:
    rcpts = recipients_of(session, message.id)
    by_kind = {kind: [r.email for r in rcpts if r.kind == kind] for kind in ("to", "cc", "bcc")}
    # Bcc recipients are only known to the sender.
    bcc = by_kind["bcc"] if message.from_email == me else []
    return MessageView.from_row(
        message,
        to=by_kind["to"],
        cc=by_kind["cc"],
        bcc=bcc,
        sent_utc=message.sent_at,
        sent_local=show_local(parse(message.sent_at), tz),
        attachments=[
            AttachmentView.from_row(f, you_can_open=role_of(session, f, me) is not None)
            for f in attachment_files(session, message.id)
        ],
    )


def summary(session: Session, thread: Thread, me: str, tz: ZoneInfo) -> ThreadSummary:
    messages = messages_of(session, thread.id)
    participants: list[str] = []
    has_attachments = False
    for message in messages:
        for email in [message.from_email, *(r.email for r in recipients_of(session, message.id))]:
            if email != me and email not in participants:
                participants.append(email)
        has_attachments = has_attachments or bool(attachment_files(session, message.id))
    last = messages[-1] if messages else None
    snippet = " ".join(last.body.split())[:120] if last else ""
    return ThreadSummary.from_row(
        thread,
        labels=label_names(session, thread.id),
        participants=participants,
        message_count=len(messages),
        unread=any(not m.is_read for m in messages),
        has_attachments=has_attachments,
        last_message_utc=thread.last_message_at,
        last_message_local=show_local(parse(thread.last_message_at), tz),
        snippet=snippet,
    )


def state(session: Session, thread: Thread) -> ThreadState:
    unread = session.exec(select(Message.id).where(Message.thread_id == thread.id, Message.is_read == false())).first()
    return ThreadState.from_row(thread, labels=label_names(session, thread.id), unread=unread is not None)
