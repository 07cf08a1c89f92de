"""Dispute tools: disputing a card transaction (with a provisional credit), and reading disputes."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Literal

from pydantic import Field
from sqlmodel import select

from mcpsim.world import ToolContext, WorldError

from .. import world
from ..inputs import CustomerId, DisputeId, DisputeReason, TransactionId
from ..rules import (
    DISPUTE_WINDOW_DAYS,
    dispute_of_transaction,
    iso,
    money,
    new_transaction,
    owned,
    parse,
    to_cents,
    transaction_of,
    verified_customer,
)
from ..tables import Account, Card, Dispute
from ..views import DisputeList, DisputeView, dispute_view

CARD_KINDS = ("card_purchase", "atm_withdrawal")


@world.tool(irreversible=True)
def open_dispute(
    ctx: ToolContext,
    customer_id: CustomerId,
    transaction_id: TransactionId,
    reason: Annotated[DisputeReason, Field(description="Why the customer disputes the charge.")],
    description: Annotated[
        str, Field(description="What the customer says happened, in a sentence or two.", min_length=10, max_length=1000)
    ],
    amount: Annotated[
        float | None,
        Field(
            description="The disputed part in dollars, if not the whole charge (for example an overcharge).",
            gt=0,
            le=1_000_000,
        ),
    ] = None,
) -> DisputeView:
    """Dispute a posted card transaction (purchase or ATM withdrawal) of a verified customer,
    within 60 days of its posting date; a transaction can be disputed only once, and pending
    ones only once they post. The disputed amount (the whole charge unless a smaller amount is
    given) is credited to the account at once as a provisional credit while the bank
    investigates. For an unauthorized (fraudulent) charge the card must first be frozen or
    replaced."""
    customer = verified_customer(ctx.session, customer_id)
    txn = transaction_of(ctx.session, customer, transaction_id)
    if txn.card_id is None or txn.kind not in CARD_KINDS or txn.amount_cents >= 0:
        raise WorldError(
            f"Transaction {txn.id} ({txn.description}) is a {txn.kind.replace('_', ' ')}, not a card purchase or "
            "withdrawal; only card transactions can be disputed"
        )
    if txn.status == "pending":
        raise WorldError(f"Transaction {txn.id} is still pending; it can be disputed once it posts")
    if txn.status != "posted":
        raise WorldError(f"Transaction {txn.id} was cancelled and never charged")
    cutoff = ctx.now - timedelta(days=DISPUTE_WINDOW_DAYS)
    if parse(txn.posted_at) < cutoff:
        raise WorldError(
            f"Transaction {txn.id} posted on {txn.posted_at[:10]}, more than {DISPUTE_WINDOW_DAYS} days ago; card "
            f"transactions can only be disputed within {DISPUTE_WINDOW_DAYS} days"
        )
    existing = dispute_of_transaction(ctx.session, txn.id)
    if existing is not None:
        raise WorldError(f"Transaction {txn.id} has already been disputed ({existing.id}, {existing.status})")
    charged = -txn.amount_cents
    cents = charged if amount is None else to_cents(amount)
    if cents > charged:
        raise WorldError(f"The disputed amount {money(cents)} is more than the charge of {money(charged)}")
    card = ctx.session.get(Card, txn.card_id)
    assert card is not None, f"transaction {txn.id} has no card"
    if reason == "unauthorized" and card.status == "active":
        raise WorldError(
            f"Card ••••{card.last4} ({card.id}) is still active. Freeze or replace it before disputing an "
            "unauthorized charge"
        )
    account = ctx.session.get(Account, txn.account_id)
    assert account is not None
    if account.status != "open":
        raise WorldError(
            f"Account {account.id} is closed; a provisional credit cannot be given. Transfer to a human agent"
        )
    now = iso(ctx.now)
    dispute = Dispute(
        id=ctx.new_id("dispute"),
        customer_id=customer.id,
        account_id=account.id,
        transaction_id=txn.id,
        card_id=card.id,
        reason=reason,
        description=description.strip(),
        amount_cents=cents,
        provisional_credit_cents=cents,
        status="open",
        created_at=now,
    )
    credit = new_transaction(
        ctx,
        account,
        "dispute_credit",
        f"Provisional credit: dispute {dispute.id} ({txn.merchant or txn.description})",
        cents,
        merchant=txn.merchant,
    )
    ctx.session.add(credit)
    ctx.session.flush()
    dispute.credit_transaction_id = credit.id
    account.balance_cents += cents
    account.updated_at = now
    ctx.session.add_all([dispute, account])
    ctx.session.flush()
    return dispute_view(ctx.session, dispute)


@world.tool(read_only=True, idempotent=True)
def list_disputes(
    ctx: ToolContext,
    customer_id: CustomerId,
    status: Annotated[
        Literal["open", "resolved_customer", "resolved_merchant", "withdrawn"] | None,
        Field(description="Only disputes with this status."),
    ] = None,
) -> DisputeList:
    """A verified customer's disputes (at most 50, newest first)."""
    customer = verified_customer(ctx.session, customer_id)
    query = select(Dispute).where(Dispute.customer_id == customer.id)
    if status:
        query = query.where(Dispute.status == status)
    rows = ctx.session.exec(query.order_by(Dispute.created_at.desc(), Dispute.id).limit(50)).all()  # type: ignore[attr-defined]
    return DisputeList(customer_id=customer.id, disputes=[dispute_view(ctx.session, d) for d in rows])


@world.tool(read_only=True, idempotent=True)
def get_dispute(ctx: ToolContext, customer_id: CustomerId, dispute_id: DisputeId) -> DisputeView:
    """One dispute of a verified customer: the transaction, reason, amount, provisional credit and status."""
    customer = verified_customer(ctx.session, customer_id)
    return dispute_view(ctx.session, owned(ctx.session, customer, Dispute, dispute_id))
