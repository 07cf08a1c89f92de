"""What the bank tools return, and how each is built from table rows. Money is in dollars;
account, card and payee numbers are masked to their last four digits."""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel
from sqlmodel import Session, select

from mcpsim.world import RowView

from .rules import (
    ATM_LIMITS,
    NEW_PAYEE_DAYS,
    PURCHASE_LIMITS,
    SAVINGS_MONTHLY_WITHDRAWALS,
    available_cents,
    dollars,
    held_transfers_cents,
    iso,
    mask,
    parse,
    payee_is_new,
    pending_debits_cents,
    savings_withdrawals_this_month,
    transferred_today_cents,
)
from .tables import Account, Card, Dispute, Payee, Transaction, Transfer


class CustomerMatch(RowView):
    id_field = "customer_id"
    customer_id: str
    first_name: str
    last_name: str
    verified: bool  # identity verified in this session


class CustomerSearchResult(BaseModel):
    matches: list[CustomerMatch]


class VerificationResult(BaseModel):
    customer_id: str
    verified: bool
    status: str  # unverified | verified | locked
    attempts_remaining: int
    message: str


class CustomerProfile(RowView):
    id_field = "customer_id"
    customer_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    line1: str
    line2: str
    city: str
    state: str
    zip: str
    customer_since: str
    status: str  # active | restricted
    open_account_ids: list[str]
    updated_at: str


class AccountView(RowView):
    id_field = "account_id"
    account_id: str
    number: str  # masked: ••••1234
    type: str  # checking | savings
    product: str
    nickname: str | None
    status: str  # open | closed
    balance: float  # posted (ledger) balance
    pending_debits: float  # pending card authorizations and unsettled transfers
    held_transfers: float  # transfers held for fraud review
    available_balance: float  # balance - pending debits - held transfers: what can be moved
    daily_transfer_limit: float
    transferred_today: float  # outgoing transfers created today (UTC), cancelled ones excluded
    remaining_daily_limit: float
    savings_withdrawals_this_month: int | None = None  # savings only: transfers out this calendar month
    savings_withdrawals_remaining: int | None = None
    interest_rate_percent: float | None = None
    opened_at: str
    closed_at: str | None = None


class AccountList(BaseModel):
    customer_id: str
    accounts: list[AccountView]


class TransactionView(RowView):
    id_field = "transaction_id"
    transaction_id: str
    account_id: str
    posted_at: str
    kind: str
    description: str
    merchant: str | None
    category: str | None
    amount: float  # negative: money out
    status: str  # posted | pending | cancelled
    card_id: str | None
    card_last4: str | None
    transfer_id: str | None
    dispute_id: str | None  # set when the transaction has been disputed


class TransactionList(BaseModel):
    account_id: str
    total_count: int
    offset: int
    transactions: list[TransactionView]  # newest first


class StatementView(BaseModel):
    account_id: str
    number: str
    period: str  # YYYY-MM
    period_start: str  # YYYY-MM-DD
    period_end: str  # YYYY-MM-DD (last day)
    opening_balance: float
    total_credits: float
    total_debits: float  # negative
    closing_balance: float
    transaction_count: int
    offset: int
    transactions: list[TransactionView]  # oldest first, posted lines of the period


class CardView(RowView):
    id_field = "card_id"
    card_id: str
    account_id: str
    last4: str
    tier: str
    status: str  # active | frozen | closed
    purchase_limit: int  # daily, dollars
    atm_limit: int  # daily, dollars
    max_purchase_limit: int  # the tier's maximum
    max_atm_limit: int
    expires: str  # MM/YYYY
    issued_at: str
    frozen_at: str | None = None
    closed_at: str | None = None
    closed_reason: str | None = None
    replaces_card_id: str | None = None
    replaced_by_card_id: str | None = None
    delivery: str | None = None


class CardList(BaseModel):
    customer_id: str
    cards: list[CardView]


class CardReplacement(BaseModel):
    old_card: CardView
    new_card: CardView
    fee: float
    fee_transaction_id: str | None
    message: str


class PayeeView(RowView):
    id_field = "payee_id"
    payee_id: str
    name: str
    nickname: str | None
    bank_name: str
    routing_number: str
    account_number: str  # masked
    account_type: str
    status: str  # active | removed
    created_at: str
    is_new: bool  # added less than 7 days ago: transfers above $1,000 are held for review
    new_until: str  # when the payee stops being new
    removed_at: str | None = None


