"""Finding rows or failing with a message the agent understands; the identity gate every
customer tool passes through; and the balance and limit arithmetic the rules rely on."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func
from sqlmodel import Session, select

from mcpsim.world import WorldError

from .common import (
    FRAUD_HOLD_THRESHOLD_CENTS,
    NEW_PAYEE_DAYS,
    SAVINGS_MONTHLY_WITHDRAWALS,
    day_start,
    iso,
    mask,
    money,
    month_start,
    parse,
)
from .tables import Account, Card, Customer, Dispute, IdentityVerification, Payee, Transaction, Transfer

COUNTED_TRANSFER_STATUSES = ("completed", "pending", "held")


def get_customer(session: Session, customer_id: str) -> Customer:
    customer = session.get(Customer, customer_id.strip())
    if customer is None:
        raise WorldError(f"Customer {customer_id} not found")
    return customer


def verification_of(session: Session, customer_id: str) -> IdentityVerification:
    row = session.get(IdentityVerification, customer_id)
    if row is None:  # every customer is seeded with one; a missing row is a seed bug
        raise RuntimeError(f"customer {customer_id} has no identity_verifications row")
    return row


def verified_customer(session: Session, customer_id: str) -> Customer:
    """The customer, if their identity was verified in this session; otherwise a refusal. Every
    tool that reads or changes a customer's data goes through here first."""
    customer = get_customer(session, customer_id)
    if customer.status == "restricted":
        raise WorldError(
            f"Customer {customer.id}'s profile is restricted by the fraud team; no account information can be "
            "given or changed here. Transfer the customer to a human agent."
        )
    check = verification_of(session, customer.id)
    if check.status == "locked":
        raise WorldError(
            f"Identity verification for customer {customer.id} is locked after repeated failed attempts; "
            "only a human agent can help now."
        )
    if check.status != "verified":
        raise WorldError(
            f"Customer {customer.id} has not verified their identity in this session. Verify it with "
            "verify_identity (date of birth and last four digits of the SSN) before anything else."
        )
    return customer


def account_of(session: Session, customer: Customer, account_id: str) -> Account:
    account = session.get(Account, account_id.strip())
    if account is None or account.customer_id != customer.id:
        raise WorldError(f"Customer {customer.id} has no account {account_id}")
    return account


def open_account_of(session: Session, customer: Customer, account_id: str) -> Account:
    account = account_of(session, customer, account_id)
    if account.status != "open":
        raise WorldError(f"Account {account.id} ({mask(account.number)}) is closed")
    return account


def card_of(session: Session, customer: Customer, card_id: str) -> Card:
    card = session.get(Card, card_id.strip())
    if card is None or card.customer_id != customer.id:
        raise WorldError(f"Customer {customer.id} has no card {card_id}")
    return card


def payee_of(session: Session, customer: Customer, payee_id: str) -> Payee:
    payee = session.get(Payee, payee_id.strip())
    if payee is None or payee.customer_id != customer.id:
        raise WorldError(f"Customer {customer.id} has no payee {payee_id}")
    return payee


def transfer_of(session: Session, customer: Customer, transfer_id: str) -> Transfer:
    transfer = session.get(Transfer, transfer_id.strip())
    if transfer is None or transfer.customer_id != customer.id:
        raise WorldError(f"Customer {customer.id} has no transfer {transfer_id}")
    return transfer


def transaction_of(session: Session, customer: Customer, transaction_id: str) -> Transaction:
    txn = session.get(Transaction, transaction_id.strip())
    account = session.get(Account, txn.account_id) if txn else None
    if txn is None or account is None or account.customer_id != customer.id:
        raise WorldError(f"Customer {customer.id} has no transaction {transaction_id}")
    return txn


def dispute_of(session: Session, customer: Customer, dispute_id: str) -> Dispute:
    dispute = session.get(Dispute, dispute_id.strip())
    if dispute is None or dispute.customer_id != customer.id:
        raise WorldError(f"Customer {customer.id} has no dispute {dispute_id}")
    return dispute


