"""The bank world's tables: a retail bank's customer-service view of its customers.

Money is stored in integer cents (signed on transactions: negative is money leaving the
account); timestamps are ISO-8601 strings in UTC (`2026-05-15T09:00:00+00:00`), which sort as
text; dates are `YYYY-MM-DD`. Every column a tool looks rows up by is indexed. The tables use a
registry of their own so they never share metadata with another world.
"""

from __future__ import annotations

from sqlalchemy import Index
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel


class BankTable(SQLModel, registry=registry()):
    """Base of every bank table (its own metadata: `BankTable.metadata`)."""


class Customer(BankTable, table=True):
    """A customer. Status: active, or restricted (the fraud team has restricted the profile: only
    a human agent may help). `ssn_last4` and `date_of_birth` are only ever compared, never shown."""

    __tablename__ = "customers"
    __table_args__ = (Index("ix_customers_name_zip", "last_name", "first_name", "zip"),)

    id: str = Field(primary_key=True)  # cus_0000000
    first_name: str
    last_name: str
    email: str = Field(unique=True, index=True)  # stored lower-case
    phone: str = Field(index=True)  # NNN-NNN-NNNN
    date_of_birth: str  # YYYY-MM-DD
    ssn_last4: str
    line1: str
    line2: str = ""
    city: str
    state: str
    zip: str
    status: str = Field(index=True)  # active | restricted
    customer_since: str  # YYYY-MM-DD
    updated_at: str


class IdentityVerification(BankTable, table=True):
    """This session's identity check of a customer: one row per customer, seeded `unverified`.
    verify_identity turns it `verified` (or counts a failure; the third failure in a row makes it
    `locked`). Every tool that reads or changes a customer's data requires `verified`."""

    __tablename__ = "identity_verifications"

    customer_id: str = Field(primary_key=True, foreign_key="customers.id")
    status: str  # unverified | verified | locked
    method: str | None = None  # dob_ssn4
    failed_attempts: int = 0  # failures since the last success
    verified_at: str | None = None
    updated_at: str | None = None


class Account(BankTable, table=True):
    """A deposit account. Type checking or savings; status open or closed. `balance_cents` is the
    posted (ledger) balance; the available balance also subtracts pending debits and held transfers."""

    __tablename__ = "accounts"

    id: str = Field(primary_key=True)  # acc_00000000
    customer_id: str = Field(foreign_key="customers.id", index=True)
    number: str = Field(unique=True, index=True)  # 10 digits; shown as ••••1234
    type: str  # checking | savings
    product: str  # Everyday Checking, Plus Checking, Premier Checking, Everyday Savings, High-Yield Savings
    nickname: str | None = None
    status: str = Field(index=True)  # open | closed
    balance_cents: int
    daily_transfer_limit_cents: int
    interest_rate_bps: int = 0  # savings: annual rate in basis points
    opened_at: str
    closed_at: str | None = None
    updated_at: str


class Card(BankTable, table=True):
    """A debit card on a checking account. Status: active, frozen (temporarily blocked by the
    customer), closed (replaced, expired or its account closed). A replacement card is a new row
    with `replaces_card_id`; the old one gets `replaced_by_card_id`."""

    __tablename__ = "cards"

    id: str = Field(primary_key=True)  # card_0000000
    customer_id: str = Field(foreign_key="customers.id", index=True)
    account_id: str = Field(foreign_key="accounts.id", index=True)
    number: str = Field(unique=True)  # 16 digits; only the last four are ever shown
    last4: str = Field(index=True)
    tier: str  # standard | gold | platinum
    status: str = Field(index=True)  # active | frozen | closed
    purchase_limit: int  # daily, whole dollars
    atm_limit: int  # daily, whole dollars
    expires: str  # MM/YYYY
    issued_at: str
    frozen_at: str | None = None
    closed_at: str | None = None
    closed_reason: str | None = None  # lost | stolen | damaged | expired | account_closed
    replaces_card_id: str | None = None
    replaced_by_card_id: str | None = None
    delivery: str | None = None  # replacement cards: standard | expedited
    updated_at: str


