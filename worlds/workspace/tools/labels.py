"""Label tools: labels must exist before they are applied; names are unique whatever their case."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field
from sqlalchemy import func
from sqlmodel import col, select

from mcpsim.world import ToolContext, WorldError

from .. import world
from ..inputs import LabelName, ThreadId
from ..rules import RESERVED_LABELS, get_by_id, iso
from ..tables import Label, Thread, ThreadLabel
from ..views import LabelChange, LabelView
from .mailbox import find_label

_SEGMENT = re.compile(r"^[\w][\w &.,'()+-]{0,39}$")

ThreadIds = Annotated[list[ThreadId], Field(description="The threads to change.", min_length=1, max_length=50)]


@world.tool(read_only=True, idempotent=True)
def list_labels(ctx: ToolContext) -> list[LabelView]:
    """Every label of the mailbox with how many threads (outside the trash) carry it, by name."""
    counts = dict(
        ctx.session.exec(
            select(ThreadLabel.label_id, func.count())
            .join(Thread, col(Thread.id) == ThreadLabel.thread_id)
            .where(Thread.location != "trash")
            .group_by(ThreadLabel.label_id)
        ).all()
    )
    labels = ctx.session.exec(select(Label).order_by(Label.name_key)).all()
    return [LabelView.from_row(lb, thread_count=counts.get(lb.id, 0)) for lb in labels]


@world.tool()
def create_label(ctx: ToolContext, name: LabelName) -> LabelView:
    """Create a label. Names are unique regardless of case; system folders (Inbox, Sent, Trash,
    Archived, Spam, Drafts, Starred, Important, All Mail) are not labels. A nested label
    ("Clients/Acme") needs its parent label to exist first. Letters, digits, spaces and
    & . , ' ( ) + - _ are allowed, at most 40 characters per level."""
    segments = [" ".join(part.split()) for part in name.split("/")]
    if any(not s for s in segments):
        raise WorldError(f"Label name {name!r} has an empty level; write nested labels as 'Parent/Child'")
    if len(segments) > 3:
        raise WorldError("Labels can be nested at most three levels deep")
    for segment in segments:
        if not _SEGMENT.fullmatch(segment):
            raise WorldError(
                f"{segment!r} is not a valid label name: use letters, digits, spaces and & . , ' ( ) + - _, "
                "at most 40 characters"
            )
    clean = "/".join(segments)
    if segments[0].lower() in RESERVED_LABELS and len(segments) == 1:
        raise WorldError(f"{segments[0]!r} is a system folder, not a label; choose another name")
    existing = ctx.session.exec(select(Label).where(Label.name_key == clean.lower())).first()
    if existing is not None:
        raise WorldError(f"A label named {existing.name!r} already exists ({existing.id})")
    if len(segments) > 1:
        parent = "/".join(segments[:-1])
        if ctx.session.exec(select(Label).where(Label.name_key == parent.lower())).first() is None:
            raise WorldError(f"The parent label {parent!r} does not exist; create it first")
    label = Label(id=ctx.new_id("label"), name=clean, name_key=clean.lower(), created_at=iso(ctx.now))
    ctx.session.add(label)
    return LabelView.from_row(label, thread_count=0)


def _threads(ctx: ToolContext, thread_ids: list[str]) -> list[Thread]:
    threads: list[Thread] = []
    for thread_id in thread_ids:
        thread = get_by_id(ctx, Thread, thread_id)
        if thread not in threads:
            threads.append(thread)
    return threads


@world.tool(idempotent=True)
def apply_label(ctx: ToolContext, label: LabelName, thread_ids: ThreadIds) -> LabelChange:
    """Put an existing label on threads (the label must already exist: create_label). Threads
    in the trash cannot be labelled. Threads that already carry it are left as they are."""
    found = find_label(ctx.session, label)
    changed, unchanged = [], []
    for thread in _threads(ctx, thread_ids):
        if thread.location == "trash":
            raise WorldError(f"Thread {thread.id} is in the trash; restore it before labelling it")
        if ctx.session.get(ThreadLabel, (thread.id, found.id)) is None:
            ctx.session.add(ThreadLabel(thread_id=thread.id, label_id=found.id))
            changed.append(thread.id)
        else:
            unchanged.append(thread.id)
    return LabelChange(label=found.name, changed_thread_ids=changed, unchanged_thread_ids=unchanged)


@world.tool(idempotent=True)
def remove_label(ctx: ToolContext, label: LabelName, thread_ids: ThreadIds) -> LabelChange:
    """Take a label off threads (the label itself stays). Threads without it are left as they are."""
    found = find_label(ctx.session, label)
    changed, unchanged = [], []
    for thread in _threads(ctx, thread_ids):
        link = ctx.session.get(ThreadLabel, (thread.id, found.id))
        if link is None:
            unchanged.append(thread.id)
        else:
            ctx.session.delete(link)
            changed.append(thread.id)
    return LabelChange(label=found.name, changed_thread_ids=changed, unchanged_thread_ids=unchanged)
