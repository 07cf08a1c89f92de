"""Turning table rows into the views the tools return."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlmodel import Session, select

from .common import ATM_LIMITS, NEW_PAYEE_DAYS, PURCHASE_LIMITS, SAVINGS_MONTHLY_WITHDRAWALS, dollars, iso, mask, parse
from .lookups import (
    available_cents,
    held_transfers_cents,
    payee_is_new,
    pending_debits_cents,
    savings_withdrawals_this_month,
    transferred_today_cents,
)
from .tables import Account, Card, Dispute, Payee, Transaction, Transfer
from .views import AccountView, CardView, DisputeView, PayeeView, TransactionView, TransferView


def account_view(session: Session, account: Account, now: datetime) -> AccountView:
    today = transferred_today_cents(session, account, now)
    savings = account.type == "savings"
    used = savings_withdrawals_this_month(session, account, now) if savings else None
    return AccountView(
        account_id=account.id,
        number=mask(account.number),
        type=account.type,
        product=account.product,
        nickname=account.nickname,
        status=account.status,
        balance=dollars(account.balance_cents),
        pending_debits=dollars(pending_debits_cents(session, account)),
        held_transfers=dollars(held_transfers_cents(session, account)),
        available_balance=dollars(available_cents(session, account)),
        daily_transfer_limit=dollars(account.daily_transfer_limit_cents),
        transferred_today=dollars(today),
        remaining_daily_limit=dollars(max(account.daily_transfer_limit_cents - today, 0)),
        savings_withdrawals_this_month=used,
        savings_withdrawals_remaining=max(SAVINGS_MONTHLY_WITHDRAWALS - used, 0) if used is not None else None,
        interest_rate_percent=account.interest_rate_bps / 100 if savings else None,
        opened_at=account.opened_at,
        closed_at=account.closed_at,
    )


def transaction_view(session: Session, txn: Transaction, cards: dict[str, Card] | None = None,
                     disputes: dict[str, str] | None = None) -> TransactionView:
    card = None
    if txn.card_id:
        card = cards.get(txn.card_id) if cards is not None else None
        card = card or session.get(Card, txn.card_id)
    if disputes is None:
        found = session.exec(select(Dispute.id).where(Dispute.transaction_id == txn.id)).first()
    else:
        found = disputes.get(txn.id)
    return TransactionView(
        transaction_id=txn.id,
        account_id=txn.account_id,
        posted_at=txn.posted_at,
        kind=txn.kind,
        description=txn.description,
        merchant=txn.merchant,
        category=txn.category,
        amount=dollars(txn.amount_cents),
        status=txn.status,
        card_id=txn.card_id,
        card_last4=card.last4 if card else None,
        transfer_id=txn.transfer_id,
        dispute_id=found,
    )


def transaction_views(session: Session, txns: list[Transaction]) -> list[TransactionView]:
    """Views of many transactions with two queries for their cards and disputes."""
    card_ids = {t.card_id for t in txns if t.card_id}
    cards = {c.id: c for c in session.exec(select(Card).where(Card.id.in_(card_ids)))} if card_ids else {}  # type: ignore[attr-defined]
    ids = [t.id for t in txns]
    disputes = dict(
        session.exec(select(Dispute.transaction_id, Dispute.id).where(Dispute.transaction_id.in_(ids))).all()  # type: ignore[attr-defined]
    ) if ids else {}
    return [transaction_view(session, t, cards, disputes) for t in txns]


def card_view(card: Card) -> CardView:
    return CardView(
        card_id=card.id,
        account_id=card.account_id,
        last4=card.last4,
        tier=card.tier,
        status=card.status,
        purchase_limit=card.purchase_limit,
        atm_limit=card.atm_limit,
        max_purchase_limit=PURCHASE_LIMITS[card.tier][1],
        max_atm_limit=ATM_LIMITS[card.tier][1],
        expires=card.expires,
        issued_at=card.issued_at,
        frozen_at=card.frozen_at,
        closed_at=card.closed_at,
        closed_reason=card.closed_reason,
        replaces_card_id=card.replaces_card_id,
        replaced_by_card_id=card.replaced_by_card_id,
        delivery=card.delivery,
    )


def payee_view(payee: Payee, now: datetime) -> PayeeView:
    return PayeeView(
        payee_id=payee.id,
        name=payee.name,
        nickname=payee.nickname,
        bank_name=payee.bank_name,
        routing_number=payee.routing_number,
        account_number=mask(payee.account_number),
        account_type=payee.account_type,
        status=payee.status,
        created_at=payee.created_at,
        is_new=payee_is_new(payee, now),
        new_until=iso(parse(payee.created_at) + timedelta(days=NEW_PAYEE_DAYS)),
        removed_at=payee.removed_at,
    )


def transfer_view(session: Session, transfer: Transfer) -> TransferView:
    payee = session.get(Payee, transfer.payee_id) if transfer.payee_id else None
    return TransferView(
        transfer_id=transfer.id,
        kind=transfer.kind,
        from_account_id=transfer.from_account_id,
        to_account_id=transfer.to_account_id,
        payee_id=transfer.payee_id,
        payee_name=payee.name if payee else None,
        amount=dollars(transfer.amount_cents),
        memo=transfer.memo,
        status=transfer.status,
        hold_reason=transfer.hold_reason,
        created_at=transfer.created_at,
        completed_at=transfer.completed_at,
        cancelled_at=transfer.cancelled_at,
    )


def dispute_view(session: Session, dispute: Dispute) -> DisputeView:
    txn = session.get(Transaction, dispute.transaction_id)
    return DisputeView(
        dispute_id=dispute.id,
        transaction_id=dispute.transaction_id,
        account_id=dispute.account_id,
        card_id=dispute.card_id,
        merchant=txn.merchant if txn else None,
        transaction_date=txn.posted_at if txn else "",
        reason=dispute.reason,
        description=dispute.description,
        amount=dollars(dispute.amount_cents),
        provisional_credit=dollars(dispute.provisional_credit_cents),
        credit_transaction_id=dispute.credit_transaction_id,
        status=dispute.status,
        created_at=dispute.created_at,
        resolved_at=dispute.resolved_at,
    )
