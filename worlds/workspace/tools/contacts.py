"""Contact tools: the owner's address book and the company directory."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from sqlalchemy import false, or_
from sqlmodel import col, select

from mcpsim.world import ToolContext, WorldError

from .. import world
from ..inputs import ContactId, Email, Limit
from ..rules import COMPANY, check_address, get_by_id, iso
from ..tables import Contact, User
from ..views import ContactSearchResult, ContactView, PersonHit

Name = Annotated[str, Field(description="Full name.", min_length=1, max_length=100)]
Phone = Annotated[
    str, Field(description="Phone number, such as '+44 20 7946 0123'.", max_length=40, pattern=r"^[0-9+()\-. x]*$")
]
Text = Annotated[str, Field(max_length=100)]
Notes = Annotated[str, Field(max_length=1000)]


def _unique_email(ctx: ToolContext, email: str, keep: str | None = None) -> None:
    clash = ctx.session.exec(select(Contact).where(Contact.email == email)).first()
    if clash is not None and clash.id != keep:
        raise WorldError(f"{email} is already in your contacts as {clash.name} ({clash.id})")


@world.tool(read_only=True, idempotent=True)
def search_contacts(
    ctx: ToolContext,
    query: Annotated[str, Field(description="Part of a name, email address or company.", min_length=1, max_length=100)],
    limit: Limit = 10,
) -> ContactSearchResult:
    """Find people by name, email address or company, in the owner's contacts and in the
    company directory (colleagues, with their time zones). Every word must match. A colleague
    who is also a contact appears once, as a contact with their directory time zone."""
    words = query.split()
    contact_q = select(Contact)
    user_q = select(User).where(User.is_owner == false())
    for word in words:
        pattern = f"%{word}%"
        contact_q = contact_q.where(
            or_(col(Contact.name).like(pattern), col(Contact.email).like(pattern), col(Contact.company).like(pattern))
        )
        user_q = user_q.where(
            or_(col(User.name).like(pattern), col(User.email).like(pattern), col(User.department).like(pattern))
        )
    contacts = ctx.session.exec(contact_q.order_by(Contact.name, Contact.id)).all()
    users = {u.email: u for u in ctx.session.exec(user_q.order_by(User.name, User.id)).all()}
    hits: list[PersonHit] = []
    for c in contacts:
        user = users.pop(c.email, None) or ctx.session.exec(select(User).where(User.email == c.email)).first()
        hits.append(
            PersonHit(
                source="contact",
                contact_id=c.id,
                name=c.name,
                email=c.email,
                company=c.company,
                title=c.job_title,
                time_zone=user.time_zone if user else None,
            )
        )
    for u in users.values():
        hits.append(
            PersonHit(
                source="directory",
                contact_id=None,
                name=u.name,
                email=u.email,
                company=COMPANY,
                title=f"{u.title}, {u.department}",
                time_zone=u.time_zone,
            )
        )
    return ContactSearchResult(total_count=len(hits), people=hits[:limit])


@world.tool(read_only=True, idempotent=True)
def get_contact(ctx: ToolContext, contact_id: ContactId) -> ContactView:
    """One contact of the owner's address book, with phone, company, title and notes."""
    return ContactView.from_row(get_by_id(ctx, Contact, contact_id))


@world.tool()
def add_contact(
    ctx: ToolContext,
    name: Name,
    email: Email,
    phone: Phone = "",
    company: Text = "",
    job_title: Text = "",
    notes: Notes = "",
    starred: bool = False,
) -> ContactView:
    """Add a person to the owner's contacts. The email address must be valid (an address at the
    company's own domain must be a real account) and not already a contact."""
    address = check_address(ctx.session, email)
    _unique_email(ctx, address)
    contact = Contact(
        id=ctx.new_id("contact"),
        name=" ".join(name.split()),
        email=address,
        phone=phone.strip(),
        company=company.strip(),
        job_title=job_title.strip(),
        notes=notes.strip(),
        starred=starred,
        created_at=iso(ctx.now),
        updated_at=iso(ctx.now),
    )
    ctx.session.add(contact)
    return ContactView.from_row(contact)


@world.tool(idempotent=True)
def update_contact(
    ctx: ToolContext,
    contact_id: ContactId,
    name: Name | None = None,
    email: Email | None = None,
    phone: Phone | None = None,
    company: Text | None = None,
    job_title: Text | None = None,
    notes: Notes | None = None,
    starred: bool | None = None,
) -> ContactView:
    """Change a contact: give only the fields that change (notes replace the old notes). A new
    email address follows the add_contact rules."""
    contact = get_by_id(ctx, Contact, contact_id)
    if email is not None:
        address = check_address(ctx.session, email)
        _unique_email(ctx, address, keep=contact.id)
        contact.email = address
    for field, value in (
        ("name", name),
        ("phone", phone),
        ("company", company),
        ("job_title", job_title),
        ("notes", notes),
    ):
        if value is not None:
            setattr(contact, field, " ".join(value.split()) if field == "name" else value.strip())
    if starred is not None:
        contact.starred = starred
    if ctx.session.is_modified(contact):
        contact.updated_at = iso(ctx.now)
        ctx.session.add(contact)
    return ContactView.from_row(contact)