class Payee(BankTable, table=True):
    """An external recipient a customer saved for transfers. Status active or removed."""

    __tablename__ = "payees"
    __table_args__ = (Index("ix_payees_customer_routing_account", "customer_id", "routing_number", "account_number"),)

    id: str = Field(primary_key=True)  # pye_0000000
    customer_id: str = Field(foreign_key="customers.id", index=True)
    name: str
    nickname: str | None = None
    bank_name: str
    routing_number: str  # 9 digits, ABA checksum
    account_number: str  # 4-17 digits; shown as ••••1234
    account_type: str  # checking | savings
    status: str = Field(index=True)  # active | removed
    created_at: str
    removed_at: str | None = None


class Transfer(BankTable, table=True):
    """Money sent from one of a customer's accounts: kind internal (to another of their own
    accounts; completed at once) or external (to a payee; pending until it settles the next
    business day, or held for fraud review). Status: completed, pending, held, cancelled."""

    __tablename__ = "transfers"
    __table_args__ = (Index("ix_transfers_from_created", "from_account_id", "created_at"),)

    id: str = Field(primary_key=True)  # trf_00000000
    customer_id: str = Field(foreign_key="customers.id", index=True)
    kind: str  # internal | external
    from_account_id: str = Field(foreign_key="accounts.id", index=True)
    to_account_id: str | None = Field(default=None, foreign_key="accounts.id", index=True)
    payee_id: str | None = Field(default=None, foreign_key="payees.id", index=True)
    amount_cents: int  # positive
    memo: str = ""
    status: str = Field(index=True)
    hold_reason: str | None = None
    created_at: str
    completed_at: str | None = None
    cancelled_at: str | None = None


class Transaction(BankTable, table=True):
    """One line of an account's history. `amount_cents` is signed: negative takes money out.
    Status: posted (in the balance), pending (an authorization or unsettled transfer: only in the
    available balance), cancelled (a pending line that was voided)."""

    __tablename__ = "transactions"
    __table_args__ = (Index("ix_transactions_account_posted", "account_id", "posted_at"),)

    id: str = Field(primary_key=True)  # txn_000000000
    account_id: str = Field(foreign_key="accounts.id", index=True)
    card_id: str | None = Field(default=None, foreign_key="cards.id", index=True)
    transfer_id: str | None = Field(default=None, foreign_key="transfers.id", index=True)
    # deposit, card_purchase, atm_withdrawal, transfer_in, transfer_out, fee, interest, refund, dispute_credit
    kind: str
    description: str
    merchant: str | None = None
    category: str | None = None
    amount_cents: int
    status: str = Field(index=True)  # posted | pending | cancelled
    posted_at: str  # when it happened (authorized, for pending lines)


class Dispute(BankTable, table=True):
    """A customer's dispute of a card transaction. Status: open (provisional credit given,
    under investigation), resolved_customer, resolved_merchant, withdrawn."""

    __tablename__ = "disputes"

    id: str = Field(primary_key=True)  # dsp_0000000
    customer_id: str = Field(foreign_key="customers.id", index=True)
    account_id: str = Field(foreign_key="accounts.id", index=True)
    transaction_id: str = Field(foreign_key="transactions.id", unique=True, index=True)
    card_id: str = Field(foreign_key="cards.id", index=True)
    reason: str
    description: str
    amount_cents: int  # disputed amount, positive
    provisional_credit_cents: int
    credit_transaction_id: str | None = Field(default=None, foreign_key="transactions.id")
    status: str = Field(index=True)
    created_at: str
    resolved_at: str | None = None


class Ticket(BankTable, table=True):
    """A hand-off to a human agent."""

    __tablename__ = "tickets"

    id: str = Field(primary_key=True)  # tkt_0000000
    customer_id: str | None = Field(default=None, foreign_key="customers.id", index=True)
    topic: str
    summary: str
    status: str  # open
    created_at: str
