"""The bank's fixed rules (limits, windows, thresholds, products), money and
time helpers, and the checks every customer tool relies on: the identity gate, ownership of
accounts, cards, payees, transfers, transactions and disputes, and balance and limit arithmetic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol, TypeVar

from sqlalchemy import func
from sqlmodel import Session, select

from mcpsim.world import IdGenerator, ToolContext, WorldError, dollars, iso, money, to_cents  # noqa: F401  (re-exported)

from .tables import Account, Customer, Dispute, IdentityVerification, Payee, Transaction, Transfer

# -- the bank's rules --------------------------------------------------------------------------

MAX_FAILED_VERIFICATIONS = 3  # a customer's identity check locks after this many failures in a row
FRAUD_HOLD_THRESHOLD_CENTS = 100_000  # a transfer ABOVE $1,000.00 to a new payee is held for review
NEW_PAYEE_DAYS = 7  # a payee added less than 7 days ago is "new"
DISPUTE_WINDOW_DAYS = 60  # card transactions can be disputed within 60 days of posting
SAVINGS_MONTHLY_WITHDRAWALS = 6  # transfers out of a savings account per calendar month
EXPEDITED_CARD_FEE_CENTS = 2_500  # expedited delivery of a replacement card (free for platinum)
MAX_ACTIVE_PAYEES = 25
STATEMENT_MONTHS = 6  # monthly statements available online: the last six closed months

# Daily card limits per tier, in whole dollars: (default, maximum).
PURCHASE_LIMITS = {"standard": (1_500, 3_000), "gold": (3_000, 6_000), "platinum": (5_000, 10_000)}
ATM_LIMITS = {"standard": (300, 500), "gold": (500, 1_000), "platinum": (1_000, 1_500)}
MIN_PURCHASE_LIMIT = 100
MIN_ATM_LIMIT = 20

# Account products: (type, daily transfer limit in dollars, card tier of its debit card or None).
PRODUCTS = {
    "Everyday Checking": ("checking", 2_500, "standard"),
    "Plus Checking": ("checking", 5_000, "gold"),
    "Premier Checking": ("checking", 10_000, "platinum"),
    "Everyday Savings": ("savings", 5_000, None),
    "High-Yield Savings": ("savings", 5_000, None),
}
SAVINGS_RATES_BPS = {"Everyday Savings": 50, "High-Yield Savings": 410}

CARD_BIN = "4147"
COUNTED_TRANSFER_STATUSES = ("completed", "pending", "held")  # what counts toward limits and withdrawals


def new_card_number(ids: IdGenerator) -> str:
    """A 16-digit debit card number: the bank's BIN plus 12 seeded digits."""
    return CARD_BIN + ids.new("card_number")


# -- money, time and numbers -------------------------------------------------------------------


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text)


def day_start(moment: datetime) -> datetime:
    """Midnight UTC of the moment's day: the bank's days run in UTC."""
    moment = moment.astimezone(UTC)
    return datetime(moment.year, moment.month, moment.day, tzinfo=UTC)


def month_start(moment: datetime) -> datetime:
    moment = moment.astimezone(UTC)
    return datetime(moment.year, moment.month, 1, tzinfo=UTC)


def next_month(moment: datetime) -> datetime:
    start = month_start(moment)
    return (start + timedelta(days=32)).replace(day=1)


def aba_valid(routing_number: str) -> bool:
    """The ABA routing number checksum: 3*(d1+d4+d7) + 7*(d2+d5+d8) + (d3+d6+d9) is a multiple of 10."""
    if len(routing_number) != 9 or not routing_number.isdigit():
        return False
    d = [int(c) for c in routing_number]
    total = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8])
    return total % 10 == 0 and routing_number != "000000000"


def mask(number: str) -> str:
    return f"••••{number[-4:]}"


# -- the identity gate and ownership -----------------------------------------------------------


def get_customer(session: Session, customer_id: str) -> Customer:
    """The customer, spaces around the id ignored; the error names the id as the agent gave it."""
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


class CustomerRow(Protocol):
    customer_id: str


Owned = TypeVar("Owned", bound=CustomerRow)


def owned(session: Session, customer: Customer, model: type[Owned], key: str) -> Owned:
    """The customer's row of `model` (an account, card, payee, transfer or dispute). Another
    customer's row gets the same refusal as an unknown id, so ids of others reveal nothing."""
    row = session.get(model, key.strip())
    if row is None or row.customer_id != customer.id:
        raise WorldError(f"Customer {customer.id} has no {model.__name__.lower()} {key}")
    return row


def open_account_of(session: Session, customer: Customer, account_id: str) -> Account:
    account = owned(session, customer, Account, account_id)
    if account.status != "open":
        raise WorldError(f"Account {account.id} ({mask(account.number)}) is closed")
    return account


def transaction_of(session: Session, customer: Customer, transaction_id: str) -> Transaction:
    txn = session.get(Transaction, transaction_id.strip())
    account = session.get(Account, txn.account_id) if txn else None
    if txn is None or account is None or account.customer_id != customer.id:
        raise WorldError(f"Customer {customer.id} has no transaction {transaction_id}")
    return txn


def new_transaction(
    ctx: ToolContext,
    account: Account,
    kind: str,
    description: str,
    amount_cents: int,
    status: str = "posted",
    **links: str | None,
) -> Transaction:
    """A transaction on `account` made by this call (negative `amount_cents` is a debit); `links`
    name the card, transfer or merchant it comes from. The caller stages it."""
    return Transaction(
        id=ctx.new_id("transaction"),
        account_id=account.id,
        kind=kind,
        description=description,
        amount_cents=amount_cents,
        status=status,
        posted_at=iso(ctx.now),
        **links,
    )


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
        select(func.count())
        .select_from(Transfer)
        .where(
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
