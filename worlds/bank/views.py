"""What the bank tools return: pydantic models, separate from the tables. Money is in dollars;
account, card and payee numbers are masked to their last four digits."""

from __future__ import annotations

from pydantic import BaseModel


class CustomerMatch(BaseModel):
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


class CustomerProfile(BaseModel):
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


class AccountView(BaseModel):
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


class TransactionView(BaseModel):
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


class CardView(BaseModel):
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


class PayeeView(BaseModel):
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


class TransferView(BaseModel):
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


class DisputeView(BaseModel):
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


class TicketView(BaseModel):
    ticket_id: str
    customer_id: str | None
    topic: str
    summary: str
    status: str
    created_at: str


class CalculationResult(BaseModel):
    expression: str
    result: float
