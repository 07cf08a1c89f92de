"""Card tools: listing debit cards, freezing and unfreezing, replacing, and daily limits."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from sqlmodel import select

from mcpsim.world import ToolContext, WorldError

from .. import world
from ..inputs import CardId, CustomerId, Delivery, LimitType, ReplaceReason
from ..rules import (
    ATM_LIMITS,
    EXPEDITED_CARD_FEE_CENTS,
    MIN_ATM_LIMIT,
    MIN_PURCHASE_LIMIT,
    PURCHASE_LIMITS,
    available_cents,
    iso,
    money,
    new_card_number,
    new_transaction,
    owned,
    verified_customer,
)
from ..tables import Account, Card
from ..views import CardList, CardReplacement, CardView, card_view


@world.tool(read_only=True, idempotent=True)
def list_cards(
    ctx: ToolContext,
    customer_id: CustomerId,
    include_closed: Annotated[bool, Field(description="Also list closed (replaced, expired) cards.")] = False,
) -> CardList:
    """A verified customer's debit cards: last four digits, account, tier, status (active, frozen,
    closed), daily purchase and ATM limits with the tier's maximums, expiry (the 50 most recent
    at most, oldest first)."""
    customer = verified_customer(ctx.session, customer_id)
    query = select(Card).where(Card.customer_id == customer.id)
    if not include_closed:
        query = query.where(Card.status != "closed")
    cards = ctx.session.exec(query.order_by(Card.issued_at.desc(), Card.id).limit(50)).all()  # type: ignore[attr-defined]
    cards = sorted(cards, key=lambda c: (c.issued_at, c.id))
    return CardList(customer_id=customer.id, cards=[card_view(c) for c in cards])


def _label(card: Card) -> str:
    return f"card ••••{card.last4} ({card.id})"


def _not_closed(card: Card) -> None:
    if card.status == "closed":
        raise WorldError(f"The {_label(card)} is closed ({card.closed_reason}); nothing can be done with it")


@world.tool(idempotent=True)
def freeze_card(ctx: ToolContext, customer_id: CustomerId, card_id: CardId) -> CardView:
    """Temporarily block an active card (misplaced, suspicious activity): it declines every
    purchase and withdrawal until unfrozen. A frozen card can only be unfrozen, or reported lost
    or stolen with replace_card."""
    customer = verified_customer(ctx.session, customer_id)
    card = owned(ctx.session, customer, Card, card_id)
    _not_closed(card)
    if card.status == "frozen":
        raise WorldError(f"The {_label(card)} is already frozen (since {card.frozen_at})")
    card.status, card.frozen_at = "frozen", iso(ctx.now)
    card.updated_at = iso(ctx.now)
    ctx.session.add(card)
    return card_view(card)


@world.tool(idempotent=True)
def unfreeze_card(ctx: ToolContext, customer_id: CustomerId, card_id: CardId) -> CardView:
    """Unblock a frozen card so it works again. Only the cardholder may ask for it; a card that
    was lost or stolen must be replaced instead."""
    customer = verified_customer(ctx.session, customer_id)
    card = owned(ctx.session, customer, Card, card_id)
    _not_closed(card)
    if card.status != "frozen":
        raise WorldError(f"The {_label(card)} is not frozen")
    card.status, card.frozen_at = "active", None
    card.updated_at = iso(ctx.now)
    ctx.session.add(card)
    return card_view(card)


@world.tool(destructive=True, irreversible=True)
def replace_card(
    ctx: ToolContext,
    customer_id: CustomerId,
    card_id: CardId,
    reason: Annotated[ReplaceReason, Field(description="lost, stolen or damaged.")],
    delivery: Annotated[
        Delivery,
        Field(description="standard (free, 7-10 days) or expedited (2 days; $25.00, free for platinum cards)."),
    ] = "standard",
) -> CardReplacement:
    """Close a card for good and issue a replacement with a new number on the same account (same
    tier and limits). The old number stops working at once. Lost or stolen: allowed for active or
    frozen cards. Damaged: only for an active card (a frozen card must be unfrozen first).
    Expedited delivery costs $25.00, taken from the card's account (free for platinum cards)."""
    customer = verified_customer(ctx.session, customer_id)
    card = owned(ctx.session, customer, Card, card_id)
    _not_closed(card)
    if card.status == "frozen" and reason == "damaged":
        raise WorldError(f"The {_label(card)} is frozen; a frozen card can only be unfrozen or reported lost or stolen")
    account = ctx.session.get(Account, card.account_id)
    assert account is not None, f"card {card.id} has no account"
    if account.status != "open":
        raise WorldError(f"The account of the {_label(card)} is closed; no replacement can be issued")
    fee = EXPEDITED_CARD_FEE_CENTS if delivery == "expedited" and card.tier != "platinum" else 0
    if fee and available_cents(ctx.session, account) < fee:
        raise WorldError(
            f"The account's available balance does not cover the {money(fee)} expedited delivery fee; "
            "choose standard delivery"
        )
    now = iso(ctx.now)
    number = new_card_number(ctx.ids)
    years = ctx.now.year + 4
    new = Card(
        id=ctx.new_id("card"),
        customer_id=customer.id,
        account_id=account.id,
        number=number,
        last4=number[-4:],
        tier=card.tier,
        status="active",
        purchase_limit=card.purchase_limit,
        atm_limit=card.atm_limit,
        expires=f"{ctx.now.month:02d}/{years}",
        issued_at=now,
        replaces_card_id=card.id,
        delivery=delivery,
        updated_at=now,
    )
    ctx.session.add(new)
    ctx.session.flush()
    card.status, card.closed_at, card.closed_reason, card.replaced_by_card_id = "closed", now, reason, new.id
    card.frozen_at = None
    card.updated_at = now
    ctx.session.add(card)
    fee_txn = None
    if fee:
        fee_txn = new_transaction(
            ctx, account, "fee", f"Expedited card delivery fee (card ••••{new.last4})", -fee, card_id=new.id
        )
        account.balance_cents -= fee
        account.updated_at = now
        ctx.session.add_all([fee_txn, account])
    days = "2 business days" if delivery == "expedited" else "7 to 10 business days"
    return CardReplacement(
        old_card=card_view(card),
        new_card=card_view(new),
        fee=fee / 100,
        fee_transaction_id=fee_txn.id if fee_txn else None,
        message=f"Card ••••{card.last4} is closed. The new card ••••{new.last4} arrives in {days}"
        + (f"; a {money(fee)} delivery fee was charged." if fee else "."),
    )