# -- balances and limits -----------------------------------------------------------------------


def pending_debits_cents(session: Session, account: Account) -> int:
    """Pending debits (card authorizations, unsettled transfers), as a positive number."""
    total = session.exec(
        select(func.coalesce(func.sum(Transaction.amount_cents), 0)).where(
            Transaction.account_id == account.id, Transaction.status == "pending", Transaction.amount_cents < 0
        )
    ).one()
    return -int(total)


def held_transfers_cents(session: Session, account: Account) -> int:
    total = session.exec(
        select(func.coalesce(func.sum(Transfer.amount_cents), 0)).where(
            Transfer.from_account_id == account.id, Transfer.status == "held"
        )
    ).one()
    return int(total)


def available_cents(session: Session, account: Account) -> int:
    return account.balance_cents - pending_debits_cents(session, account) - held_transfers_cents(session, account)


def transferred_today_cents(session: Session, account: Account, now: datetime) -> int:
    """Outgoing transfers of the account created on the clock's day (UTC), except cancelled ones."""
    start = day_start(now)
    total = session.exec(
        select(func.coalesce(func.sum(Transfer.amount_cents), 0)).where(
            Transfer.from_account_id == account.id,
            Transfer.status.in_(COUNTED_TRANSFER_STATUSES),  # type: ignore[attr-defined]
            Transfer.created_at >= iso(start),
            Transfer.created_at < iso(start + timedelta(days=1)),
        )
    ).one()
    return int(total)


def savings_withdrawals_this_month(session: Session, account: Account, now: datetime) -> int:
    start = month_start(now)
    count = session.exec(
        select(func.count()).select_from(Transfer).where(
            Transfer.from_account_id == account.id,
            Transfer.status.in_(COUNTED_TRANSFER_STATUSES),  # type: ignore[attr-defined]
            Transfer.created_at >= iso(start),
        )
    ).one()
    return int(count)


def check_outgoing(session: Session, account: Account, amount_cents: int, now: datetime) -> None:
    """The rules every transfer out of an account obeys: open account, at most six withdrawals a
    month from savings, the available balance, and the daily transfer limit."""
    label = f"{account.product} {mask(account.number)}"
    if account.status != "open":
        raise WorldError(f"Account {account.id} ({label}) is closed; nothing can be transferred from it")
    if account.type == "savings":
        used = savings_withdrawals_this_month(session, account, now)
        if used >= SAVINGS_MONTHLY_WITHDRAWALS:
            raise WorldError(
                f"Savings account {account.id} ({label}) has already made {used} transfers out this month; savings "
                f"accounts allow at most {SAVINGS_MONTHLY_WITHDRAWALS} per calendar month"
            )
    available = available_cents(session, account)
    if amount_cents > available:
        raise WorldError(
            f"{money(amount_cents)} is more than the available balance of account {account.id} ({label}), "
            f"which is {money(available)}"
        )
    today = transferred_today_cents(session, account, now)
    limit = account.daily_transfer_limit_cents
    if today + amount_cents > limit:
        raise WorldError(
            f"{money(amount_cents)} would exceed the daily transfer limit of account {account.id} ({label}): "
            f"{money(today)} of its {money(limit)} limit has already been transferred today, so at most "
            f"{money(max(limit - today, 0))} more can go out today"
        )


def payee_is_new(payee: Payee, now: datetime) -> bool:
    return parse(payee.created_at) > now - timedelta(days=NEW_PAYEE_DAYS)


def needs_fraud_hold(payee: Payee, amount_cents: int, now: datetime) -> bool:
    return payee_is_new(payee, now) and amount_cents > FRAUD_HOLD_THRESHOLD_CENTS


def dispute_of_transaction(session: Session, transaction_id: str) -> Dispute | None:
    return session.exec(select(Dispute).where(Dispute.transaction_id == transaction_id)).first()
