"""Payee tools: the external recipients a customer saves for transfers."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from sqlalchemy import func
from sqlmodel import select

from mcpsim.world import ToolContext, WorldError

from .. import world
from ..inputs import CustomerId, PayeeId
from ..rules import MAX_ACTIVE_PAYEES, aba_valid, iso, mask, owned, verified_customer
from ..tables import Payee, Transfer
from ..views import PayeeList, PayeeView, payee_view


@world.tool(read_only=True, idempotent=True)
def list_payees(
    ctx: ToolContext,
    customer_id: CustomerId,
    include_removed: Annotated[bool, Field(description="Also list removed payees.")] = False,
) -> PayeeList:
    """A verified customer's saved payees (external recipients), with whether each is still new
    (added less than 7 days ago: transfers above $1,000 to it are held for fraud review); the 50 most
    recent at most, oldest first."""
    customer = verified_customer(ctx.session, customer_id)
    query = select(Payee).where(Payee.customer_id == customer.id)
    if not include_removed:
        query = query.where(Payee.status == "active")
    payees = ctx.session.exec(query.order_by(Payee.created_at.desc(), Payee.id).limit(50)).all()  # type: ignore[attr-defined]
    payees = sorted(payees, key=lambda p: (p.created_at, p.id))
    return PayeeList(customer_id=customer.id, payees=[payee_view(p, ctx.now) for p in payees])


@world.tool()
def add_payee(
    ctx: ToolContext,
    customer_id: CustomerId,
    name: Annotated[
        str, Field(description="The recipient's name as on their bank account.", min_length=2, max_length=80)
    ],
    bank_name: Annotated[str, Field(description="The recipient's bank.", min_length=2, max_length=80)],
    routing_number: Annotated[str, Field(description="The 9-digit ABA routing number.", pattern=r"^\d{9}$")],
    account_number: Annotated[
        str, Field(description="The recipient's account number, 4 to 17 digits.", pattern=r"^\d{4,17}$")
    ],
    account_type: Annotated[Literal["checking", "savings"], Field(description="The recipient's account type.")],
    nickname: Annotated[str | None, Field(description="A short name for the payee.", max_length=40)] = None,
) -> PayeeView:
    """Save an external recipient for a verified customer. The routing number must be a valid
    ABA number; the same routing and account number cannot be saved twice; at most 25 active
    payees. A new payee counts as new for 7 days: transfers above $1,000 to it are held for
    fraud review."""
    customer = verified_customer(ctx.session, customer_id)
    if not aba_valid(routing_number):
        raise WorldError(f"{routing_number} is not a valid ABA routing number; check it with the recipient")
    existing = ctx.session.exec(
        select(Payee).where(
            Payee.customer_id == customer.id,
            Payee.routing_number == routing_number,
            Payee.account_number == account_number,
            Payee.status == "active",
        )
    ).first()
    if existing is not None:
        raise WorldError(
            f"That account ({mask(account_number)} at routing {routing_number}) is already saved as payee "
            f"{existing.id} ({existing.name})"
        )
    active = ctx.session.exec(
        select(func.count()).select_from(Payee).where(Payee.customer_id == customer.id, Payee.status == "active")
    ).one()
    if active >= MAX_ACTIVE_PAYEES:
        raise WorldError(f"Customer {customer.id} already has {MAX_ACTIVE_PAYEES} payees; remove one first")
    payee = Payee(
        id=ctx.new_id("payee"),
        customer_id=customer.id,
        name=" ".join(name.split()),
        nickname=nickname.strip() if nickname else None,
        bank_name=" ".join(bank_name.split()),
        routing_number=routing_number,
        account_number=account_number,
        account_type=account_type,
        status="active",
        created_at=iso(ctx.now),
    )
    ctx.session.add(payee)
    return payee_view(payee, ctx.now)


@world.tool(destructive=True, idempotent=True)
def remove_payee(ctx: ToolContext, customer_id: CustomerId, payee_id: PayeeId) -> PayeeView:
    """Remove a saved payee of a verified customer. Refused while a transfer to it is pending or
    held (cancel that first); past transfers keep their record."""
    customer = verified_customer(ctx.session, customer_id)
    payee = owned(ctx.session, customer, Payee, payee_id)
    if payee.status == "removed":
        raise WorldError(f"Payee {payee.id} ({payee.name}) was already removed")
    open_transfer = ctx.session.exec(
        select(Transfer).where(Transfer.payee_id == payee.id, Transfer.status.in_(("pending", "held")))  # type: ignore[attr-defined]
    ).first()
    if open_transfer is not None:
        raise WorldError(
            f"Transfer {open_transfer.id} to {payee.name} is still {open_transfer.status}; cancel it or let it "
            "settle before removing the payee"
        )
    payee.status, payee.removed_at = "removed", iso(ctx.now)
    ctx.session.add(payee)
    return payee_view(payee, ctx.now)