@world.tool(idempotent=True)
def set_card_limit(
    ctx: ToolContext,
    customer_id: CustomerId,
    card_id: CardId,
    limit_type: Annotated[LimitType, Field(description="purchase (daily card spending) or atm (daily cash).")],
    amount: Annotated[int, Field(description="The new daily limit in whole dollars.", ge=0, le=100_000)],
) -> CardView:
    """Set an active card's daily purchase or ATM limit. The maximum depends on the card tier
    (purchase: standard $3,000, gold $6,000, platinum $10,000; ATM: standard $500, gold $1,000,
    platinum $1,500); the minimum is $100 for purchases and $20 for ATM. A frozen card's limits
    cannot be changed."""
    customer = verified_customer(ctx.session, customer_id)
    card = owned(ctx.session, customer, Card, card_id)
    _not_closed(card)
    if card.status == "frozen":
        raise WorldError(f"The {_label(card)} is frozen; unfreeze it before changing its limits")
    table, minimum = (PURCHASE_LIMITS, MIN_PURCHASE_LIMIT) if limit_type == "purchase" else (ATM_LIMITS, MIN_ATM_LIMIT)
    maximum = table[card.tier][1]
    if amount > maximum:
        raise WorldError(
            f"${amount:,} is above the maximum daily {limit_type} limit of ${maximum:,} for a {card.tier} card"
        )
    if amount < minimum:
        raise WorldError(f"The daily {limit_type} limit cannot be below ${minimum:,}")
    column = "purchase_limit" if limit_type == "purchase" else "atm_limit"
    if getattr(card, column) == amount:
        raise WorldError(f"The daily {limit_type} limit of the {_label(card)} is already ${amount:,}")
    setattr(card, column, amount)
    card.updated_at = iso(ctx.now)
    ctx.session.add(card)
    return card_view(card)