class PayeeList(BaseModel):
    customer_id: str
    payees: list[PayeeView]


class TransferView(RowView):
    id_field = "transfer_id"
    transfer_id: str
    kind: str  # internal | external
    from_account_id: str
    to_account_id: str | None
    payee_id: str | None
    payee_name: str | None
    amount: float
    memo: str
    status: str  # completed | pending | held | cancelled
    hold_reason: str | None
    created_at: str
    completed_at: str | None
    cancelled_at: str | None


class TransferList(BaseModel):
    customer_id: str
    total_count: int
    offset: int
    transfers: list[TransferView]  # newest first


class DisputeView(RowView):
    id_field = "dispute_id"
    dispute_id: str
    transaction_id: str
    account_id: str
    card_id: str
    merchant: str | None
    transaction_date: str
    reason: str
    description: str
    amount: float
    provisional_credit: float
    credit_transaction_id: str | None
    status: str  # open | resolved_customer | resolved_merchant | withdrawn
    created_at: str
    resolved_at: str | None


class DisputeList(BaseModel):
    customer_id: str
    disputes: list[DisputeView]


class TicketView(RowView):
    id_field = "ticket_id"
    ticket_id: str
    customer_id: str | None
    topic: str
    summary: str
    status: str
    created_at: str


# -- building views from rows ------------------------------------------------------------------


def account_view(session: Session, account: Account, now: datetime) -> AccountView:
    today = transferred_today_cents(session, account, now)
    savings = account.type == "savings"
    used = savings_withdrawals_this_month(session, account, now) if savings else None
    return AccountView.from_row(
        account,
        number=mask(account.number),
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
    )


def transaction_view(
    session: Session, txn: Transaction, cards: dict[str, Card] | None = None, disputes: dict[str, str] | None = None
) -> TransactionView:
    card = None
    if txn.card_id:
        card = cards.get(txn.card_id) if cards is not None else None
        card = card or session.get(Card, txn.card_id)
    if disputes is None:
        found = session.exec(select(Dispute.id).where(Dispute.transaction_id == txn.id)).first()
    else:
        found = disputes.get(txn.id)
    return TransactionView.from_row(
        txn, amount=dollars(txn.amount_cents), card_last4=card.last4 if card else None, dispute_id=found
    )


def transaction_views(session: Session, txns: list[Transaction]) -> list[TransactionView]:
    """Views of many transactions with two queries for their cards and disputes."""
    card_ids = {t.card_id for t in txns if t.card_id}
    cards = {c.id: c for c in session.exec(select(Card).where(Card.id.in_(card_ids)))} if card_ids else {}  # type: ignore[attr-defined]
    ids = [t.id for t in txns]
    disputes = (
        dict(
            session.exec(select(Dispute.transaction_id, Dispute.id).where(Dispute.transaction_id.in_(ids))).all()  # type: ignore[attr-defined]
        )
        if ids
        else {}
    )
    return [transaction_view(session, t, cards, disputes) for t in txns]


def card_view(card: Card) -> CardView:
    return CardView.from_row(
        card, max_purchase_limit=PURCHASE_LIMITS[card.tier][1], max_atm_limit=ATM_LIMITS[card.tier][1]
    )


def payee_view(payee: Payee, now: datetime) -> PayeeView:
    return PayeeView.from_row(
        payee,
        account_number=mask(payee.account_number),
        is_new=payee_is_new(payee, now),
        new_until=iso(parse(payee.created_at) + timedelta(days=NEW_PAYEE_DAYS)),
    )


def transfer_view(session: Session, transfer: Transfer) -> TransferView:
    payee = session.get(Payee, transfer.payee_id) if transfer.payee_id else None
    return TransferView.from_row(
        transfer, payee_name=payee.name if payee else None, amount=dollars(transfer.amount_cents)
    )


def dispute_view(session: Session, dispute: Dispute) -> DisputeView:
    txn = session.get(Transaction, dispute.transaction_id)
    return DisputeView.from_row(
        dispute,
        merchant=txn.merchant if txn else None,
        transaction_date=txn.posted_at if txn else "",
        amount=dollars(dispute.amount_cents),
        provisional_credit=dollars(dispute.provisional_credit_cents),
    )
